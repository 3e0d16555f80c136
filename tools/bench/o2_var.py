"""O2: ``var`` over the rows of a (1000, 1000) input (``dim=1``, the default correction 1),
forward and backward (see ``everyday.py``).

The gradient: ``g[:, None] * 2 * (x - mean) / (n - 1)``. The floor computes the mean, the
deviations ``d = x - mean`` and ``sum(d * d) / (n - 1)`` in the forward, keeps ``d`` for the
backward and scales it there (one multiply of the (1000, 1000) array, one of the rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from case import dtype_of, rng
from everyday import HEADLINES, Spec, case_maker, description, shape_of

__all__ = ["DESCRIPTION", "HEADLINES", "make_case"]
DESCRIPTION = description("var(dim=1)")


class Var(Spec):
    def arrays(self, params: dict) -> list[np.ndarray]:
        return [rng(12).standard_normal(shape_of(params)).astype(dtype_of(params))]

    def program(self, mod: Any, x: Any) -> Any:
        return mod.var(x, 1)

    def floor_forward(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        n = x.shape[1]
        d = x - x.mean(axis=1, keepdims=True)
        return np.einsum("ij,ij->i", d, d) / (n - 1), d

    def floor_backward(self, g: np.ndarray, d: Any, x: np.ndarray) -> Sequence[np.ndarray]:
        n = x.shape[1]
        return (d * (g * (2.0 / (n - 1))).astype(x.dtype)[:, None],)


make_case = case_maker(Var())
