"""W1 and W3 on every available retrograd backend, in *one* process, alternating: each
backend's step time and its ratio to the ``cpu`` backend's (median of the round-by-round
ratios). The table of docs/backends.md's speed section.

    python tools/bench/interleave_backends.py                  # every available backend
    python tools/bench/interleave_backends.py --backends cpu,torch --reps 30
    python tools/bench/interleave_backends.py --quick          # it runs (tiny sizes)

W1: the chain ``y = tanh(y * 1.0001 + 0.001)`` on 16 elements, forward and backward, per node
(the engine's own cost: the arrays are tiny). W3: the MLP 784-1024-1024-10 with ReLU and mean
cross-entropy, forward and backward (batch 64; float32). One BLAS thread. The gradients of
every backend are checked against the cpu backend's first (a wrong backend's time means
nothing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from alternate import alternate, one_thread  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def w1(rg: Any, device: str, steps: int) -> tuple[Any, Any]:
    """(one timed repetition, its gradient) for W1 on ``device``."""
    import numpy as np

    x0 = (np.random.default_rng(1).standard_normal(16) * 0.5).astype(np.float32)

    def run() -> tuple[float, Any]:
        x = rg.tensor(x0, device=device, requires_grad=True)
        t0 = time.perf_counter()
        y = x
        for _ in range(steps):
            y = (y * 1.0001 + 0.001).tanh()
        y.sum().backward()
        return (time.perf_counter() - t0) / (3 * steps) * 1e6, x.grad.cpu().numpy()

    return run, run()[1]


def w3(rg: Any, device: str, batch: int) -> tuple[Any, Any]:
    """(one timed repetition, the first weight's gradient) for W3 on ``device``."""
    import numpy as np

    r = np.random.default_rng(0)
    dims = [784, 1024, 1024, 10]
    x = rg.tensor(r.standard_normal((batch, 784)).astype(np.float32), device=device)
    y = rg.tensor(r.integers(0, 10, batch), device=device)
    ws = [rg.tensor((r.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32),
                    device=device, requires_grad=True) for i, o in zip(dims, dims[1:])]
    F = rg.nn.functional

    def run() -> tuple[float, Any]:
        for w in ws:
            w.grad = None
        t0 = time.perf_counter()
        h = x
        for k, w in enumerate(ws):
            h = F.linear(h, w)
            if k < len(ws) - 1:
                h = F.relu(h)
        F.cross_entropy(h, y).backward()
        return (time.perf_counter() - t0) * 1e3, ws[0].grad.cpu().numpy()

    return run, run()[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", help="comma-separated (default: every available one)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "out" / "bench"))
    args = ap.parse_args(argv)
    one_thread()
    import numpy as np

    import retrograd as rg

    names = args.backends.split(",") if args.backends else [
        n for n in rg.available_backends() if rg.get_backend(n).is_available()]
    if "cpu" not in names:
        names = ["cpu", *names]
    steps, batch, reps = (50, 8, 2) if args.quick else (1000, 64, args.reps)
    rows: dict[str, dict[str, float]] = {}
    problems = []
    for label, make, unit in (("W1", lambda d: w1(rg, d, steps), "us/node"),
                              ("W3", lambda d: w3(rg, d, batch), "ms/step")):
        runs, grads = {}, {}
        for name in names:
            runs[name], grads[name] = make(name)
        for name in names:
            if not np.allclose(grads[name], grads["cpu"], rtol=1e-4, atol=1e-6):
                problems.append(f"{label} on {name}: gradient differs from the cpu backend's")
        for run in runs.values():
            run()  # warm-up
        series = alternate({n: (lambda r=runs[n]: r()[0]) for n in names}, reps)
        for name in names:
            row = rows.setdefault(name, {})
            row[f"{label} {unit}"] = statistics.median(series[name])
            row[f"{label} / cpu"] = statistics.median(
                a / b for a, b in zip(series[name], series["cpu"], strict=True))
    cols = ["W1 us/node", "W1 / cpu", "W3 ms/step", "W3 / cpu"]
    lines = ["| backend | " + " | ".join(cols) + " |", "|" + " --- |" * (len(cols) + 1)]
    for name, row in rows.items():
        lines.append(f"| `{name}` | " + " | ".join(f"{row[c]:.2f}" for c in cols) + " |")
    text = "\n".join(lines)
    print(text)
    for p in problems:
        print("PROBLEM:", p)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "backends.json").write_text(json.dumps({"rows": rows, "problems": problems,
                                                   "reps": reps, "quick": args.quick}, indent=1))
    (out / "backends.md").write_text(text + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
