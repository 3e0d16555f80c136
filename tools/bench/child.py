"""One measurement in a fresh process: one library, one workload, one configuration.

Usage (by run.py): ``python child.py '<json spec>'``. The spec names the workload, the library,
its parameters, the thread count and the mode:

- ``time``: warm-up, then repetitions until ``budget_s`` of measuring (between ``min_reps`` and
  ``max_reps``); the result holds every repetition's metrics and their medians.
- ``memory``: warm-up, then exactly one measured repetition (W4: the first large step).
- ``check``: one run; the loss and gradients as lists, for comparison with torch.

The thread variables are set before NumPy or torch is imported (they are read at load time),
and torch additionally gets ``torch.set_num_threads``. The result is printed as one line
prefixed with ``BENCH-RESULT``; anything else on stdout is ignored by the parent.
"""

from __future__ import annotations

import json
import os
import sys

MARKER = "BENCH-RESULT "


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _summarise(samples: list[dict]) -> dict:
    medians, extra = {}, {}
    for key, value in samples[0].items():
        if isinstance(value, int | float):
            medians[key] = _median([float(s[key]) for s in samples])
        else:
            extra[key] = value
    return {"median": medians, "samples": samples, "reps": len(samples), **extra}


def _time(case, spec: dict) -> dict:
    import time

    for _ in range(int(spec.get("warmup", 1))):
        case.warmup()
    t0 = time.perf_counter()
    samples = [case.rep()]
    first = time.perf_counter() - t0
    budget = float(spec.get("budget_s", 1.0))
    reps = int(
        max(spec.get("min_reps", 1), min(spec.get("max_reps", 1), budget // max(first, 1e-9)))
    )
    samples += [case.rep() for _ in range(reps - 1)]
    return _summarise(samples)


def _memory(case, spec: dict) -> dict:
    for _ in range(int(spec.get("warmup", 1))):
        case.warmup()
    return _summarise([case.rep()])


def _check(case, spec: dict) -> dict:
    outputs = case.outputs()
    return {
        "outputs": {k: v.astype("float64").tolist() for k, v in outputs.items()},
        "dtypes": {k: str(v.dtype) for k, v in outputs.items()},
    }


def _versions(ad) -> dict:
    import platform

    import numpy as np

    v = {"python": platform.python_version(), "numpy": np.__version__}
    if ad is not None:
        v[ad.name] = ad.version
        v[ad.name + "_path"] = os.path.dirname(ad.mod.__file__)
    return v


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from threads import set_threads

    set_threads(int(spec["threads"]))  # before libs imports NumPy and the library
    import gc

    import libs
    import workloads

    lib = spec["lib"]
    ad = None
    if lib != "numpy":
        ad = libs.load(lib, backend=spec.get("backend", "cpu"), threads=int(spec["threads"]))
    params = dict(spec["params"])
    fusion = params.pop("fusion", None)
    if fusion is not None and ad is not None:
        ad.set_fusion(bool(fusion))
    case = workloads.module(spec["workload"]).make_case(lib, params, ad)
    mode = spec.get("mode", "time")
    run = {"time": _time, "memory": _memory, "check": _check}[mode]
    result = run(case, spec)
    result["versions"] = _versions(ad)
    result["gc_enabled"] = gc.isenabled()
    if ad is not None and ad.name == "torch":
        result["torch_threads"] = ad.mod.get_num_threads()
    print(MARKER + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
