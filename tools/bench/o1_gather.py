"""O1: ``gather`` then ``scatter_add`` along the rows of a (1000, 1000) input, forward and
backward (see ``everyday.py``).

The program: ``y = x.gather(1, idx)``, ``z = b.scatter_add(1, idx, y)`` with ``x`` and ``b``
differentiable, ``idx`` a fixed int64 index (1000, 1000) drawn in ``[0, 1000)`` (repeated
positions: the scatter adds several terms into one place, and gather's backward does too).
The gradients: ``b`` gets ``g``; ``x`` gets ``scatter_add(0, idx, g.gather(1, idx))``.

The floor: ``take_along_axis`` for the gathers, and each scatter-add as one ``bincount`` over
the flat positions (row offset + index) with the values as weights -- NumPy's fastest
scatter-add (``np.add.at`` is several times slower); ``bincount`` accumulates in float64, so
the float32 floor casts its result back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from case import dtype_of, rng
from everyday import HEADLINES, Spec, case_maker, description, shape_of

__all__ = ["DESCRIPTION", "HEADLINES", "make_case"]
DESCRIPTION = description("gather(1, idx) then b.scatter_add(1, idx, .)")


def _scatter_add(base: np.ndarray, idx: np.ndarray, src: np.ndarray) -> np.ndarray:
    rows, cols = base.shape
    flat = (idx + np.arange(rows, dtype=np.int64)[:, None] * cols).ravel()
    added = np.bincount(flat, weights=src.ravel(), minlength=rows * cols)
    return base + added.reshape(rows, cols).astype(base.dtype, copy=False)


class GatherScatterAdd(Spec):
    leaves = 2

    def arrays(self, params: dict) -> list[np.ndarray]:
        rows, cols = shape_of(params)
        r = rng(11)
        dt = dtype_of(params)
        x = r.standard_normal((rows, cols)).astype(dt)
        b = r.standard_normal((rows, cols)).astype(dt)
        idx = r.integers(0, cols, (rows, cols), dtype=np.int64)
        return [x, b, idx]

    def program(self, mod: Any, x: Any, b: Any, idx: Any) -> Any:
        return mod.scatter_add(b, 1, idx, mod.gather(x, 1, idx))

    def floor_forward(self, x: np.ndarray, b: np.ndarray, idx: np.ndarray
                      ) -> tuple[np.ndarray, Any]:
        y = np.take_along_axis(x, idx, axis=1)
        return _scatter_add(b, idx, y), None

    def floor_backward(self, g: np.ndarray, saved: Any, x: np.ndarray, b: np.ndarray,
                       idx: np.ndarray) -> Sequence[np.ndarray]:
        gy = np.take_along_axis(g, idx, axis=1)  # scatter_add's gradient for its source
        gx = _scatter_add(np.zeros_like(x), idx, gy)  # gather's: a scatter-add into zeros
        return gx, g  # the base's gradient is g itself


make_case = case_maker(GatherScatterAdd())
