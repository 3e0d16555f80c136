"""cProfile of one region, reported per graph node: where each node's microseconds go.

cProfile adds a fixed cost to every Python call, so absolute profiled times are inflated (often
2-3x for code made of many small calls); the *unprofiled* time of the same region is measured
first and printed beside it, and the profile is read for its shares and its calls per node.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import time
from collections import Counter
from collections.abc import Callable
from typing import Any


class GCMeter:
    """Counts the cyclic collector's runs per generation and the time spent in them."""

    def __init__(self) -> None:
        self.runs = [0, 0, 0]
        self.seconds = 0.0
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.runs[info["generation"]] += 1
            self.seconds += time.perf_counter() - self._t0

    def __enter__(self) -> GCMeter:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def tracked_per_node(build: Callable[[], Any], nodes: int) -> tuple[float, dict[str, float]]:
    """GC-tracked objects that ``build()``'s result keeps alive, per node, by type.

    Every such object is traversed by each collection of its generation; a graph made of few
    tracked objects per node is what keeps the collector out of a deep forward pass.
    """
    gc.collect()
    before = Counter(type(o).__name__ for o in gc.get_objects())
    keep = build()
    gc.collect()
    after = Counter(type(o).__name__ for o in gc.get_objects())
    del keep
    diff = {k: (after[k] - before[k]) / nodes for k in after if after[k] - before[k] > 0}
    diff = {k: v for k, v in sorted(diff.items(), key=lambda kv: -kv[1]) if v >= 0.01}
    return sum(diff.values()), diff


def _where(key: tuple[str, int, str]) -> str:
    path, line, name = key
    if path == "~":
        return name  # a builtin, e.g. <method 'append' of 'list' objects>
    for anchor in ("/retrograd/", "/torch/", "/numpy/", "/tools/bench/"):
        if anchor in path:
            path = anchor.strip("/") + "/" + path.split(anchor, 1)[1]
            break
    return f"{path}:{line} {name}"


def profile_region(
    setup: Callable[[], Any], region: Callable[[Any], Any], nodes: int, *, top: int = 25
) -> str:
    """Time ``region(setup())`` unprofiled, then under cProfile; return a per-node report."""
    state = setup()
    with GCMeter() as meter:
        t0 = time.perf_counter()
        region(state)
        plain = time.perf_counter() - t0
    del state

    state = setup()
    prof = cProfile.Profile()
    prof.enable()
    region(state)
    prof.disable()
    del state

    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)  # type: ignore[attr-defined]
    lines = [
        f"nodes: {nodes}   unprofiled: {plain / nodes * 1e6:.3f} us/node   "
        f"profiled: {total / nodes * 1e6:.3f} us/node (cProfile overhead included)",
        f"cyclic GC during the unprofiled run: {meter.runs[0]}/{meter.runs[1]}/{meter.runs[2]} "
        f"collections (gen 0/1/2), {meter.seconds * 1e3:.1f} ms = "
        f"{100 * meter.seconds / plain:.0f}% of the region",
        "",
        f"{'calls/node':>10} {'self us/node':>12} {'cum us/node':>11} {'self %':>7}  function",
    ]
    for key, (_cc, nc, tt, ct, _callers) in rows[:top]:
        lines.append(
            f"{nc / nodes:10.2f} {tt / nodes * 1e6:12.3f} {ct / nodes * 1e6:11.3f} "
            f"{100 * tt / total:6.1f}%  {_where(key)}"
        )
    return "\n".join(lines)
