"""GPU benchmark: one MLP training step (forward + backward) on retrograd's cuda backend.

    python tools/bench/gpu_mlp.py --out out/gpu-check          (about a minute on an H200)
    python tools/bench/gpu_mlp.py --out /tmp/x --quick          (a few steps: does it run?)

The model is W3's (tools/bench/w3_mlp.py): 784-1024-1024-10, ReLU between the layers, mean
cross-entropy, float32, batch 64 and 512 (``--batch``), gradients for every weight and bias
(none for the input), no optimizer update. Three subjects run the same step on the same data:

* ``retrograd fused``   retrograd on ``device="cuda"``, fusion pass on (the default):
  Linear+ReLU backward runs as one fused node whose CUDA kernel writes the masked gradient and
  reduces the bias gradient in one pass, around two cuBLAS GEMMs;
* ``retrograd unfused`` the same with ``retrograd.autograd.set_fusion(False)``;
* ``torch``             PyTorch CUDA, the idiomatic program (``F.linear``, ``F.relu``,
  ``F.cross_entropy``; ``.grad`` set to None between steps, as ``zero_grad()`` does).

What is measured, and why:

* **ms per step, wall clock**: ``steps`` steps back to back between two device
  synchronizations, divided by ``steps``; median (and min) over ``repeats`` such runs after a
  warm-up. At this size a step is a few dozen small kernels, so host-side overhead (Python,
  the autograd walk, kernel launches) is part of the cost a user sees, and wall clock is the
  honest figure. CUDA-event time over the same window is reported too (GPU busy + gaps).
* **kernel launches per step**: counted by CUPTI through ``torch.profiler`` (CUDA activity),
  which records every kernel launched in the process, CuPy's included, not only PyTorch's.
  Memcpy and memset operations are counted separately. A Python-side wrapper could not see the
  kernels CuPy's ufuncs, reductions and cuBLAS launch internally; CUPTI sees them all. The
  per-kernel counts of one step are written to the JSON so fused vs unfused can be read
  kernel by kernel.
* **agreement**: the gradients of the three subjects after one step (fused vs unfused must
  agree to float32 rounding; vs torch within float32 tolerance).
* **the bias-gradient kernel against what CuPy already does** (issue 20, defect 9: keep a
  RawKernel only where it measurably wins): the fused raw kernel (derivative written and
  column sum reduced in one launch) against an ElementwiseKernel plus ``cupy.sum(axis=0)``
  (CuPy's reduction kernel), microseconds per call, wall clock, at W3's shapes and a tall one.

Outputs in ``--out``: ``gpu_mlp.json`` (everything), ``gpu_mlp.md`` (table),
``gpu_mlp.png`` (figure, when matplotlib is present). Exit status: non-zero when a subject
fails to run or the gradients disagree; timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

DIMS = (784, 1024, 1024, 10)
BATCHES = (64, 512)
# Targets from the issue, reported (not asserted).
TORCH_RATIO_TARGET = 1.5


# ---------------------------------------------------------------------------------------------
# data and subjects
# ---------------------------------------------------------------------------------------------
def make_data(dims: tuple[int, ...], batch: int, seed: int = 3) -> dict[str, Any]:
    r = np.random.default_rng(seed)
    x = r.standard_normal((batch, dims[0])).astype(np.float32)
    target = r.integers(0, dims[-1], size=batch).astype(np.int64)
    ws, bs = [], []
    for i, o in zip(dims[:-1], dims[1:]):
        ws.append((r.standard_normal((o, i)) * np.sqrt(2.0 / i)).astype(np.float32))
        bs.append((r.standard_normal(o) * 0.01).astype(np.float32))
    return {"x": x, "target": target, "weights": ws, "biases": bs}


class RetrogradSubject:
    def __init__(self, data: dict[str, Any], fused: bool) -> None:
        import retrograd as rg
        import retrograd.nn.functional as F

        self.rg, self.F, self.fused = rg, F, fused
        self.name = "retrograd fused" if fused else "retrograd unfused"
        dev = "cuda"
        self.x = rg.tensor(data["x"], device=dev)
        self.target = rg.tensor(data["target"], device=dev)
        self.params = []
        for w, b in zip(data["weights"], data["biases"]):
            self.params.append(rg.tensor(w, device=dev, requires_grad=True))
            self.params.append(rg.tensor(b, device=dev, requires_grad=True))
        self.backend = self.x.backend

    def step(self) -> None:
        F = self.F
        self.rg.autograd.set_fusion(self.fused)
        for p in self.params:
            p.grad = None
        h = self.x
        n_layers = len(self.params) // 2
        for i in range(n_layers):
            h = F.linear(h, self.params[2 * i], self.params[2 * i + 1])
            if i < n_layers - 1:
                h = F.relu(h)
        F.cross_entropy(h, self.target).backward()

    def sync(self) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()

    def event(self) -> Any:
        import cupy

        return cupy.cuda.Event()

    @staticmethod
    def elapsed_ms(start: Any, end: Any) -> float:
        import cupy

        return float(cupy.cuda.get_elapsed_time(start, end))

    def grads(self) -> list[np.ndarray]:
        return [p.grad.cpu().numpy() for p in self.params]


class TorchSubject:
    name = "torch"

    def __init__(self, data: dict[str, Any]) -> None:
        import torch
        import torch.nn.functional as F

        self.torch, self.F = torch, F
        dev = torch.device("cuda")
        self.x = torch.tensor(data["x"], device=dev)
        self.target = torch.tensor(data["target"], device=dev)
        self.params = []
        for w, b in zip(data["weights"], data["biases"]):
            self.params.append(torch.tensor(w, device=dev, requires_grad=True))
            self.params.append(torch.tensor(b, device=dev, requires_grad=True))

    def step(self) -> None:
        F = self.F
        for p in self.params:
            p.grad = None
        h = self.x
        n_layers = len(self.params) // 2
        for i in range(n_layers):
            h = F.linear(h, self.params[2 * i], self.params[2 * i + 1])
            if i < n_layers - 1:
                h = F.relu(h)
        F.cross_entropy(h, self.target).backward()

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    @staticmethod
    def elapsed_ms(start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))

    def grads(self) -> list[np.ndarray]:
        return [p.grad.detach().cpu().numpy() for p in self.params]


# ---------------------------------------------------------------------------------------------
# measurements
# ---------------------------------------------------------------------------------------------
def time_subject(subject: Any, steps: int, repeats: int, warmup: int) -> dict[str, Any]:
    for _ in range(warmup):
        subject.step()
    subject.sync()
    wall, gpu = [], []
    for _ in range(repeats):
        start, end = subject.event(), subject.event()
        subject.sync()
        t0 = time.perf_counter()
        start.record()
        for _ in range(steps):
            subject.step()
        end.record()
        subject.sync()
        wall.append((time.perf_counter() - t0) * 1e3 / steps)
        gpu.append(subject.elapsed_ms(start, end) / steps)
    return {
        "wall_ms_median": statistics.median(wall),
        "wall_ms_min": min(wall),
        "wall_ms_all": wall,
        "event_ms_median": statistics.median(gpu),
        "steps": steps,
        "repeats": repeats,
        "warmup": warmup,
    }


def count_launches(subject: Any, steps: int, trace_dir: Path) -> dict[str, Any]:
    """Kernels, memcpys and memsets per step, counted by CUPTI via torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    subject.step()
    subject.sync()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            subject.step()
        subject.sync()
        torch.cuda.synchronize()
    path = trace_dir / f"trace_{subject.name.replace(' ', '_')}.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text()).get("traceEvents", [])
    kinds: collections.Counter[str] = collections.Counter()
    kernels: collections.Counter[str] = collections.Counter()
    for ev in events:
        cat = str(ev.get("cat", "")).lower()
        if ev.get("ph") != "X":
            continue
        if cat == "kernel":
            kinds["kernel"] += 1
            kernels[str(ev.get("name", "?"))[:90]] += 1
        elif cat == "gpu_memcpy":
            kinds["memcpy"] += 1
        elif cat == "gpu_memset":
            kinds["memset"] += 1
    path.unlink(missing_ok=True)
    if kinds["kernel"] == 0:
        raise RuntimeError("CUPTI recorded no kernel at all: launches could not be counted")
    return {
        "kernels_per_step": kinds["kernel"] / steps,
        "memcpy_per_step": kinds["memcpy"] / steps,
        "memset_per_step": kinds["memset"] / steps,
        "kernel_names_per_step": {k: v / steps for k, v in kernels.most_common()},
        "method": "CUPTI via torch.profiler (ProfilerActivity.CUDA), chrome trace events "
        "with cat kernel / gpu_memcpy / gpu_memset",
    }


def compare(grads: dict[str, list[np.ndarray]]) -> dict[str, Any]:
    """Max relative difference (scaled by each gradient's max magnitude) between subjects."""
    out: dict[str, Any] = {}
    names = list(grads)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            worst = 0.0
            for ga, gb in zip(grads[a], grads[b]):
                scale = max(float(np.abs(gb).max()), 1e-30)
                worst = max(worst, float(np.abs(ga - gb).max()) / scale)
            out[f"{a} vs {b}"] = worst
    return out


def environment() -> dict[str, Any]:
    info: dict[str, Any] = {"python": platform.python_version(), "date": time.strftime("%F %T")}
    try:
        import cupy

        info["cupy"] = cupy.__version__
        props = cupy.cuda.runtime.getDeviceProperties(0)
        info["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        info["driver"] = cupy.cuda.runtime.driverGetVersion()
        info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    except Exception as exc:
        info["cupy_error"] = repr(exc)
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
    except Exception as exc:
        info["torch_error"] = repr(exc)
    try:
        import retrograd

        info["retrograd"] = getattr(retrograd, "__version__", "?")
    except Exception as exc:
        info["retrograd_error"] = repr(exc)
    return info


# ---------------------------------------------------------------------------------------------
# the bias-gradient kernel against CuPy's own elementwise + reduction kernels
# ---------------------------------------------------------------------------------------------
BIAS_SHAPES = ((64, 1024), (512, 1024), (4_000_000, 2))


def bias_kernel_comparison(repeats: int = 200) -> list[dict[str, Any]]:
    """Microseconds per call (wall clock over ``repeats`` calls, synchronized at both ends)."""
    import cupy

    from retrograd_cuda.kernels.fused import bias_activation_backward, elementwise

    def raw(g: Any, y: Any) -> Any:
        return bias_activation_backward("relu", g, y)

    def cupy_kernels(g: Any, y: Any) -> Any:
        ga = elementwise("relu_backward")(g, y)
        return ga, ga.sum(axis=0)

    rows = []
    for n, m in BIAS_SHAPES:
        r = np.random.default_rng(n)
        g = cupy.asarray(r.random((n, m), dtype=np.float32))
        y = cupy.asarray(r.random((n, m), dtype=np.float32))
        row: dict[str, Any] = {"shape": [n, m]}
        subjects = (("raw fused (1 launch)", raw), ("ElementwiseKernel + cupy.sum", cupy_kernels))
        for name, fn in subjects:
            fn(g, y)
            cupy.cuda.get_current_stream().synchronize()
            reps = repeats if n * m < 10**6 else max(5, repeats // 20)
            t0 = time.perf_counter()
            for _ in range(reps):
                fn(g, y)
            cupy.cuda.get_current_stream().synchronize()
            row[name] = (time.perf_counter() - t0) * 1e6 / reps
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------
def write_markdown(result: dict[str, Any], path: Path) -> None:
    env = result["environment"]
    lines = [
        f"# GPU benchmark: MLP {'-'.join(map(str, DIMS))}, float32, forward + backward",
        "",
        f"{env.get('date')}; GPU {env.get('gpu')}; driver {env.get('driver')}; CuPy "
        f"{env.get('cupy')}; torch {env.get('torch')} (CUDA {env.get('torch_cuda')}); "
        f"Python {env.get('python')}",
        "",
        "| batch | subject | ms/step (wall, median) | min | ms/step (CUDA events) | kernels/step | "
        "memcpy/step | memset/step |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for batch, run in result["runs"].items():
        for name, r in run["subjects"].items():
            if "error" in r:
                lines.append(f"| {batch} | {name} | failed: {r['error'].splitlines()[-1]} "
                             "| | | | | |")
                continue
            t, c = r["timing"], r.get("launches", {})
            lines.append(
                f"| {batch} | {name} | {t['wall_ms_median']:.3f} | {t['wall_ms_min']:.3f} | "
                f"{t['event_ms_median']:.3f} | {c.get('kernels_per_step', float('nan')):.1f} | "
                f"{c.get('memcpy_per_step', float('nan')):.1f} | "
                f"{c.get('memset_per_step', float('nan')):.1f} |"
            )
    lines += ["", "Targets (issue 20), reported not asserted:", ""]
    for batch, run in result["runs"].items():
        for k, v in run["targets"].items():
            lines.append(f"- batch {batch}: {k}: {v}")
    lines += ["", "Gradient agreement (max |a-b| / max |b| over all parameters):", ""]
    for batch, run in result["runs"].items():
        for k, v in run["agreement"].items():
            lines.append(f"- batch {batch}: {k}: {v:.3g}")
    if result.get("bias_kernels"):
        lines += ["", "Bias gradient (relu' and column sum), microseconds per call:", "",
                  "| shape | raw fused (1 launch) | ElementwiseKernel + cupy.sum |",
                  "| --- | ---: | ---: |"]
        for row in result["bias_kernels"]:
            lines.append(f"| {tuple(row['shape'])} | {row['raw fused (1 launch)']:.1f} | "
                         f"{row['ElementwiseKernel + cupy.sum']:.1f} |")
    lines += ["", f"Launch counting: {result.get('launch_method', 'n/a')}", ""]
    path.write_text("\n".join(lines) + "\n")


def write_figure(result: dict[str, Any], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        return f"no figure: matplotlib unavailable ({exc})"
    bars = [(f"{name}\nbatch {batch}", r) for batch, run in result["runs"].items()
            for name, r in run["subjects"].items() if "timing" in r]
    if not bars:
        return "no figure: no subject ran"
    names = [b[0] for b in bars]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    axes[0].bar(names, [r["timing"]["wall_ms_median"] for _, r in bars], color="#4C72B0")
    axes[0].set_ylabel("ms per step (wall clock, median)")
    axes[0].set_title(f"MLP {'-'.join(map(str, DIMS))}, fp32")
    axes[1].bar(names, [r.get("launches", {}).get("kernels_per_step", 0) for _, r in bars],
                color="#DD8452")
    axes[1].set_ylabel("kernel launches per step")
    axes[1].set_title("kernels per forward+backward step")
    for ax in axes:
        ax.tick_params(axis="x", rotation=30, labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


def run_batch(batch: int, args: argparse.Namespace, result: dict[str, Any], tmp: Path) -> bool:
    """Every subject at one batch size into ``result["runs"][batch]``; False if one failed."""
    data = make_data(DIMS, batch)
    run: dict[str, Any] = {"subjects": {}}
    result["runs"][str(batch)] = run
    factories = [
        ("retrograd fused", lambda: RetrogradSubject(data, fused=True)),
        ("retrograd unfused", lambda: RetrogradSubject(data, fused=False)),
        ("torch", lambda: TorchSubject(data)),
    ]
    grads: dict[str, list[np.ndarray]] = {}
    ok = True
    for name, factory in factories:
        entry: dict[str, Any] = {}
        run["subjects"][name] = entry
        try:
            subject = factory()
            subject.step()  # first step: compiles the kernels (NVRTC, disk-cached)
            subject.sync()
            grads[name] = subject.grads()
            entry["timing"] = time_subject(subject, args.steps, args.repeats, args.warmup)
            print(f"batch {batch:4d} {name:18s} {entry['timing']['wall_ms_median']:8.3f} ms/step",
                  flush=True)
        except Exception:
            entry["error"] = traceback.format_exc()
            print(f"{name}: FAILED\n{entry['error']}", file=sys.stderr)
            ok = False
            continue
        try:
            entry["launches"] = count_launches(subject, args.profile_steps, tmp)
            result["launch_method"] = entry["launches"]["method"]
        except Exception:
            entry["launches_error"] = traceback.format_exc()
            print(f"{name}: launch counting failed\n{entry['launches_error']}", file=sys.stderr)
    import retrograd as rg

    rg.autograd.set_fusion(True)
    run["agreement"] = compare(grads)
    limits = {"retrograd fused vs retrograd unfused": 1e-5, "retrograd fused vs torch": 1e-3,
              "retrograd unfused vs torch": 1e-3}
    for key, limit in limits.items():
        if key in run["agreement"] and not run["agreement"][key] <= limit:
            print(f"gradients disagree: {key} = {run['agreement'][key]:.3g} > {limit}",
                  file=sys.stderr)
            ok = False

    def ms(name: str) -> float | None:
        return run["subjects"].get(name, {}).get("timing", {}).get("wall_ms_median")

    f, u, t = ms("retrograd fused"), ms("retrograd unfused"), ms("torch")
    targets: dict[str, str] = {}
    if f and t:
        verdict = "met" if f / t <= TORCH_RATIO_TARGET else "NOT met"
        targets[f"fused step within {TORCH_RATIO_TARGET}x of PyTorch CUDA"] = (
            f"{f / t:.2f}x ({verdict})")
    if f and u:
        verdict = "met" if f < u else "NOT met"
        targets["fused faster than unfused"] = f"{u / f:.2f}x speed-up ({verdict})"
    run["targets"] = targets
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("out/gpu-check"))
    ap.add_argument("--batch", type=int, action="append", help="batch size (repeatable); "
                    f"default {' and '.join(map(str, BATCHES))}")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="3 steps x 2 repeats: only checks it runs")
    args = ap.parse_args(argv)
    if args.quick:
        args.steps, args.repeats, args.warmup, args.profile_steps = 3, 2, 1, 1
    batches = tuple(args.batch or BATCHES)
    args.out.mkdir(parents=True, exist_ok=True)

    import retrograd_cuda

    if not retrograd_cuda.is_available():
        print(f"no GPU: {retrograd_cuda.unavailable_reason()}", file=sys.stderr)
        return 2

    result: dict[str, Any] = {
        "environment": environment(),
        "config": {"dims": DIMS, "batches": batches, "dtype": "float32",
                   **{k: v for k, v in vars(args).items() if k != "batch"}},
        "runs": {},
    }
    result["config"]["out"] = str(args.out)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for batch in batches:
            ok = run_batch(batch, args, result, Path(tmp)) and ok
    try:
        result["bias_kernels"] = bias_kernel_comparison(20 if args.quick else 200)
    except Exception:
        result["bias_kernels_error"] = traceback.format_exc()
        print(f"bias kernel comparison failed\n{result['bias_kernels_error']}", file=sys.stderr)
    result["figure"] = write_figure(result, args.out / "gpu_mlp.png")
    (args.out / "gpu_mlp.json").write_text(json.dumps(result, indent=2, default=str))
    write_markdown(result, args.out / "gpu_mlp.md")
    print((args.out / "gpu_mlp.md").read_text())
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
