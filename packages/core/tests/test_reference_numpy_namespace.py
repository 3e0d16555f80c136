"""The reference kernels with NumPy itself as the array namespace.

NumPy hands back a 0-d result as a scalar (``numpy.float64``), and ``numpy.float64`` is a
subclass of Python's ``float``: the reference kernels must not take such a value for a Python
number (they used to, and ``where`` / ``maximum`` / ``minimum`` then asked a plain ``float``
for its dtype). A backend built with ``xp=numpy`` and nothing but the reference kernels runs
them on 0-d values, keeping each value's dtype.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import Backend, register_backend, unregister_backend


class _NumpyReference(Backend):
    """NumPy as the namespace, every kernel from the reference table."""

    def __init__(self) -> None:
        super().__init__("numpy_reference", np)


@pytest.fixture
def kernels():
    return _NumpyReference().kernels


def _zero_d(value: float, dtype=np.float64):
    """A 0-d result the way NumPy gives one: a scalar, not a 0-d array."""
    out = np.sum(np.asarray([value], dtype=dtype))
    assert not isinstance(out, np.ndarray)
    return out


def test_numpy_zero_d_results_are_float_subclasses():
    # why the kernels must look for a dtype, not at isinstance(value, float)
    assert isinstance(_zero_d(1.0), float) and hasattr(_zero_d(1.0), "dtype")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_on_zero_d_values(kernels, dtype):
    a, b = _zero_d(2.5, dtype), _zero_d(-1.0, dtype)
    for cond, expected in ((np.True_, 2.5), (np.False_, 0.0)):
        out = kernels["where"](cond, a, 0.0)
        assert float(out) == expected and out.dtype == dtype
    for cond, expected in ((np.True_, 0.0), (np.False_, 2.5)):
        out = kernels["where"](cond, 0.0, a)
        assert float(out) == expected and out.dtype == dtype
    out = kernels["where"](np.asarray(False), a, b)
    assert float(out) == -1.0 and out.dtype == dtype
    assert float(kernels["where"](np.True_, 1.0, 0.0)) == 1.0  # two numbers


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maximum_minimum_on_zero_d_values(kernels, dtype):
    a = _zero_d(-0.5, dtype)
    for name, other, expected in (("maximum", 0.0, 0.0), ("minimum", 0.0, -0.5),
                                  ("maximum", -2.0, -0.5), ("minimum", -2.0, -2.0)):
        for args in ((a, other), (other, a)):
            out = kernels[name](*args)
            assert float(out) == expected, (name, args)
            assert out.dtype == dtype, (name, args)
    out = kernels["maximum"](a, _zero_d(3.0, dtype))
    assert float(out) == 3.0 and out.dtype == dtype


def test_clip_and_relu_backward_on_zero_d_values(kernels):
    y, g = _zero_d(-1.0), _zero_d(4.0)
    assert float(kernels["relu_backward"](g, y)) == 0.0
    assert float(kernels["relu_backward"](g, _zero_d(2.0))) == 4.0
    assert float(kernels["clip"](_zero_d(7.0), 0.0, 1.0)) == 1.0


def test_a_numpy_namespace_backend_differentiates_through_where_max_min():
    register_backend("numpy_reference", _NumpyReference())
    try:
        values = {}
        for device in ("numpy_reference", "cpu"):
            x = rg.tensor(1.5, device=device, requires_grad=True)
            y = rg.tensor([0.5, -2.0, 3.0], device=device, requires_grad=True)
            s = y.sum()
            out = (rg.where(s > 0, s * x, x) * 2.0 + rg.maximum(s, x) * 3.0
                   + rg.minimum(x, s) * 0.5 + rg.clamp(s * x, 0.0, 9.0))
            out.backward()
            values[device] = (out.item(), x.grad.item(), y.grad.tolist())
        assert values["numpy_reference"] == values["cpu"]
    finally:
        unregister_backend("numpy_reference")
