"""``linspace`` as PyTorch's CPU kernel spaces it, written against an Array-API namespace.

PyTorch counts the first half of the values up from ``start`` and the second half down from
``end`` (``start + step*i`` and ``end - step*(n-1-i)``, ``step`` rounded in the result dtype),
and its compiler fuses each multiply-add into one rounding (an FMA). ``xp.linspace`` takes one
direction and two roundings, so a value such as the middle of ``linspace(-0.9, 0.9, 7)`` comes
out as ``5.6e-17`` rather than torch's ``0.0`` -- and ``log`` of it is finite instead of
``-inf``. Here the multiply-add is computed exactly and rounded once: in float64 for narrower
dtypes (a 24-bit step times an index below 2**29 is exact there), and for float64 itself with
Dekker's error-free product and Knuth's error-free sum. float16 is PyTorch's ``Half``, which
rounds after every operation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["linspace"]

_SPLIT = 134217729.0  # 2**27 + 1: splits a float64 into two 26-bit halves


def _split(xp: Any, a: Any) -> tuple[Any, Any]:
    t = a * _SPLIT
    hi = t - (t - a)
    return hi, a - hi


def _fma64(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """``a*b + c`` in float64 with one rounding (up to a tie broken twice, vanishingly rare)."""
    p = a * b
    ah, al = _split(xp, a)
    bh, bl = _split(xp, b)
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    serr = (p - (s - bb)) + (c - bb)
    return s + (perr + serr)


def linspace(xp: Any, start: Any, stop: Any, num: int, dtype: Any) -> Any:
    """``num`` values from ``start`` to ``stop`` in ``dtype`` (a floating dtype), equal to
    PyTorch's CPU ``linspace`` value for value."""
    if num <= 1:
        return xp.full((num,), start, dtype=dtype)
    f64 = xp.float64
    if dtype == getattr(xp, "float16", None):  # Half rounds after every operation: no FMA
        s16, e16 = xp.asarray(start, dtype=dtype), xp.asarray(stop, dtype=dtype)
        step16 = (e16 - s16) / xp.asarray(num - 1, dtype=dtype)
        k = xp.arange(num, dtype=xp.int64)
        up16 = s16 + step16 * xp.astype(k, dtype)
        down16 = e16 - step16 * xp.astype(num - 1 - k, dtype)
        return xp.where(k < num // 2, up16, down16)
    s = xp.asarray(start, dtype=dtype)
    e = xp.asarray(stop, dtype=dtype)
    step = xp.astype((e - s) / xp.asarray(num - 1, dtype=dtype), f64)
    s64, e64 = xp.astype(s, f64), xp.astype(e, f64)
    i = xp.arange(num, dtype=f64)
    up_i = i
    down_i = -(num - 1 - i)  # end - step*k == fma(step, -k, end)
    if dtype == f64:
        up = _fma64(xp, step, up_i, s64)
        down = _fma64(xp, step, down_i, e64)
    else:
        up = step * up_i + s64
        down = step * down_i + e64
    return xp.astype(xp.where(i < num // 2, up, down), dtype)
