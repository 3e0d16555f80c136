"""Reference kernels of the pointwise ops (see ``ops/pointwise.py``), written in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The pointwise kernels on ``xp``."""

    def reciprocal(x: Any) -> Any:
        return 1 / x

    def rsqrt(x: Any) -> Any:
        return 1 / xp.sqrt(x)

    def erf(x: Any) -> Any:
        """The error function, from the series ``erf(x) = 2/sqrt(pi) * exp(-x*x) *
        sum_n (2x^2)^n x / (2n+1)!!``, whose terms are all of one sign (no cancellation):
        about 1e-15 absolute in float64 (erf is 1 to double precision beyond |x| = 5.9,
        where x is clipped). A narrower float computes in float64 and is rounded once."""
        dt = x.dtype
        a = x if dt == xp.float64 else xp.astype(x, xp.float64)
        a = xp.clip(a, -5.9, 5.9)
        a2 = a * a
        top = float(xp.max(a2)) if math.prod(a.shape) else 0.0
        if top != top:  # a NaN: as many terms as the widest finite input would take
            top = 5.9 * 5.9
        term = a
        total = a
        t2 = 2 * a2
        for k in range(1, int(2 * top) + 30):
            term = term * t2 / (2 * k + 1)
            total = total + term
        out = total * xp.exp(-a2) * (2 / math.sqrt(math.pi))
        return out if dt == xp.float64 else xp.astype(out, dt)

    def isin(a: Any, b: Any, invert: bool) -> Any:
        """Whether each element of ``a`` is among the elements of ``b`` (same dtype): every
        pair compared, ``a.size * b.size`` booleans at once."""
        flat_a = xp.reshape(a, (-1, 1))
        flat_b = xp.reshape(b, (1, -1))
        found = xp.any(flat_a == flat_b, axis=1)
        if invert:
            found = xp.logical_not(found)
        return xp.reshape(found, a.shape)

    def masked_fill(x: Any, mask: Any, value: Any) -> Any:
        """``x`` with ``value`` (a number, or a 0-d array of ``x``'s dtype) where ``mask``
        holds; ``x`` and ``mask`` broadcast together."""
        if isinstance(value, (bool, int, float)):
            value = xp.asarray(value, dtype=x.dtype)
        return xp.where(mask, value, x)

    def eye(n: int, m: int, dtype: Any) -> Any:
        return xp.eye(n, m, dtype=dtype)

    def repeat(x: Any, reps: tuple[int, ...]) -> Any:
        """``x`` (already of ``len(reps)`` dimensions) repeated ``reps[i]`` times along axis
        i: each axis paired with a new one before it, broadcast, then merged."""
        shape = x.shape
        paired: list[int] = []
        wide: list[int] = []
        for r, s in zip(reps, shape):
            paired += [1, s]
            wide += [r, s]
        y = xp.broadcast_to(xp.reshape(x, tuple(paired)), tuple(wide))
        return xp.reshape(y, tuple(r * s for r, s in zip(reps, shape)))

    return {
        "log1p": xp.log1p,
        "expm1": xp.expm1,
        "reciprocal": reciprocal,
        "rsqrt": rsqrt,
        "floor": xp.floor,
        "tan": xp.tan,
        "sinh": xp.sinh,
        "cosh": xp.cosh,
        "asin": xp.asin,
        "acos": xp.acos,
        "atan": xp.atan,
        "atan2": xp.atan2,
        "erf": erf,
        "signbit": xp.signbit,
        "isin": isin,
        "masked_fill": masked_fill,
        "eye": eye,
        "repeat": repeat,
    }
