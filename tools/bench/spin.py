"""Repeat one workload's repetition for a while: the target for a sampling profiler.

cProfile charges every call it sees, so code made of many small calls (the engine) looks 2-3x
slower than it is and its shares shift; a sampling profiler does not touch the program:

    pip install py-spy
    py-spy record -r 2000 -f raw -o out/w5.raw -- python tools/bench/spin.py W5 --seconds 20
    python tools/bench/spy_report.py out/w5.raw

W1's repetition is its forward and backward; ``--phase forward`` spins only the forward.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import set_threads  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("workload", choices=("W1", "W2", "W3", "W4", "W5"))
    ap.add_argument("--lib", default="retrograd", choices=("retrograd", "torch", "numpy"))
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--phase", default="rep", choices=("rep", "forward"))
    ap.add_argument("--steps", type=int, default=10_000, help="W1 chain length")
    ap.add_argument("--batch", type=int, default=64, help="W3/W4 batch")
    ap.add_argument("--dtype", default="f64", choices=("f64", "f32"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    set_threads(args.threads)  # before libs imports NumPy and the library
    import libs
    import workloads

    ad = None if args.lib == "numpy" else libs.load(args.lib, threads=args.threads)
    params = workloads.params_for(args.workload, args.dtype, args.steps, args.batch)
    case = workloads.module(args.workload).make_case(args.lib, params, ad)
    case.warmup()
    if args.phase == "forward" and args.workload == "W1" and ad is not None:
        def once() -> object:
            return case._forward(args.steps)
    else:
        once = case.rep
    gc.collect = lambda *a: 0  # rep() settles the heap first: not the workload, not sampled
    n = _spin(once, args.seconds)
    print(f"{args.lib} {args.workload} {args.phase} {params}: {n} repetitions")
    return 0


def _spin(once: Callable[[], object], seconds: float) -> int:
    """The sampled loop (``spy_report.py`` counts only the samples taken below this frame)."""
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        once()
        n += 1
    return n


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
