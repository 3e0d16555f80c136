"""Source positions of ``interpolate``'s resampling, computed on the host as PyTorch's CPU
kernels compute them (``nearest_idx``, ``compute_source_index_and_lambda``): small index and
weight vectors, one per resized axis, in the float type PyTorch uses (float32 positions for
nearest, the input's precision for linear), so resized values match PyTorch's to the bit.

They live among the backends because they are NumPy arithmetic on the host; the op
(``ops/nn_extras.interpolate``) turns them into tensors of the input's backend."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["opmath", "nearest_index", "linear_weights"]


def opmath(x: Any) -> Any:
    """The NumPy float type PyTorch's CPU kernels compute source positions in."""
    return np.float64 if x.dtype.name == "float64" else np.float32


def _scale(in_size: int, out_size: int, scale: float | None, ftype: Any) -> Any:
    """PyTorch's ``compute_scales_value``: ``1 / scale`` where a scale factor is given, else
    ``in / out``, in ``ftype``."""
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(in_size) / ftype(out_size)


def nearest_index(in_size: int, out_size: int, scale: float | None, exact: bool) -> Any:
    """The source index of each output position (PyTorch's ``nearest_idx`` /
    ``nearest_exact_idx``, in float32 as PyTorch computes them)."""
    out = np.arange(out_size, dtype=np.int64)
    if not exact and out_size == in_size:
        return out
    if not exact and out_size == 2 * in_size:
        return out >> 1
    s = _scale(in_size, out_size, scale, np.float32)
    pos = (out.astype(np.float32) + np.float32(0.5)) * s if exact else out.astype(np.float32) * s
    return np.minimum(np.floor(pos).astype(np.int64), in_size - 1)


def linear_weights(in_size: int, out_size: int, scale: float | None, align_corners: bool,
                    ftype: Any) -> tuple[Any, Any, Any, Any]:
    """``(index0, index1, lambda0, lambda1)`` of each output position (PyTorch's
    ``compute_source_index_and_lambda``)."""
    out = np.arange(out_size, dtype=np.int64)
    if out_size == in_size:
        return out, out, np.ones(out_size, ftype), np.zeros(out_size, ftype)
    if align_corners:
        ratio = ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
        src = ratio * out.astype(ftype)
    else:
        ratio = _scale(in_size, out_size, scale, ftype)
        src = np.maximum(ratio * (out.astype(ftype) + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam1 = np.clip(src - i0.astype(ftype), ftype(0), ftype(1)).astype(ftype)
    i1 = i0 + (i0 < in_size - 1).astype(np.int64)
    return i0, i1, (ftype(1) - lam1).astype(ftype), lam1
