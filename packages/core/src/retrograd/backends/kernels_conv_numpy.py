"""NumPy's forms of the convolution and max-pooling kernels of ``kernels_conv.py`` (chosen
there when the array namespace is NumPy itself; every other namespace keeps the Array-API
forms).

Same values as the generic forms, fewer copies:

- the windows of an input are one strided *view* (``as_strided``: ``(N, C, *k, *out)``), so
  im2col is a single reshape copy, never a stack of ``prod(k)`` slices;
- the batch is cut into chunks whose columns stay within ``CHUNK_BYTES`` (cache-sized, and
  the step's peak memory holds one chunk of columns, not the whole batch's);
- a convolution is one broadcast matrix product per chunk written straight into the
  ``(N, O, *out)`` result (C-contiguous, as PyTorch's), its weight's gradient one product
  over the chunk's batch and positions; the adjoint of the gather (col2im) adds each kernel
  position's part in place into a writable window view;
- where the output rows are short (``SHORT_ROWS``: the CNN's 8-wide second layer), the
  gradient kernels work batch-last, ``(C, *sp, B)``, so that each copy or add runs over rows
  of ``width * B`` elements instead of ``width`` (NumPy's cost there is per row, not per
  element);
- max pooling keeps a running maximum over the ``prod(k)`` window views with PyTorch's rule
  (a later element wins when it is greater or NaN), the window position in a ``uint8`` array
  where the kernel has at most 255 elements; its backward adds the gradient in place at those
  positions (no col2im)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["CHUNK_BYTES", "SHORT_ROWS", "WEIGHT_CHUNK_BYTES", "kernels"]

#: the most bytes of im2col columns (or of a transposed convolution's columns) formed at once
CHUNK_BYTES = 1 << 21
#: the same for the weight gradient's batch-first columns, which its product reads back at
#: once: while they fit in the L2 cache that read is the fastest (measured: 256 KiB)
WEIGHT_CHUNK_BYTES = 1 << 18
#: a gradient kernel runs batch-last (``_batch_last``) where its output rows are shorter
SHORT_ROWS = 16


def _out_size(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _pad(x: Any, lo: Sequence[int], hi: Sequence[int], value: Any) -> Any:
    """``x`` with ``lo[i]``/``hi[i]`` cells of ``value`` around its ``i``-th trailing dimension."""
    if not any(lo) and not any(hi):
        return x
    nsp = len(lo)
    sp = x.shape[x.ndim - nsp:]
    out = np.full(x.shape[:x.ndim - nsp] + tuple(n + a + b for n, a, b in zip(sp, lo, hi)),
                  value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(a, a + n) for a, n in zip(lo, sp))] = x
    return out


def _crop(x: Any, lo: Sequence[int], n: Sequence[int]) -> Any:
    nsp = len(lo)
    if not any(lo) and tuple(x.shape[x.ndim - nsp:]) == tuple(n):
        return x
    return x[(Ellipsis,) + tuple(slice(a, a + m) for a, m in zip(lo, n))]


def _windows(a: Any, k: Sequence[int], s: Sequence[int], d: Sequence[int], o: Sequence[int],
             writeable: bool = False) -> Any:
    """The view ``(*lead, *k, *o)`` of ``a`` ``(*lead, *sp)``: element ``[..., i, j]`` is
    window ``j``'s element at kernel position ``i``."""
    nsp = len(k)
    st = a.strides[a.ndim - nsp:]
    return as_strided(a, a.shape[:a.ndim - nsp] + tuple(k) + tuple(o),
                      a.strides[:a.ndim - nsp] + tuple(t * dd for t, dd in zip(st, d))
                      + tuple(t * ss for t, ss in zip(st, s)), writeable=writeable)


def _batch_last(a: Any) -> Any:
    """``(B, C, *sp)`` as a contiguous ``(C, *sp, B)`` copy: rows of a window then run over
    ``width * B`` contiguous elements, not ``width``."""
    return np.ascontiguousarray(np.moveaxis(a, 0, -1))


def _windows_last(a: Any, k: Sequence[int], s: Sequence[int], d: Sequence[int],
                  o: Sequence[int], writeable: bool = False) -> Any:
    """The view ``(C, *k, *o, B)`` of a batch-last ``a`` ``(C, *sp, B)``."""
    nsp = len(k)
    st = a.strides[1:1 + nsp]
    return as_strided(a, a.shape[:1] + tuple(k) + tuple(o) + a.shape[-1:],
                      a.strides[:1] + tuple(t * dd for t, dd in zip(st, d))
                      + tuple(t * ss for t, ss in zip(st, s)) + a.strides[-1:],
                      writeable=writeable)


def _chunks(n: int, item_bytes: int, budget: int | None = None) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges over a batch of ``n`` whose items take ``item_bytes`` each, as many
    items a range as ``budget`` bytes hold (default ``CHUNK_BYTES``; at least one)."""
    step = max(1, (CHUNK_BYTES if budget is None else budget) // max(item_bytes, 1))
    return [(i, min(i + step, n)) for i in range(0, n, step)]


def _positions(k: Sequence[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*map(range, k)))


def conv_nd(x: Any, w: Any, stride: Sequence[int], padding: Sequence[int],
            dilation: Sequence[int], groups: int) -> Any:
    """``kernels_conv``'s ``conv_nd``: ``(N, O, *out)``, C-contiguous."""
    n, c = x.shape[:2]
    o_ch = w.shape[0]
    k = tuple(w.shape[2:])
    o = tuple(_out_size(m, kk, s, p, d) for m, kk, s, p, d
              in zip(x.shape[2:], k, stride, padding, dilation))
    ck = c // groups * math.prod(k)
    big_p = math.prod(o)
    win = _windows(_pad(x, padding, padding, 0), k, stride, dilation, o)
    wm = w.reshape(groups, o_ch // groups, ck)
    y = np.empty((n, groups, o_ch // groups, big_p), dtype=np.result_type(x, w))
    for lo, hi in _chunks(n, c * math.prod(k) * big_p * x.itemsize):
        cols = win[lo:hi].reshape(hi - lo, groups, ck, big_p)
        np.matmul(wm, cols, out=y[lo:hi])
    return y.reshape((n, o_ch) + o)


def conv_weight_nd(x: Any, g: Any, kshape: Sequence[int], stride: Sequence[int],
                   padding: Sequence[int], dilation: Sequence[int], groups: int) -> Any:
    """``kernels_conv``'s ``conv_weight_nd``: ``(O, C / groups, *k)``, per chunk of the batch
    one product per group of the output gradient with the columns, over the chunk's batch and
    positions together (the columns formed batch-last where output rows are short)."""
    n, c = x.shape[:2]
    o_ch = g.shape[1]
    k = tuple(kshape)
    o = tuple(g.shape[2:])
    og = o_ch // groups
    ck = c // groups * math.prod(k)
    big_p = math.prod(o)
    nsp = len(k)
    last = o[-1] < SHORT_ROWS
    win: Any = None if last else _windows(_pad(x, padding, padding, 0), k, stride, dilation, o)
    # (C, *k, B, *o) and (O, B, *o): the batch beside the positions
    to_cols = (1,) + tuple(range(2, 2 + nsp)) + (0,) + tuple(range(2 + nsp, 2 + 2 * nsp))
    to_rows = (1, 0) + tuple(range(2, 2 + nsp))
    gw = np.zeros((groups, og, ck), dtype=np.result_type(x, g))
    budget = CHUNK_BYTES if last else WEIGHT_CHUNK_BYTES
    for lo, hi in _chunks(n, c * math.prod(k) * big_p * x.itemsize, budget):
        b = hi - lo
        if last:
            xt = _batch_last(_pad(x[lo:hi], padding, padding, 0))
            cols = _windows_last(xt, k, stride, dilation, o).reshape(groups, ck, big_p * b)
            rows = _batch_last(g[lo:hi]).reshape(groups, og, big_p * b)
        else:
            cols = win[lo:hi].transpose(to_cols).reshape(groups, ck, b * big_p)
            rows = g[lo:hi].transpose(to_rows).reshape(groups, og, b * big_p)
        gw += np.matmul(rows, cols.swapaxes(1, 2))
    return gw.reshape((o_ch, c // groups) + k)


def conv_transpose_nd(x: Any, w: Any, stride: Sequence[int], padding: Sequence[int],
                      dilation: Sequence[int], groups: int, out: Sequence[int]) -> Any:
    """``kernels_conv``'s ``conv_transpose_nd``: per chunk of the batch, the columns ``w^T x``
    added in place, kernel position by kernel position, into a writable window view of the
    result."""
    n, c = x.shape[:2]
    og = w.shape[1]
    k = tuple(w.shape[2:])
    sp = tuple(x.shape[2:])
    padded = tuple(m + 2 * p for m, p in zip(out, padding))
    reach = tuple(s * (i - 1) + d * (kk - 1) + 1 for s, i, d, kk
                  in zip(stride, sp, dilation, k))
    full = tuple(max(a, b) for a, b in zip(padded, reach))
    wm = w.reshape(groups, c // groups, og * math.prod(k)).swapaxes(1, 2)
    res = np.zeros((n, groups * og) + full, dtype=np.result_type(x, w))
    if sp[-1] < SHORT_ROWS:
        _add_windows_last(res, x, wm, k, stride, dilation, groups)
    else:
        _add_windows(res, x, wm, k, stride, dilation, groups)
    return _crop(res, padding, out)


def _add_windows(res: Any, x: Any, wm: Any, k: tuple[int, ...], stride: Sequence[int],
                 dilation: Sequence[int], groups: int) -> None:
    """``res += col2im(wm @ x)`` through a writable window view of ``res``."""
    n, c = x.shape[:2]
    o_ch = res.shape[1]
    sp = tuple(x.shape[2:])
    big_p = math.prod(sp)
    xm = x.reshape(n, groups, c // groups, big_p)
    view = _windows(res, k, stride, dilation, sp, writeable=True)
    positions = _positions(k)
    for lo, hi in _chunks(n, o_ch * math.prod(k) * big_p * res.itemsize):
        cols = np.matmul(wm, xm[lo:hi]).reshape((hi - lo, o_ch) + k + sp)
        part = view[lo:hi]
        for pos in positions:
            at = (slice(None), slice(None)) + pos
            dst = part[at]
            np.add(dst, cols[at], out=dst)


def _add_windows_last(res: Any, x: Any, wm: Any, k: tuple[int, ...], stride: Sequence[int],
                      dilation: Sequence[int], groups: int) -> None:
    """``_add_windows`` batch-last: each chunk's columns and its part of the result are
    ``(.., B)`` arrays, so each kernel position's add runs over rows of ``width * B``."""
    n, c = x.shape[:2]
    o_ch = res.shape[1]
    sp = tuple(x.shape[2:])
    big_p = math.prod(sp)
    big_k = math.prod(k)
    positions = _positions(k)
    for lo, hi in _chunks(n, o_ch * big_k * big_p * res.itemsize):
        b = hi - lo
        xt = _batch_last(x[lo:hi]).reshape(groups, c // groups, big_p * b)
        cols = np.matmul(wm, xt).reshape((o_ch, big_k) + sp + (b,))
        part = np.zeros(res.shape[1:] + (b,), dtype=res.dtype)
        view = _windows_last(part, k, stride, dilation, sp, writeable=True)
        for q, pos in enumerate(positions):
            dst = view[(slice(None),) + pos]
            np.add(dst, cols[:, q], out=dst)
        res[lo:hi] = np.moveaxis(part, -1, 0)


# -- max pooling -----------------------------------------------------------------------------
def _hi(sp: Sequence[int], k: Sequence[int], s: Sequence[int], p: Sequence[int],
        d: Sequence[int], o: Sequence[int]) -> tuple[int, ...]:
    return tuple(max(ss * (oo - 1) + dd * (kk - 1) + 1 - n - pp, 0)
                 for n, kk, ss, pp, dd, oo in zip(sp, k, s, p, d, o))


def _arg_dtype(k: Sequence[int]) -> Any:
    return np.uint8 if math.prod(k) <= 255 else np.int64


def max_pool_nd(x: Any, k: Sequence[int], s: Sequence[int], p: Sequence[int],
                d: Sequence[int], o: Sequence[int]) -> tuple[Any, Any]:
    """``kernels_conv``'s ``max_pool_nd``: a running maximum over the window views, with
    PyTorch's rule -- an element replaces the maximum so far when it is greater or NaN: the
    first of equal maxima, the last NaN of a window.

    Branch-free passes: ``maximum(v, best)`` keeps ``best`` on a tie (NumPy returns its second
    operand then, so of -0.0 and 0.0 the earlier) and propagates NaN; the position is raised
    to ``i`` where ``v > best`` (positions only grow). A window with a NaN is then given the
    position of its last NaN."""
    nd = len(k)
    sp = tuple(x.shape[x.ndim - nd:])
    floating = x.dtype.kind == "f"
    low = -np.inf if floating else np.iinfo(x.dtype).min
    win = _windows(_pad(x, p, _hi(sp, k, s, p, d, o), low), k, s, d, o)
    lead = (slice(None),) * (x.ndim - nd)
    positions = _positions(k)
    best = win[lead + positions[0]].copy()
    kind = _arg_dtype(k)
    arg = np.zeros(best.shape, dtype=kind)
    upd = np.empty(best.shape, dtype=bool)
    step = np.empty(best.shape, dtype=kind)
    for i, pos in enumerate(positions[1:], 1):
        v = win[lead + pos]
        np.greater(v, best, out=upd)
        np.maximum(v, best, out=best)
        np.multiply(upd, kind(i), out=step)
        np.maximum(arg, step, out=arg)
    if floating:
        nan = np.isnan(best)
        if nan.any():
            for i, pos in enumerate(positions):
                arg[nan & np.isnan(win[lead + pos])] = i
    return best, arg


def max_pool_nd_select(h: Any, arg: Any, k: Sequence[int], s: Sequence[int],
                       p: Sequence[int], d: Sequence[int]) -> Any:
    """``kernels_conv``'s ``max_pool_nd_select``: each window of ``h`` (padding 0) at the
    position ``arg``."""
    nd = len(k)
    o = tuple(arg.shape[arg.ndim - nd:])
    sp = tuple(h.shape[h.ndim - nd:])
    win = _windows(_pad(h, p, _hi(sp, k, s, p, d, o), 0), k, s, d, o)
    lead = (slice(None),) * (h.ndim - nd)
    positions = _positions(k)
    out = win[lead + positions[0]].copy()
    for i, pos in enumerate(positions[1:], 1):
        np.copyto(out, win[lead + pos], where=arg == i)
    return out


def max_pool_nd_backward(g: Any, arg: Any, sp: Sequence[int], k: Sequence[int],
                         s: Sequence[int], p: Sequence[int], d: Sequence[int],
                         like: Any = None) -> Any:
    """``kernels_conv``'s ``max_pool_nd_backward``: kernel position by kernel position, the
    gradient where that position holds the maximum (0 elsewhere, also for an inf or NaN
    gradient) added in place into a writable window view of the zero result (``like``
    unused). Adding into +0.0 also turns the -0.0 of a masked negative gradient into PyTorch's
    +0.0."""
    nd = len(k)
    o = tuple(g.shape[g.ndim - nd:])
    hi = _hi(sp, k, s, p, d, o)
    padded = tuple(n + a + b for n, a, b in zip(sp, p, hi))
    res = np.zeros(g.shape[:g.ndim - nd] + padded, dtype=g.dtype)
    view = _windows(res, k, s, d, o, writeable=True)
    lead = (slice(None),) * (g.ndim - nd)
    finite = g.dtype.kind != "f" or bool(np.isfinite(g).all())
    at = np.empty(arg.shape, dtype=bool)
    part = np.empty(g.shape, dtype=g.dtype)
    for i, pos in enumerate(_positions(k)):
        dst = view[lead + pos]
        np.equal(arg, i, out=at)
        if finite:  # a product by the 0/1 mask is the selection here, and branch-free
            np.multiply(at, g, out=part)
        else:
            np.copyto(part, np.where(at, g, 0))
        np.add(dst, part, out=dst)
    return _crop(res, p, sp)


def max_pool_nd_indices(arg: Any, sp: Sequence[int], k: Sequence[int], s: Sequence[int],
                        p: Sequence[int], d: Sequence[int]) -> Any:
    """``kernels_conv``'s ``max_pool_nd_indices``: PyTorch's flat indices (int64)."""
    nd = len(k)
    o = tuple(arg.shape[arg.ndim - nd:])
    rest = arg.astype(np.int64)
    flat = np.zeros(arg.shape, dtype=np.int64)
    for i in reversed(range(nd)):
        rest, pos = np.divmod(rest, k[i])
        start = (np.arange(o[i], dtype=np.int64) * s[i] - p[i]).reshape(
            (o[i],) + (1,) * (nd - 1 - i))
        flat += (start + pos * d[i]) * math.prod(sp[i + 1:])
    return flat


def kernels() -> dict[str, Callable[..., Any]]:
    """The NumPy forms, by kernel name."""
    return {
        "conv_nd": conv_nd,
        "conv_weight_nd": conv_weight_nd,
        "conv_transpose_nd": conv_transpose_nd,
        "max_pool_nd": max_pool_nd,
        "max_pool_nd_select": max_pool_nd_select,
        "max_pool_nd_backward": max_pool_nd_backward,
        "max_pool_nd_indices": max_pool_nd_indices,
    }
