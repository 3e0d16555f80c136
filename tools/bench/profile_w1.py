"""cProfile of retrograd's W1 (the deep tanh chain): where each node's time goes.

    python tools/bench/profile_w1.py                      backward, 10^4 steps, float64
    python tools/bench/profile_w1.py --phase forward      the forward (graph construction)
    python tools/bench/profile_w1.py --lib torch          the same for torch (mostly C: opaque)
    python tools/bench/profile_w1.py --workload W3 --phase step   any workload's repetition

For W1 the region is the backward of one fresh chain (or its forward); nodes = 3 * steps. For
the other workloads (``--workload``) the region is one ``rep()`` of the benchmark's own case and
nodes is the workload's node count where it has one (else 1: figures per repetition).
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import set_threads  # noqa: E402


def _args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lib", default="retrograd", choices=("retrograd", "torch"))
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--workload", default="W1", choices=("W1", "W2", "W3", "W4", "W5"))
    ap.add_argument("--phase", default="backward", choices=("forward", "backward", "step"))
    ap.add_argument("--steps", type=int, default=10_000, help="W1 chain length")
    ap.add_argument("--batch", type=int, default=64, help="W3/W4 batch")
    ap.add_argument("--dtype", default="f64", choices=("f64", "f32"))
    ap.add_argument("--fusion", default="on", choices=("on", "off"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _args(argv)
    set_threads(args.threads)  # before libs imports NumPy and the library
    import libs
    import workloads
    from profiling import profile_region, tracked_per_node

    ad = libs.load(args.lib, backend=args.backend, threads=args.threads)
    if args.lib == "retrograd":
        ad.set_fusion(args.fusion == "on")
    params = workloads.params_for(args.workload, args.dtype, args.steps, args.batch)
    case = workloads.module(args.workload).make_case(args.lib, params, ad)
    case.warmup()

    if args.workload == "W1" and args.phase != "step":
        nodes = 3 * args.steps

        def setup():
            case.x.grad = None
            gc.collect()
            return None if args.phase == "forward" else case._forward(args.steps).sum()

        def region(state):
            if args.phase == "forward":
                return case._forward(args.steps)
            state.backward()
    else:
        from w2_fanout import _nodes

        nodes = _nodes(1000) if args.workload == "W2" else 1

        def setup():
            gc.collect()

        def region(_state):
            # rep() settles the heap with gc.collect() before its timed region; that settling is
            # not the workload, so it is switched off while the profiler runs
            collect, gc.collect = gc.collect, lambda *a: 0
            try:
                case.rep()
            finally:
                gc.collect = collect

    print(f"{args.lib} {args.workload} {args.phase} {params} fusion={args.fusion}")
    print(profile_region(setup, region, nodes, top=args.top))
    if args.workload == "W1":
        total, by_type = tracked_per_node(lambda: case._forward(args.steps), 3 * args.steps)
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in by_type.items())
        print(f"\nGC-tracked objects a W1 graph keeps alive: {total:.2f} per node ({kinds})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
