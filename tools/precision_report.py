"""The precision table of docs/reliability.md ("Precision of reductions"): for every case of
the reliability suite's ``test_precision.py`` and every size, the largest relative error of
retrograd's result, PyTorch's (one thread), and retrograd's with NumPy's own sums (the
kernels before the blocked summation), against the exact or float64 ground truth.

    python tools/precision_report.py                  # 1e3, 1e5, 1e6 and 4e6 rows
    python tools/precision_report.py --sizes 1000 100000 --seeds 5
    python tools/precision_report.py --markdown       # the table as docs/reliability.md has it
    python tools/precision_report.py --speed          # the cost: blocked vs NumPy's own sums

``--speed`` times, in one process, alternating round by round (one BLAS thread, process CPU
time, medians, the ratio taken pair by pair), retrograd with its blocked sums against the
same retrograd with NumPy's own sums: the W3 MLP step (784-1024-1024-10, ReLU, mean
cross-entropy, forward + backward) at batch 64 and 512, ``relu(linear(x, W, b))``'s backward
alone (W of 1024 x 1024), and the bias-gradient kernel (``sum(g, 0)``) at a few shapes.

With ``--seeds N`` each cell is the mean over N seeds of the largest error (the maximum
over columns is a noisy statistic; the mean of it over a few seeds compares methods).
Run with ``OPENBLAS_NUM_THREADS=1`` on an idle machine; a 4e6-row run takes about a minute.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "packages/core/tests/reliability/test_precision.py"


def _suite():
    spec = importlib.util.spec_from_file_location("_precision_suite", SUITE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure(suite, case, n: int, dtype, seeds: int) -> dict[str, float]:
    cols: dict[str, list[float]] = {"retrograd": [], "torch": [], "before": []}
    for s in range(seeds):
        arrays = suite.inputs(case, n, dtype, seed=suite.SEED + s)
        want = suite.truth(case, arrays)
        with suite.torch_one_thread():
            for lib in (suite.RETROGRAD, suite.TORCH):
                key = "retrograd" if lib is suite.RETROGRAD else "torch"
                cols[key].append(suite.error(case, suite.run(case, lib, arrays), want))
            with suite.naive_reductions():
                cols["before"].append(suite.error(case, suite.run(case, suite.RETROGRAD,
                                                                  arrays), want))
    return {k: statistics.fmean(v) for k, v in cols.items()}


def _alternate(subjects: dict, reps: int) -> dict[str, list[float]]:
    names = list(subjects)
    out: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            out[name].append(subjects[name]())
    return out


def speed(suite, reps: int, only: str = "") -> None:
    import gc

    import retrograd as rg
    import retrograd.nn.functional as F

    be = rg.get_backend("cpu")
    rng = np.random.default_rng(0)

    def timed(fn, inner: int = 1):
        def run_blocked() -> float:
            gc.collect()
            t0 = time.process_time()
            for _ in range(inner):
                fn()
            return (time.process_time() - t0) / inner * 1e6

        def run_numpy() -> float:
            with suite.naive_reductions():
                return run_blocked()

        return {"blocked": run_blocked, "numpy": run_numpy}

    def report(label: str, subjects: dict, n: int) -> None:
        if only not in label:
            return
        t = _alternate(subjects, n)
        med = {k: statistics.median(v) for k, v in t.items()}
        ratio = statistics.median(a / b for a, b in zip(t["blocked"], t["numpy"]))
        print(f"| {label} | {med['numpy']:,.1f} | {med['blocked']:,.1f} | {ratio:.3f} |",
              flush=True)

    print("| workload | NumPy's sums (us) | blocked sums (us) | ratio (median of pairs) |")
    print("| --- | ---: | ---: | ---: |")
    for dt in (np.float32, np.float64):
        name = np.dtype(dt).name
        for batch in (64, 512):
            dims = [784, 1024, 1024, 10]
            x = rg.tensor(rng.standard_normal((batch, dims[0])).astype(dt))
            target = rg.tensor(rng.integers(0, 10, batch))
            layers = [(rg.tensor((rng.standard_normal((o, i)) / np.sqrt(i)).astype(dt),
                                 requires_grad=True),
                       rg.tensor(np.zeros(o, dt), requires_grad=True))
                      for i, o in zip(dims[:-1], dims[1:])]

            def step(x=x, target=target, layers=layers) -> None:
                for w, b in layers:
                    w.grad = b.grad = None
                h = x
                for i, (w, b) in enumerate(layers):
                    h = F.linear(h, w, b)
                    if i < len(layers) - 1:
                        h = F.relu(h)
                F.cross_entropy(h, target).backward()

            for _ in range(3):
                step()
            report(f"W3 step, batch {batch}, {name}", timed(step), reps)
            w, b = layers[1]
            h = rg.tensor(np.abs(rng.standard_normal((batch, 1024))).astype(dt))
            g = rg.tensor(rng.standard_normal((batch, 1024)).astype(dt))

            def lin(h=h, w=w, b=b, g=g) -> None:
                w.grad = b.grad = None
                F.relu(F.linear(h, w, b)).backward(g)

            report(f"relu(linear) backward, batch {batch}, {name}", timed(lin), reps)
        for shape in ((64, 1024), (512, 1024), (64, 10), (512, 10), (100_000, 16),
                      (4_000_000, 2)):
            g = rng.random(shape).astype(dt)
            inner = max(1, 4_000_000 // g.size)

            def kernel(g=g) -> None:
                be.ops.sum(g, 0, False)

            n = reps if g.size < 1_000_000 else max(5, reps // 10)
            report(f"`sum(g, 0)` kernel, g {shape[0]:,} x {shape[1]:,}, {name}",
                   timed(kernel, inner), n)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[1_000, 100_000, 1_000_000, 4_000_000])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("-k", default="", help="only cases (or --speed workloads) whose name "
                    "contains this")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--speed", action="store_true", help="time instead (see above)")
    ap.add_argument("--reps", type=int, default=60, help="--speed: rounds per workload")
    args = ap.parse_args(argv)
    suite = _suite()
    if args.speed:
        speed(suite, args.reps, args.k)
        return 0
    print(f"# relative error vs the ground truth; columns per size: "
          f"{ {n: suite.COLUMNS.get(n, 2) for n in args.sizes} }; seeds: {args.seeds}")
    if args.markdown:
        print("| case | dtype | rows | retrograd | PyTorch | retrograd before (NumPy's sums) |"
              " before / PyTorch |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    t0 = time.perf_counter()
    for case in suite.CASES:
        if args.k not in case.name:
            continue
        for dt in case.dtypes:
            name = np.dtype(dt).name
            for n in args.sizes:
                e = measure(suite, case, n, dt, args.seeds)
                ratio = e["before"] / e["torch"] if e["torch"] else float("inf")
                if args.markdown:
                    print(f"| `{case.name}` | {name} | {n:,} | {e['retrograd']:.2e} | "
                          f"{e['torch']:.2e} | {e['before']:.2e} | {ratio:.1f} |")
                else:
                    print(f"{case.name:58s} {name:8s} {n:>10,d}  retrograd {e['retrograd']:.2e}"
                          f"  torch {e['torch']:.2e}  before {e['before']:.2e}", flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
