"""The indexing ops: ``gather``, ``scatter``, ``scatter_add``, ``index_select``,
``take_along_dim``, ``index_add``, ``masked_select``, ``nonzero``, and the in-place methods
``scatter_``, ``scatter_add_``, ``index_add_`` (through ``ops.inplace``'s ``_inplace``).

Each gradient is the adjoint index op: a gather's is a scatter-add into zeros, a scatter's
(to ``src``) a gather, ``index_select``'s an ``index_add`` into zeros, ``masked_select``'s the
selected gradient put back under the mask. The rules are written once against ``F``: in the
fast walk these are the backend's kernels, under ``create_graph`` this module's recorded
versions on tensors (each the other's adjoint), so double backward works."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_, int32, int64
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .aliases import EXACT, MISSING, dim_alias, out_one, out_same_dtype, required
from .declare import GRAPH_KERNELS, op
from .elementwise import broadcast_mismatch, broadcast_shape
from .inplace import _inplace
from .reduction import _dim_int
from .shape import expand_to, reshape, wrap_dim
from .statistics import _tensor

__all__ = ["gather", "scatter", "scatter_add", "index_select", "take_along_dim", "index_add",
           "masked_select", "nonzero", "scatter_", "scatter_add_", "index_add_"]


# -- helpers ---------------------------------------------------------------------------------
def _check_tensor(name: str, x: Any, arg: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _dim(name: str, dim: Any, nd: int) -> int:
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return wrap_dim(name, d, nd)


def _raw(t: Any) -> Any:
    return t._data if isinstance(t, Tensor) else t


def _check_bounds(be: Any, idx: Any, n: int, dim: int) -> None:
    """PyTorch's error for the first element of ``idx`` outside ``[0, n)``."""
    xp = be.xp
    flat = xp.reshape(idx, (-1,))
    if flat.shape[0] == 0:
        return
    bad = (flat < 0) | (flat >= n)
    if bool(xp.any(bad)):
        v = int(flat[int(xp.nonzero(bad)[0][0])])
        raise RuntimeError(f"index {v} is out of bounds for dimension {dim} with size {n}")


def _check_index_dtype(name: str, index: Any, what: str = "int32/int64") -> None:
    if index.dtype not in (int32, int64):
        raise RuntimeError(f"{name}(): Expected dtype {what} for index")


def _as1(shape: tuple[int, ...]) -> tuple[int, ...]:
    return shape if shape else (1,)


def _along(name: str, x: Tensor, dim: Any, index: Any, src_shape: tuple[int, ...] | None
           ) -> tuple[int, Any]:
    """Check ``gather``/``scatter``'s arguments; ``(axis, index array)`` (0-d read as 1-d)."""
    _check_tensor(name, x)
    _check_tensor(name, index, "index", 3)
    axis = _dim(name, dim, x.ndim)
    _check_index_dtype(name, index)
    xs, ix = _as1(tuple(x.shape)), _as1(tuple(index.shape))
    if len(xs) != len(ix):
        other = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {other} "
                           "tensor")
    if src_shape is not None:
        ss = _as1(src_shape)
        if len(ss) != len(ix) or any(
                (d != axis and ix[d] > xs[d]) or ix[d] > ss[d] for d in range(len(ix))):
            if len(ss) != len(ix):
                raise RuntimeError("Index tensor must have the same number of dimensions as "
                                   "src tensor")
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {axis} and to be no "
                               f"larger size than src {list(src_shape)}")
    else:
        for d in range(len(ix)):
            if d != axis and ix[d] > xs[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index "
                                   f"{list(index.shape)} to be no larger than self "
                                   f"{list(x.shape)} apart from dimension {axis}")
    _check_bounds(x.backend, index._data, xs[axis], axis)
    return axis, index._data


def _kernel(be: Any, name: str, x: Any, idx: Any, *rest: Any) -> Any:
    """Run a gather/scatter kernel with 0-d arrays read as 1-d; the result has ``idx``'s
    shape (gather) or ``x``'s (scatter)."""
    fn = getattr(be.ops, name)
    if x.ndim and idx.ndim:
        return fn(x, idx, *rest)
    ops = be.ops
    x1 = ops.reshape(x, _as1(tuple(x.shape)))
    i1 = ops.reshape(idx, _as1(tuple(idx.shape)))
    extra = tuple(ops.reshape(r, _as1(tuple(r.shape))) if hasattr(r, "shape") else r
                  for r in rest)
    out = fn(x1, i1, *extra)
    shape = tuple(idx.shape) if name == "gather" else tuple(x.shape)
    return ops.reshape(out, shape)


# -- the rules -------------------------------------------------------------------------------
def _gather_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    axis, shape = attrs
    return (F.gather_backward(g, idx, axis, shape),)


def _gather_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    axis, _ = attrs
    return (F.gather(g, idx, axis),)


def _scatter_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (idx,) = saved
    axis, _ = attrs
    return (F.scatter_zero(g, idx, axis) if needs[0] else None,
            F.gather(g, idx, axis) if needs[1] else None)


def _scatter_value_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    axis, _ = attrs
    return (F.scatter_zero(g, idx, axis),)


def _scatter_add_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (idx,) = saved
    axis, _ = attrs
    return (g if needs[0] else None, F.gather(g, idx, axis) if needs[1] else None)


def _index_select_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    axis, shape = attrs
    if not shape:  # a 0-d input: its one element, taken once
        return (g,)
    return (F.index_select_backward(g, idx, axis, shape),)


def _index_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (idx,) = saved
    axis, _ = attrs
    return (F.index_select(g, idx, axis),)


def _index_add_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (idx,) = saved
    axis, src_shape, alpha = attrs
    gs = None
    if needs[1]:
        gs = F.index_select(g, idx, axis) if len(g.shape) else g
        if alpha != 1:
            gs = F.mul(gs, alpha)
        if tuple(gs.shape) != tuple(src_shape):
            gs = F.reshape(gs, tuple(src_shape))
    return (g if needs[0] else None, gs)


def _masked_select_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (mask,) = saved
    (shape,) = attrs
    return (F.reduce_to(F.masked_scatter_zero(g, mask), shape),)


def _masked_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (mask,) = saved
    return (F.masked_select(g, mask),)


GatherBackward0 = formula_node("GatherBackward0", _gather_rule, arity=1)
ScatterBackward0 = formula_node("ScatterBackward0", _scatter_rule, arity=2)
ScatterBackward1 = formula_node("ScatterBackward1", _scatter_value_rule, arity=1)
ScatterAddBackward0 = formula_node("ScatterAddBackward0", _scatter_add_rule, arity=2)
IndexSelectBackward0 = formula_node("IndexSelectBackward0", _index_select_rule, arity=1)
IndexAddBackward0 = formula_node("IndexAddBackward0", _index_add_rule, arity=2)
MaskedSelectBackward0 = formula_node("MaskedSelectBackward0", _masked_select_rule, arity=1)
# the adjoints' nodes under create_graph (PyTorch's names of the ops its formulas call)
_GatherAdjoint = formula_node("ScatterAddBackward0", _gather_adjoint_rule, arity=1)
_IndexAdjoint = formula_node("IndexAddBackward0", _index_adjoint_rule, arity=1)
_MaskedAdjoint = formula_node("MaskedScatterBackward0", _masked_adjoint_rule, arity=1)


# -- the recorded versions of the kernels (GRAPH_F's extras) ---------------------------------
def _graph(kernel: str, cls: Any, attrs_of: Any) -> Any:
    def run(y: Tensor, idx: Any, axis: Any = None, shape: Any = None) -> Tensor:
        be = y.backend
        raw = _raw(idx)
        args = (y._data, raw) if axis is None else (y._data, raw, axis)
        if shape is not None:
            args += (tuple(shape),)
        out = _tensor(be, getattr(be.ops, kernel)(*args))
        if _grad.enabled and y._requires_grad:
            record(cls, out, (y,), (raw,), (None,), attrs_of(y, axis))
        return out

    return run


_GRAPH_EXTRA = {
    "gather": _graph("gather", GatherBackward0, lambda y, a: (a, tuple(y.shape))),
    "gather_backward": _graph("gather_backward", _GatherAdjoint, lambda y, a: (a, None)),
    "scatter_zero": _graph("scatter_zero", ScatterBackward1, lambda y, a: (a, None)),
    "index_select": _graph("index_select", IndexSelectBackward0,
                           lambda y, a: (a, tuple(y.shape))),
    "index_select_backward": _graph("index_select_backward", _IndexAdjoint,
                                    lambda y, a: (a, None)),
    "masked_select": _graph("masked_select", MaskedSelectBackward0,
                            lambda y, a: (tuple(y.shape),)),
    "masked_scatter_zero": _graph("masked_scatter_zero", _MaskedAdjoint, lambda y, a: ()),
}
GRAPH_KERNELS.update(_GRAPH_EXTRA)  # put in GRAPH_F: see ops.declare


# -- the ops ---------------------------------------------------------------------------------
@op("gather")
def gather(x: Tensor, dim: Any = MISSING, index: Any = MISSING, *, sparse_grad: bool = False,
           out: Any = None, axis: Any = None) -> Tensor:
    """``out[i][j] = x[i][index[i][j]]`` along ``dim``: ``index`` (int32/int64) has ``x``'s
    number of dimensions and is no larger than ``x`` in the others; the result has its shape.
    ``sparse_grad`` is accepted and ignored (the gradient is dense).
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if dim is MISSING or axis is not None or out is not None:
        dim = required("gather", dim_alias("gather", dim, axis, MISSING))
        required("gather", index, "index")
        if out is not None:
            if isinstance(x, Tensor):
                out_same_dtype("gather", out, x.dtype, EXACT)
            return out_one("gather", out, (x,),
                           lambda: gather(x, dim, index, sparse_grad=sparse_grad))
    axis, idx = _along("gather", x, dim, index, None)
    be = x.backend
    out = _tensor(be, _kernel(be, "gather", x._data, idx, axis))
    if _grad.enabled and x._requires_grad:
        record(GatherBackward0, out, (x,), (idx,), (None,), (axis, tuple(x.shape)))
    return out


def _scatter(name: str, x: Tensor, dim: Any, index: Any, src: Any, value: Any,
             add: bool) -> Tensor:
    _check_tensor(name, x)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        _check_tensor(name, index, "index", 3)
        if not add:
            _check_index_dtype("scatter", index)
        if src.dtype != x.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        axis, idx = _along("scatter", x, dim, index, tuple(src.shape))
        be = x.backend
        kernel = "scatter_add" if add else "scatter"
        out = _tensor(be, _kernel(be, kernel, x._data, idx, src._data, axis))
        if _grad.enabled and (x._requires_grad or src._requires_grad):
            cls = ScatterAddBackward0 if add else ScatterBackward0
            record(cls, out, (x, src), (idx,), (None,), (axis, tuple(src.shape)))
        return out
    if add or isinstance(src, complex) or not isinstance(src, (bool, int, float)):
        what = "src" if add else "value"
        raise TypeError(f"{name}(): argument '{what}' must be Tensor, not "
                        f"{type(src).__name__}")
    _check_tensor(name, index, "index", 3)
    _check_index_dtype("scatter", index)
    axis, idx = _along("scatter", x, dim, index, None)
    be = x.backend
    fill = be.ops.astype(be.ops.expand(be.asarray(src), tuple(idx.shape)),
                         x._data.dtype)
    out = _tensor(be, _kernel(be, "scatter", x._data, idx, fill, axis))
    if _grad.enabled and x._requires_grad:
        record(ScatterBackward1, out, (x,), (idx,), (None,), (axis, None))
    return out


@op("scatter")
def scatter(x: Tensor, dim: Any = MISSING, index: Any = MISSING, src: Any = None, *,
            value: Any = None, reduce: str | None = None, axis: Any = None) -> Tensor:
    """A copy of ``x`` with ``out[i][index[i][j]] = src[i][j]`` along ``dim``; ``src`` is a
    tensor of ``x``'s dtype no smaller than ``index``, or a number (``value``) written at
    every place. Where ``index`` repeats a place, which write wins is unspecified.
    ``reduce`` is not supported (PyTorch deprecates it). ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("scatter", dim_alias("scatter", dim, axis, MISSING))
        required("scatter", index, "index")
    if reduce is not None:
        raise NotImplementedError("scatter(): the reduce argument is not supported; use "
                                  "scatter_add")
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    return _scatter("scatter", x, dim, index, src, value, False)


@op("scatter_add")
def scatter_add(x: Tensor, dim: Any = MISSING, index: Any = MISSING, src: Any = MISSING, *,
                axis: Any = None) -> Tensor:
    """A copy of ``x`` with ``out[i][index[i][j]] += src[i][j]`` along ``dim`` (repeated
    places all add); ``src`` has ``x``'s dtype and is no smaller than ``index``.
    ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("scatter_add", dim_alias("scatter_add", dim, axis, MISSING))
        required("scatter_add", index, "index")
        required("scatter_add", src, "src")
    return _scatter("scatter_add", x, dim, index, src, None, True)


def _vector_index(name: str, index: Any, pos: int) -> Any:
    _check_tensor(name, index, "index", pos)
    return index


@op("index_select")
def index_select(x: Tensor, dim: Any = MISSING, index: Any = MISSING, *, out: Any = None,
                 axis: Any = None) -> Tensor:
    """The slices of ``x`` along ``dim`` at the places of the 1-d (or one-element) int32 or
    int64 ``index``, in its order.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if dim is MISSING or axis is not None or out is not None:
        dim = required("index_select", dim_alias("index_select", dim, axis, MISSING))
        required("index_select", index, "index")
        if out is not None:
            if isinstance(x, Tensor):
                out_same_dtype("index_select", out, x.dtype,
                               "index_select(): self and result must have the same scalar type")
            return out_one("index_select", out, (x,), lambda: index_select(x, dim, index))
    _check_tensor("index_select", x)
    _vector_index("index_select", index, 3)
    axis = _dim("index_select", dim, x.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (int32, int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    be = x.backend
    ops = be.ops
    idx = ops.reshape(index._data, (-1,))
    if x.ndim == 0:
        if idx.shape[0] != 1:
            raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                               f"{idx.shape[0]} value(s)")
        _check_bounds(be, idx, 1, axis)
        out = _tensor(be, ops.copy(x._data))
    else:
        n = x.shape[axis]
        flat = be.xp.reshape(idx, (-1,))
        if flat.shape[0] and bool(be.xp.any((flat < 0) | (flat >= n))):
            bad = flat[int(be.xp.nonzero((flat < 0) | (flat >= n))[0][0])]
            raise RuntimeError(f"INDICES element is out of DATA "
                             f"bounds, id={int(bad)} axis_dim={n}")
        out = _tensor(be, ops.index_select(x._data, idx, axis))
    if _grad.enabled and x._requires_grad:
        record(IndexSelectBackward0, out, (x,), (idx,), (None,), (axis, tuple(x.shape)))
    return out


@op("take_along_dim")
def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Any = None,
                   axis: Any = None) -> Tensor:
    """The values of ``x`` at the int64 ``indices`` along ``dim``; ``x`` and ``indices``
    broadcast against each other in the other dimensions. With ``dim=None`` both are
    flattened first.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if axis is not None or out is not None:
        dim = dim_alias("take_along_dim", dim, axis)
        if out is not None:
            if isinstance(x, Tensor):
                out_same_dtype("take_along_dim", out, x.dtype, EXACT)
            return out_one("take_along_dim", out, (x,),
                           lambda: take_along_dim(x, indices, dim))
    _check_tensor("take_along_dim", x)
    _check_tensor("take_along_dim", indices, "indices", 2)
    if indices.dtype != int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{str(indices.dtype).rpartition('.')[2].capitalize()}")
    if dim is None:
        return gather(reshape(x, -1), 0, reshape(indices, -1))
    axis = _dim("take_along_dim", dim, x.ndim)
    if x.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    xs, ixs = list(x.shape), list(indices.shape)
    for d in range(x.ndim):
        if d == axis:
            continue
        a, b = xs[d], ixs[d]
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {d}")
        xs[d] = ixs[d] = max(a, b) if a and b else 0
    if tuple(xs) != tuple(x.shape):
        x = expand_to(x, tuple(xs))
    if tuple(ixs) != tuple(indices.shape):
        indices = expand_to(indices, tuple(ixs))
    return gather(x, axis, indices)


@op("index_add")
def index_add(x: Tensor, dim: Any = MISSING, index: Any = MISSING, source: Any = MISSING, *,
              alpha: Any = 1, axis: Any = None) -> Tensor:
    """A copy of ``x`` with ``alpha * source``'s slices along ``dim`` added at the places of
    the 1-d int32/int64 ``index`` (repeated places all add); ``source`` has ``x``'s dtype
    and shape but ``len(index)`` along ``dim``. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("index_add", dim_alias("index_add", dim, axis, MISSING))
        required("index_add", index, "index")
        required("index_add", source, "source")
    name = "index_add_"
    _check_tensor("index_add", x)
    _vector_index("index_add", index, 3)
    _check_tensor("index_add", source, "source", 4)
    axis = _dim("index_add", dim, x.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim}")
    if index.dtype not in (int32, int64):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{str(index.dtype).rpartition('.')[2].capitalize()}")
    if source.dtype != x.dtype:
        raise RuntimeError(f"{name}(): self and source must have the same scalar type")
    k = index.numel()
    ss, xs = _as1(tuple(source.shape)), _as1(tuple(x.shape))
    if source.ndim and x.ndim and source.ndim != x.ndim or any(
            d != axis and ss[d] != xs[d] for d in range(min(len(ss), len(xs)))) or \
            len(ss) != len(xs):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} "
                           f"source.shape = {list(source.shape)}")
    if ss[axis] != k:
        raise RuntimeError(f"{name}(): Number of indices ({k}) should be equal to "
                           f"source.size(dim): ({ss[axis]}), for dim: {axis}")
    be = x.backend
    ops = be.ops
    idx = ops.reshape(index._data, (-1,))
    _check_bounds(be, idx, xs[axis], axis)
    x1 = ops.reshape(x._data, xs)
    s1 = ops.reshape(source._data, ss)
    out = _tensor(be, ops.reshape(ops.index_add(x1, idx, s1, axis, alpha), tuple(x.shape)))
    if _grad.enabled and (x._requires_grad or source._requires_grad):
        record(IndexAddBackward0, out, (x, source), (idx,), (None,),
               (axis, tuple(source.shape), alpha))
    return out


@op("masked_select")
def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The 1-d elements of ``x`` where the bool ``mask`` is True, in order; ``x`` and
    ``mask`` broadcast against each other."""
    _check_tensor("masked_select", x)
    _check_tensor("masked_select", mask, "mask", 2)
    if mask.dtype != bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    err = broadcast_mismatch("masked_select", tuple(x.shape), tuple(mask.shape))
    if err is not None:
        raise err
    shape = broadcast_shape(tuple(x.shape), tuple(mask.shape))
    be = x.backend
    ops = be.ops
    xd = x._data if tuple(x.shape) == shape else ops.expand(x._data, shape)
    md = mask._data if tuple(mask.shape) == shape else ops.expand(mask._data, shape)
    out = _tensor(be, ops.masked_select(xd, md))
    if _grad.enabled and x._requires_grad:
        record(MaskedSelectBackward0, out, (x,), (md,), (None,), (tuple(x.shape),))
    return out


@op("nonzero", differentiable=False)
def nonzero(x: Tensor, *, as_tuple: bool = False) -> Any:
    """The int64 coordinates of the nonzero elements of ``x``, in C order: an ``(n, ndim)``
    tensor, or with ``as_tuple`` one 1-d tensor per dimension (a 0-d ``x`` as 1-d)."""
    _check_tensor("nonzero", x)
    if not isinstance(as_tuple, bool):
        raise TypeError(f"nonzero(): argument 'as_tuple' must be bool, not "
                        f"{type(as_tuple).__name__}")
    be = x.backend
    ops = be.ops
    data = x._data
    if as_tuple and x.ndim == 0:
        data = ops.reshape(data, (1,))
    coords = ops.nonzero(data)
    if not as_tuple:
        return _tensor(be, coords)
    return tuple(_tensor(be, ops.copy(coords[:, d])) for d in range(coords.shape[1]))


# -- the in-place forms ----------------------------------------------------------------------
def _in_place(name: str, x: Tensor, operands: tuple[Any, ...], compute: Any) -> Tensor:
    """``x`` overwritten with ``compute(x)``: recorded as the out-of-place op on ``x``'s old
    value when autograd records it, else written into ``x``'s array."""

    def raw_apply(data: Any) -> None:
        x.backend.ops.assign_(data, compute(x)._data)

    return _inplace(name, x, operands, compute, raw_apply, False)


@op("scatter_", function=False, differentiable=False)
def scatter_(x: Tensor, dim: Any = MISSING, index: Any = MISSING, src: Any = None, *,
             value: Any = None, reduce: str | None = None, axis: Any = None) -> Tensor:
    """:func:`scatter` in place: ``x[i][index[i][j]] = src[i][j]`` along ``dim``; returns
    ``x``. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("scatter_", dim_alias("scatter_", dim, axis, MISSING))
        required("scatter_", index, "index")
    if reduce is not None:
        raise NotImplementedError("scatter_(): the reduce argument is not supported; use "
                                  "scatter_add_")
    if src is None and value is None:
        raise TypeError("scatter_() missing required argument 'src' or 'value'")
    operands = (index, src) if isinstance(src, Tensor) else (index,)
    return _in_place("scatter_", x, operands,
                     lambda t: scatter(t, dim, index, src, value=value))


@op("scatter_add_", function=False, differentiable=False)
def scatter_add_(x: Tensor, dim: Any = MISSING, index: Any = MISSING, src: Any = MISSING, *,
                 axis: Any = None) -> Tensor:
    """:func:`scatter_add` in place: ``x[i][index[i][j]] += src[i][j]`` along ``dim``;
    returns ``x``. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("scatter_add_", dim_alias("scatter_add_", dim, axis, MISSING))
        required("scatter_add_", index, "index")
        required("scatter_add_", src, "src")
    return _in_place("scatter_add_", x, (index, src),
                     lambda t: scatter_add(t, dim, index, src))


@op("index_add_", function=False, differentiable=False)
def index_add_(x: Tensor, dim: Any = MISSING, index: Any = MISSING, source: Any = MISSING, *,
               alpha: Any = 1, axis: Any = None) -> Tensor:
    """:func:`index_add` in place: ``alpha * source``'s slices along ``dim`` added to ``x``
    at the places of ``index``; returns ``x``. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("index_add_", dim_alias("index_add_", dim, axis, MISSING))
        required("index_add_", index, "index")
        required("index_add_", source, "source")
    return _in_place("index_add_", x, (index, source),
                     lambda t: index_add(t, dim, index, source, alpha=alpha))
