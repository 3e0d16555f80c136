"""Reference kernels of the convolutions and pooling (see ``ops/conv.py``, ``ops/pooling.py``),
in Array-API calls on ``xp``; ``reference_kernels`` merges them into every backend's table.

Every kernel works on ``(N, C, *spatial)`` arrays with one or two spatial dimensions. A window
is gathered by one strided slice per kernel position (``im2col``: the slices stacked on a new
axis, no loop over output positions or the batch), a convolution is then one batched matrix
product per group, and the adjoint of the gather (``col2im``) adds each kernel position's
slice back into a zero array; pooling sums, and adds back, one slice at a time.

On NumPy itself the convolutions and max pooling are ``kernels_conv_numpy.py``'s forms (strided
window views, chunked batches), which give these kernels' values."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .put import put, put_add

__all__ = ["kernels", "out_size"]


def out_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool = False) -> int:
    """The number of windows along one dimension of size ``n`` (PyTorch's formula; in
    ``ceil_mode`` the last window must start inside the input or its left padding)."""
    span = n + 2 * p - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= n + p:
        o -= 1
    return o


def kernels(xp: Any, fast: bool = True) -> dict[str, Callable[..., Any]]:
    """The convolutions and pooling kernels on ``xp``; where ``xp`` is NumPy itself and
    ``fast``, the convolutions and max pooling are NumPy's forms (``kernels_conv_numpy.py``:
    strided window views, no stacked copies)."""
    table = _generic(xp)
    if fast and getattr(xp, "__name__", None) == "numpy":
        from . import kernels_conv_numpy

        table.update(kernels_conv_numpy.kernels())
    return table


def _generic(xp: Any) -> dict[str, Callable[..., Any]]:
    """The kernels in Array-API calls on ``xp`` (any namespace)."""

    def pad(x: Any, lo: Sequence[int], hi: Sequence[int], value: float) -> Any:
        """``x`` with ``lo[i]``/``hi[i]`` cells of ``value`` around its ``i``-th trailing
        (spatial) dimension."""
        if not any(lo) and not any(hi):
            return x
        nsp = len(lo)
        lead = tuple(x.shape[:x.ndim - nsp])
        sp = tuple(x.shape[x.ndim - nsp:])
        shape = lead + tuple(n + a + b for n, a, b in zip(sp, lo, hi))
        out = xp.full(shape, value, dtype=x.dtype)
        return put(out, (Ellipsis,) + tuple(slice(a, a + n) for a, n in zip(lo, sp)), x)

    def _slices(offset: Sequence[int], s: Sequence[int], d: Sequence[int],
                o: Sequence[int]) -> tuple[Any, ...]:
        return (Ellipsis,) + tuple(
            slice(i * dd, i * dd + ss * (oo - 1) + 1, ss)
            for i, ss, dd, oo in zip(offset, s, d, o))

    def windows(xp_: Any, k: Sequence[int], s: Sequence[int], d: Sequence[int],
                o: Sequence[int], axis: int) -> Any:
        """The windows of the (padded) ``xp_`` over its trailing ``len(k)`` dimensions: one
        strided slice per kernel position, stacked on a new ``axis``."""
        parts = [xp_[_slices(off, s, d, o)] for off in itertools.product(*map(range, k))]
        return xp.stack(parts, axis=axis)

    def col2im(cols: Any, axis: int, padded: Sequence[int], k: Sequence[int],
               s: Sequence[int], d: Sequence[int]) -> Any:
        """The adjoint of ``windows``: each kernel position's part of ``cols`` (along
        ``axis``) added into its slice of a zero array of trailing shape ``padded``."""
        nsp = len(k)
        o = tuple(cols.shape[cols.ndim - nsp:])
        lead = tuple(n for i, n in enumerate(cols.shape[:cols.ndim - nsp]) if i != axis)
        out = xp.zeros(lead + tuple(padded), dtype=cols.dtype)
        pick = (slice(None),) * axis
        for i, off in enumerate(itertools.product(*map(range, k))):
            sl = _slices(off, s, d, o)
            out = put_add(out, sl, cols[pick + (i, Ellipsis)])
        return out

    def add_windows(part: Callable[[int], Any], like: Any, padded: Sequence[int],
                    k: Sequence[int], s: Sequence[int], d: Sequence[int]) -> Any:
        """``col2im`` of parts given one kernel position at a time: ``part(i)`` (shaped as
        ``like``, ``(*lead, *out)``) added into its slice of a zero array of trailing shape
        ``padded``; no stacked copy."""
        nsp = len(k)
        o = tuple(like.shape[like.ndim - nsp:])
        out = xp.zeros(tuple(like.shape[:like.ndim - nsp]) + tuple(padded), dtype=like.dtype)
        for i, off in enumerate(itertools.product(*map(range, k))):
            out = put_add(out, _slices(off, s, d, o), part(i))
        return out

    def crop(x: Any, lo: Sequence[int], n: Sequence[int]) -> Any:
        nsp = len(lo)
        if not any(lo) and tuple(x.shape[x.ndim - nsp:]) == tuple(n):
            return x
        return x[(Ellipsis,) + tuple(slice(a, a + m) for a, m in zip(lo, n))]

    def _channels_first(x: Any) -> Any:
        """``(N, C, *sp)`` -> ``(C, N, *sp)`` (a copy: the GEMMs then fold the batch into
        their columns)."""
        return xp.permute_dims(x, (1, 0) + tuple(range(2, x.ndim)))

    def _cols(x: Any, k: Sequence[int], stride: Sequence[int], padding: Sequence[int],
              dilation: Sequence[int], o: Sequence[int], groups: int) -> Any:
        """im2col: ``(groups, C / groups * prod(k), N * prod(o))`` for ``x`` ``(N, C, *sp)``."""
        n, c = x.shape[:2]
        cols = windows(pad(_channels_first(x), padding, padding, 0), k, stride, dilation, o, 1)
        # split the channels first, then merge: one reshape that does both (C -> groups x
        # C/groups, C/groups with the window) is refused by Dask, which only splits or merges
        cols = xp.reshape(cols, (groups, c // groups) + tuple(cols.shape[1:]))
        return xp.reshape(cols, (groups, (c // groups) * math.prod(k), n * math.prod(o)))

    def conv_nd(x: Any, w: Any, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], groups: int) -> Any:
        """The convolution (cross-correlation) of ``x`` ``(N, C, *sp)`` with ``w``
        ``(O, C / groups, *k)``: ``(N, O, *out)``."""
        n = x.shape[0]
        o_ch = w.shape[0]
        k = tuple(w.shape[2:])
        o = tuple(out_size(m, kk, s, p, d) for m, kk, s, p, d
                  in zip(x.shape[2:], k, stride, padding, dilation))
        cols = _cols(x, k, stride, padding, dilation, o, groups)
        wm = xp.reshape(w, (groups, o_ch // groups, cols.shape[1]))
        y = xp.reshape(xp.matmul(wm, cols), (o_ch, n) + o)
        return _channels_first(y)

    def conv_transpose_nd(x: Any, w: Any, stride: Sequence[int], padding: Sequence[int],
                          dilation: Sequence[int], groups: int, out: Sequence[int]) -> Any:
        """The transposed convolution of ``x`` ``(N, C, *sp)`` with ``w`` ``(C, O / groups,
        *k)`` into ``(N, O, *out)`` (the adjoint of ``conv_nd`` in its input)."""
        n, c = x.shape[:2]
        og = w.shape[1]
        k = tuple(w.shape[2:])
        sp = tuple(x.shape[2:])
        wm = xp.reshape(w, (groups, c // groups, og * math.prod(k)))
        xm = xp.reshape(_channels_first(x), (groups, c // groups, n * math.prod(sp)))
        cols = xp.matmul(xp.permute_dims(wm, (0, 2, 1)), xm)
        cols = xp.reshape(cols, (groups * og, math.prod(k), n) + sp)
        padded = tuple(m + 2 * p for m, p in zip(out, padding))
        reach = tuple(s * (i - 1) + d * (kk - 1) + 1 for s, i, d, kk
                      in zip(stride, sp, dilation, k))
        full = tuple(max(a, b) for a, b in zip(padded, reach))
        y = crop(col2im(cols, 1, full, k, stride, dilation), padding, out)
        return _channels_first(y)

    def conv_weight_nd(x: Any, g: Any, kshape: Sequence[int], stride: Sequence[int],
                       padding: Sequence[int], dilation: Sequence[int], groups: int) -> Any:
        """The gradient of ``conv_nd(x, w)`` in ``w`` (of spatial shape ``kshape``) for the
        output gradient ``g`` ``(N, O, *out)``: ``(O, C / groups, *kshape)``."""
        n, c = x.shape[:2]
        o_ch = g.shape[1]
        k = tuple(kshape)
        o = tuple(g.shape[2:])
        cols = _cols(x, k, stride, padding, dilation, o, groups)
        gm = xp.reshape(_channels_first(g), (groups, o_ch // groups, n * math.prod(o)))
        gw = xp.matmul(gm, xp.permute_dims(cols, (0, 2, 1)))
        return xp.reshape(gw, (o_ch, c // groups) + k)

    # -- pooling ----------------------------------------------------------------------------
    def _hi(sp: Sequence[int], k: Sequence[int], s: Sequence[int], p: Sequence[int],
            d: Sequence[int], o: Sequence[int]) -> tuple[int, ...]:
        """The padding after each dimension that the last window (``ceil_mode``) reaches."""
        return tuple(max(ss * (oo - 1) + dd * (kk - 1) + 1 - n - pp, 0)
                     for n, kk, ss, pp, dd, oo in zip(sp, k, s, p, d, o))

    def max_pool_nd(x: Any, k: Sequence[int], s: Sequence[int], p: Sequence[int],
                    d: Sequence[int], o: Sequence[int]) -> tuple[Any, Any]:
        """The maximum of each window (padding is -inf) and the window position of the
        first maximum (an int64 array of the output's shape)."""
        sp = tuple(x.shape[x.ndim - len(k):])
        low = -math.inf if xp.isdtype(x.dtype, "real floating") else xp.iinfo(x.dtype).min
        cols = windows(pad(x, p, _hi(sp, k, s, p, d, o), low), k, s, d, o, 0)
        arg = xp.argmax(cols, axis=0)
        # NaN is the maximum of a window that has one, at its last position (PyTorch's rule:
        # an element replaces the maximum so far when it is greater or NaN)
        if low == -math.inf:
            nan = xp.isnan(cols)
            if xp.any(nan):
                back = xp.argmax(xp.flip(xp.astype(nan, xp.int8), axis=0), axis=0)
                arg = xp.where(xp.any(nan, axis=0), cols.shape[0] - 1 - back, arg)
        return select(cols, arg), xp.astype(arg, xp.int64)

    def select(cols: Any, arg: Any) -> Any:
        """``cols[arg[...], ...]``: each window's element at position ``arg``."""
        out = cols[0, ...]
        for i in range(1, cols.shape[0]):
            out = xp.where(arg == i, cols[i, ...], out)
        return out

    def max_pool_nd_select(h: Any, arg: Any, k: Sequence[int], s: Sequence[int],
                           p: Sequence[int], d: Sequence[int]) -> Any:
        """Each window of ``h`` (padding 0) at the position ``arg`` of its maximum."""
        o = tuple(arg.shape[arg.ndim - len(k):])
        sp = tuple(h.shape[h.ndim - len(k):])
        return select(windows(pad(h, p, _hi(sp, k, s, p, d, o), 0), k, s, d, o, 0), arg)

    def max_pool_nd_backward(g: Any, arg: Any, sp: Sequence[int], k: Sequence[int],
                             s: Sequence[int], p: Sequence[int], d: Sequence[int],
                             like: Any = None) -> Any:
        """The gradient of ``max_pool_nd`` in its input ``(N, C, *sp)``: each window's
        gradient added at the position of its maximum (the adjoint of ``max_pool_nd_select``).
        ``like``: the input (unused here; the recorded form's second edge)."""
        o = tuple(g.shape[g.ndim - len(k):])
        zero = xp.zeros((), dtype=g.dtype)
        hi = _hi(sp, k, s, p, d, o)
        padded = tuple(n + a + b for n, a, b in zip(sp, p, hi))
        return crop(add_windows(lambda i: xp.where(arg == i, g, zero), g, padded, k, s, d),
                    p, sp)

    def max_pool_nd_indices(arg: Any, sp: Sequence[int], k: Sequence[int], s: Sequence[int],
                            p: Sequence[int], d: Sequence[int]) -> Any:
        """PyTorch's indices of the maxima: flat positions in each input plane (int64)."""
        o = tuple(arg.shape[arg.ndim - len(k):])
        nd = len(k)
        flat = xp.zeros(arg.shape, dtype=xp.int64)
        rest = arg
        for i in reversed(range(nd)):
            pos = rest % k[i]
            rest = rest // k[i]
            start = xp.arange(o[i], dtype=xp.int64) * s[i] - p[i]
            start = xp.reshape(start, (o[i],) + (1,) * (nd - 1 - i))
            coord = start + pos * d[i]
            flat = flat + coord * math.prod(sp[i + 1:])
        return flat

    def _divisor(sp: Sequence[int], k: Sequence[int], s: Sequence[int], p: Sequence[int],
                 o: Sequence[int], count_include_pad: bool, divisor_override: Any,
                 dtype: Any) -> Any:
        if divisor_override:
            return xp.asarray(divisor_override, dtype=dtype)
        div: Any = None
        nd = len(k)
        for i, (n, kk, ss, pp, oo) in enumerate(zip(sp, k, s, p, o)):
            counts = []
            for j in range(oo):
                a = j * ss - pp
                b = min(a + kk, n + pp)
                counts.append(b - a if count_include_pad else min(b, n) - max(a, 0))
            arr = xp.reshape(xp.asarray(counts, dtype=dtype), (oo,) + (1,) * (nd - 1 - i))
            div = arr if div is None else div * arr
        return div

    def avg_pool_nd(x: Any, k: Sequence[int], s: Sequence[int], p: Sequence[int],
                    o: Sequence[int], count_include_pad: bool, divisor_override: Any) -> Any:
        """The mean of each window (PyTorch's divisor: see ``avg_pool2d``)."""
        sp = tuple(x.shape[x.ndim - len(k):])
        one = (1,) * len(k)
        padded = pad(x, p, _hi(sp, k, s, p, one, o), 0)
        total: Any = None
        for off in itertools.product(*map(range, k)):  # a running sum: no stacked windows
            part = padded[_slices(off, s, one, o)]
            if total is None:
                total = xp.asarray(part, copy=True)
            else:
                total += part
        div = _divisor(sp, k, s, p, o, count_include_pad, divisor_override, x.dtype)
        if xp.isdtype(x.dtype, "integral"):  # PyTorch's integer division, toward zero
            q = xp.abs(total) // div
            return xp.where(total < 0, -q, q)
        return total / div

    def avg_pool_nd_backward(g: Any, sp: Sequence[int], k: Sequence[int], s: Sequence[int],
                             p: Sequence[int], count_include_pad: bool,
                             divisor_override: Any, like: Any = None) -> Any:
        """The gradient of ``avg_pool_nd`` in its input ``(N, C, *sp)`` (``like``: the
        input, unused here)."""
        o = tuple(g.shape[g.ndim - len(k):])
        one = (1,) * len(k)
        q = g / _divisor(sp, k, s, p, o, count_include_pad, divisor_override, g.dtype)
        hi = _hi(sp, k, s, p, one, o)
        padded = tuple(n + a + b for n, a, b in zip(sp, p, hi))
        return crop(add_windows(lambda i: q, q, padded, k, s, one), p, sp)

    def _adaptive_matrix(n: int, o: int, dtype: Any) -> Any:
        """``(o, n)``: row ``i`` averages PyTorch's window
        ``[floor(i n / o), ceil((i + 1) n / o))``."""
        i = xp.reshape(xp.arange(o), (o, 1))
        j = xp.reshape(xp.arange(n), (1, n))
        start = (i * n) // o
        end = ((i + 1) * n + o - 1) // o
        inside = (j >= start) & (j < end)
        size = xp.astype(end - start, dtype)
        return xp.where(inside, 1 / size, xp.zeros((), dtype=dtype))

    def _apply(x: Any, mats: Sequence[Any], transpose: bool) -> Any:
        nd = len(mats)
        for i, m in enumerate(mats):
            axis = x.ndim - nd + i
            if transpose:
                m = xp.permute_dims(m, (1, 0))
            if axis == x.ndim - 1:
                x = xp.matmul(x, xp.permute_dims(m, (1, 0)))
            else:  # axis -2
                x = xp.matmul(m, x)
        return x

    def adaptive_avg_pool_nd(x: Any, o: Sequence[int]) -> Any:
        """The mean over PyTorch's adaptive windows, ``o`` of them per spatial dimension."""
        sp = tuple(x.shape[x.ndim - len(o):])
        mats = [_adaptive_matrix(n, oo, x.dtype) for n, oo in zip(sp, o)]
        return _apply(x, mats, False)

    def adaptive_avg_pool_nd_backward(g: Any, sp: Sequence[int], like: Any = None) -> Any:
        """The gradient of ``adaptive_avg_pool_nd`` in its input (spatial shape ``sp``;
        ``like``: the input, unused here)."""
        o = tuple(g.shape[g.ndim - len(sp):])
        mats = [_adaptive_matrix(n, oo, g.dtype) for n, oo in zip(sp, o)]
        return _apply(g, mats, True)

    return {
        "conv_nd": conv_nd,
        "conv_transpose_nd": conv_transpose_nd,
        "conv_weight_nd": conv_weight_nd,
        "max_pool_nd": max_pool_nd,
        "max_pool_nd_select": max_pool_nd_select,
        "max_pool_nd_backward": max_pool_nd_backward,
        "max_pool_nd_indices": max_pool_nd_indices,
        "avg_pool_nd": avg_pool_nd,
        "avg_pool_nd_backward": avg_pool_nd_backward,
        "adaptive_avg_pool_nd": adaptive_avg_pool_nd,
        "adaptive_avg_pool_nd_backward": adaptive_avg_pool_nd_backward,
    }
