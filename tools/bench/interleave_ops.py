"""The everyday-op workloads (O1 gather + scatter_add, O2 var, O3 cumsum; ``everyday.py``) on
retrograd, torch and the NumPy floor in *one* process, alternating repetition by repetition.

Each configuration builds the three subjects' cases (the suite's own ``make_case``), first
checks each one's output and gradients against torch's (``check.py``'s tolerances: float64
1e-9, float32 1e-4, relative to the largest magnitude), warms them up, then runs ``--reps``
rounds in an order that rotates every round (``alternate.py``). Reported: the median of each
subject's repetitions, and the ratios as the median of the round-by-round ratios (retrograd's
repetition over torch's, or over the floor's, of the same round). One BLAS/OpenMP thread for
every subject unless ``--threads`` says otherwise.

    python tools/bench/interleave_ops.py                   # O1-O3, f32 and f64, 10^6 elements
    python tools/bench/interleave_ops.py --workload O2 --dtype f64 --reps 60
    python tools/bench/interleave_ops.py --rows 20 --cols 50 --reps 2   # a smoke run

Exit status 1 if a subject disagrees with torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import measure_three as measure  # noqa: E402
from threads import set_threads  # noqa: E402

WORKLOADS = ("O1", "O2", "O3")


def _ms(v: float) -> str:
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workload", action="append", choices=WORKLOADS, help="default: all three")
    ap.add_argument("--dtype", action="append", choices=("f32", "f64"), help="default: both")
    ap.add_argument("--reps", type=int, default=40, help="rounds per configuration (default 40)")
    ap.add_argument("--rows", type=int, default=1000, help="default 1000")
    ap.add_argument("--cols", type=int, default=1000, help="default 1000")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS/OpenMP threads for every subject (default 1)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.reps < 1:
        ap.error("--threads and --reps must be at least 1")
    set_threads(args.threads)  # before NumPy or torch loads
    import workloads

    print(f"one process, {args.threads} thread(s), {args.rows} x {args.cols} elements, "
          f"{args.reps} alternating rounds per row; times in ms (median)")
    print("| workload | dtype | NumPy floor | torch | retrograd | retrograd / torch | "
          "retrograd / floor | torch / floor | forward: torch, retrograd | "
          "backward: torch, retrograd |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    failed = []
    for workload in args.workload or list(WORKLOADS):
        for dtype in args.dtype or ["f32", "f64"]:
            params = {"dtype": dtype, "rows": args.rows, "cols": args.cols}
            r = measure(workload, params, args.reps, args.threads)
            s, f, b = r["step_ms"], r["fwd_ms"], r["bwd_ms"]
            what = workloads.DESCRIPTIONS[workload].split(",")[0]
            print(f"| {workload} {what} | {dtype} | {_ms(s['numpy'])} | {_ms(s['torch'])} | "
                  f"{_ms(s['retrograd'])} | {s['retrograd/torch']:.2f} | "
                  f"{s['retrograd/numpy']:.2f} | {s['torch/numpy']:.2f} | "
                  f"{_ms(f['torch'])}, {_ms(f['retrograd'])} | "
                  f"{_ms(b['torch'])}, {_ms(b['retrograd'])} |", flush=True)
            if not r["ok"]:
                failed.append(f"{workload} {dtype}: {r['detail']}")
    for line in failed:
        print(f"CHECK FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
