"""Subjects alternating in *one* process: the shared machinery of ``interleave_w3.py`` and
``interleave_torch.py``.

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
