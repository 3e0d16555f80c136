"""The ``<op>/accuracy`` rows: each elementary function on a dense grid across its domain.

The op entries compare with a tolerance (2e-4 relative in float32) that a function a few
units in the last place (ulps) off everywhere passes. That is not harmless: the backward
formulas are written with the forward's value (tanh's derivative is ``1 - y^2``, sigmoid's
``y (1 - y)``), so near saturation a few ulps of ``y`` are a large part of the derivative
(4 ulps of float32 in tanh(6) move its derivative by 2%). These rows check the forward of
each function on 65,536 points spread over its domain, both dtypes, every element within
:data:`~retrograd_conformance.compare.ACCURACY_ULPS` ulps (4 in float32, 8 in float64) of the
exact value (for float32 inputs PyTorch's float64 result; for float64 ones PyTorch's own,
itself within an ulp). A failure names the worst input, its error in ulps and how many
elements are past the bound.

The grids stay where the result is a normal number of float32 (no overflow, no subnormals,
which some libraries flush to zero on the CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .sweeps import SweepInfo, SweepSample, _const, _row

POINTS = 65_536


def _linear(lo: float, hi: float) -> np.ndarray:
    return np.linspace(lo, hi, POINTS)


def _geometric(lo: float, hi: float, signed: bool = False) -> np.ndarray:
    """``POINTS`` magnitudes spaced evenly in log between ``lo`` and ``hi`` (every other one
    negated with ``signed``)."""
    v = np.geomspace(lo, hi, POINTS)
    if signed:
        v[1::2] *= -1.0
    return v


def _call(name: str) -> Callable[..., Any]:
    return lambda lib, a: getattr(lib, name)(a)


#: function -> its grid (float64 values, rounded to the row's dtype before use)
GRIDS: dict[str, tuple[str, np.ndarray]] = {
    "exp": ("x in [-87, 88]", _linear(-87.0, 88.0)),
    "expm1": ("x in [-20, 88]", _linear(-20.0, 88.0)),
    "log": ("x in [1e-30, 1e30]", _geometric(1e-30, 1e30)),
    "log2": ("x in [1e-30, 1e30]", _geometric(1e-30, 1e30)),
    "log10": ("x in [1e-30, 1e30]", _geometric(1e-30, 1e30)),
    "log1p": ("x in [-0.999, 1e4]", np.concatenate([
        _linear(-0.999, 1.0)[: POINTS // 2], _geometric(1.0, 1e4)[: POINTS // 2]])),
    "sqrt": ("x in [1e-30, 1e30]", _geometric(1e-30, 1e30)),
    "rsqrt": ("x in [1e-30, 1e30]", _geometric(1e-30, 1e30)),
    "sin": ("x in [-10, 10]", _linear(-10.0, 10.0)),
    "cos": ("x in [-10, 10]", _linear(-10.0, 10.0)),
    "tan": ("x in [-1.5, 1.5]", _linear(-1.5, 1.5)),
    "asin": ("x in [-1, 1]", _linear(-1.0, 1.0)),
    "acos": ("x in [-1, 1]", _linear(-1.0, 1.0)),
    "atan": ("|x| in [1e-6, 1e6]", _geometric(1e-6, 1e6, signed=True)),
    "sinh": ("x in [-88, 88]", _linear(-88.0, 88.0)),
    "cosh": ("x in [-88, 88]", _linear(-88.0, 88.0)),
    "tanh": ("x in [-10, 10]", _linear(-10.0, 10.0)),
    "sigmoid": ("x in [-80, 80]", _linear(-80.0, 80.0)),
    "erf": ("x in [-6, 6]", _linear(-6.0, 6.0)),
    "erfc": ("x in [-4, 9]", _linear(-4.0, 9.0)),
}


def accuracy_rows() -> list[SweepInfo]:
    """One row per function of :data:`GRIDS`, one forward-only sample each."""
    return [_row(name, "accuracy", [SweepSample(label, _const(grid), _call(name), grad=False,
                                                tol="ulps", own=False)])
            for name, (label, grid) in GRIDS.items()]
