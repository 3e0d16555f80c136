"""retrograd over Dask arrays: ``device="dask"``.

Dask arrays are chunked and lazy: an op records a task graph, and nothing is computed until
a value is read. The backend declares it (``Capabilities(lazy=True)``), and it declares
``inplace=False``: a Dask view (``x[0]``) is a separate graph, and ``x += y`` rebinds a name,
so a write must go through retrograd's functional path (``retrograd._writes``) to reach a
base and its views.

What is computed when (docs/backends.md, "Dask: what is forced when"):

* building tensors, every forward op, the backward walk and the optimizer step compute
  nothing: they extend graphs. Version counters, hooks and the graph of nodes are Python
  objects and never touch the data;
* at the end of each ``backward()`` the roots (the loss) and every gradient the walk made are
  computed **together**, once (``settle``: one ``dask.persist``), so that the forward graph
  they share runs once and a later ``.item()`` of the loss or read of a ``.grad`` costs
  nothing; with a ``dask.distributed`` client the results stay in the workers' memory
  (spilled to disk past their limit);
* reading a value -- ``item()``, ``tolist()``, ``bool()``, printing, ``.numpy()`` of a copy --
  computes that value's graph; so do the few kernels whose control flow depends on values
  (a tail branch of ``erf``, the overlap check of a write through an expanded view), and
  anomaly detection (``detect_anomaly``), which reads every node's output.

Arrays from the user keep their chunks: ``retrograd_dask.from_dask(x)`` wraps a Dask array
chunked along the batch axis without computing it.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import dask
import dask.array as da
import numpy as np

from retrograd.backends import ArrayAPIBackend, Capabilities
from retrograd.backends.summation import register_sum, sum_numpy

__all__ = ["DaskBackend", "backend", "conformance_xfails", "from_dask"]


def _settle(arrays: list[Any]) -> list[Any]:
    """Compute ``arrays`` together and keep them (``dask.persist``): a graph they share runs
    once; with a distributed client the chunks stay on the workers."""
    lazy = [i for i, a in enumerate(arrays) if isinstance(a, da.Array)]
    if not lazy:
        return arrays
    done = dask.persist(*(arrays[i] for i in lazy))
    out = list(arrays)
    for i, a in zip(lazy, done, strict=True):
        out[i] = a
    return out


def _sum(x: Any, axis: Any, keepdims: bool) -> Any:
    """A floating-point sum as accurate as the cpu backend's: retrograd's NumPy sum on each
    chunk, and again over the chunks' partial sums (Dask's tree reduction). The cpu
    backend's blocked cascade reshapes across chunk boundaries, which Dask refuses."""
    return da.reduction(x, sum_numpy, sum_numpy, axis=axis, keepdims=keepdims, dtype=x.dtype,
                        concatenate=True)


def _eye(n: int, m: int, dtype: Any) -> Any:
    """``eye(n, m)`` as a comparison of two ranges: Dask's own ``eye`` builds a wrong graph
    when ``m > n`` (dask/dask#11937, fix pending in dask/dask#12501)."""
    rows = da.arange(n, dtype=np.int64)[:, None]
    cols = da.arange(m, dtype=np.int64)[None, :]
    return (rows == cols).astype(dtype)


def _sized(a: Any) -> Any:
    if isinstance(a, da.Array) and any(n != n for n in a.shape):  # nan: not known yet
        a.compute_chunk_sizes()
    return a


def _known_shapes(kernel: Any) -> Any:
    """``kernel`` whose results have known shapes: a data-dependent shape (``unique``, a
    boolean mask's selection, ``nonzero``) is computed at once, as retrograd reads every
    tensor's shape; the values stay lazy."""

    def sized(*args: Any, **kwargs: Any) -> Any:
        out = kernel(*args, **kwargs)
        if isinstance(out, tuple):
            return tuple(_sized(o) for o in out)
        return _sized(out)

    sized.__name__ = getattr(kernel, "__name__", "kernel")
    sized.__doc__ = kernel.__doc__
    return sized


def _index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    """The gradient of ``x[key]`` w.r.t. ``x``: ``g`` added at the positions ``key`` selects,
    repeated positions adding up. Dask has no scatter-add; ``bincount`` with weights is one.
    The positions come from indexing ``arange`` on the host with the key's index arrays
    (computed here: they are small and decide the shape)."""
    n = 1
    for d in shape:
        n *= d
    items = key if isinstance(key, tuple) else (key,)
    host = tuple(np.asarray(k.compute()) if isinstance(k, da.Array) else k for k in items)
    positions = np.arange(n, dtype=np.int64).reshape(shape)[host].reshape(-1)
    flat = g.reshape(-1)
    summed = da.bincount(da.from_array(positions, chunks=flat.chunks), weights=flat,
                         minlength=n)
    return summed.astype(g.dtype).reshape(shape)


def _logcumsumexp(x: Any, axis: int, reverse: bool = False) -> Any:
    """``log(cumsum(exp(x)))`` along ``axis``: Dask's ``cumreduction`` of NumPy's
    ``logaddexp.accumulate`` within each chunk, the chunks' running totals carried by
    ``logaddexp`` (place after place, PyTorch's order). The Array API kernel's scan shifts the
    array by concatenation, which splits Dask's chunks further at every step: at 10^5 places
    it ran for over half an hour."""
    if x.ndim == 0 or x.shape[axis] == 0:
        return x.copy()
    if reverse:
        x = da.flip(x, axis)
    out = da.reductions.cumreduction(np.logaddexp.accumulate, np.logaddexp, -np.inf, x, axis=axis,
                          dtype=x.dtype)
    return da.flip(out, axis) if reverse else out


# array-api-compat's Dask namespace offers no float16
_DTYPES = ("bool", "int32", "int64", "float32", "float64")


#: The most bytes of chunks fetched by one request: a worker answering a request for all its
#: chunks at once holds them all in memory together (read back from disk if spilled, plus the
#: send buffers), which a worker with less memory than its share of the array cannot.
GATHER_BYTES = 32 * 2**20


def _gathered(array: Any) -> Any:
    """``array``'s values in one NumPy array, its chunks fetched a few at a time (at most
    :data:`GATHER_BYTES` a request) and assembled here: ``array.compute()`` would first
    gather every chunk into one worker of a distributed cluster, which cannot hold an array
    larger than its memory."""
    if array.ndim == 0 or array.npartitions == 1:
        return np.asarray(array.compute())
    blocks = array.to_delayed()
    sizes = [int(np.prod([array.chunks[d][i] for d, i in enumerate(idx)], dtype=np.int64))
             * array.dtype.itemsize for idx in np.ndindex(blocks.shape)]
    flat = blocks.ravel().tolist()
    done: list[Any] = []
    start = 0
    while start < len(flat):
        stop, total = start + 1, sizes[start]
        while stop < len(flat) and total + sizes[stop] <= GATHER_BYTES:
            total += sizes[stop]
            stop += 1
        done.extend(dask.compute(*flat[start:stop]))
        start = stop
    nested = np.empty(blocks.shape, dtype=object)
    for idx, value in zip(np.ndindex(blocks.shape), done, strict=True):
        nested[idx] = value
    return np.block(nested.tolist())


def _reshape_empty_too(reshape: Any) -> Any:
    """``reshape`` that also takes an array with a zero-size dimension: Dask's reshape plans
    its rechunking by splitting and merging dimensions, which a zero among them defeats
    ("reshape only supports operations that merge or split existing dimensions"). An empty
    array has no values to move: the result is a new empty array of NumPy's resolved shape
    (NumPy's errors included)."""

    def reshape_(x: Any, shape: Any, /, *args: Any, **kwargs: Any) -> Any:
        if 0 in x.shape:
            shape = np.empty(x.shape, dtype=bool).reshape(shape).shape
            return da.zeros(shape, dtype=x.dtype)
        return reshape(x, shape, *args, **kwargs)

    reshape_.__name__ = "reshape"
    return reshape_


class _AddWithAt:
    """The namespace's ``add``, with NumPy's ``add.at(out, positions, values)`` (values at
    repeated positions add up) made of ``bincount`` with weights, which Dask has, written
    into ``out`` by Dask's ``__setitem__`` (a new graph for the same array object).
    Without it retrograd's scatter kernels use the Array API fallback (a sort, a segmented
    scan by shifted concatenations and a search): on Dask, a gather's backward at 10^5
    elements made 1.7 million tasks."""

    def __init__(self, add: Any) -> None:
        self._add = add
        self.__name__ = "add"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._add(*args, **kwargs)

    @staticmethod
    def at(out: Any, positions: Any, values: Any) -> None:
        """``out[positions] += values``, repeated positions adding up (``out`` 1-d)."""
        positions = da.asarray(positions).reshape(-1)
        values = da.broadcast_to(da.asarray(values), positions.shape).rechunk(positions.chunks)
        summed = da.bincount(positions, weights=values, minlength=out.shape[0])
        out[...] = out + summed.astype(out.dtype)


def _concat_in_whole_chunks(concat: Any) -> Any:
    """``concat`` whose result is cut into chunks as large as its inputs' largest along
    ``axis``. retrograd's Array API scans (running maxima, the segmented sums of a
    scatter) shift an array by concatenating a slice of it with a pad; Dask keeps every
    chunk boundary of both operands, so each of the log2(n) steps doubles the boundaries,
    and at 10^5 places the last steps had one chunk per element."""

    def concat_(arrays: Any, /, *, axis: int | None = 0) -> Any:
        out = concat(arrays, axis=axis)
        if axis is None or out.ndim == 0 or out.shape[axis] == 0:
            return out
        size = max(max(a.chunks[axis], default=0) for a in arrays)
        return out.rechunk({axis % out.ndim: max(size, 1)})

    concat_.__name__ = "concat"
    return concat_


_REDUCTIONS_WITHOUT_IDENTITY = ("max", "min", "argmax", "argmin")


def _reduce_empty_too(name: str, reduce: Any) -> Any:
    """``max``/``min``/``argmax``/``argmin`` that also take an array with a zero-size
    dimension the reduction keeps: NumPy gives an empty result there (``(0, 3)`` reduced
    over its 3 gives ``(0,)``), Dask's tree reduction raises NumPy's "zero-size array to
    reduction operation maximum which has no identity" when computed. The result is a new
    empty array of NumPy's shape and dtype; an empty axis reduced still raises NumPy's
    error."""

    def reduce_(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        if 0 in x.shape:
            like = getattr(np, name)(np.empty(x.shape, dtype=x.dtype), axis=axis,
                                     keepdims=keepdims)
            return da.zeros(np.shape(like), dtype=np.asarray(like).dtype)
        return reduce(x, axis=axis, keepdims=keepdims)

    reduce_.__name__ = name
    return reduce_


class _Namespace:
    """array-api-compat's Dask namespace, with the functions whose result shape depends on
    the values (``nonzero``, ``unique_*``) computing that shape at once: the kernels slice
    their results, which Dask refuses along a dimension of unknown size. ``reshape`` and the
    reductions without an identity also take empty arrays (:func:`_reshape_empty_too`,
    :func:`_reduce_empty_too`), ``add`` has NumPy's ``add.at`` (:class:`_AddWithAt`) and
    ``concat`` keeps whole chunks (:func:`_concat_in_whole_chunks`)."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp
        self.__array_api_version__ = xp.__array_api_version__
        self.__name__ = xp.__name__

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._xp, name)
        if name == "nonzero" or name.startswith("unique_"):
            fn = _known_shapes(fn)
        elif name == "reshape":
            fn = _reshape_empty_too(fn)
        elif name in _REDUCTIONS_WITHOUT_IDENTITY:
            fn = _reduce_empty_too(name, fn)
        elif name == "add":
            fn = _AddWithAt(fn)
        elif name == "concat":
            fn = _concat_in_whole_chunks(fn)
        setattr(self, name, fn)
        return fn


class DaskBackend(ArrayAPIBackend):
    """Tensors stored as ``dask.array.Array``, computed by Dask's scheduler (the threaded one
    by default; a ``dask.distributed.Client`` when one is active)."""

    def __init__(self) -> None:
        import array_api_compat

        super().__init__(_Namespace(array_api_compat.array_namespace(da.zeros(1))), name="dask",
                         capabilities=Capabilities(inplace=False, lazy=True, memory="host",
                                                   devices=("cpu",), dtypes=_DTYPES),
                         overrides={"settle": _settle, "eye": _eye,
                                    "index_backward": _index_backward,
                                    "logcumsumexp": _logcumsumexp},
                         array_type=da.Array)
        register_sum(self.xp, _sum)
        self.override(**{name: _known_shapes(fn) for name, fn in self.kernels.items()})

    def is_lazy_array(self, array: Any) -> bool:
        """Whether ``array`` is a graph not yet computed (the suite's check of ``lazy``)."""
        return isinstance(array, da.Array)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array of the array's values (computes its graph)."""
        if isinstance(array, np.ndarray):
            return array
        if not isinstance(array, da.Array):
            return np.asarray(array)
        return _gathered(array)


def from_dask(array: Any, requires_grad: bool = False) -> Any:
    """A retrograd tensor on this backend holding the Dask array ``array`` as it is (its
    chunks kept, nothing computed)."""
    import retrograd as rg

    if not isinstance(array, da.Array):
        raise TypeError(f"from_dask: expected a dask.array.Array, got {type(array).__name__}")
    t = rg.Tensor(array, backend)
    if requires_grad:
        t.requires_grad_()
    return t


def conformance_xfails() -> str:
    """The path of the xfails file to give ``retrograd-conformance --xfails-file``."""
    return str(resources.files(__name__) / "xfails.txt")


backend = DaskBackend()
