"""Reference kernels of the numeric ops (see ``ops/numeric.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The numeric kernels on ``xp``."""

    def logical_or(a: Any, b: Any) -> Any:
        """Elementwise or of two bool arrays."""
        return xp.logical_or(a, b)

    def logical_xor(a: Any, b: Any) -> Any:
        """Elementwise xor of two bool arrays."""
        return xp.logical_xor(a, b)

    def bitwise_and(a: Any, b: Any) -> Any:
        """Elementwise bitwise and (integers or bools)."""
        return xp.bitwise_and(a, b)

    def bitwise_or(a: Any, b: Any) -> Any:
        """Elementwise bitwise or (integers or bools)."""
        return xp.bitwise_or(a, b)

    def bitwise_xor(a: Any, b: Any) -> Any:
        """Elementwise bitwise xor (integers or bools)."""
        return xp.bitwise_xor(a, b)

    def bitwise_invert(a: Any) -> Any:
        """Elementwise bitwise not (logical not of bools)."""
        return xp.bitwise_invert(a)

    def floor_divide(a: Any, b: Any) -> Any:
        """``floor(a / b)`` as PyTorch's ``div_floor`` (and Python's ``//``) computes it:
        floats from the remainder, so that ``floor`` of a quotient rounded up to an integer
        is not taken (float32 ``floor(a / b)`` is one too high there); ``x // 0`` is the true
        quotient (+-inf or NaN); integers exactly."""
        if xp.isdtype(a.dtype, "real floating"):
            return xp.where(b == 0, xp.divide(a, b), xp.floor_divide(a, b))
        return xp.floor_divide(a, b)

    def div_trunc(a: Any, b: Any) -> Any:
        """``a / b`` rounded toward zero (``div(rounding_mode="trunc")``): floats as ``trunc``
        of the true quotient, integers as C's division."""
        if xp.isdtype(a.dtype, "real floating"):
            return xp.trunc(xp.divide(a, b))
        q = xp.floor_divide(a, b)
        inexact = xp.logical_and(xp.remainder(a, b) != 0, (a < 0) != (b < 0))
        return xp.where(inexact, q + 1, q)

    def logit(p: Any) -> Any:
        """``log(p / (1 - p))``."""
        return xp.log(xp.divide(p, xp.subtract(xp.ones_like(p), p)))

    def fmax(a: Any, b: Any) -> Any:
        """The elementwise maximum, taking the other operand where one is NaN."""
        a, b = xp.broadcast_arrays(a, b)
        if not xp.isdtype(a.dtype, "real floating"):
            return xp.maximum(a, b) if a.dtype != xp.bool else xp.logical_or(a, b)
        m = xp.maximum(a, b)
        m = xp.where(xp.isnan(a), b, m)
        return xp.where(xp.isnan(b), a, m)

    def fmin(a: Any, b: Any) -> Any:
        """The elementwise minimum, taking the other operand where one is NaN."""
        a, b = xp.broadcast_arrays(a, b)
        if not xp.isdtype(a.dtype, "real floating"):
            return xp.minimum(a, b) if a.dtype != xp.bool else xp.logical_and(a, b)
        m = xp.minimum(a, b)
        m = xp.where(xp.isnan(a), b, m)
        return xp.where(xp.isnan(b), a, m)

    def copysign(a: Any, b: Any) -> Any:
        """``|a|`` with the sign (bit) of ``b``."""
        return xp.copysign(a, b)

    def heaviside(x: Any, values: Any) -> Any:
        """0 where ``x < 0``, 1 where ``x > 0``, ``values`` where ``x == 0``."""
        x, values = xp.broadcast_arrays(x, values)
        zero = xp.zeros_like(x)
        step = xp.where(x > zero, xp.ones_like(x), zero)
        return xp.where(x == zero, values, step)

    return {"logical_or": logical_or, "logical_xor": logical_xor, "bitwise_and": bitwise_and,
            "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
            "bitwise_invert": bitwise_invert, "floor_divide": floor_divide,
            "div_trunc": div_trunc, "logit": logit,
            "fmax": fmax, "fmin": fmin, "copysign": copysign, "heaviside": heaviside}
