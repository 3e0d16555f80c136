#!/usr/bin/env bash
# The GPU run of retrograd-cuda in one prepared script (issue 20, "The run").
#
#   bash tools/gpu_check.sh [OUT]        default OUT: out/gpu-check
#
# For the lent machine: one NVIDIA GPU, CuPy and a CUDA build of torch already installed, no
# network (nothing is downloaded or installed), one command of at most 10 minutes, at most 8
# files back from OUT. Budget: under 6 minutes in all, CuPy's first compile of every kernel
# included (its cache starts empty; about 0.5 s a kernel).
#
#   phase 1 (at once; compile-bound, and the machine has 16 cores), each limited to PHASE1 s
#   (230; PHASE2 75: about 5 1/2 minutes at the very worst, set-up and packing included):
#     cuda-tests     pytest packages/cuda/tests, gpu and slow tests included, with
#                    RETROGRAD_REQUIRE_GPU=1 (a gpu test that skips fails)
#     conformance    --backend cuda, suites documents, semantics and opdb
#     programs       --backend cuda, generated programs (FUZZ of them, default 150)
#     torch-cuda     --backend torch_cuda (retrograd-torch on torch's GPU), suites documents,
#                    semantics and opdb
#     sanitizer      compute-sanitizer memcheck (CuPy's memory pool off, so an overrun is
#                    seen), then racecheck, over the fused-kernel tests, where the tool exists
#                    (else recorded as not found)
#   phase 2 (alone: timings need the GPU to themselves), limited to PHASE2 s:
#     benchmark      tools/bench/gpu_mlp.py: W3's MLP step at batch 64 and 512, fused,
#                    unfused and torch; the bias kernel against CuPy's own kernels
# The conformance oracle is torch on the GPU when torch sees it (the CLI alone would take CPU
# torch, the first oracle it lists).
#
# Into OUT go three files: summary.md, results.json (test counts, conformance summaries and
# failures, benchmark results) and gpu-check.tar.gz (every log, JUnit XML and full report).
# Everything else is written to a scratch folder that is removed at the end.
# Exit status: the number of failed steps (0: all passed).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/out/gpu-check}" && cd "${1:-$ROOT/out/gpu-check}" && pwd)
PY=${PYTHON:-python3}
PHASE1=${PHASE1:-230}
PHASE2=${PHASE2:-75}
FUZZ=${FUZZ:-150}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/retrograd-gpu-check.XXXXXX")
LOGS="$WORK/logs"
mkdir -p "$LOGS"
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
T0=$SECONDS

export RETROGRAD_REQUIRE_GPU=1 MPLBACKEND=Agg CUPY_CACHE_DIR="$WORK/cupy-cache"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# -- environment --------------------------------------------------------------------------------
{
    echo "date: $(date -u '+%F %T UTC')"
    echo "host: $(uname -a)"
    echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo '?')"
    echo "--- nvidia-smi"
    nvidia-smi 2>&1 || echo "nvidia-smi failed"
    echo "--- python"
    "$PY" - <<'EOF'
import importlib, platform
print("python", platform.python_version())
for name in ("numpy", "cupy", "torch", "pytest", "hypothesis", "rich", "matplotlib"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as exc:
        print(name, "MISSING:", exc)
try:
    import cupy
    print("cupy devices", cupy.cuda.runtime.getDeviceCount(),
          "driver", cupy.cuda.runtime.driverGetVersion(),
          "runtime", cupy.cuda.runtime.runtimeGetVersion())
except Exception as exc:
    print("cupy device query failed:", exc)
try:
    import torch
    print("torch cuda", torch.version.cuda, "available", torch.cuda.is_available(),
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as exc:
    print("torch query failed:", exc)
EOF
} >"$LOGS/env.txt" 2>&1

# -- the local packages, offline -----------------------------------------------------------------
# No pip: the image's python may itself be a virtualenv (a nested one would not see its torch and
# CuPy), and nothing can be fetched. The packages are pure Python in src/ layouts, so they run
# from PYTHONPATH; their entry points (the `cuda` backend, the pytest plugin) are published by
# .dist-info folders generated from each pyproject.toml, all that importlib.metadata needs.
SHIM="$WORK/site"
mkdir -p "$SHIM"
"$PY" - "$SHIM" "$ROOT" <<'EOF' >"$LOGS/install.log" 2>&1 || echo "metadata shims failed: see install.log"
import pathlib, sys, tomllib
shim, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for pkg in ("core", "cuda", "conformance", "torch"):
    meta = root / "packages" / pkg / "pyproject.toml"
    if not meta.exists():
        print("skipped (absent):", pkg)
        continue
    project = tomllib.loads(meta.read_text())["project"]
    groups = dict(project.get("entry-points", {}))
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    dist = shim / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in groups.items()))
    print(dist.name, sorted(groups))
EOF
export PYTHONPATH="$SHIM:$ROOT/packages/core/src:$ROOT/packages/cuda/src:$ROOT/packages/conformance/src:$ROOT/packages/torch/src${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -c 'import retrograd_cuda as rc; from retrograd.backends import get_backend
b = get_backend("cuda"); print("cuda backend:", b, "available:", b.is_available(), rc.unavailable_reason())' \
    >>"$LOGS/install.log" 2>&1
cat "$LOGS/env.txt" "$LOGS/install.log"

# -- the steps ------------------------------------------------------------------------------------
declare -A STATUS
FAILED=0
start_step() {  # start_step NAME LIMIT command...: runs in the background, status in $LOGS/NAME.rc
    local name=$1 limit=$2
    shift 2
    (
        t0=$SECONDS
        timeout --kill-after=10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
        rc=$?
        echo "$rc $((SECONDS - t0))" >"$LOGS/$name.rc"
    ) &
}
finish_step() {  # finish_step NAME: after `wait`, record and print its result
    local name=$1 rc secs
    read -r rc secs <"$LOGS/$name.rc" 2>/dev/null || { rc=125; secs=0; }
    if [ "$rc" -eq 0 ]; then STATUS[$name]="passed in $secs s"; else
        STATUS[$name]="FAILED (exit $rc$([ "$rc" -eq 124 ] && echo ', timed out')) in $secs s"
        FAILED=$((FAILED + 1))
    fi
    echo "== $name: ${STATUS[$name]}"
    tail -n 15 "$LOGS/$name.log"
}

# torch on the GPU as the conformance oracle: the CLI uses the first oracle torch_subjects lists
CONFORMANCE='import sys
from retrograd_conformance import cli
listed = cli.torch_subjects
cli.torch_subjects = lambda: sorted(listed(), key=lambda s: s.name != "torch:cuda")
sys.exit(cli.main(sys.argv[1:]))'

SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
# pytest with CuPy's memory pool off: every array its own cudaMalloc, so memcheck sees overruns
UNPOOLED='import sys, cupy, pytest
cupy.cuda.set_allocator(None)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:retrograd_conformance", *sys.argv[1:]]))'
KERNEL_TESTS="packages/cuda/tests/test_cuda_gpu_kernels.py"
sanitize() {  # memcheck over the fused-kernel tests, then racecheck over the shared-memory ones
    "$SANITIZER" --tool memcheck --error-exitcode 99 --target-processes all \
        "$PY" -c "$UNPOOLED" "$KERNEL_TESTS" -m "not slow" \
        -k "((bias or cross_entropy or softmax or accumulate) and not torch and not past) or (linear and 37-33-65)" \
        || return $?
    "$SANITIZER" --tool racecheck --error-exitcode 99 --target-processes all \
        "$PY" -c "$UNPOOLED" "$KERNEL_TESTS" -m "not slow" -k "(bias or softmax_backward) and not torch"
}

echo "== phase 1 (limit ${PHASE1} s each, run at once)"
start_step cuda-tests "$PHASE1" "$PY" -m pytest -q -p no:cacheprovider -p no:retrograd_conformance \
    packages/cuda/tests -rs --junitxml="$LOGS/cuda_tests.xml"
start_step conformance "$PHASE1" "$PY" -c "$CONFORMANCE" --backend cuda --oracle torch \
    --suite documents --suite semantics --suite opdb \
    --json "$LOGS/conformance.json" --junit "$LOGS/conformance.xml"
start_step programs "$PHASE1" "$PY" -c "$CONFORMANCE" --backend cuda --oracle torch \
    --suite programs --fuzz "$FUZZ" --json "$LOGS/programs.json" --junit "$LOGS/programs.xml"
# the second GPU path: retrograd-torch on torch's CUDA device (needs array-api-compat)
start_step torch-cuda "$PHASE1" "$PY" -c "$CONFORMANCE" --backend torch_cuda --oracle torch \
    --suite documents --suite semantics --suite opdb \
    --json "$LOGS/torch_cuda.json" --junit "$LOGS/torch_cuda.xml"
if [ -n "$SANITIZER" ]; then
    export -f sanitize
    export SANITIZER KERNEL_TESTS PY UNPOOLED
    start_step sanitizer "$PHASE1" bash -c sanitize
else
    echo "compute-sanitizer: not found on this machine (PATH, /usr/local/cuda*/bin)" >"$LOGS/sanitizer.log"
    echo "0 0" >"$LOGS/sanitizer.rc"
fi
wait
for name in cuda-tests conformance programs torch-cuda sanitizer; do finish_step "$name"; done
[ -n "$SANITIZER" ] || STATUS[sanitizer]="not run: compute-sanitizer not found"

echo "== phase 2 (limit ${PHASE2} s)"
start_step benchmark "$PHASE2" "$PY" tools/bench/gpu_mlp.py --out "$LOGS/bench" \
    --steps 30 --repeats 5 --warmup 5 --profile-steps 3
wait
finish_step benchmark

# -- summary, results.json, tarball --------------------------------------------------------------
for name in cuda-tests conformance programs torch-cuda sanitizer benchmark; do
    echo "$name=${STATUS[$name]}"
done >"$LOGS/status.txt"
"$PY" - "$LOGS" "$OUT" "$((SECONDS - T0))" <<'EOF' || echo "summary failed" >&2
import json, pathlib, sys, xml.etree.ElementTree as ET
logs, out, secs = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
status = dict(line.split("=", 1) for line in (logs / "status.txt").read_text().splitlines())
res = {"seconds": secs, "steps": status, "environment": (logs / "env.txt").read_text()}
try:
    root = ET.parse(logs / "cuda_tests.xml").getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    res["cuda_tests"] = {k: sum(int(s.get(k, 0)) for s in suites)
                         for k in ("tests", "failures", "errors", "skipped")}
    res["cuda_tests"]["not_passed"] = [
        f"{c.get('classname')}::{c.get('name')}: {c[0].tag}: {(c[0].get('message') or '')[:200]}"
        for s in suites for c in s.iter("testcase") if len(c) and c[0].tag != "system-out"][:200]
except Exception as exc:
    res["cuda_tests"] = f"no JUnit report: {exc}"
for name in ("conformance", "programs", "torch_cuda"):
    try:
        rep = json.loads((logs / f"{name}.json").read_text())
        res[name] = {"oracles": rep["header"]["config"].get("oracle_subjects"),
                     "summary": rep["summary"],
                     "failures": [f"{r['subject']}::{r['suite']}/{r['id']}: {r['message'][:200]}"
                                  for r in rep["results"] if r.get("failed")][:50]}
    except Exception as exc:
        res[name] = f"no report: {exc}"
try:
    bench = json.loads((logs / "bench" / "gpu_mlp.json").read_text())
    res["benchmark"] = {k: bench.get(k) for k in ("runs", "bias_kernels", "environment")}
    for run in (res["benchmark"]["runs"] or {}).values():  # per-kernel counts: in the tarball
        for subject in run.get("subjects", {}).values():
            subject.get("launches", {}).pop("kernel_names_per_step", None)
except Exception as exc:
    res["benchmark"] = f"no report: {exc}"
(out / "results.json").write_text(json.dumps(res, indent=1, default=str))
env = (logs / "env.txt").read_text().splitlines()
lines = ["# retrograd GPU check", "", f"{secs} s in all.", "", "```", *env[:45], "```", "",
         "| step | result |", "| --- | --- |", *[f"| {k} | {v} |" for k, v in status.items()], ""]
if isinstance(res["cuda_tests"], dict):
    c = res["cuda_tests"]
    lines += [f"CUDA tests: {c['tests']} run, {c['failures']} failed, {c['errors']} errors, "
              f"{c['skipped']} skipped.", *[f"- {t}" for t in c["not_passed"][:30]], ""]
for name in ("conformance", "programs", "torch_cuda"):
    if isinstance(res[name], dict):
        lines += [f"Conformance ({name}), oracle {res[name]['oracles'][:1]}: "
                  f"{json.dumps(res[name]['summary'])}",
                  *[f"- {f}" for f in res[name]["failures"][:20]], ""]
bench_md = logs / "bench" / "gpu_mlp.md"
lines += [bench_md.read_text() if bench_md.exists() else "No benchmark table.", "",
          "Everything else: gpu-check.tar.gz (logs, JUnit XML, full JSON reports)."]
(out / "summary.md").write_text("\n".join(lines) + "\n")
EOF
tar -czf "$OUT/gpu-check.tar.gz" -C "$WORK" --exclude cupy-cache --exclude site logs
echo
cat "$OUT/summary.md" 2>/dev/null
echo "results in $OUT: summary.md, results.json, gpu-check.tar.gz ($((SECONDS - T0)) s)"
exit $FAILED
