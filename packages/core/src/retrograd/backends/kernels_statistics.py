"""Reference kernels of the statistics ops (see ``ops/statistics.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

Axes arrive as the ops normalise them: a tuple of non-negative axes (``()`` only for a 0-d
input), or a single int where the op takes one dim (``argmax``, ``median``, ``cumsum``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .summation import blocked_mean, blocked_sum

__all__ = ["kernels"]


_SCAN_FROM = 64  # places of logcumsumexp's axis up to which it adds place after place


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The statistics kernels on ``xp``."""

    def _axis(axes: Any) -> Any:
        return None if axes is None else tuple(axes)

    def var(x: Any, axes: Any, correction: float, keepdim: bool) -> Any:
        """The variance over ``axes`` with ``correction`` subtracted from the count (a count
        at or below zero divides by zero: inf or nan, as in PyTorch)."""
        n = 1
        for a in axes:
            n *= x.shape[a]
        m = blocked_mean(xp, x, _axis(axes), True)
        d = x - m
        s = blocked_sum(xp, d * d, _axis(axes), keepdim)
        return s / xp.asarray(max(0.0, n - correction), dtype=x.dtype)

    def prod(x: Any, axes: Any, keepdim: bool = False) -> Any:
        return xp.prod(x, axis=_axis(axes), keepdims=keepdim)

    def amin(x: Any, axes: Any, keepdim: bool = False) -> Any:
        return xp.min(x, axis=_axis(axes), keepdims=keepdim)

    def argmax(x: Any, axis: Any, keepdim: bool = False) -> Any:
        return xp.astype(xp.argmax(x, axis=axis, keepdims=keepdim), xp.int64)

    def argmin(x: Any, axis: Any, keepdim: bool = False) -> Any:
        return xp.astype(xp.argmin(x, axis=axis, keepdims=keepdim), xp.int64)

    def all_(x: Any, axes: Any, keepdim: bool = False) -> Any:
        return xp.all(xp.astype(x, xp.bool), axis=_axis(axes), keepdims=keepdim)

    def any_(x: Any, axes: Any, keepdim: bool = False) -> Any:
        return xp.any(xp.astype(x, xp.bool), axis=_axis(axes), keepdims=keepdim)

    def count_nonzero(x: Any, axes: Any) -> Any:
        nz = xp.astype(xp.astype(x, xp.bool), xp.int64)
        return xp.sum(nz, axis=_axis(axes), dtype=xp.int64)

    def median(x: Any, axis: int, ignore_nan: bool) -> tuple[Any, Any]:
        """The lower median along ``axis`` and its index (kept as a size-1 axis). A NaN
        counts as the largest value; ``ignore_nan`` False: a slice holding one has a NaN
        median, at its first NaN."""
        n = x.shape[axis]
        try:  # NaNs sort last
            order = xp.argsort(x, axis=axis, stable=True)
        except TypeError:  # a library without the Array API's ``stable`` (its sort is)
            order = xp.argsort(x, axis=axis)
        nan = xp.isnan(x)
        if ignore_nan:
            count = n - xp.sum(xp.astype(nan, xp.int64), axis=axis, keepdims=True)
            k = xp.where(count > 0, (count - 1) // 2, xp.zeros_like(count))
        else:
            k = xp.full(order.shape[:axis] + (1,) + order.shape[axis + 1:], (n - 1) // 2,
                        dtype=xp.int64)
        pos = xp.reshape(xp.arange(n, dtype=xp.int64),
                         (1,) * axis + (n,) + (1,) * (x.ndim - axis - 1))
        pick = pos == k  # the k-th place of the sorted order, per slice
        idx = xp.sum(xp.where(pick, xp.astype(order, xp.int64), xp.zeros_like(pos)),
                     axis=axis, keepdims=True)
        if not ignore_nan:
            has_nan = xp.any(nan, axis=axis, keepdims=True)
            first_nan = xp.argmax(xp.astype(nan, xp.int8), axis=axis, keepdims=True)
            idx = xp.where(has_nan, xp.astype(first_nan, xp.int64), idx)
        val = xp.sum(xp.where(pos == idx, x, xp.zeros_like(x)), axis=axis, keepdims=True)
        return val, idx

    def index_mask(shape: Any, idx: Any, axis: int) -> Any:
        """A bool mask of ``shape``, true where the position along ``axis`` is ``idx`` (kept
        with a size-1 ``axis``)."""
        n = shape[axis]
        pos = xp.reshape(xp.arange(n, dtype=xp.int64),
                         (1,) * axis + (n,) + (1,) * (len(shape) - axis - 1))
        return xp.broadcast_to(pos == idx, tuple(shape))

    def diagonal_mask(rows: int, cols: int) -> Any:
        return xp.reshape(xp.arange(rows), (rows, 1)) == xp.reshape(xp.arange(cols), (1, cols))

    def position_masks(n: int, axis: int, ndim: int) -> tuple[Any, Any]:
        """Over two adjacent axes ``axis`` (j) and ``axis + 1`` (i) of size ``n``, the others
        of size 1: the bool masks ``j == i`` and ``j >= i``."""
        shape = (1,) * axis + (n, n) + (1,) * (ndim - axis - 1)
        j = xp.reshape(xp.arange(n), (n, 1))
        i = xp.reshape(xp.arange(n), (1, n))
        return xp.reshape(j == i, shape), xp.reshape(j >= i, shape)

    narrow_floats = tuple(d for d in (getattr(xp, "float32", None), getattr(xp, "float16", None))
                          if d is not None)

    def running(fn: Any, x: Any, axis: int) -> Any:
        """``fn`` (a cumulative sum or product) along ``axis``, accumulated in float64 for a
        float32 or float16 ``x``, as PyTorch's CPU kernels accumulate (in ``x``'s own dtype a
        long float32 running sum drifts: -66 after 10^5 terms near 1, PyTorch -0.002)."""
        if x.dtype in narrow_floats:
            return xp.astype(fn(x, axis=axis, dtype=xp.float64), x.dtype)
        return fn(x, axis=axis, dtype=x.dtype)

    def cumsum(x: Any, axis: int) -> Any:
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        return running(getattr(xp, "cumulative_sum", None) or xp.cumsum, x, axis)

    def cumsum_reverse(x: Any, axis: int) -> Any:
        """The running sum from the end of ``axis``: ``flip(cumsum(flip(x)))``."""
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        return xp.flip(cumsum(xp.flip(x, axis=axis), axis), axis=axis)

    def cumprod(x: Any, axis: int) -> Any:
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        return running(getattr(xp, "cumulative_prod", None) or xp.cumprod, x, axis)

    def logcumsumexp(x: Any, axis: int, reverse: bool = False) -> Any:
        """``log(cumsum(exp(x)))`` along ``axis`` (from the end with ``reverse``) by
        ``logaddexp``: no overflow, and no underflow of the small early terms.

        Up to :data:`_SCAN_FROM` places, one ``logaddexp`` per place, in PyTorch's order (its
        CPU kernel adds place after place; a float32 gradient at |x| ~ 700 shows the order).
        Beyond, a scan of ``log2(n)`` whole-array steps (step ``k`` adds to each place the
        running total ``k`` places before it): one step per place at 10^5 places made Dask
        build a graph of 10^5 layers and JAX compile a program per place (20 GB)."""
        if x.ndim == 0 or x.shape[axis] == 0:
            return xp.asarray(x, copy=True)
        n = x.shape[axis]
        lead = (slice(None),) * axis
        if n <= _SCAN_FROM:
            outs: list[Any] = [None] * n
            acc = None
            for j in (range(n - 1, -1, -1) if reverse else range(n)):
                v = x[lead + (j, ...)]
                acc = v if acc is None else xp.logaddexp(acc, v)
                outs[j] = acc
            return xp.stack(outs, axis=axis)

        def part(y: Any, lo: int, hi: int) -> Any:
            return y[lead + (slice(lo, hi), ...)]

        y = x
        k = 1
        while k < n:
            if reverse:
                y = xp.concat([xp.logaddexp(part(y, 0, n - k), part(y, k, n)),
                               part(y, n - k, n)], axis=axis)
            else:
                y = xp.concat([part(y, 0, k), xp.logaddexp(part(y, k, n), part(y, 0, n - k))],
                              axis=axis)
            k *= 2
        return y

    return {
        "logcumsumexp": logcumsumexp,
        "var": var,
        "prod": prod,
        "amin": amin,
        "argmax": argmax,
        "argmin": argmin,
        "all": all_,
        "any": any_,
        "count_nonzero": count_nonzero,
        "median": median,
        "index_mask": index_mask,
        "diagonal_mask": diagonal_mask,
        "position_masks": position_masks,
        "cumsum": cumsum,
        "cumsum_reverse": cumsum_reverse,
        "cumprod": cumprod,
    }
