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
        """``floor(a / b)``: floats as ``floor`` of the true quotient (so ``x // 0`` is
        +-inf, as in PyTorch, where NumPy's floor_divide gives NaN), integers exactly."""
        if xp.isdtype(a.dtype, "real floating"):
            return xp.floor(xp.divide(a, b))
        return xp.floor_divide(a, b)

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
            "bitwise_invert": bitwise_invert, "floor_divide": floor_divide, "logit": logit,
            "fmax": fmax, "fmin": fmin, "copysign": copysign, "heaviside": heaviside}
