"""The op-database records: an op and its sample inputs."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Sample:
    """One call of an op: the differentiable inputs' shapes and how to call.

    ``call(lib, *tensors)`` returns the op's output. ``domain`` bounds the magnitudes of the
    generated values; ``positive`` makes them positive (log, sqrt, a pow base). Values are
    distinct and at least 0.05 from zero, so kinks and ties are never sampled.
    """

    label: str
    shapes: tuple[tuple[int, ...], ...]
    call: Callable[..., Any]
    domain: tuple[float, float] = (0.2, 1.8)
    positive: bool = False
    avoid: tuple[float, ...] = ()

    def arrays(self, op: str) -> list[np.ndarray]:
        """Deterministic inputs (seeded by the op and the label)."""
        rng = np.random.default_rng(zlib.crc32(f"{op}/{self.label}".encode()))
        lo, hi = self.domain
        used: set[float] = set()
        out = []
        for shape in self.shapes:
            flat = []
            for _ in range(int(np.prod(shape, dtype=np.int64))):
                while True:
                    v = round(float(rng.uniform(lo, hi)), 4)
                    if not self.positive and rng.random() < 0.5:
                        v = -v
                    if v not in used and all(abs(v - a) > 0.05 for a in self.avoid):
                        used.add(v)
                        flat.append(v)
                        break
            out.append(np.asarray(flat, dtype=np.float64).reshape(shape))
        return out


@dataclass(frozen=True)
class OpInfo:
    """An op (by core's registry name) and its samples. ``aliases`` are the other registry
    names the same entry covers (e.g. ``rsub`` under ``sub``)."""

    name: str
    samples: tuple[Sample, ...]
    aliases: tuple[str, ...] = ()
    gradgrad: bool = True
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
