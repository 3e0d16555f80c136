"""Accurate floating-point sums for every reduction kernel: a blocked cascade.

Every kernel that sums -- ``sum``, ``mean``, ``reduce_to`` (every un-broadcast, so every
bias gradient), ``logsumexp``, ``softmax``, ``log_softmax``, cross-entropy, and through
``sum`` the bias gradient of ``linear_backward`` (fused or not) and the softmax backwards'
sums -- sums through :func:`blocked_sum` / :func:`sum_numpy`.

Why: a library's own reduction is not always accurate. NumPy's ``add.reduce`` is pairwise
only along a contiguous innermost axis; over any other axis (axis 0 of a C-ordered matrix:
the bias gradient, every un-broadcast of a batch) it adds row after row into one
accumulator, so its error grows with the number of rows: a float32 bias gradient over 4M
rows was off by 3.9e-5 (relative), and a sum of 20M ones stalled at 2**24. PyTorch sums
with a cascade of float32 partial sums (``SumKernel.cpp``) and stays within about one ulp.

The scheme (both implementations below):

* The reduced axes are taken one *run* at a time (a run: adjacent reduced axes of the
  array, size-1 axes ignored), last run first, each as the middle axis of an ``(A, R, K)``
  view: ``A`` the axes before it, ``K`` the kept axes after it.
* A run of ``R > BLOCK`` terms is reduced in levels: ``BLOCK`` terms are summed into each of
  ``R // BLOCK`` partial sums (the left-over terms make one more), then ``BLOCK`` partials
  into each of the next level's, until at most ``BLOCK`` are left and summed. A result is
  a sum of at most ``BLOCK`` terms per level over ``ceil(log_BLOCK(R))`` levels: a
  worst-case relative error of about ``(BLOCK - 1) * log_BLOCK(R)`` units of roundoff
  against ``R - 1`` for the sequential sum, and in practice within an ulp or so.
* float16 is accumulated in float32 and rounded once at the end (as PyTorch does).
* Past ``BLOCK**2`` terms, float32 (and float16) partial sums after the first level are
  added in float64 -- they are 1/BLOCK of the data, so it costs little -- and the result is
  within about half an ulp, below PyTorch's error. Up to ``BLOCK**2`` terms it is PyTorch's
  own scheme (two levels of 16 in float32). float64 has no wider type: its cascade is
  PyTorch's kind, with the same error on average. (:func:`blocked_sum` stays in float32 on
  a namespace or device that refuses float64.)

:func:`sum_numpy` (the ``cpu`` backend; :func:`blocked_sum` with NumPy as ``xp`` is it) adds:

* a reduction NumPy already does pairwise (innermost axes of a C-ordered array) or of at
  most ``BLOCK`` terms is NumPy's own call, as before (the same bits);
* a level *folds* rows (see :func:`_np_fold`), so it is one streaming NumPy reduction
  whatever the width; a small reduction over narrow rows (``K < NARROW``, at most ``SMALL``
  elements) is summed pairwise along a transposed copy, which is faster there;
* a transposed or permuted view is walked in memory order (no copy); any other strided
  view with more than ``BLOCK`` terms per sum is copied first;
* a broadcast (stride-0) axis is not summed at all: its length multiplies the sum (in
  float64, one rounding), or the result is repeated along it.

``docs/reliability.md`` ("Precision of reductions") has the measured errors against PyTorch
and the cost; ``docs/vendors.md`` what a backend's own reduction kernels must meet.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

__all__ = ["BLOCK", "blocked_sum", "blocked_mean", "register_sum", "sum_numpy", "mean_numpy"]

_reduce: Any = np.add.reduce  # (typed Any: NumPy's overloads want a literal keepdims)

#: Terms summed directly at each level of the cascade (PyTorch's cascade steps by 16 or more).
BLOCK = 16
#: NumPy only: a reduction over rows narrower than this, of at most ``SMALL`` elements, is
#: summed pairwise along a transposed copy (faster there than the cascade, and as accurate).
NARROW = 16
SMALL = 8192


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a sequence of ints) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return tuple(sorted({operator.index(a) % ndim for a in axis}))


def _runs(shape: tuple[int, ...], axes: tuple[int, ...]) -> list[list[Any]]:
    """``[size, reduced]`` of each run of adjacent axes (size-1 axes left out)."""
    runs: list[list[Any]] = []
    for i, n in enumerate(shape):
        if n == 1:
            continue
        reduced = i in axes
        if runs and runs[-1][1] == reduced:
            runs[-1][0] *= n
        else:
            runs.append([n, reduced])
    return runs


def _prod(sizes: Any) -> int:
    out = 1
    for n in sizes:
        out *= n
    return out


def _reduce_runs(z: Any, runs: list[list[Any]], step: Any) -> Any:
    """Reduce every reduced run of ``z`` (C order), last first; ``step(z, A, R, K)`` returns
    the ``(A, K)`` sums of ``z`` viewed as ``(A, R, K)`` over its middle axis."""
    while True:
        last = None
        for i, (_, reduced) in enumerate(runs):
            if reduced:
                last = i
        if last is None:
            return z
        a = _prod(n for n, _ in runs[:last])
        k = _prod(n for n, _ in runs[last + 1:])
        z = step(z, a, runs[last][0], k)
        del runs[last]


def _out_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


# ---------------------------------------------------------------------------------------------
# any Array-API namespace (the reference kernels)
# ---------------------------------------------------------------------------------------------
def blocked_sum(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``xp.sum(x, axis=axis, keepdims=keepdims)`` with the blocked cascade for floating
    ``x``; integer and bool arrays, and reductions of at most ``BLOCK`` terms, are
    ``xp.sum`` itself. With NumPy as ``xp``: :func:`sum_numpy`."""
    if xp is np:
        return sum_numpy(x, axis, keepdims)
    own = _OWN_SUMS.get(id(xp))
    if own is not None:
        return own(x, axis, keepdims)
    ndim = x.ndim
    dtype = x.dtype
    floats = _floats(xp)
    if ndim == 0 or dtype not in floats:
        return xp.sum(x, axis=axis, keepdims=keepdims)
    axes = _axes(axis, ndim)
    shape = tuple(x.shape)
    if _prod(shape[a] for a in axes) <= BLOCK or 0 in shape:
        return xp.sum(x, axis=axis, keepdims=keepdims)
    # (``is not None`` first: NumPy reads ``dtype == None`` as a comparison with float64, so
    # on a namespace without float16 -- Dask's -- float64 would be summed in float32)
    acc = xp.float32 if floats[0] is not None and dtype == floats[0] else None
    # past BLOCK**2 terms, float16/float32 partials after the first level in float64, where
    # the namespace has it (see sum_numpy; a device without float64 stays in float32)
    f64 = floats[2] if dtype != floats[2] and _HAS_F64.get(id(xp), True) else None

    def step(z: Any, a: int, r: int, k: int) -> Any:
        w = xp.reshape(z, (a, r, k))
        wide = f64 if r > BLOCK * BLOCK else None
        first = acc
        while r > BLOCK:  # fold BLOCK slabs of q rows into one (see _np_fold)
            q, rest = divmod(r, BLOCK)
            head = xp.sum(xp.reshape(w[:, :q * BLOCK, :], (a, BLOCK, q * k)), axis=1,
                          dtype=first)
            head = xp.reshape(head, (a, q, k))
            if rest:  # the left-over rows: one more partial sum
                tail = xp.sum(w[:, q * BLOCK:, :], axis=1, keepdims=True, dtype=first)
                head = xp.concat([head, tail], axis=1)
            if wide is not None and head.dtype != wide:
                head = _widen(xp, head, wide)
            w, r, first = head, head.shape[1], None
        return xp.sum(w, axis=1, dtype=first)

    out = _reduce_runs(x, _runs(shape, axes), step)
    out = xp.reshape(out, _out_shape(shape, axes, keepdims))
    return out if out.dtype == dtype else xp.astype(out, dtype)


_HAS_F64: dict[int, bool] = {}

# namespaces whose backend sums in its own way (``register_sum``): id(xp) -> sum(x, axis,
# keepdims)
_OWN_SUMS: dict[int, Any] = {}


def register_sum(xp: Any, fn: Any) -> None:
    """Make ``fn(x, axis, keepdims)`` the floating-point sum of every kernel on namespace
    ``xp``, in place of the blocked cascade: for a library whose arrays the cascade's
    reshapes do not suit (Dask's chunked arrays, which reshape only along chunk boundaries)
    and which sums as accurately by itself -- e.g. with :func:`sum_numpy` on each chunk and
    again on the partial sums."""
    _OWN_SUMS[id(xp)] = fn


def _widen(xp: Any, a: Any, f64: Any) -> Any:
    """``a`` as float64, or ``a`` itself on a namespace (device) that refuses float64 (then
    remembered)."""
    try:
        return xp.astype(a, f64)
    except Exception:  # noqa: BLE001 - any refusal: stay in the input's dtype
        _HAS_F64[id(xp)] = False
        return a


def blocked_mean(xp: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``xp.mean``, as :func:`blocked_sum` divided by the count (floating ``x``; else
    ``xp.mean`` itself). With NumPy as ``xp``: :func:`mean_numpy`."""
    if xp is np:
        return mean_numpy(x, axis, keepdims)
    if x.ndim == 0 or x.dtype not in _floats(xp):
        return xp.mean(x, axis=axis, keepdims=keepdims)
    count = _prod(x.shape[a] for a in _axes(axis, x.ndim))
    if count == 0:
        return xp.mean(x, axis=axis, keepdims=keepdims)
    return blocked_sum(xp, x, axis, keepdims) / count


_FLOATS: dict[int, tuple[Any, Any, Any]] = {}


def _floats(xp: Any) -> tuple[Any, Any, Any]:
    """``xp``'s float16, float32 and float64 dtypes (None for a missing one)."""
    found = _FLOATS.get(id(xp))
    if found is None:
        found = _FLOATS[id(xp)] = tuple(  # type: ignore[assignment]
            getattr(xp, name, None) for name in ("float16", "float32", "float64"))
    return found  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# NumPy
# ---------------------------------------------------------------------------------------------
def _np_fold(w: Any, acc: Any, wide: bool) -> Any:
    """The ``(A, W)`` sums of a 3-D ``(A, n, W)`` array over its middle axis, in levels of
    ``BLOCK``. A level *folds* the rows: partial sum ``i`` adds rows ``i, i + q, i + 2q, ...``
    (``BLOCK`` of them, ``q = n // BLOCK``), so NumPy streams ``BLOCK`` contiguous slabs of
    ``q * W`` elements into one -- its fastest reduction, whatever ``W`` is. The first level
    adds in ``acc`` (None: ``w``'s dtype); with ``wide``, every later level in float64."""
    a, n, width = w.shape
    while n > BLOCK:
        q, rest = divmod(n, BLOCK)
        head = np.add.reduce(w[:, :q * BLOCK].reshape(a, BLOCK, q * width), axis=1, dtype=acc)
        head = head.reshape(a, q, width)
        if rest:  # the left-over rows join the last partial sum
            head[:, -1] += np.add.reduce(w[:, q * BLOCK:], axis=1, dtype=acc)
        if wide and head.dtype != np.float64:
            head = head.astype(np.float64)
        w, n, acc = head, q, None
    return np.add.reduce(w, axis=1, dtype=acc)


def _np_step(acc: Any) -> Any:
    def step(z: Any, a: int, r: int, k: int) -> Any:
        if k == 1:  # the innermost axis, contiguous: NumPy's own sum is pairwise there
            return np.add.reduce(z.reshape(a, r), axis=1, dtype=acc)
        w = z.reshape(a, r, k)
        if r <= BLOCK:
            return np.add.reduce(w, axis=1, dtype=acc)
        if k < NARROW and a * r * k <= SMALL:
            return np.add.reduce(w.transpose(0, 2, 1).copy(), axis=2, dtype=acc)
        # Past BLOCK**2 terms, the partial sums after the first level (1/BLOCK of the data)
        # are added in float64: the result is then within about half an ulp, at little cost.
        return _np_fold(w, acc, r > BLOCK * BLOCK and z.dtype != np.float64)

    return step


_STEPS = {None: _np_step(None), np.float32: _np_step(np.float32)}


def _sum_np(x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """The blocked sum of floating ``x`` over ``axes`` as an array of the output shape, not
    necessarily owned, in the accumulator's dtype (float32 for float16; float64 where a
    broadcast axis's length multiplied it): the caller rounds it to ``x``'s dtype."""
    shape = x.shape
    ndim = len(shape)
    acc = np.float32 if x.dtype.itemsize < 4 else None
    factor = 1
    repeat = False
    y = x
    if 0 in x.strides:  # a broadcast axis: sum one copy of it (see the module's docstring)
        index: list[Any] = []
        for i, (n, s) in enumerate(zip(shape, x.strides)):
            if s == 0 and n > 1:
                index.append(slice(0, 1))
                if i in axes:
                    factor *= n
                else:
                    repeat = True
            else:
                index.append(slice(None))
        y = x[tuple(index)]
    yshape = y.shape
    order: list[int] | None = None
    if not y.flags.c_contiguous:
        # a transposed or permuted view of a contiguous array: walk it in memory order
        perm = sorted(range(ndim), key=lambda i: -y.strides[i])
        t = y.transpose(perm)
        if t.flags.c_contiguous:
            y, order = t, perm
        elif _prod(yshape[a] for a in axes) > BLOCK:
            y = np.ascontiguousarray(y)
    if order is None:
        if y.flags.c_contiguous:
            out = _reduce_runs(y, _runs(yshape, axes), _STEPS[acc])
        else:  # a strided view with at most BLOCK terms per sum: NumPy's order is fine
            out = np.add.reduce(y, axis=axes, dtype=acc)
        out = out.reshape(_out_shape(yshape, axes, False))
    else:
        paxes = tuple(j for j, i in enumerate(order) if i in axes)
        out = _reduce_runs(y, _runs(y.shape, paxes), _STEPS[acc])
        kept = [i for i in order if i not in axes]
        out = out.reshape([yshape[i] for i in kept])
        out = out.transpose(sorted(range(len(kept)), key=kept.__getitem__))
    if keepdims:
        out = out.reshape(_out_shape(yshape, axes, True))
    if repeat:
        out = np.broadcast_to(out, _out_shape(shape, axes, keepdims))
    if factor != 1:  # in float64: the product is rounded once, to the caller's dtype
        out = np.multiply(out, float(factor), dtype=np.result_type(out.dtype, np.float64))
    return out


def sum_numpy(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.add.reduce(x, axis, keepdims=keepdims)`` as an array, summed by the cascade
    where NumPy's own order is not pairwise (floating ``x`` only)."""
    if axis is None and x.flags.c_contiguous:  # pairwise over the whole array already
        return np.asarray(_reduce(x, axis=None, keepdims=keepdims))
    if x.dtype.kind != "f" or x.ndim == 0 or x.size == 0:
        return np.asarray(_reduce(x, axis=axis, keepdims=keepdims))
    ndim = x.ndim
    axes = _axes(axis, ndim)
    if x.dtype.itemsize >= 4 and axes:
        contiguous = x.flags.c_contiguous
        if contiguous and axes[0] == ndim - len(axes):
            # innermost axes of a C-ordered array: pairwise already (the same bits as ever)
            return np.asarray(_reduce(x, axis=axes, keepdims=keepdims))
        if contiguous and ndim == 2 and not keepdims:  # axes == (0,): a bias gradient
            n, k = x.shape
            if n <= BLOCK:
                return np.add.reduce(x, axis=0)
            if k < NARROW and n * k <= SMALL:  # pairwise along a transposed copy
                return np.add.reduce(x.T.copy(), axis=1)
            if n <= BLOCK * BLOCK:  # the two levels of _np_fold, inline
                q, rest = divmod(n, BLOCK)
                head = np.add.reduce(x[:q * BLOCK].reshape(BLOCK, q * k), axis=0)
                head = head.reshape(q, k)
                if rest:
                    head[-1] += np.add.reduce(x[q * BLOCK:], axis=0)
                return np.add.reduce(head, axis=0)
        terms = 1
        for a in axes:
            terms *= x.shape[a]
        if terms <= BLOCK:
            return np.asarray(_reduce(x, axis=axes, keepdims=keepdims))
    out = _sum_np(x, axes, keepdims)
    return np.array(out, dtype=x.dtype, order="C")  # owned, C-ordered, the input's dtype


def mean_numpy(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.mean`` with the sum of :func:`sum_numpy` (floating ``x``; else ``np.mean``).
    A mean over no terms is nan, as in PyTorch -- ``0 / 0``, without ``np.mean``'s "Mean of
    empty slice" warning (the caller ignores floating-point errors: ``host.quiet``)."""
    if x.dtype.kind != "f" or x.ndim == 0:
        return np.asarray(np.mean(x, axis=axis, keepdims=keepdims))
    axes = _axes(axis, x.ndim)
    count = 1
    for a in axes:
        count *= x.shape[a]
    if x.size == 0:
        return np.asarray(np.true_divide(_reduce(x, axis=axes, keepdims=keepdims), count),
                          dtype=x.dtype)
    if x.dtype.itemsize >= 4:
        return np.asarray(np.true_divide(sum_numpy(x, axes, keepdims), count))
    total = _sum_np(x, axes, keepdims)  # float16: divided in float32, rounded once
    return np.asarray(np.true_divide(total, count), dtype=x.dtype)
