"""Where retrograd's time goes in a model step (CNN, TRANSFORMER): a cProfile of forward +
backward, its self time grouped by kind.

    python tools/bench/profile_models.py                          # both models, f32
    python tools/bench/profile_models.py --workload CNN --dtype f64 --reps 10
    python tools/bench/profile_models.py --batch 2 --seq 8 --top 3  # a smoke run

The groups (``kind``):

- ``GEMM``: matrix products: ``operator.matmul``/``np.matmul``/``dot``/``einsum`` calls, and
  the self time of functions whose job is one product (``gemm.py``'s ``matmul_wt``; the
  convolution kernels ``conv_nd``, ``conv_weight_nd``, ``conv_transpose_nd``, whose
  ``np.matmul`` is a ufunc call that cProfile counts in the caller);
- ``copies``: moving data without arithmetic: ``np.stack``/``concatenate``/``copy``/
  ``astype``, reshapes that copy, allocations (``zeros``/``full``/``empty``), item assignment,
  and the im2col/col2im gathers and scatters of ``kernels_conv.py``;
- ``elementwise``: every other NumPy call (ufuncs, reductions, ``where``, ``argmax`` ...) and
  the self time of other Python functions that spend >= ``--inline-us`` per call (their time is
  array arithmetic written inline, e.g. ``a * b`` in a kernel's body);
- ``python``: the self time of Python functions under ``--inline-us`` per call: the
  interpreter running retrograd's autograd, dispatch and shape logic (and NumPy's Python
  wrappers).

cProfile adds a cost to every Python call, so the profiled total exceeds the plain one; the
unprofiled step (median of ``--reps``) of retrograd, torch and the NumPy floor is printed
first, and the groups are read as shares.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import set_threads  # noqa: E402

# conv_nd, conv_weight_nd, conv_transpose_nd (kernels_conv.py): their self time is their
# batched np.matmul, a ufunc, which cProfile does not see as a call of its own
GEMM_NAMES = ("matmul", "dot", "einsum", "tensordot", "inner", "matmul_wt", "conv_nd",
              "conv_weight_nd", "conv_transpose_nd")
COPY_NAMES = ("stack", "concatenate", "copy", "astype", "reshape", "zeros", "empty", "full",
              "ascontiguousarray", "setitem", "col2im", "windows", "_cols", "pad",
              "_channels_first", "broadcast_to", "take", "repeat")
KINDS = ("GEMM", "copies", "elementwise", "python")


def kind_of(key: tuple[str, int, str], calls: int, self_s: float, inline_us: float) -> str:
    """The group of one profile entry (see the module's docstring)."""
    path, _line, name = key
    bare = _bare(name)
    if bare in GEMM_NAMES:
        return "GEMM"
    if bare in COPY_NAMES or bare.lstrip("_") in COPY_NAMES:
        return "copies"
    if path == "~":  # a builtin: NumPy's C entry points, operator.*, gc, ...
        return "elementwise"
    return "elementwise" if self_s / max(calls, 1) * 1e6 >= inline_us else "python"


def _bare(name: str) -> str:
    """A function's own name: ``<method 'reshape' of 'numpy.ndarray' objects>`` -> reshape,
    ``<built-in method numpy.zeros>`` -> zeros, ``stack`` -> stack."""
    if name.startswith("<method '"):
        return name.split("'")[1]
    if name.startswith("<built-in method "):
        return name[len("<built-in method "):-1].split(".")[-1]
    return name


def _where(key: tuple[str, int, str]) -> str:
    path, line, name = key
    if path == "~":
        return name
    for anchor in ("/retrograd/", "/numpy/", "/tools/bench/"):
        if anchor in path:
            return anchor.strip("/") + "/" + path.split(anchor, 1)[1] + f":{line} {name}"
    return f"{Path(path).name}:{line} {name}"


def _step(case: Any) -> None:
    model = case.model
    model.zero_grad()
    model.forward().backward()


def _median_ms(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def profile(workload: str, params: dict, reps: int, top: int, inline_us: float) -> str:
    """The report of one configuration: the plain steps, the groups, each group's top entries."""
    import libs
    import workloads

    mod = workloads.module(workload)
    rg = mod.make_case("retrograd", params, libs.load("retrograd"))
    th = mod.make_case("torch", params, libs.load("torch", threads=1))
    floor = mod.make_case("numpy", params, None)
    for case in (rg, th, floor):
        case.warmup()
    plain = {"retrograd": _median_ms(lambda: _step(rg), reps),
             "torch": _median_ms(lambda: _step(th), reps),
             "numpy floor": _median_ms(lambda: floor.floor.backward(floor.floor.forward()[1]),
                                       reps)}
    prof = cProfile.Profile()
    gc.collect()
    prof.enable()
    for _ in range(reps):
        _step(rg)
    prof.disable()
    stats: dict = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    groups: dict[str, float] = defaultdict(float)
    entries: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for key, (_cc, calls, tt, _ct, _callers) in stats.items():
        k = kind_of(key, calls, tt, inline_us)
        groups[k] += tt
        entries[k].append((tt, calls, _where(key)))
    total = sum(groups.values())
    lines = [f"{workload} {params}: unprofiled step (median of {reps}): "
             + ", ".join(f"{k} {v:.1f} ms" for k, v in plain.items()),
             f"retrograd under cProfile: {total / reps * 1e3:.1f} ms a step; self time by kind:"]
    for k in KINDS:
        lines.append(f"  {k:12s} {groups[k] / reps * 1e3:8.2f} ms  {100 * groups[k] / total:5.1f}%")
        for tt, calls, where in sorted(entries[k], reverse=True)[:top]:
            lines.append(f"      {tt / reps * 1e3:7.2f} ms {calls / reps:6.1f} calls  {where}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workload", action="append", choices=("CNN", "TRANSFORMER"),
                    help="default: both")
    ap.add_argument("--dtype", default="f32", choices=("f32", "f64"))
    ap.add_argument("--reps", type=int, default=5, help="steps profiled and timed (default 5)")
    ap.add_argument("--batch", type=int, default=0, help="default: CNN 64, TRANSFORMER 16")
    ap.add_argument("--seq", type=int, default=0, help="TRANSFORMER sequence (default 64)")
    ap.add_argument("--top", type=int, default=6, help="entries shown per kind (default 6)")
    ap.add_argument("--inline-us", type=float, default=20.0,
                    help="self time per call from which a Python function counts as array "
                         "work (default 20)")
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.threads < 1:
        ap.error("--reps and --threads must be at least 1")
    set_threads(args.threads)  # before NumPy or torch loads
    for workload in args.workload or ["CNN", "TRANSFORMER"]:
        params: dict = {"dtype": args.dtype}
        if args.batch:
            params["batch"] = args.batch
        if args.seq and workload == "TRANSFORMER":
            params["seq"] = args.seq
        print(profile(workload, params, args.reps, args.top, args.inline_us), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
