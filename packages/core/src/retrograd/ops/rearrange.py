"""Ops that move or repeat elements, added for the everyday API: ``repeat_interleave``,
``take``, ``index_fill``, ``index_copy``, ``masked_scatter``, ``Tensor.unfold``, ``rot90``,
``scatter_reduce``, ``slice_scatter``, ``select_scatter``, ``diagonal_scatter``,
``index_put``, ``ravel``, and the in-place forms (``index_fill_`` ...).

Each derivative rule is written once against ``F`` (the backend's raw kernels in the walk,
this module's recorded ops under ``create_graph``), with PyTorch's node names; each op's
gradient is built from the adjoint op (``take``'s is a scatter-add, ``unfold``'s an
``unfold_backward``, a ``*_scatter``'s a zeroed copy and a read of the written part)."""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_, int64
from ..errors import ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .conversion import clone
from .declare import GRAPH_KERNELS, op
from .elementwise import broadcast_mismatch, broadcast_shape
from .indexing import _in_place, index_select
from .metadata import contiguous
from .shape import expand_to, flatten, reshape, unsqueeze, wrap_dim
from .statistics import _tensor

__all__ = ["repeat_interleave", "take", "index_fill", "index_copy", "masked_scatter",
           "unfold", "rot90", "scatter_reduce", "slice_scatter", "select_scatter",
           "diagonal_scatter", "index_put", "ravel", "index_fill_", "index_copy_",
           "masked_scatter_", "scatter_reduce_", "index_put_"]


# -- helpers ---------------------------------------------------------------------------------
def _check_tensor(name: str, x: Any, arg: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _tracks(*ts: Any) -> bool:
    return bool(_grad.enabled and any(isinstance(t, Tensor) and t._requires_grad for t in ts))


def _dtype_name(dt: Any) -> str:
    """PyTorch's short name of a dtype (``Float``, ``Long`` ...)."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
             "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
             "complex128": "ComplexDouble"}
    s = str(dt).rpartition(".")[2]
    return names.get(s, s.capitalize())


def _axis(dim: Any, axis: Any) -> Any:
    return axis if axis is not None else dim


def _first_out_of_range(be: Any, idx: Any, n: int, allow_negative: bool) -> int | None:
    """The first element of the 1-d ``idx`` outside ``[0, n)`` (``[-n, n)``), else None."""
    xp = be.xp
    flat = xp.reshape(idx, (-1,))
    if flat.shape[0] == 0:
        return None
    lo = -n if allow_negative else 0
    bad = (flat < lo) | (flat >= n)
    if not bool(xp.any(bad)):
        return None
    return int(flat[int(xp.nonzero(bad)[0][0])])


def _wrapped(be: Any, idx: Any, n: int) -> Any:
    """The 1-d ``idx`` with negative places counted from the end (int64)."""
    xp = be.xp
    i = xp.astype(xp.reshape(idx, (-1,)), xp.int64)
    return xp.where(i < 0, i + n, i)


# -- ravel -----------------------------------------------------------------------------------
@op("ravel")
def ravel(x: Tensor) -> Tensor:
    """``x`` flattened to 1-d: a view when ``x`` is contiguous, else a contiguous copy's
    view (as PyTorch: ``contiguous().view(-1)``)."""
    _check_tensor("ravel", x)
    return reshape(contiguous(x), (-1,))


# -- take ------------------------------------------------------------------------------------
def _take_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    (shape,) = attrs
    return (F.take_backward(g, idx, shape),)


def _take_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    return (F.take(g, idx),)


TakeBackward0 = formula_node("TakeBackward0", _take_rule, arity=1)
_TakeAdjoint = formula_node("TakeBackwardBackward0", _take_adjoint_rule, arity=1)


def _take_t(x: Tensor, idx: Any) -> Tensor:
    """``take`` on a wrapped (non-negative) raw index array; recorded."""
    be = x.backend
    raw = idx._data if isinstance(idx, Tensor) else idx
    out = _tensor(be, be.ops.take(x._data, raw))
    if _tracks(x):
        record(TakeBackward0, out, (x,), (raw,), (None,), (tuple(x.shape),))
    return out


def _take_backward_t(g: Tensor, idx: Any, shape: Any) -> Tensor:
    be = g.backend
    raw = idx._data if isinstance(idx, Tensor) else idx
    out = _tensor(be, be.ops.take_backward(g._data, raw, tuple(shape)))
    if _tracks(g):
        record(_TakeAdjoint, out, (g,), (raw,), (None,), ())
    return out


@op("take")
def take(x: Tensor, index: Tensor) -> Tensor:
    """The elements of ``x`` read as 1-d at the int64 ``index`` (negative places count from
    the end), in ``index``'s shape."""
    _check_tensor("take", x)
    _check_tensor("take", index, "index", 2)
    if index.dtype != int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_dtype_name(index.dtype)}")
    be = x.backend
    n = x.numel()
    bad = _first_out_of_range(be, index._data, n, True)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    shape = tuple(index.shape)
    idx = be.xp.reshape(_wrapped(be, index._data, n), shape)
    return _take_t(x, idx)


# -- rot90 -----------------------------------------------------------------------------------
def _rot90_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    k, d0, d1 = attrs
    return (F.rot90(g, -k, d0, d1),)


Rot90Backward0 = formula_node("Rot90Backward0", _rot90_rule, arity=1)


def _rot90_t(x: Tensor, k: int, d0: int, d1: int) -> Tensor:
    be = x.backend
    out = _tensor(be, be.ops.rot90(x._data, k, d0, d1))
    if _tracks(x):
        record(Rot90Backward0, out, (x,), (), (), (k, d0, d1))
    return out


@op("rot90")
def rot90(x: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """``x`` rotated by ``k`` quarter turns in the plane of ``dims`` (from the first
    towards the second; a negative ``k`` turns the other way). A copy."""
    _check_tensor("rot90", x)
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if x.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {x.ndim}")
    d0 = wrap_dim("rot90", dims[0], x.ndim)
    d1 = wrap_dim("rot90", dims[1], x.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return _rot90_t(x, int(k), d0, d1)


# -- repeat_interleave -----------------------------------------------------------------------
def _repeat_index(repeats: Tensor, output_size: Any) -> Tensor:
    """``repeat_interleave(repeats)``: each place ``i`` repeated ``repeats[i]`` times."""
    if repeats.dtype.is_floating_point or repeats.dtype == bool_:
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{_dtype_name(repeats.dtype)}'")
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    be = repeats.backend
    xp = be.xp
    r = repeats._data
    if r.shape[0] and bool(xp.any(r < 0)):
        raise RuntimeError("repeats can not be negative")
    total = int(xp.sum(xp.astype(r, xp.int64))) if r.shape[0] else 0
    if output_size is not None and int(output_size) != total:
        raise RuntimeError("allocated size does not match required size")
    return _tensor(be, be.ops.repeat_index(r, total))


@op("repeat_interleave")
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None, axis: int | None = None) -> Tensor:
    """Each element (or, with ``dim``, each slice along ``dim``) of ``input`` repeated
    ``repeats`` times in place (an int, or an integer tensor of one count per slice); with
    no ``dim`` ``input`` is flattened first. ``repeat_interleave(repeats)`` alone gives the
    places of a tensor of counts, each repeated its count. ``output_size``: the result's
    length along ``dim``, checked."""
    _check_tensor("repeat_interleave", input)
    if repeats is None:
        return _repeat_index(input, output_size)
    dim = _axis(dim, axis)
    x = input if dim is not None else flatten(input)
    d = wrap_dim("repeat_interleave", 0 if dim is None else dim, input.ndim)
    if x.ndim == 0:
        x = reshape(x, (1,))
    if isinstance(repeats, Tensor):
        if repeats.dtype.is_floating_point or repeats.dtype == bool_:
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                      f"'{_dtype_name(repeats.dtype)}'")
        n = x.shape[d]
        if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
            reps = expand_to(reshape(repeats, (1,)), (n,))
        elif repeats.ndim == 1:
            if repeats.shape[0] != n:
                raise RuntimeError("repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {repeats.shape[0]} and "
                                   f"input.size({d}) = {n}")
            reps = repeats
        else:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return index_select(x, d, _repeat_index(reps, output_size))
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        raise TypeError("repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                        f"{type(repeats).__name__}")
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and int(output_size) != x.shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{x.shape[d] * repeats} but got {output_size}")
    y = unsqueeze(x, d + 1)
    shape = tuple(y.shape[:d + 1]) + (repeats,) + tuple(y.shape[d + 2:])
    y = expand_to(y, shape)
    y = contiguous(y) if repeats != 1 else clone(y)  # a row-major copy: PyTorch's CloneBackward0
    return flatten(y, d, d + 1)


# -- index_fill ------------------------------------------------------------------------------
def _index_fill_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    (axis,) = attrs
    return (F.index_fill(g, idx, axis, 0),)


def _index_fill_value_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any
                           ) -> tuple[Any, Any]:
    idx, uniq = saved
    axis, cast = attrs
    gv = None
    if needs[1]:
        g1 = g if len(g.shape) else F.reshape(g, (1,))
        gv = F.sum(F.index_select(g1, uniq, axis))
        if cast is not None:  # a value of another dtype: its gradient in its dtype
            gv = gv.to(cast[0]) if isinstance(gv, Tensor) else F.astype(gv, cast[1])
    return (F.index_fill(g, idx, axis, 0) if needs[0] else None, gv)


IndexFillBackward0 = formula_node("IndexFillBackward0", _index_fill_rule, arity=1)
IndexFillBackward1 = formula_node("IndexFillBackward1", _index_fill_value_rule, arity=2)


def _index_fill_t(x: Tensor, idx: Any, axis: int, value: Any) -> Tensor:
    """``index_fill`` on checked arguments (``idx`` a 1-d non-negative raw array, ``value``
    a number); recorded."""
    be = x.backend
    raw = idx._data if isinstance(idx, Tensor) else idx
    out = _tensor(be, be.ops.index_fill(x._data, raw, axis, value))
    if _tracks(x):
        record(IndexFillBackward0, out, (x,), (raw,), (None,), (axis,))
    return out


def _index_args(name: str, x: Tensor, dim: Any, index: Any) -> tuple[int, int]:
    """Check ``dim`` and a 1-d (or 0-d) ``index``: ``(axis, size along it)``."""
    _check_tensor(name.rstrip("_"), x)
    _check_tensor(name.rstrip("_"), index, "index", 3)
    axis = wrap_dim(name.rstrip("_"), dim, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    return axis, n


@op("index_fill")
def index_fill(x: Tensor, dim: int | None = None, index: Tensor | None = None,
               value: Any = None, *, axis: int | None = None) -> Tensor:
    """A copy of ``x`` with its slices along ``dim`` at the int64 ``index`` (1-d or 0-d;
    negative places count from the end) set to ``value``: a number or a 0-d tensor (which
    then gets the gradient of the filled places, each place once)."""
    dim = _axis(dim, axis)
    if value is None:
        raise TypeError("index_fill() missing required argument 'value'")
    ax, n = _index_args("index_fill", x, dim, index)
    assert index is not None
    if index.dtype != int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
    elif isinstance(value, complex):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is "
                           "not supported")
    elif isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        raise TypeError(f"index_fill(): argument 'value' must be Number, not "
                        f"{type(value).__name__}")
    be = x.backend
    bad = _first_out_of_range(be, index._data, n, True)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {ax} with size {n}")
    idx = _wrapped(be, index._data, n)
    if not isinstance(value, Tensor):
        return _index_fill_t(x, idx, ax, value)
    out = _tensor(be, be.ops.index_fill(x._data, idx, ax, value._data))
    if _tracks(x, value):
        uniq = be.xp.unique_values(idx) if idx.shape[0] else idx
        cast = None if value.dtype == x.dtype else (value.dtype, value._data.dtype)
        record(IndexFillBackward1, out, (x, value), (idx, uniq), (None, None), (ax, cast))
    elif _tracks(x):
        record(IndexFillBackward0, out, (x,), (idx,), (None,), (ax,))
    return out


# -- index_copy ------------------------------------------------------------------------------
def _index_copy_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (idx,) = saved
    axis, src_shape = attrs
    gs = None
    if needs[1]:
        if len(g.shape):
            gs = F.index_select(g, idx, axis)
            if tuple(gs.shape) != tuple(src_shape):
                gs = F.reshape(gs, tuple(src_shape))
        else:
            gs = F.reshape(g, tuple(src_shape))
    return (F.index_fill(g, idx, axis, 0) if needs[0] else None, gs)


IndexCopyBackward0 = formula_node("IndexCopyBackward0", _index_copy_rule, arity=2)


@op("index_copy")
def index_copy(x: Tensor, dim: int | None = None, index: Tensor | None = None,
               source: Tensor | None = None, *, axis: int | None = None) -> Tensor:
    """A copy of ``x`` with ``source``'s slices along ``dim`` written at the places of the
    int64 ``index`` (1-d or 0-d); ``source`` has ``x``'s dtype and shape but ``len(index)``
    along ``dim``. At a repeated place, which write wins is unspecified."""
    dim = _axis(dim, axis)
    name = "index_copy_"
    ax, n = _index_args("index_copy", x, dim, index)
    _check_tensor("index_copy", source, "source", 4)
    assert index is not None and source is not None
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype != int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{_dtype_name(index.dtype)}")
    if source.dtype != x.dtype:
        raise RuntimeError(f"{name}(): self and source expected to have the same dtype, but "
                           f"got (self) {_dtype_name(x.dtype)} and (source) "
                           f"{_dtype_name(source.dtype)}")
    k = index.numel()
    if x.ndim and source.ndim and source.ndim != x.ndim:
        raise IndexError(f"{name}(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    ss = tuple(source.shape) if source.ndim else (1,)
    xs = tuple(x.shape) if x.ndim else (1,)
    if len(ss) != len(xs):
        raise IndexError(f"{name}(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({x.ndim})")
    if ss[ax] != k:
        raise IndexError(f"{name}(): Number of indices ({k}) should be equal to "
                         f"source.size(dim) ({ss[ax]})")
    for d in range(len(xs)):
        if d != ax and xs[d] != ss[d]:
            raise RuntimeError(f"{name}(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {xs[d]} at dimension {d} "
                               f"and source slice shape: {ss[d]} at dimension {d}.")
    be = x.backend
    bad = _first_out_of_range(be, index._data, n, False)
    if bad is not None:
        raise IndexError(f"{name}(): index {bad} is out of bounds for dimension {ax} with "
                         f"size {n}")
    idx = _wrapped(be, index._data, n)
    out = _tensor(be, be.ops.index_copy(x._data, idx, source._data, ax))
    if _tracks(x, source):
        record(IndexCopyBackward0, out, (x, source), (idx,), (None,),
               (ax, tuple(source.shape)))
    return out


# -- masked_scatter --------------------------------------------------------------------------
def _masked_scatter_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any
                         ) -> tuple[Any, Any]:
    (mask,) = saved
    x_shape, src_shape, count = attrs
    gx = gs = None
    if needs[0]:
        gx = F.reduce_to(F.where(mask, F.zeros_like(g), g), x_shape)
    if needs[1]:
        gs = F.masked_select(g, mask)
        total = math.prod(src_shape)
        if total != count:
            gs = F.pad_constant(gs, (0, total - count), 0)
        gs = F.reshape(gs, tuple(src_shape))
    return (gx, gs)


MaskedScatterBackward0 = formula_node("MaskedScatterBackward0", _masked_scatter_rule, arity=2)


@op("masked_scatter")
def masked_scatter(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``x`` with ``source``'s elements (read flat, in order) written where the
    bool ``mask`` holds; ``x`` and ``mask`` broadcast together, ``source`` has ``x``'s dtype
    and at least as many elements as ``mask`` has True values."""
    _check_tensor("masked_scatter", x)
    _check_tensor("masked_scatter", mask, "mask", 2)
    _check_tensor("masked_scatter", source, "source", 3)
    if mask.dtype != bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_dtype_name(mask.dtype)}")
    if source.dtype != x.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_dtype_name(x.dtype)} and {_dtype_name(source.dtype)}")
    err = broadcast_mismatch("masked_scatter", tuple(x.shape), tuple(mask.shape))
    if err is not None:
        raise err
    shape = broadcast_shape(tuple(x.shape), tuple(mask.shape))
    be = x.backend
    ops = be.ops
    xd = x._data if tuple(x.shape) == shape else ops.expand(x._data, shape)
    md = mask._data if tuple(mask.shape) == shape else ops.expand(mask._data, shape)
    count = int(be.xp.sum(be.xp.astype(md, be.xp.int64))) if md.ndim else int(bool(md))
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = _tensor(be, ops.masked_scatter(xd, md, source._data))
    if _tracks(x, source):
        record(MaskedScatterBackward0, out, (x, source), (md,), (None,),
               (tuple(x.shape), tuple(source.shape), count))
    return out


# -- unfold ----------------------------------------------------------------------------------
def _unfold_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    shape, axis, size, step = attrs
    return (F.unfold_backward(g, shape, axis, size, step),)


def _unfold_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    _, axis, size, step = attrs
    return (F.unfold(g, axis, size, step),)


UnfoldBackward0 = formula_node("UnfoldBackward0", _unfold_rule, arity=1)
_UnfoldAdjoint = formula_node("UnfoldBackwardBackward0", _unfold_adjoint_rule, arity=1)


def _unfold_t(x: Tensor, axis: int, size: int, step: int) -> Tensor:
    be = x.backend
    out = _tensor(be, be.ops.unfold(x._data, axis, size, step))
    if _tracks(x):
        record(UnfoldBackward0, out, (x,), (), (), (tuple(x.shape), axis, size, step))
    return out


def _unfold_backward_t(g: Tensor, shape: Any, axis: int, size: int, step: int) -> Tensor:
    be = g.backend
    out = _tensor(be, be.ops.unfold_backward(g._data, tuple(shape), axis, size, step))
    if _tracks(g):
        record(_UnfoldAdjoint, out, (g,), (), (), (tuple(shape), axis, size, step))
    return out


@op("unfold", function=False)
def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` elements of ``x`` every ``step`` along ``dimension``: that
    dimension becomes the number of windows and a last dimension of ``size`` is added.
    Unlike PyTorch's (a view), the result is a copy: writes to it do not reach ``x``."""
    _check_tensor("unfold", x)
    axis = wrap_dim("unfold", dimension, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    size, step = int(size), int(step)
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {axis} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold_t(x, axis, size, step)


# -- slice_scatter / select_scatter ----------------------------------------------------------
def _basic_scatter_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any
                        ) -> tuple[Any, Any]:
    (key,) = attrs
    return (F.index_zero(g, key) if needs[0] else None,
            F.getitem(g, key) if needs[1] else None)


SliceScatterBackward0 = formula_node("SliceScatterBackward0", _basic_scatter_rule, arity=2)
SelectScatterBackward0 = formula_node("SelectScatterBackward0", _basic_scatter_rule, arity=2)


def _basic_scatter(name: str, cls: Any, x: Tensor, src: Tensor, key: tuple[Any, ...]
                   ) -> Tensor:
    be = x.backend
    slot_shape = tuple(be.ops.getitem(x._data, key).shape)
    if tuple(src.shape) != slot_shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(slot_shape)}")
    out = _tensor(be, be.ops.basic_scatter(x._data, src._data, key))
    if _tracks(x, src):
        record(cls, out, (x, src), (), (), (key,))
    return out


@op("slice_scatter")
def slice_scatter(x: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1, *, axis: int | None = None
                  ) -> Tensor:
    """A copy of ``x`` with ``src`` written at ``x``'s slice ``start:end:step`` along
    ``dim``; ``src`` has that slice's shape."""
    _check_tensor("slice_scatter", x)
    _check_tensor("slice_scatter", src, "src", 2)
    axis = wrap_dim("slice_scatter", _axis(dim, axis), x.ndim)
    if step is None:
        step = 1
    if int(step) <= 0:
        raise RuntimeError("slice step must be positive")
    n = x.shape[axis] if x.ndim else 1
    lo, hi, st = slice(start, end, int(step)).indices(n)
    key = (slice(None),) * axis + (slice(lo, max(lo, hi), st), Ellipsis)
    return _basic_scatter("slice_scatter", SliceScatterBackward0, x, src, key)


@op("select_scatter")
def select_scatter(x: Tensor, src: Tensor, dim: int | None = None, index: int | None = None,
                   *, axis: int | None = None) -> Tensor:
    """A copy of ``x`` with ``src`` written at ``x.select(dim, index)``; ``src`` has that
    slice's shape."""
    _check_tensor("select_scatter", x)
    _check_tensor("select_scatter", src, "src", 2)
    axis = wrap_dim("select_scatter", _axis(dim, axis), x.ndim)
    if index is None:
        raise TypeError("select_scatter() missing required argument 'index'")
    n = x.shape[axis]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {axis}")
    key = (slice(None),) * axis + (i % n, Ellipsis)
    return _basic_scatter("select_scatter", SelectScatterBackward0, x, src, key)


# -- diagonal_scatter ------------------------------------------------------------------------
def _diag_scatter_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any
                       ) -> tuple[Any, Any]:
    offset, d1, d2 = attrs
    gx = gs = None
    if needs[0]:
        gx = F.diagonal_scatter(g, F.zeros_like(F.diagonal_copy(g, offset, d1, d2)),
                                offset, d1, d2)
    if needs[1]:
        gs = F.diagonal_copy(g, offset, d1, d2)
    return (gx, gs)


def _diag_copy_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    shape, offset, d1, d2 = attrs
    return (F.diagonal_embed(g, shape, offset, d1, d2),)


def _diag_embed_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    offset, d1, d2 = attrs
    return (F.diagonal_copy(g, offset, d1, d2),)


DiagonalScatterBackward0 = formula_node("DiagonalScatterBackward0", _diag_scatter_rule,
                                        arity=2)
_DiagonalCopy = formula_node("DiagonalBackward0", _diag_copy_rule, arity=1)
_DiagonalEmbed = formula_node("DiagonalBackwardBackward0", _diag_embed_rule, arity=1)


def _diagonal_scatter_t(x: Tensor, src: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    be = x.backend
    out = _tensor(be, be.ops.diagonal_scatter(x._data, src._data, offset, d1, d2))
    if _tracks(x, src):
        record(DiagonalScatterBackward0, out, (x, src), (), (), (offset, d1, d2))
    return out


def _diagonal_copy_t(x: Tensor, offset: int, d1: int, d2: int) -> Tensor:
    be = x.backend
    out = _tensor(be, be.ops.diagonal_copy(x._data, offset, d1, d2))
    if _tracks(x):
        record(_DiagonalCopy, out, (x,), (), (), (tuple(x.shape), offset, d1, d2))
    return out


def _diagonal_embed_t(g: Tensor, shape: Any, offset: int, d1: int, d2: int) -> Tensor:
    be = g.backend
    out = _tensor(be, be.ops.diagonal_embed(g._data, tuple(shape), offset, d1, d2))
    if _tracks(g):
        record(_DiagonalEmbed, out, (g,), (), (), (offset, d1, d2))
    return out


@op("diagonal_scatter")
def diagonal_scatter(x: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``x`` with ``src`` written on ``x.diagonal(offset, dim1, dim2)``; ``src``
    has that diagonal's shape."""
    _check_tensor("diagonal_scatter", x)
    _check_tensor("diagonal_scatter", src, "src", 2)
    d1 = wrap_dim("diagonal_scatter", dim1, x.ndim)
    d2 = wrap_dim("diagonal_scatter", dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    be = x.backend
    slot = tuple(be.ops.diagonal(x._data, int(offset), d1, d2).shape)
    if tuple(src.shape) != slot:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(slot)}")
    return _diagonal_scatter_t(x, src, int(offset), d1, d2)


# -- scatter_reduce --------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any
                         ) -> tuple[Any, Any]:
    """PyTorch's ``scatter_reduce_backward``: sum and mean pass the gradient (divided by each
    place's count for mean); prod divides the result by each factor (a lone zero factor gets
    the product of the others); amax/amin share each place's gradient evenly among the values
    equal to the result. Without ``include_self`` the places ``index`` names give ``x`` no
    gradient."""
    idx, x, src, result = saved
    axis, reduce, include_self, shapes = attrs
    if shapes is not None:  # a 0-d operand, computed as 1-d
        x, src, result, g = (F.reshape(t, (-1,)) for t in (x, src, result, g))
    gx = gs = None
    if reduce == "sum":
        gx = g
        if needs[1]:
            gs = F.gather(g, idx, axis)
    elif reduce == "mean":
        base = F.ones_like(g) if include_self else F.zeros_like(g)
        n = F.scatter_reduce(base, idx, F.ones_like(src), axis, "sum", True)
        n = F.where(F.eq(n, 0), F.ones_like(n), n)
        gx = F.div(g, n)
        if needs[1]:
            gs = F.div(F.gather(g, idx, axis), F.gather(n, idx, axis))
    elif reduce == "prod":
        if needs[0]:
            masked_x = F.where(F.eq(x, 0), F.ones_like(x), x)
            masked_result = F.scatter_reduce(masked_x, idx, src, axis, reduce, include_self)
            gx = F.div(F.mul(g, masked_result), masked_x)
        if needs[1]:
            src_zero = F.eq(src, 0)
            zeros_f = F.where(src_zero, F.ones_like(src), F.zeros_like(src))
            num_zeros = F.gather(F.scatter_reduce(F.zeros_like(x), idx, zeros_f, axis, "sum",
                                                  True), idx, axis)
            single = F.logical_and(src_zero, F.eq(num_zeros, 1))
            masked_src = F.where(single, F.ones_like(src), src)
            masked_src_result = F.scatter_reduce(x, idx, masked_src, axis, reduce,
                                                 include_self)
            one_zero = F.gather(F.mul(g, masked_src_result), idx, axis)
            plain = F.div(F.gather(F.mul(g, result), idx, axis),
                          F.where(src_zero, F.ones_like(src), src))
            gs = F.where(single, one_zero, plain)
    else:  # amax / amin
        value = F.gather(result, idx, axis)
        x_is = F.eq(x, result)
        src_is = F.eq(src, value)
        x_is_f = F.where(x_is, F.ones_like(x), F.zeros_like(x))
        src_is_f = F.where(src_is, F.ones_like(src), F.zeros_like(src))
        count = F.scatter_reduce(x_is_f, idx, src_is_f, axis, "sum", True)
        share = F.div(g, count)
        if needs[0]:
            gx = F.mul(x_is_f, share)
        if needs[1]:
            gs = F.mul(src_is_f, F.gather(share, idx, axis))
    if gx is not None and not include_self:
        gx = F.scatter_zero(gx, idx, axis)
    if gs is not None and tuple(gs.shape) != tuple(src.shape):  # src larger than index
        pads: tuple[int, ...] = ()
        for a, b in zip(reversed(tuple(gs.shape)), reversed(tuple(src.shape))):
            pads += (0, b - a)
        gs = F.pad_constant(gs, pads, 0)
    if shapes is not None:
        gx = F.reshape(gx, shapes[0]) if gx is not None else None
        gs = F.reshape(gs, shapes[1]) if gs is not None else None
    return (gx if needs[0] else None, gs)


ScatterReduceBackward0 = formula_node("ScatterReduceBackward0", _scatter_reduce_rule, arity=2)


def _scatter_reduce_t(x: Tensor, idx: Any, src: Tensor, axis: int, reduce: str,
                      include_self: bool) -> Tensor:
    """``scatter_reduce`` on checked arguments (``idx`` a raw array of ``x``'s number of
    dimensions, at least 1); recorded."""
    be = x.backend
    xp = be.xp
    raw = idx._data if isinstance(idx, Tensor) else idx
    xd, sd = x._data, src._data
    shapes = None
    if not (xd.ndim and raw.ndim and sd.ndim):  # a 0-d operand: computed as 1-d
        shapes = (tuple(x.shape), tuple(src.shape))
        xd, sd, raw = (xp.reshape(a, (-1,)) if a.ndim == 0 else a for a in (xd, sd, raw))
    data = be.ops.scatter_reduce(xd, raw, sd, axis, reduce, include_self)
    out = _tensor(be, xp.reshape(data, tuple(x.shape)) if shapes else data)
    if _tracks(x, src):
        record(ScatterReduceBackward0, out, (x, src), (raw, x._data, src._data, out._data),
               (None, x, src, 0), (axis, reduce, include_self, shapes))
    return out


@op("scatter_reduce")
def scatter_reduce(x: Tensor, dim: int | None = None, index: Tensor | None = None,
                   src: Tensor | None = None, reduce: str | None = None, *,
                   include_self: bool = True, axis: int | None = None) -> Tensor:
    """A copy of ``x`` with each ``src[i][j]`` reduced into ``out[i][index[i][j]]`` along
    ``dim`` by ``reduce`` ("sum", "prod", "mean", "amax" or "amin"); ``include_self``: the
    places ``index`` names start from ``x``'s value (else from the values scattered there
    alone). ``index`` has ``x``'s number of dimensions and is no larger than ``src``."""
    from .indexing import _along

    dim = _axis(dim, axis)
    _check_tensor("scatter_reduce", x)
    _check_tensor("scatter_reduce", index, "index", 3)
    _check_tensor("scatter_reduce", src, "src", 4)
    assert index is not None and src is not None
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if src.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    axis, idx = _along("scatter", x, dim, index, tuple(src.shape))
    return _scatter_reduce_t(x, idx, src, axis, reduce, bool(include_self))


# -- index_put -------------------------------------------------------------------------------
def _index_put_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """The base gets ``g`` (``accumulate``) or ``g`` with the written places zeroed; the
    values get ``g`` read at their places -- every value, also one whose write a later
    repeated place overwrote (as in PyTorch)."""
    (pos,) = saved
    shape, accumulate = attrs
    gx = None
    if needs[0]:
        if accumulate:
            gx = g
        else:
            flat = F.scatter_zero(F.reshape(g, (-1,)), F.reshape(pos, (-1,)), 0)
            gx = F.reshape(flat, shape)
    return (gx, F.take(g, pos) if needs[1] else None)


IndexPutBackward0 = formula_node("IndexPutBackward0", _index_put_rule, arity=2)


def _index_key(name: str, x: Tensor, indices: Any) -> tuple[Any, ...]:
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    key: list[Any] = []
    dim = 0
    for j, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {j} in argument 0, but got "
                            f"{type(t).__name__}")
        if t.dtype == bool_:
            for j, m in enumerate(t.shape):
                if dim + j >= x.ndim or x.shape[dim + j] != m:
                    raise IndexError(f"The shape of the mask {list(t.shape)} at index {j} does "
                                     "not match the shape of the indexed tensor "
                                     f"{list(x.shape)} at index {dim + j}")
            dim += t.ndim
        elif t.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        else:
            n = x.shape[dim] if dim < x.ndim else 0
            if dim >= x.ndim:
                raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got "
                                 f"{len(indices)})")
            bad = _first_out_of_range(x.backend, t._data, n, True)
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                                 f"{n}")
            dim += 1
        key.append(t)
    if dim > max(x.ndim, 0) and x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {dim})")
    return tuple(key)


@op("index_put")
def index_put(x: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``x`` with ``values`` written (``accumulate``: added) at ``x[indices]``,
    ``indices`` a tuple of index tensors (int or bool), one per leading dimension;
    ``values`` has ``x``'s dtype and broadcasts to the indexed shape. With repeated places
    and no ``accumulate``, which write wins is unspecified."""
    _check_tensor("index_put", x)
    key = _index_key("index_put", x, indices)
    _check_tensor("index_put", values, "values", 2)
    if values.dtype != x.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtype_name(x.dtype)} for the destination and "
                           f"{_dtype_name(values.dtype)} for the source.")
    be = x.backend
    raw = tuple(t._data if isinstance(t, Tensor) else t for t in key)
    try:
        pos = be.ops.index_positions(tuple(x.shape), raw)
    except ValueError:
        shapes = ", ".join(str(list(t.shape)) for t in key if isinstance(t, Tensor))
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    slot = tuple(pos.shape)
    v = values
    if tuple(values.shape) != slot:
        if broadcast_mismatch("index_put", tuple(values.shape), slot) is not None or \
                broadcast_shape(tuple(values.shape), slot) != slot:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} "
                               f"cannot be broadcast to indexing result of shape {list(slot)}")
        v = expand_to(values, slot)
    out = _tensor(be, be.ops.index_put(x._data, pos, v._data, bool(accumulate)))
    if _tracks(x, v):
        record(IndexPutBackward0, out, (x, v), (pos,), (None,),
               (tuple(x.shape), bool(accumulate)))
    return out


# -- the recorded versions of the kernels (GRAPH_F's extras) ---------------------------------
GRAPH_KERNELS.update({
    "take": _take_t, "take_backward": _take_backward_t, "rot90": _rot90_t,
    "index_fill": _index_fill_t, "unfold": _unfold_t, "unfold_backward": _unfold_backward_t,
    "diagonal_scatter": _diagonal_scatter_t, "diagonal_copy": _diagonal_copy_t,
    "diagonal_embed": _diagonal_embed_t, "scatter_reduce": _scatter_reduce_t,
})


# -- the in-place forms ----------------------------------------------------------------------
@op("index_fill_", function=False, differentiable=False)
def index_fill_(x: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """:func:`index_fill` in place; returns ``x``."""
    operands = (index, value) if isinstance(value, Tensor) else (index,)
    return _in_place("index_fill_", x, operands, lambda t: index_fill(t, dim, index, value))


@op("index_copy_", function=False, differentiable=False)
def index_copy_(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """:func:`index_copy` in place; returns ``x``."""
    return _in_place("index_copy_", x, (index, source),
                     lambda t: index_copy(t, dim, index, source))


@op("masked_scatter_", function=False, differentiable=False)
def masked_scatter_(x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """:func:`masked_scatter` in place (``mask`` broadcasts to ``x``'s shape); returns
    ``x``."""
    if isinstance(mask, Tensor) and isinstance(x, Tensor) and \
            broadcast_mismatch("masked_scatter_", tuple(x.shape), tuple(mask.shape)) is None \
            and broadcast_shape(tuple(x.shape), tuple(mask.shape)) != tuple(x.shape):
        if mask.ndim > x.ndim:
            raise ShapeError(f"expand(mask of shape {list(mask.shape)}, size={list(x.shape)}): "
                             f"the number of sizes provided ({x.ndim}) must be greater or "
                             "equal to the number of dimensions in the tensor "
                             f"({mask.ndim})")
        raise ShapeError(f"masked_scatter_: the mask of shape {list(mask.shape)} must "
                         f"broadcast to self's shape {list(x.shape)}")
    return _in_place("masked_scatter_", x, (mask, source),
                     lambda t: masked_scatter(t, mask, source))


@op("scatter_reduce_", function=False, differentiable=False)
def scatter_reduce_(x: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """:func:`scatter_reduce` in place; returns ``x``."""
    return _in_place("scatter_reduce_", x, (index, src),
                     lambda t: scatter_reduce(t, dim, index, src, reduce,
                                              include_self=include_self))


@op("index_put_", function=False, differentiable=False)
def index_put_(x: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """:func:`index_put` in place; returns ``x``."""
    operands = tuple(t for t in (indices if isinstance(indices, (tuple, list)) else ())
                     if isinstance(t, Tensor)) + (values,)
    return _in_place("index_put_", x, operands,
                     lambda t: index_put(t, indices, values, accumulate))

