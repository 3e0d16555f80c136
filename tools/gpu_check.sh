#!/usr/bin/env bash
# The GPU run of retrograd-cuda, in one prepared script (issue 5: "The GPU run").
#
#   bash tools/gpu_check.sh [OUT_DIR]        default: out/gpu-check
#
# For a machine with an NVIDIA GPU, CuPy (cupy-cuda13x or -cuda12x) and a CUDA build of torch
# already installed, and NO network: nothing is downloaded or installed. The three local packages
# run from their src/ folders, with entry-point metadata generated from their pyproject.toml
# files (the `cuda` backend is found through the `retrograd.backends` entry point).
#
# Steps, each with its own time limit (150 + 220 + 150 s at most, so under 10 minutes even if
# every step runs to its limit; expected well under 5 on an H200). CONFORMANCE_ARGS adds options
# to the conformance CLI (e.g. CONFORMANCE_ARGS="-k document").
#   1. environment        nvidia-smi, versions                      -> env.txt
#   2. CUDA tests         pytest packages/cuda/tests (gpu included) -> cuda_tests.log, .xml
#   3. conformance        retrograd-conformance --backend cuda --oracle torch (torch:cuda is
#                         used as the oracle when torch sees the GPU) -> conformance.log, .json,
#                         .xml
#   4. benchmark          tools/bench/gpu_mlp.py                   -> gpu_mlp.{md,json,png}, .log
#   5. summary            summary.md; everything packed into gpu-check.tar.gz as well
#
# Exit status: 0 when every step passed, else the number of failed steps. Commit the results
# as docs/gpu-results.md (date, GPU, driver, CuPy and torch versions, figures).
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(mkdir -p "${1:-$ROOT/out/gpu-check}" && cd "${1:-$ROOT/out/gpu-check}" && pwd)
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/retrograd-gpu-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

declare -A STATUS
FAILED=0
step() {  # step NAME LIMIT_SECONDS LOGFILE command...
    local name=$1 limit=$2 log=$3
    shift 3
    echo "== $name (limit ${limit}s) -> $log"
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" >"$OUT/$log" 2>&1
    local rc=$?
    tail -n 25 "$OUT/$log"
    if [ $rc -eq 0 ]; then STATUS[$name]="passed"; else
        STATUS[$name]="FAILED (exit $rc$([ $rc -eq 124 ] && echo ', timed out'))"
        FAILED=$((FAILED + 1))
    fi
    STATUS[$name]="${STATUS[$name]} in $((SECONDS - t0)) s"
    echo "== $name: ${STATUS[$name]}"
}

# -- 1. environment ----------------------------------------------------------------------------
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
for name in ("numpy", "cupy", "torch", "pytest", "hypothesis", "matplotlib"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "?"))
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
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# -- the local packages, offline ------------------------------------------------------------------
# No pip: the image's python3 may itself be a virtualenv (a nested venv would not see its torch
# and CuPy), and nothing can be fetched. The packages are pure Python in src/ layouts, so they
# run from PYTHONPATH; their entry points (the `cuda` backend, the CLI, the pytest plugin) are
# published by .dist-info folders generated from each pyproject.toml, which is all that
# importlib.metadata needs to find them.
SHIM="$WORK/site"
mkdir -p "$SHIM"
"$PY" - "$SHIM" "$ROOT" <<'EOF' >"$OUT/install.log" 2>&1 || echo "metadata shims failed: see install.log"
import pathlib, sys, tomllib
shim, root = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for pkg in ("core", "cuda", "conformance"):
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
export PYTHONPATH="$SHIM:$ROOT/packages/core/src:$ROOT/packages/cuda/src:$ROOT/packages/conformance/src${PYTHONPATH:+:$PYTHONPATH}"
PYX="$PY"
"$PYX" -c 'import retrograd_cuda as rc; from retrograd.backends import get_backend
b = get_backend("cuda"); print("cuda backend:", b, "available:", b.is_available(), rc.unavailable_reason())' \
    >>"$OUT/install.log" 2>&1
cat "$OUT/install.log"
export MPLBACKEND=Agg

# -- 2. CUDA tests (NVRTC compiles + every gpu test) ---------------------------------------------
step cuda-tests 150 cuda_tests.log \
    "$PYX" -m pytest -q -p no:cacheprovider -p no:retrograd_conformance packages/cuda/tests -rs \
    --junitxml="$OUT/cuda_tests.xml"

# -- 3. conformance on cuda, oracle torch (torch:cuda where torch sees the GPU) -----------------
step conformance 220 conformance.log \
    "$PYX" -c 'import sys; from retrograd_conformance.cli import main; sys.exit(main())' \
    --backend cuda --oracle torch --json "$OUT/conformance.json" --junit "$OUT/conformance.xml" \
    ${CONFORMANCE_ARGS:-}

# -- 4. benchmark --------------------------------------------------------------------------------
step benchmark 150 gpu_mlp.log "$PYX" tools/bench/gpu_mlp.py --out "$OUT"

# -- 5. summary ----------------------------------------------------------------------------------
{
    echo "# retrograd GPU check"
    echo
    echo '```'
    head -n 40 "$OUT/env.txt"
    echo '```'
    echo
    echo "| step | result |"
    echo "| --- | --- |"
    for name in cuda-tests conformance benchmark; do
        echo "| $name | ${STATUS[$name]:-not run} |"
    done
    echo
    [ -f "$OUT/gpu_mlp.md" ] && cat "$OUT/gpu_mlp.md"
    echo
    echo "Logs: cuda_tests.log, conformance.log, gpu_mlp.log; data: conformance.json, gpu_mlp.json."
} >"$OUT/summary.md"
tar -czf "$WORK/gpu-check.tar.gz" -C "$OUT" --exclude gpu-check.tar.gz . && mv "$WORK/gpu-check.tar.gz" "$OUT/"
echo
cat "$OUT/summary.md"
echo "results in $OUT (also packed as $OUT/gpu-check.tar.gz)"
exit $FAILED
