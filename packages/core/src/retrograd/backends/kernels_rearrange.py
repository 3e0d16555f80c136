"""Reference kernels of the rearrange ops (see ``ops/rearrange.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

The scatters go through flat positions in the (C-ordered) target, as the indexing kernels
do (``kernels_indexing``): a sum reuses its ``scatter_add``; a product, maximum or minimum
uses the namespace's ufunc ``at`` where it has one (NumPy) and otherwise sorts the positions
(stably), reduces each run of equal positions with a segmented scan (log2 steps) and takes
each run's last element."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import kernels_indexing, kernels_views
from .put import put

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:  # noqa: C901 - one closure per kernel
    """The rearrange kernels on ``xp``."""
    ix = kernels_indexing.kernels(xp)
    vw = kernels_views.kernels(xp)
    _scatter_add = ix["scatter_add"]
    _scatter = ix["scatter"]

    def _flat(x: Any) -> Any:
        return xp.reshape(x, (-1,))

    def _cumsum(x: Any) -> Any:
        fn = getattr(xp, "cumulative_sum", None)
        return fn(x, axis=0) if fn is not None else xp.cumsum(x, axis=0)

    def _along(idx: Any, axis: int, nd: int) -> Any:
        """The 1-d ``idx`` shaped to broadcast along ``axis`` of ``nd`` dimensions."""
        shp = [1] * nd
        shp[axis] = idx.shape[0]
        return xp.reshape(idx, tuple(shp))

    def _hits(n: int, idx: Any) -> Any:
        """A bool vector of length ``n``: True at the (non-negative) places of ``idx``."""
        i = xp.astype(_flat(idx), xp.int64)
        counts = _scatter_add(xp.zeros((n,), dtype=xp.int64), i,
                              xp.ones(tuple(i.shape), dtype=xp.int64), 0)
        return counts > 0

    def _positions(shape: tuple[int, ...], idx: Any, axis: int) -> Any:
        """The flat positions in an array of ``shape`` of ``idx``'s elements read as indices
        along ``axis`` (their own coordinates elsewhere), 1-d int64."""
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

    def take(x: Any, idx: Any) -> Any:
        """The elements of ``x`` (read flat) at the places of ``idx`` (negative ones count
        from the end), in ``idx``'s shape."""
        n = math.prod(x.shape)
        i = xp.astype(idx, xp.int64)
        i = xp.where(i < 0, i + n, i)
        return xp.reshape(xp.take(_flat(x), _flat(i), axis=0), tuple(idx.shape))

    def take_backward(g: Any, idx: Any, shape: tuple[int, ...]) -> Any:
        """The adjoint of ``take``: zeros of ``shape`` with ``g`` added at ``idx``."""
        n = math.prod(shape)
        i = _flat(xp.astype(idx, xp.int64))
        i = xp.where(i < 0, i + n, i)
        out = _scatter_add(xp.zeros((n,), dtype=g.dtype), i, _flat(g), 0)
        return xp.reshape(out, tuple(shape))

    def rot90(x: Any, k: int, d0: int, d1: int) -> Any:
        """``x`` rotated by ``k`` quarter turns from axis ``d0`` towards ``d1`` (a new
        array)."""
        k %= 4
        if k == 0:
            return xp.asarray(x, copy=True)
        if k == 2:
            return xp.asarray(xp.flip(x, axis=(d0, d1)), copy=True)
        perm = list(range(x.ndim))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        y = xp.flip(x, axis=d1 if k == 1 else d0)
        return xp.asarray(xp.permute_dims(y, tuple(perm)), copy=True)

    def repeat_index(reps: Any, total: int) -> Any:
        """``[0] * reps[0] + [1] * reps[1] + ...`` (``total`` elements, ``reps``' dtype)."""
        if total == 0:
            return xp.zeros((0,), dtype=reps.dtype)
        ends = _cumsum(xp.astype(reps, xp.int64))
        pos = xp.arange(total, dtype=xp.int64)
        return xp.astype(xp.searchsorted(ends, pos, side="right"), reps.dtype)

    def index_fill(x: Any, idx: Any, axis: int, value: Any) -> Any:
        """``x`` with its slices along ``axis`` at the 1-d ``idx`` (non-negative) set to
        ``value`` (a number or a 0-d array)."""
        if x.ndim == 0:
            hit = xp.reshape(_hits(1, idx), ())
        else:
            hit = _along(_hits(x.shape[axis], idx), axis, x.ndim)
        return xp.where(hit, xp.astype(xp.asarray(value), x.dtype), x)

    def index_copy(x: Any, idx: Any, src: Any, axis: int) -> Any:
        """``x`` with ``src``'s slices along ``axis`` written at the places of the 1-d
        ``idx`` (at a repeated place one of them wins)."""
        if x.ndim == 0:
            x1 = xp.reshape(x, (1,))
            return xp.reshape(index_copy(x1, idx, xp.reshape(src, (-1,)), 0), ())
        full = xp.broadcast_to(_along(xp.astype(idx, xp.int64), axis, src.ndim),
                               tuple(src.shape))
        return _scatter(x, full, src, axis)

    def masked_scatter(x: Any, mask: Any, src: Any) -> Any:
        """``x`` with the elements of ``src`` (read flat, in order) written where the bool
        ``mask`` (of ``x``'s shape) holds."""
        m = _flat(mask)
        rank = _cumsum(xp.astype(m, xp.int64)) - 1
        rank = xp.where(m, rank, xp.zeros_like(rank))
        padded = xp.concat((_flat(src), xp.zeros((1,), dtype=src.dtype)), axis=0)
        got = xp.reshape(xp.take(padded, rank, axis=0), tuple(mask.shape))
        return xp.where(mask, xp.astype(got, x.dtype), x)

    def _windows(n: int, size: int, step: int) -> Any:
        count = (n - size) // step + 1
        start = xp.reshape(xp.arange(count, dtype=xp.int64) * step, (count, 1))
        return _flat(start + xp.reshape(xp.arange(size, dtype=xp.int64), (1, size))), count

    def unfold(x: Any, axis: int, size: int, step: int) -> Any:
        """The windows of ``size`` elements every ``step`` along ``axis``: that axis becomes
        the window count and a new last axis of ``size`` is added (a new array)."""
        if x.ndim == 0:
            return xp.reshape(x, (1,))[:size]
        idx, count = _windows(x.shape[axis], size, step)
        y = xp.take(x, idx, axis=axis)
        shp = tuple(x.shape[:axis]) + (count, size) + tuple(x.shape[axis + 1:])
        y = xp.reshape(y, shp)
        perm = tuple(d for d in range(len(shp)) if d != axis + 1) + (axis + 1,)
        return xp.asarray(xp.permute_dims(y, perm), copy=True)

    def unfold_backward(g: Any, shape: tuple[int, ...], axis: int, size: int,
                        step: int) -> Any:
        """The adjoint of ``unfold``: zeros of ``shape`` with every window's gradient added
        back at its elements."""
        if len(shape) == 0:
            return xp.reshape(xp.sum(g), ()) if g.shape[0] else xp.zeros((), dtype=g.dtype)
        idx, count = _windows(shape[axis], size, step)
        nd = g.ndim
        perm = tuple(range(axis + 1)) + (nd - 1,) + tuple(range(axis + 1, nd - 1))
        y = xp.permute_dims(g, perm)
        merged = tuple(shape[:axis]) + (count * size,) + tuple(shape[axis + 1:])
        y = xp.reshape(y, merged)
        full = xp.broadcast_to(_along(idx, axis, len(shape)), merged)
        return _scatter_add(xp.zeros(tuple(shape), dtype=g.dtype), full, y, axis)

    def basic_scatter(x: Any, src: Any, key: Any) -> Any:
        """A copy of ``x`` with ``src`` written at the basic key ``key`` (slices, ints)."""
        out = xp.asarray(x, copy=True)
        return put(out, key, xp.astype(src, x.dtype))

    def diagonal_copy(x: Any, offset: int, d1: int, d2: int) -> Any:
        """The diagonal ``offset`` of the planes (``d1``, ``d2``) of ``x`` as a new last
        axis (a new array)."""
        return xp.asarray(vw["diagonal"](x, offset, d1, d2), copy=True)

    def diagonal_embed(g: Any, shape: tuple[int, ...], offset: int, d1: int,
                       d2: int) -> Any:
        """Zeros of ``shape`` with ``g`` on the diagonal ``diagonal_copy`` reads."""
        return vw["diagonal_backward"](g, tuple(shape), offset, d1, d2)

    def diagonal_scatter(x: Any, src: Any, offset: int, d1: int, d2: int) -> Any:
        """A copy of ``x`` with ``src`` written on the diagonal ``offset`` of the planes
        (``d1``, ``d2``)."""
        shape = tuple(x.shape)
        ones = xp.ones(tuple(src.shape), dtype=xp.float32)
        mask = diagonal_embed(ones, shape, offset, d1, d2) != 0
        put = diagonal_embed(xp.astype(src, x.dtype), shape, offset, d1, d2)
        return xp.where(mask, put, x)

    def index_positions(shape: tuple[int, ...], key: tuple[Any, ...]) -> Any:
        """The flat (C-order) positions in an array of ``shape`` of the elements
        ``x[key]`` reads, in that result's shape (int64); ``key`` holds int or bool index
        arrays and whole-dimension slices, as NumPy reads it (negative places count from the
        end; index arrays that are not adjacent put their dimensions first)."""
        items: list[Any] = []  # (dim, array) for the index arrays, (dim, None) for a slice
        d = 0
        for k in key:
            if isinstance(k, slice):
                items.append((d, None))
                d += 1
            elif xp.isdtype(k.dtype, "bool"):
                if k.ndim == 0:  # a new dimension of 1 (True) or 0 (False): no stride
                    n0 = 1 if bool(k) else 0
                    items.append((-1, xp.zeros((n0,), dtype=xp.int64)))
                    continue
                for c in xp.nonzero(k):
                    items.append((d, xp.astype(c, xp.int64)))
                    d += 1
            else:
                i = xp.astype(k, xp.int64)
                items.append((d, xp.where(i < 0, i + shape[d], i)))
                d += 1
        while d < len(shape):
            items.append((d, None))
            d += 1
        strides = {e: math.prod(shape[e + 1:]) for e in range(len(shape))}
        strides[-1] = 0
        arrays = [(e, a) for e, a in items if a is not None]
        at = [j for j, (_, a) in enumerate(items) if a is not None]
        adjacent = bool(at) and at == list(range(at[0], at[-1] + 1))
        if arrays:
            parts = xp.broadcast_arrays(*[a for _, a in arrays])
            adv = parts[0] * strides[arrays[0][0]]
            for (e, _), a in zip(arrays[1:], parts[1:]):
                adv = adv + a * strides[e]
        slices = [(j, e) for j, (e, a) in enumerate(items) if a is None]
        if not arrays:
            order: list[Any] = [("s", e) for _, e in slices]
        elif adjacent:
            order = [("s", e) for j, e in slices if j < at[0]] + [("a", None)] + \
                [("s", e) for j, e in slices if j > at[-1]]
        else:
            order = [("a", None)] + [("s", e) for _, e in slices]
        out_shape: list[int] = []
        for kind, e in order:
            out_shape += list(adv.shape) if kind == "a" else [shape[e]]
        nd = len(out_shape)
        pos = xp.zeros(tuple(out_shape), dtype=xp.int64)
        j = 0
        for kind, e in order:
            if kind == "a":
                k = adv.ndim
                part = xp.reshape(adv, (1,) * j + tuple(adv.shape) + (1,) * (nd - j - k))
                j += k
            else:
                rng = xp.arange(shape[e], dtype=xp.int64) * strides[e]
                part = xp.reshape(rng, (1,) * j + (shape[e],) + (1,) * (nd - j - 1))
                j += 1
            pos = pos + part
        return pos

    def index_put(x: Any, pos: Any, values: Any, accumulate: bool) -> Any:
        """A copy of ``x`` with ``values`` (``pos``' shape) written (``accumulate``: added)
        at the flat positions ``pos`` (at a repeated one, without ``accumulate``, one write
        wins)."""
        fn = _scatter_add if accumulate else _scatter
        out = fn(_flat(x), _flat(pos), _flat(xp.astype(values, x.dtype)), 0)
        return xp.reshape(out, tuple(x.shape))

    _IDENTITY_OPS = {"prod": "multiply", "amax": "maximum", "amin": "minimum"}

    def _identity(reduce: str, dtype: Any) -> Any:
        if reduce == "prod":
            return 1
        if xp.isdtype(dtype, "real floating"):
            return -math.inf if reduce == "amax" else math.inf
        info = xp.iinfo(dtype)
        return info.min if reduce == "amax" else info.max

    def _combine(reduce: str, a: Any, b: Any) -> Any:
        if reduce == "prod":
            return a * b
        if reduce == "amax":
            return xp.maximum(a, b)
        return xp.minimum(a, b)

    def _reduce_at(base: Any, pos: Any, vals: Any, reduce: str) -> Any:
        """``base`` (1-d) with ``vals`` combined (``reduce``) into it at ``pos``."""
        m = pos.shape[0]
        if m == 0:
            return base
        ufunc = getattr(xp, _IDENTITY_OPS[reduce], None)
        native = getattr(ufunc, "at", None)
        if native is not None:
            out = xp.asarray(base, copy=True)
            try:
                native(out, pos, vals)
                return out
            except (TypeError, NotImplementedError):
                pass
        order = xp.argsort(pos, stable=True)
        p = xp.take(pos, order, axis=0)
        v = xp.take(vals, order, axis=0)
        s = 1
        while s < m:
            head = xp.full((s,), -1, dtype=p.dtype)
            same = xp.concat((head, p[:-s]), axis=0) == p
            fill = xp.full((s,), _identity(reduce, v.dtype), dtype=v.dtype)
            prev = xp.concat((fill, v[:-s]), axis=0)
            v = xp.where(same, _combine(reduce, v, prev), v)
            s *= 2
        targets = xp.arange(base.shape[0], dtype=xp.int64)
        last = xp.astype(xp.searchsorted(p, targets, side="right"), xp.int64) - 1
        safe = xp.where(last < 0, xp.zeros_like(last), last)
        hit = (last >= 0) & (xp.take(p, safe, axis=0) == targets)
        got = xp.take(v, safe, axis=0)
        return xp.where(hit, _combine(reduce, base, got), base)

    def scatter_reduce(x: Any, idx: Any, src: Any, axis: int, reduce: str,
                       include_self: bool) -> Any:
        """``x`` with ``src[i][j]`` reduced (sum, prod, mean, amax, amin) into
        ``x[i][idx[i][j]]`` along ``axis``; without ``include_self`` the places ``idx``
        names start from the reduction's identity instead of ``x``'s value."""
        shape = tuple(x.shape)
        pos = _positions(shape, idx, axis)
        if tuple(src.shape) != tuple(idx.shape):
            src = src[tuple(slice(0, s) for s in idx.shape)]
        vals = _flat(src)
        base = _flat(x)
        n = base.shape[0]
        hit = None
        if not include_self:
            hit = _hits(n, pos)
            ident = 0 if reduce in ("sum", "mean") else _identity(reduce, x.dtype)
            base = xp.where(hit, xp.asarray(ident, dtype=x.dtype), base)
        if reduce in ("sum", "mean"):
            out = _scatter_add(base, pos, vals, 0)
            if reduce == "mean":
                count = _scatter_add(xp.zeros((n,), dtype=xp.int64), pos,
                                     xp.ones(tuple(pos.shape), dtype=xp.int64), 0)
                if include_self:
                    count = count + 1
                count = xp.where(count == 0, xp.ones_like(count), count)
                if xp.isdtype(x.dtype, "real floating"):
                    out = out / xp.astype(count, x.dtype)
                else:
                    out = out // xp.astype(count, x.dtype)
        else:
            out = _reduce_at(base, pos, vals, reduce)
        return xp.reshape(out, shape)

    return {"take": take, "take_backward": take_backward, "rot90": rot90,
            "repeat_index": repeat_index, "index_fill": index_fill, "index_copy": index_copy,
            "masked_scatter": masked_scatter, "unfold": unfold,
            "unfold_backward": unfold_backward, "basic_scatter": basic_scatter,
            "diagonal_copy": diagonal_copy, "diagonal_embed": diagonal_embed,
            "diagonal_scatter": diagonal_scatter,
            "index_positions": index_positions,
            "index_put": index_put, "scatter_reduce": scatter_reduce}
