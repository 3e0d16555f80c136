"""The update arithmetic of the optimizers, rounded the way PyTorch's CPU kernels round.

PyTorch's CPU kernels for ``add(x, alpha=a)``, ``addcmul`` and ``lerp`` are compiled with
floating-point contraction, so ``x + a * y`` is one fused multiply-add (a single rounding),
while ``addcdiv`` (``x + (v * t1) / t2``) and ``mul``/``div``/``sqrt`` round every operation.
Array libraries have no fused multiply-add, so ``fma`` here computes the exact product with
Dekker's error-free split and adds it in twice the precision: float64 updates then agree with
``torch.optim`` to the last bit (except, with probability about 2**-50 per element, a sum that
falls on a rounding tie after the error term was rounded). Other float dtypes are computed in
float64 and rounded once to their own dtype.
"""

from __future__ import annotations

import struct
from typing import Any

from .. import dtypes
from ..tensor import Tensor

__all__ = ["fma", "lerp", "addcmul", "addcdiv", "scalar_for"]

_SPLIT = 134217729.0  # 2**27 + 1: splits a float64 into two 26-bit halves


def scalar_for(value: float, like: Tensor) -> float:
    """``value`` as PyTorch uses a Python scalar with a tensor of ``like``'s dtype: rounded
    to float32 for float32 (and narrower) tensors, unchanged for float64."""
    if like.dtype is dtypes.float64:
        return float(value)
    return float(struct.unpack("f", struct.pack("f", float(value)))[0])


def _split(a: Any) -> tuple[Any, Any]:
    """Veltkamp's split: ``a == hi + lo`` exactly, each half with at most 26 significant bits."""
    c = a * _SPLIT
    hi = c - (c - a)
    return hi, a - hi


def fma(a: Any, b: Any, c: Tensor) -> Tensor:
    """``a * b + c`` rounded once, in ``c``'s dtype (``a``/``b`` tensors or Python floats,
    at least one a tensor)."""
    from ..ops.activations import isfinite
    from ..ops.elementwise import where

    if c.dtype is dtypes.float64:
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a * b == p + err exactly
        s = p + c
        back = s - p
        rest = (p - (s - back)) + (c - back)  # p + c == s + rest exactly
        r = s + (rest + err)
        return where(isfinite(r), r, s)  # overflow or inf/nan inputs: the plain sum
    wide = dtypes.float64
    a64 = a.to(wide) if isinstance(a, Tensor) else scalar_for(a, c)
    b64 = b.to(wide) if isinstance(b, Tensor) else scalar_for(b, c)
    return (a64 * b64 + c.to(wide)).to(c.dtype)


def lerp(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """``torch.lerp(start, end, weight)`` for a scalar weight, with PyTorch's two branches
    (``start + w * (end - start)`` for ``|w| < 0.5``, else ``end - (1 - w) * (end - start)``),
    each one fused multiply-add."""
    w = scalar_for(weight, start)
    diff = end - start
    if abs(w) < 0.5:
        return fma(w, diff, start)
    return fma(scalar_for(w - 1.0, start), diff, end)


def addcmul(x: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``torch.addcmul(x, t1, t2, value=value)``: ``(value * t1) * t2 + x``, the last
    multiply-add fused."""
    v = scalar_for(value, x)
    return fma(t1 * v if v != 1.0 else t1, t2, x)


def addcdiv(x: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``torch.addcdiv(x, t1, t2, value=value)``: ``x + (value * t1) / t2``, every
    operation rounded."""
    v = scalar_for(value, x)
    return x + (t1 * v if v != 1.0 else t1) / t2
