"""The update arithmetic of the optimizers, rounded the way PyTorch's CPU kernels round.

PyTorch's CPU kernels for ``add(x, alpha=a)``, ``addcmul`` and ``lerp`` are compiled with
floating-point contraction, so ``x + a * y`` is one fused multiply-add (a single rounding),
while ``addcdiv`` (``x + (v * t1) / t2``) and ``mul``/``div``/``sqrt`` round every operation.
Array libraries have no fused multiply-add, so ``fma`` here (the backends'
``fma_rounded_once`` kernel) computes the exact product with Dekker's error-free split and
adds it in twice the precision: float64 updates then agree with
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


def scalar_for(value: float, like: Tensor) -> float:
    """``value`` as PyTorch uses a Python scalar with a tensor of ``like``'s dtype: rounded
    to float32 for float32 (and narrower) tensors, unchanged for float64."""
    if like.dtype is dtypes.float64:
        return float(value)
    return float(struct.unpack("f", struct.pack("f", float(value)))[0])


def _raw(x: Any, c: Tensor) -> Any:
    """``x`` as the update kernel takes it: a Python number rounded as PyTorch uses it with
    ``c``, or a tensor's array in ``c``'s dtype on ``c``'s backend (it may broadcast)."""
    if not isinstance(x, Tensor):
        return scalar_for(x, c)
    if x.backend is not c.backend or x.dtype is not c.dtype:
        x = x.to(dtype=c.dtype, device=c.device)
    return x._data


def fma(a: Any, b: Any, c: Tensor) -> Tensor:
    """``a * b + c`` rounded once, in ``c``'s dtype (``a``/``b`` tensors or Python floats,
    at least one a tensor): the backend's ``fma_rounded_once`` kernel (Dekker's exact product
    for float64, float64 arithmetic for narrower floats). The optimizers call it under
    ``no_grad``: the result is a new tensor outside autograd."""
    return Tensor(c.backend.ops.fma_rounded_once(_raw(a, c), _raw(b, c), c._data), c.backend)


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
