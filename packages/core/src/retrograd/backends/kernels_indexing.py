"""Reference kernels of the indexing ops (see ``ops/indexing.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

Every gather and scatter along an axis goes through the flat positions of the index's
elements in the (C-ordered) target array. Gathers are a ``take`` of those positions. The
Array API has no scatter, so the fallback sorts the positions (stably), finds each target's
last entry with ``searchsorted`` and takes it: the last write of a repeated position wins,
and for an addition a segmented scan (log2 steps) first sums each run of equal positions.
A namespace with a ufunc ``add.at`` (NumPy, CuPy) scatters natively instead, and one with
``take_along_axis`` gathers natively."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .put import add_at, put

__all__ = ["kernels"]

def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The indexing kernels on ``xp``."""
    native_at = getattr(getattr(xp, "add", None), "at", None)
    native_take_along = getattr(xp, "take_along_axis", None)

    def _flat(x: Any) -> Any:
        return xp.reshape(x, (-1,))

    def _cumsum(x: Any) -> Any:
        fn = getattr(xp, "cumulative_sum", None)
        return fn(x, axis=0) if fn is not None else xp.cumsum(x, axis=0)

    def _positions(shape: tuple[int, ...], idx: Any, axis: int) -> Any:
        """The flat positions (1-d int64) in an array of ``shape`` of the elements of
        ``idx`` read as indices along ``axis`` (its own coordinates elsewhere)."""
        nd = len(shape)
        flat = xp.zeros(tuple(idx.shape), dtype=xp.int64)
        stride = 1
        for d in range(nd - 1, -1, -1):
            if d == axis:
                coord = xp.astype(idx, xp.int64)
            else:
                shp = [1] * nd
                shp[d] = idx.shape[d]
                coord = xp.reshape(xp.arange(idx.shape[d], dtype=xp.int64), tuple(shp))
            flat = flat + coord * stride
            stride *= shape[d]
        return _flat(flat)

    def _write(x: Any, pos: Any, vals: Any, add: bool) -> Any:
        """A copy of ``x`` with the 1-d ``vals`` written (``add``: added) at the flat
        positions ``pos``."""
        shape = tuple(x.shape)
        out = _flat(xp.asarray(x, copy=True))
        m = pos.shape[0]
        if m == 0:
            return xp.reshape(out, shape)
        if native_at is not None:
            if add:
                out = add_at(out, pos, vals, native_at)
            else:
                out = put(out, pos, vals)
            return xp.reshape(out, shape)
        order = xp.argsort(pos, stable=True)  # repeated positions in writing order
        p = xp.take(pos, order, axis=0)
        v = xp.take(vals, order, axis=0)
        if add:  # a segmented inclusive scan: each run's last element gets its sum
            s = 1
            while s < m:
                head = xp.full((s,), -1, dtype=p.dtype)
                same = xp.concat((head, p[:-s]), axis=0) == p
                prev = xp.concat((xp.zeros((s,), dtype=v.dtype), v[:-s]), axis=0)
                v = v + xp.where(same, prev, xp.zeros_like(prev))
                s *= 2
        targets = xp.arange(out.shape[0], dtype=xp.int64)
        last = xp.astype(xp.searchsorted(p, targets, side="right"), xp.int64) - 1
        safe = xp.where(last < 0, xp.zeros_like(last), last)
        hit = (last >= 0) & (xp.take(p, safe, axis=0) == targets)
        got = xp.take(v, safe, axis=0)
        res = xp.where(hit, out + got, out) if add else xp.where(hit, got, out)
        return xp.reshape(res, shape)

    def gather(x: Any, idx: Any, axis: int) -> Any:
        """``out[i][j] = x[i][idx[i][j]]`` along ``axis`` (``idx`` no larger than ``x``
        elsewhere)."""
        if native_take_along is not None and idx.ndim:
            key = tuple(slice(None) if d == axis else slice(0, idx.shape[d])
                        for d in range(idx.ndim))
            return native_take_along(x[key], xp.astype(idx, xp.int64), axis=axis)
        pos = _positions(tuple(x.shape), idx, axis)
        return xp.reshape(xp.take(_flat(x), pos, axis=0), tuple(idx.shape))

    def _src_block(src: Any, idx: Any) -> Any:
        """The 1-d part of ``src`` the elements of ``idx`` take (``src`` no smaller)."""
        if tuple(src.shape) != tuple(idx.shape):
            src = src[tuple(slice(0, s) for s in idx.shape)]
        return _flat(src)

    def scatter(x: Any, idx: Any, src: Any, axis: int) -> Any:
        """A copy of ``x`` with ``x[i][idx[i][j]] = src[i][j]`` along ``axis``."""
        return _write(x, _positions(tuple(x.shape), idx, axis), _src_block(src, idx), False)

    def scatter_add(x: Any, idx: Any, src: Any, axis: int) -> Any:
        """A copy of ``x`` with ``x[i][idx[i][j]] += src[i][j]`` along ``axis``."""
        return _write(x, _positions(tuple(x.shape), idx, axis), _src_block(src, idx), True)

    def gather_backward(g: Any, idx: Any, axis: int, shape: tuple[int, ...]) -> Any:
        """The adjoint of ``gather``: zeros of ``shape`` with ``g`` added at ``idx``."""
        return scatter_add(xp.zeros(shape, dtype=g.dtype), idx, g, axis)

    def scatter_zero(g: Any, idx: Any, axis: int) -> Any:
        """``g`` with the places ``idx`` points at along ``axis`` set to zero."""
        return scatter(g, idx, xp.zeros(tuple(idx.shape), dtype=g.dtype), axis)

    def index_select(x: Any, idx: Any, axis: int) -> Any:
        """The slices of ``x`` along ``axis`` at the 1-d ``idx``."""
        return xp.take(x, xp.astype(idx, xp.int64), axis=axis)

    def index_add(x: Any, idx: Any, src: Any, axis: int, alpha: Any = 1) -> Any:
        """A copy of ``x`` with ``alpha * src``'s slices along ``axis`` added at the slices
        the 1-d ``idx`` names."""
        if not isinstance(alpha, bool) and alpha != 1:
            src = src * alpha
        shp = [1] * src.ndim
        shp[axis] = src.shape[axis]
        full = xp.broadcast_to(xp.reshape(xp.astype(idx, xp.int64), tuple(shp)),
                               tuple(src.shape))
        return scatter_add(x, full, src, axis)

    def index_select_backward(g: Any, idx: Any, axis: int, shape: tuple[int, ...]) -> Any:
        """The adjoint of ``index_select``: zeros of ``shape`` with ``g`` added at ``idx``."""
        return index_add(xp.zeros(shape, dtype=g.dtype), idx, g, axis)

    def masked_select(x: Any, mask: Any) -> Any:
        """The 1-d elements of ``x`` where the bool ``mask`` (of ``x``'s shape) is True."""
        pos = xp.nonzero(_flat(mask))[0]
        return xp.take(_flat(x), xp.astype(pos, xp.int64), axis=0)

    def masked_scatter_zero(g: Any, mask: Any) -> Any:
        """Zeros of ``mask``'s shape with the 1-d ``g`` put, in order, where ``mask`` is
        True (the adjoint of ``masked_select``)."""
        m = _flat(mask)
        rank = _cumsum(xp.astype(m, xp.int64)) - 1
        rank = xp.where(m, rank, xp.zeros_like(rank))
        padded = xp.concat((g, xp.zeros((1,), dtype=g.dtype)), axis=0)
        got = xp.take(padded, rank, axis=0)
        out = xp.where(m, got, xp.zeros_like(got))
        return xp.reshape(out, tuple(mask.shape))

    def nonzero(x: Any) -> Any:
        """The ``(n, ndim)`` int64 coordinates of the nonzero elements of ``x``."""
        if x.ndim == 0:
            n = 1 if bool(x != 0) else 0
            return xp.zeros((n, 0), dtype=xp.int64)
        coords = [xp.astype(c, xp.int64) for c in xp.nonzero(x)]
        return xp.stack(coords, axis=1)

    return {"gather": gather, "scatter": scatter, "scatter_add": scatter_add,
            "gather_backward": gather_backward, "scatter_zero": scatter_zero,
            "index_select": index_select, "index_add": index_add,
            "index_select_backward": index_select_backward, "masked_select": masked_select,
            "masked_scatter_zero": masked_scatter_zero, "nonzero": nonzero}
