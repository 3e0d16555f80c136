"""W3 against its NumPy floor step by step in *one* process: the tightest floor ratio this VM
allows.

The suite (``run.py``) gives each library its own processes, as it must to compare with torch;
on a shared VM a process is fast or slow for its whole life, so a W3 ratio of 1.0 +- 0.1 there
is noise. Here retrograd (fusion on and off) and the floor alternate repetition by repetition
in one process and one heap, one BLAS thread, timed in process CPU time, in an order that
rotates every repetition (``alternate.py``); the ratio is taken pair by pair (each retrograd
step over the floor step of the same repetition), then the median.

    python tools/bench/interleave_w3.py                    # batch 64 and 512, f64 and f32
    python tools/bench/interleave_w3.py --batch 64 --dtype f64 --reps 200
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import alternate, one_thread, ratios  # noqa: E402

DIMS = [784, 1024, 1024, 10]


def measure(batch: int, dtype: str, reps: int) -> dict[str, dict[str, float]]:
    import libs
    from mlp import AutogradMLP, NumpyMLP

    ad = libs.load("retrograd", threads=1)
    from retrograd.autograd import Engine

    params = {"dims": DIMS, "batch": batch, "dtype": dtype}
    model, floor = AutogradMLP(ad, params), NumpyMLP(params)

    def autograd_step(fuse: bool) -> None:
        model.zero_grad()
        Engine.backward(model.forward(), fuse=fuse)

    def floor_step() -> None:
        _, state = floor.forward()
        floor.grads = floor.backward(state)

    subjects = {"numpy": floor_step, "retrograd": lambda: autograd_step(True),
                "retrograd-unfused": lambda: autograd_step(False)}
    for _ in range(3):
        for step in subjects.values():
            step()

    def timed(step: Callable[[], None]) -> Callable[[], float]:
        def run() -> float:
            gc.collect()
            c0 = time.process_time()
            step()
            return (time.process_time() - c0) * 1e3
        return run

    times = alternate({name: timed(step) for name, step in subjects.items()}, reps)
    out = {}
    for name, ts in times.items():
        out[name] = {"median_ms": statistics.median(ts), "best_ms": min(ts),
                     **ratios(ts, times["numpy"])}
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--batch", type=int, action="append", help="default: 64 and 512")
    ap.add_argument("--dtype", action="append", choices=("f64", "f32"), help="default: both")
    ap.add_argument("--reps", type=int, default=0, help="default: 150 at batch 64, 30 at 512")
    args = ap.parse_args(argv)
    one_thread()
    print("| W3 (one thread, one process) | subject | median ms | best ms | "
          "ratio to the floor (median of pairs) | ratio (best) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for dtype in args.dtype or ["f64", "f32"]:
        for batch in args.batch or [64, 512]:
            reps = args.reps or (150 if batch <= 64 else 30)
            for name, r in measure(batch, dtype, reps).items():
                print(f"| batch={batch} dtype={dtype} reps={reps} | {name} | "
                      f"{r['median_ms']:.2f} | {r['best_ms']:.2f} | "
                      f"{r['ratio_median_of_pairs']:.3f} | {r['ratio_best']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
