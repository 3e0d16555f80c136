"""What a workload hands the measuring child: one library's runnable instance of it.

A workload module exposes ``make_case(lib_name, params, ad)`` returning a ``Case``. ``ad`` is the
autograd adapter (libs.py) for "torch" and "retrograd", None for the hand-written NumPy floor.
"""

from __future__ import annotations

import numpy as np

Metrics = dict[str, float]


class Case:
    """One workload, one library, one size: the unit that is timed or measured."""

    def warmup(self) -> None:
        """Exercise every code path once before measuring (default: one full repetition)."""
        self.rep()

    def rep(self) -> Metrics:
        """Run one repetition; return its metrics (already in the reported unit)."""
        raise NotImplementedError

    def outputs(self) -> dict[str, np.ndarray]:
        """Run once and return the loss and gradients as float64 NumPy arrays (for --check)."""
        raise NotImplementedError


def rng(seed: int = 0) -> np.random.Generator:
    """Every library of one measurement starts from the same inputs (drawn with NumPy)."""
    return np.random.default_rng(seed)


def dtype_of(params: dict) -> np.dtype:
    return np.dtype({"f64": np.float64, "f32": np.float32}[params["dtype"]])
