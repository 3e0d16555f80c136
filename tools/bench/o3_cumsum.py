"""O3: ``cumsum`` along the rows of a (1000, 1000) input (``dim=1``), forward and backward
(see ``everyday.py``).

The gradient is the running sum of ``g`` from the end of each row. The floor: ``np.cumsum``
forward, and ``cumsum`` of the reversed rows, reversed back, backward (views for the
reversals). Like PyTorch's CPU kernel (and retrograd's), the float32 floor accumulates in
float64 and casts the result back: the same values, not a cheaper, less accurate sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from case import dtype_of, rng
from everyday import HEADLINES, Spec, case_maker, description, shape_of

__all__ = ["DESCRIPTION", "HEADLINES", "make_case"]
DESCRIPTION = description("cumsum(dim=1)")


class Cumsum(Spec):
    def arrays(self, params: dict) -> list[np.ndarray]:
        return [rng(13).standard_normal(shape_of(params)).astype(dtype_of(params))]

    def program(self, mod: Any, x: Any) -> Any:
        return mod.cumsum(x, 1)

    def floor_forward(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        return _running(x), None

    def floor_backward(self, g: np.ndarray, saved: Any, x: np.ndarray) -> Sequence[np.ndarray]:
        return (_running(g[:, ::-1])[:, ::-1],)


def _running(a: np.ndarray) -> np.ndarray:
    """The running sum along the rows, accumulated in float64 for float32."""
    if a.dtype == np.float32:
        return np.cumsum(a, axis=1, dtype=np.float64).astype(np.float32)
    return np.cumsum(a, axis=1)


make_case = case_maker(Cumsum())
