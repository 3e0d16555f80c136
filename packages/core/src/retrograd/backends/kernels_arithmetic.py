"""Reference kernels of the arithmetic ops (see ``ops/arithmetic.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

A number operand is made an array of the other operand's dtype first (``_as_array``): the
Array API mixes arrays with Python scalars in the operators only."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import kernels_pointwise

__all__ = ["kernels"]

_CF_TERMS = 60  # terms of erfc's continued fraction: double precision from x = 2 on
_CF_FROM = 2.0


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The arithmetic kernels on ``xp``."""
    erf = kernels_pointwise.kernels(xp)["erf"]

    def _as_array(v: Any, like: Any) -> Any:
        if isinstance(v, (bool, int, float)):
            return xp.asarray(v, dtype=like.dtype)
        return v

    def _is_float(a: Any) -> bool:
        return bool(xp.isdtype(a.dtype, "real floating"))

    def hypot(a: Any, b: Any) -> Any:
        """``sqrt(a*a + b*b)`` without overflow."""
        return xp.hypot(a, b)

    def fmod(a: Any, b: Any) -> Any:
        """C's ``fmod``: the remainder of ``a / b`` truncated, with ``a``'s sign -- the
        remainder of ``|a| / |b|`` (exact: both positive), signed as ``a``."""
        b = _as_array(b, a)
        r = xp.remainder(xp.abs(a), xp.abs(b))
        if _is_float(a):
            return xp.copysign(r, a)
        return xp.where(a < 0, -r, r)

    def remainder(a: Any, b: Any) -> Any:
        """Python's ``%`` (the sign of ``b``), as PyTorch computes it: ``fmod(a, b)``, plus
        ``b`` where that is nonzero and its sign differs from ``b``'s."""
        b = _as_array(b, a)
        m = fmod(a, b)
        fix = xp.logical_and(m != 0, (b < 0) != (m < 0))
        return xp.where(fix, m + b, m)

    def lerp(a: Any, b: Any, w: Any) -> Any:
        """``a + w * (b - a)``, as PyTorch computes it: from ``b`` (``b - (b - a) * (1 - w)``)
        where ``|w| >= 0.5``. ``w`` a number or an array."""
        d = b - a
        if isinstance(w, (bool, int, float)):
            return a + w * d if abs(w) < 0.5 else b - d * (1 - w)
        return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))

    def addcmul(s: Any, t1: Any, t2: Any, value: Any) -> Any:
        """``s + value * t1 * t2``."""
        return s + value * t1 * t2

    def addcdiv(s: Any, t1: Any, t2: Any, value: Any) -> Any:
        """``s + value * t1 / t2``."""
        return s + value * t1 / t2

    def logaddexp(a: Any, b: Any) -> Any:
        """``log(exp(a) + exp(b))`` without overflow: ``max + log1p(exp(-|a - b|))``, and
        ``a`` where both are the same infinity."""
        m = xp.maximum(a, b)
        both_inf = xp.logical_and(xp.isinf(a), a == b)
        d = xp.where(both_inf, xp.zeros_like(m), a - b)
        return xp.where(both_inf, a, m + xp.log1p(xp.exp(-xp.abs(d))))

    def xlogy(x: Any, y: Any) -> Any:
        """``x * log(y)``: 0 where ``x == 0`` (unless ``y`` is NaN), NaN where ``y`` is. Either
        may be a number; a bool ``x`` counts as 0/1."""
        ref = y if not isinstance(y, (bool, int, float)) else x
        if not isinstance(x, (bool, int, float)) and x.dtype == xp.bool:
            x = xp.astype(x, ref.dtype)
        x = _as_array(x, ref)
        y = _as_array(y, ref)
        zero = xp.zeros_like(x * y)
        prod = xp.where(x == 0, zero, x * xp.log(xp.where(x == 0, xp.ones_like(y), y)))
        return xp.where(xp.isnan(y), xp.full_like(prod, math.nan), prod)

    def erfc(x: Any) -> Any:
        """``1 - erf(x)`` to full relative precision: ``1 - erf(x)`` below 0.5, Cody's
        rational form ``exp(-x^2) r(x)`` on [0.5, 2) and the continued fraction ``exp(-x^2) /
        sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / ...)))`` from 2 on (where ``1 - erf`` would
        cancel), ``exp(-x^2)`` without rounding ``x^2`` first. A narrower float computes in
        float64."""
        dt = x.dtype
        a = x if dt == xp.float64 else xp.astype(x, xp.float64)
        big = a >= _CF_FROM
        z = xp.where(big, a, xp.full_like(a, _CF_FROM))  # no inf/NaN into the fraction
        t = z
        for k in range(_CF_TERMS, 0, -1):
            t = z + (k / 2) / t
        tail = kernels_pointwise.times_exp_neg_square(xp, 1.0 / (math.sqrt(math.pi) * t), z)
        mid = (a >= 0.5) & ~big
        cody = kernels_pointwise.erfc_mid(xp, xp.where(mid, a, xp.full_like(a, 1.0)))
        out = xp.where(big, tail, xp.where(mid, cody, 1 - erf(a)))
        out = xp.where(a == math.inf, xp.zeros_like(a), out)
        return out if dt == xp.float64 else xp.astype(out, dt)

    def round_(x: Any) -> Any:
        """Each element rounded to the nearest integer, halves to even."""
        return xp.round(x)

    def round_decimals(x: Any, decimals: int) -> Any:
        """Each element rounded to ``decimals`` decimal places (halves to even), as PyTorch:
        ``round(x * 10^d) / 10^d``, or ``round(x / 10^-d) * 10^-d`` for negative ``d``."""
        p = float(10 ** abs(decimals))
        if decimals < 0:
            return xp.round(x / p) * p
        return xp.round(x * p) / p

    def nan_to_num(x: Any, nan: float, posinf: float, neginf: float) -> Any:
        """``x`` with NaN, +inf and -inf replaced by the given numbers."""
        out = xp.where(xp.isnan(x), xp.full_like(x, nan), x)
        out = xp.where(x == math.inf, xp.full_like(x, posinf), out)
        return xp.where(x == -math.inf, xp.full_like(x, neginf), out)

    return {"hypot": hypot, "fmod": fmod, "remainder": remainder, "lerp": lerp,
            "addcmul": addcmul, "addcdiv": addcdiv, "logaddexp": logaddexp, "xlogy": xlogy,
            "erfc": erfc, "round": round_, "round_decimals": round_decimals,
            "nan_to_num": nan_to_num}
