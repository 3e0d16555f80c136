"""W1, W2, W3 and W5 on retrograd, torch and the NumPy floor in *one* process, repetition by
repetition: the tightest retrograd/torch ratio this VM allows.

The suite (``run.py``) gives each library its own processes, so that neither can warm or
pollute the other; the price is the shared VM's per-process lottery (a process is fast or slow
for its whole life: +-30% between two processes of the same library). Here the three subjects
share one process and one heap, run one thread each (``--threads 2``: the issue's two),
alternate in an order that rotates every repetition (``alternate.py``), and each ratio is
taken pair by pair (retrograd's repetition over torch's of the same round), then the median.
The workloads are the suite's own cases (``make_case``), so the programs are the same ones
``run.py`` times.

With two threads the two libraries' thread pools share the process and the two cores, and an
idle OpenBLAS thread busy-waits for its next call (2^28 cycles by default), taking a core from
torch's OpenMP threads: torch's W3 step took 1.3-1.9x as long. ``--threads`` above 1 therefore sets
``OPENBLAS_THREAD_TIMEOUT=4`` (the shortest wait) unless it is already set; this costs NumPy's
own back-to-back calls a few per cent, so it leans against retrograd and the floor, not for them.

    python tools/bench/interleave_torch.py             # W1 10^3/10^4, W2, W3 batch 64/512, W5
    python tools/bench/interleave_torch.py --workload W2 --dtype f64 --reps 80
    python tools/bench/interleave_torch.py --workload W3 --threads 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import alternate, ratios  # noqa: E402
from threads import set_threads  # noqa: E402

# (workload, params, repetitions by default)
CONFIGS = [
    ("W1", {"steps": 1_000}, 150),
    ("W1", {"steps": 10_000}, 30),
    ("W2", {"k": 1000}, 60),
    ("W3", {"batch": 64}, 100),
    ("W3", {"batch": 512}, 20),
    ("W5", {}, 300),
]


def measure(workload: str, params: dict, reps: int, threads: int) -> dict[str, dict[str, float]]:
    """Per metric: the three medians, and retrograd's ratios to torch and to the floor."""
    import libs
    import workloads

    mod = workloads.module(workload)
    cases = {"numpy": mod.make_case("numpy", params, None),
             "torch": mod.make_case("torch", params, libs.load("torch", threads=threads)),
             "retrograd": mod.make_case("retrograd", params, libs.load("retrograd"))}
    for case in cases.values():
        case.warmup()
    runs = alternate({name: case.rep for name, case in cases.items()}, reps)
    out: dict[str, dict[str, float]] = {}
    for metric in runs["retrograd"][0]:
        if metric not in runs["torch"][0]:
            continue
        rg = [r[metric] for r in runs["retrograd"]]
        th = [r[metric] for r in runs["torch"]]
        row = {"retrograd": statistics.median(rg), "torch": statistics.median(th),
               **ratios(rg, th)}
        if metric in runs["numpy"][0]:
            floor = [r[metric] for r in runs["numpy"]]
            row["numpy"] = statistics.median(floor)
            row["floor_ratio"] = ratios(rg, floor)["ratio_median_of_pairs"]
        out[metric] = row
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workload", action="append", choices=("W1", "W2", "W3", "W5"),
                    help="default: all four")
    ap.add_argument("--dtype", action="append", choices=("f64", "f32"), help="default: both")
    ap.add_argument("--reps", type=int, default=0, help="default: per workload (30-300)")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS/OpenMP threads for every subject (default 1)")
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error(f"--threads must be at least 1, got {args.threads}")
    set_threads(args.threads)
    threads = "one thread" if args.threads == 1 else f"{args.threads} threads"
    if args.threads > 1:
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # before NumPy loads: see above
        threads += f", OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}"
    print(f"| configuration ({threads}, one process) | metric | numpy | torch | retrograd | "
          "retrograd / torch (median of pairs) | (best) | retrograd / numpy (median of pairs) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for dtype in args.dtype or ["f64", "f32"]:
        for workload, params, default_reps in CONFIGS:
            if args.workload and workload not in args.workload:
                continue
            reps = args.reps or default_reps
            p = {**params, "dtype": dtype}
            label = " ".join(f"{k}={v}" for k, v in p.items())
            for metric, r in measure(workload, p, reps, args.threads).items():
                if "cpu" in metric:
                    continue  # the wall-clock figures: same threads, one process, same machine
                floor = f"{r['numpy']:.2f}" if "numpy" in r else "—"
                floor_ratio = f"{r['floor_ratio']:.3f}" if "floor_ratio" in r else "—"
                print(f"| {workload} {label} reps={reps} | {metric} | {floor} | "
                      f"{r['torch']:.2f} | {r['retrograd']:.2f} | "
                      f"{r['ratio_median_of_pairs']:.3f} | {r['ratio_best']:.3f} | "
                      f"{floor_ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
