"""Subjects alternating in *one* process: the shared machinery of ``interleave_w3.py``,
``interleave_torch.py``, ``interleave_ops.py`` and ``interleave_models.py``.

On this VM a process is fast or slow for its whole life, so two libraries timed in two
processes differ by the luck of the draw as much as by their code. Here every subject runs in
the same process, one repetition each per round, in an order that rotates every round (a
subject runs after each of the others equally often: what ran just before -- its freed
buffers, its cache lines -- moves the next), and ratios are taken pair by pair within a round.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import TypeVar

from threads import set_threads

T = TypeVar("T")


def one_thread() -> None:
    """One BLAS/OpenMP thread for every library imported after this call."""
    set_threads(1)


def alternate(subjects: dict[str, Callable[[], T]], reps: int) -> dict[str, list[T]]:
    """``reps`` rounds; each subject's results, in round order."""
    names = list(subjects)
    n = len(names)
    results: dict[str, list[T]] = {name: [] for name in names}
    for rep in range(reps):
        for name in names[rep % n:] + names[:rep % n]:
            results[name].append(subjects[name]())
    return results


def ratios(mine: Sequence[float], other: Sequence[float]) -> dict[str, float]:
    """The median of the round-by-round ratios, and the ratio of the best repetitions."""
    return {"ratio_median_of_pairs": statistics.median(a / b for a, b in zip(mine, other)),
            "ratio_best": min(mine) / min(other)}


#: the three subjects of a workload module's cases, and the ratios reported between them
SUBJECTS = ("numpy", "torch", "retrograd")
METRICS = ("step_ms", "fwd_ms", "bwd_ms")
PAIRS = (("retrograd", "torch"), ("retrograd", "numpy"), ("torch", "numpy"))


def measure_three(workload: str, params: dict, reps: int, threads: int) -> dict:
    """A workload's NumPy floor, torch and retrograd cases alternating for ``reps`` rounds:
    per metric, each subject's median and, per pair, the median-of-pairs and best ratios;
    and the floor's and retrograd's check against torch (``ok``, ``detail``)."""
    import check
    import libs
    import workloads

    mod = workloads.module(workload)
    cases = {"numpy": mod.make_case("numpy", params, None),
             "torch": mod.make_case("torch", params, libs.load("torch", threads=threads)),
             "retrograd": mod.make_case("retrograd", params, libs.load("retrograd"))}
    reference = cases["torch"].outputs()
    problems = []
    for name in ("numpy", "retrograd"):
        ok, detail = check.compare(reference, cases[name].outputs(), params["dtype"])
        if not ok:
            problems.append(f"{name}: {detail}")
    for case in cases.values():
        case.warmup()
    runs = alternate({name: case.rep for name, case in cases.items()}, reps)
    out: dict = {"ok": not problems, "detail": "; ".join(problems), "reps": reps}
    for metric in METRICS:
        series = {name: [r[metric] for r in runs[name]] for name in SUBJECTS}
        row: dict[str, float] = {name: statistics.median(v) for name, v in series.items()}
        for a, b in PAIRS:
            r = ratios(series[a], series[b])
            row[f"{a}/{b}"] = r["ratio_median_of_pairs"]
            row[f"{a}/{b} best"] = r["ratio_best"]
        out[metric] = row
    return out
