"""The model steps (CNN, TRANSFORMER: ``models_cnn.py``, ``models_transformer.py``) on
retrograd, torch and the NumPy floor in *one* process, alternating repetition by repetition.

Each configuration builds the three subjects' cases (the suite's own ``make_case``), checks
each one's loss and gradients against torch's (``check.py``'s tolerances: float64 1e-9,
float32 1e-4 relative), warms them up, then runs ``--reps`` rounds in an order that rotates
every round (``alternate.py``). Reported per subject: the median repetition; per ratio: the
median of the round-by-round ratios (retrograd's repetition over torch's, or over the
floor's, of the same round) and the ratio of the best repetitions. One BLAS/OpenMP thread
for every subject unless ``--threads`` says otherwise.

    python tools/bench/interleave_models.py                       # both models, f32 and f64
    python tools/bench/interleave_models.py --workload CNN --dtype f32 --reps 60
    python tools/bench/interleave_models.py --batch 2 --seq 8 --reps 2   # a smoke run

Exit status 1 if a subject disagrees with torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import measure_three as measure  # noqa: E402
from threads import set_threads  # noqa: E402

WORKLOADS = ("CNN", "TRANSFORMER")


def _ms(v: float) -> str:
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workload", action="append", choices=WORKLOADS, help="default: both")
    ap.add_argument("--dtype", action="append", choices=("f32", "f64"), help="default: both")
    ap.add_argument("--reps", type=int, default=30, help="rounds per configuration (default 30)")
    ap.add_argument("--batch", type=int, default=0,
                    help="batch of both models (default: CNN 64, TRANSFORMER 16)")
    ap.add_argument("--seq", type=int, default=0, help="TRANSFORMER sequence (default 64)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS/OpenMP threads for every subject (default 1)")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.reps < 1 or args.batch < 0 or args.seq < 0:
        ap.error("--threads and --reps must be at least 1, --batch and --seq not negative")
    set_threads(args.threads)  # before NumPy or torch loads
    import workloads

    print(f"one process, {args.threads} thread(s), {args.reps} alternating rounds per row; "
          "times in ms (median of the repetitions); ratios: median of the round-by-round "
          "ratios (best: ratio of the best repetitions)")
    print("| workload | dtype | NumPy floor | torch | retrograd | retrograd / torch (best) | "
          "retrograd / floor (best) | torch / floor | forward: floor, torch, retrograd | "
          "backward: floor, torch, retrograd |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    failed = []
    for workload in args.workload or list(WORKLOADS):
        for dtype in args.dtype or ["f32", "f64"]:
            params: dict = {"dtype": dtype}
            if args.batch:
                params["batch"] = args.batch
            if args.seq and workload == "TRANSFORMER":
                params["seq"] = args.seq
            r = measure(workload, params, args.reps, args.threads)
            s, f, b = r["step_ms"], r["fwd_ms"], r["bwd_ms"]
            what = workloads.DESCRIPTIONS[workload].split(":")[0]
            print(f"| {what} | {dtype} | {_ms(s['numpy'])} | {_ms(s['torch'])} | "
                  f"{_ms(s['retrograd'])} | {s['retrograd/torch']:.2f} "
                  f"({s['retrograd/torch best']:.2f}) | {s['retrograd/numpy']:.2f} "
                  f"({s['retrograd/numpy best']:.2f}) | {s['torch/numpy']:.2f} | "
                  f"{_ms(f['numpy'])}, {_ms(f['torch'])}, {_ms(f['retrograd'])} | "
                  f"{_ms(b['numpy'])}, {_ms(b['torch'])}, {_ms(b['retrograd'])} |", flush=True)
            if not r["ok"]:
                failed.append(f"{workload} {dtype}: {r['detail']}")
    for line in failed:
        print(f"CHECK FAILED {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
