"""Sorting and searching: ``sort``, ``argsort``, ``topk``, ``searchsorted``, ``bucketize``,
``unique``, ``unique_consecutive``.

``sort`` and ``topk`` take a stable sorting permutation of each slice (NaN the largest, as in
PyTorch) and gather by it; their gradient puts each value's gradient back where the value
came from, which is a gather of the (zero-padded) gradient by the inverse permutation, so the
rule needs no scatter. Written once against ``F``: under ``create_graph`` the two gathers are
this module's own differentiable ops, each the other's adjoint (double backward works).
``unique``'s first output requires grad as PyTorch's does, and its backward raises PyTorch's
``NotImplementedError``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import int32, int64
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .aliases import dim_alias, out_pair
from .declare import GRAPH_KERNELS, op
from .reduction import _dim_int
from .shape import wrap_dim
from .statistics import _tensor, return_types

__all__ = ["sort", "argsort", "topk", "searchsorted", "bucketize", "unique",
           "unique_consecutive"]

# PyTorch's torch.return_types.sort / topk, on the same class as max/min's
_SortResult = namedtuple("sort", ["values", "indices"])  # type: ignore[name-match]
_TopkResult = namedtuple("topk", ["values", "indices"])  # type: ignore[name-match]
return_types.sort = _SortResult  # type: ignore[attr-defined]
return_types.topk = _TopkResult  # type: ignore[attr-defined]


# -- helpers ---------------------------------------------------------------------------------
def _check_tensor(name: str, x: Any, arg: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_bool(name: str, arg: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(v).__name__}")


def _dim(name: str, dim: Any, nd: int) -> int:
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return wrap_dim(name, d, nd)


# -- the gradient: gathers by a permutation and by its inverse -------------------------------
def _scatter_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The adjoint of ``sort_scatter`` is the gather at the sorted places."""
    inv, idx = saved
    axis, n = attrs
    return (F.sort_gather(g, idx, inv, axis, n),)


def _gather_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    inv, idx = saved
    axis, n = attrs
    return (F.sort_scatter(g, inv, idx, axis, n),)


ScatterBackward0 = formula_node("ScatterBackward0", _scatter_rule, arity=1)
GatherBackward0 = formula_node("GatherBackward0", _gather_rule, arity=1)


def _raw(t: Any) -> Any:
    return t._data if isinstance(t, Tensor) else t


def _sort_scatter_graph(g: Tensor, inv: Any, idx: Any, axis: int, n: int) -> Tensor:
    """Differentiable ``sort_scatter``: zeros with ``g`` put back at the places ``idx``."""
    be = g.backend
    out = _tensor(be, be.ops.sort_scatter(g._data, _raw(inv), _raw(idx), axis, n))
    if _grad.enabled and g._requires_grad:
        record(ScatterBackward0, out, (g,), (_raw(inv), _raw(idx)), (None, None), (axis, n))
    return out


def _sort_gather_graph(y: Tensor, idx: Any, inv: Any, axis: int, n: int) -> Tensor:
    """Differentiable ``sort_gather``: ``y`` gathered at ``idx`` along ``axis``."""
    be = y.backend
    out = _tensor(be, be.ops.sort_gather(y._data, _raw(idx), _raw(inv), axis, n))
    if _grad.enabled and y._requires_grad:
        record(GatherBackward0, out, (y,), (_raw(inv), _raw(idx)), (None, None), (axis, n))
    return out


_GRAPH_EXTRA = {"sort_scatter": _sort_scatter_graph, "sort_gather": _sort_gather_graph}
GRAPH_KERNELS.update(_GRAPH_EXTRA)  # put in GRAPH_F: see ops.declare


def _select_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` put back at the places the sorted (top-k) values were taken from."""
    axis, n, scalar = attrs
    if scalar:  # a 0-d input: its one element
        return (g,)
    inv, idx = saved
    return (F.sort_scatter(g, inv, idx, axis, n),)


SortBackward0 = formula_node("SortBackward0", _select_rule, arity=1)
SortBackward1 = formula_node("SortBackward1", _select_rule, arity=1)  # ``stable`` given
_UNSET: Any = object()
TopkBackward0 = formula_node("TopkBackward0", _select_rule, arity=1)


def _ordered(name: str, x: Tensor, dim: int, descending: bool, k: int | None,
             cls: Any) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of the first ``k`` (None: all) places of the stable order."""
    be = x.backend
    ops = be.ops
    if x.ndim == 0:
        values = _tensor(be, ops.copy(x._data))
        indices = _tensor(be, ops.astype(ops.zeros_like(x._data), be.xp_dtype(int64)))
        if cls is not None and _grad.enabled and x._requires_grad:
            record(cls, values, (x,), (), (), (dim, 1, True))
        return values, indices
    n = x._data.shape[dim]
    order = ops.sort_order(x._data, dim, descending)
    idx = order
    if k is not None and k < n:
        key = (slice(None),) * dim + (slice(0, k),)
        idx = ops.getitem(order, key + (Ellipsis,))
    values = _tensor(be, ops.take_along(x._data, idx, dim))
    indices = _tensor(be, idx)
    if cls is not None and _grad.enabled and x._requires_grad:
        inv = ops.inverse_permutation(order, dim)
        record(cls, values, (x,), (inv, idx), (None, None), (dim, n, False))
    return values, indices


# -- sort, argsort, topk ---------------------------------------------------------------------
def _sort_args(name: str, x: Any, dim: Any, descending: Any, stable: Any) -> int:
    _check_tensor(name, x)
    _check_bool(name, "descending", descending)
    if stable is not None:
        _check_bool(name, "stable", stable)
    return _dim(name, dim, x.ndim)


@op("sort")
def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = _UNSET,
         *, out: Any = None, axis: Any = None) -> Any:
    """The named tuple ``(values, indices)`` of ``x`` sorted along ``dim``; NaN sorts as the
    largest value. The order is always stable (``stable`` is accepted for PyTorch's
    signature; given, the node is PyTorch's ``SortBackward1``); ``indices`` are int64 and carry
    no gradient.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if axis is not None or out is not None:
        dim = dim_alias("sort", dim, axis, -1)
        if out is not None:
            return out_pair("sort", out, (x,), lambda: sort(x, dim, descending, stable))
    given = stable is not _UNSET
    a = _sort_args("sort", x, dim, descending, stable if given else None)
    values, indices = _ordered("sort", x, a, descending, None,
                               SortBackward1 if given else SortBackward0)
    return _SortResult(values, indices)


@op("argsort", differentiable=False)
def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False,
            *, axis: Any = None) -> Tensor:
    """The int64 indices that sort ``x`` along ``dim`` (``sort(...).indices``).
    ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("argsort", dim, axis, -1)
    a = _sort_args("argsort", x, dim, descending, stable)
    return _ordered("argsort", x, a, descending, None, None)[1]


@op("topk")
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True, *, out: Any = None, axis: Any = None) -> Any:  # noqa: A002
    """The named tuple ``(values, indices)`` of the ``k`` largest (``largest=False``:
    smallest) elements along ``dim``, largest first (smallest first); NaN counts as the
    largest. The result is always in sorted order.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if axis is not None or out is not None:
        dim = dim_alias("topk", dim, axis, -1)
        if out is not None:
            return out_pair("topk", out, (x,), lambda: topk(x, k, dim, largest, sorted))
    _check_tensor("topk", x)
    kk = None if isinstance(k, bool) else _dim_int(k)
    if kk is None:
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not "
                        f"{type(k).__name__}")
    _check_bool("topk", "largest", largest)
    _check_bool("topk", "sorted", sorted)
    a = _dim("topk", dim, x.ndim)
    n = x._data.shape[a] if x.ndim else 1
    if not 0 <= kk <= n:
        raise RuntimeError("selected index k out of range")
    values, indices = _ordered("topk", x, a, largest, kk, TopkBackward0)
    return _TopkResult(values, indices)


# -- searchsorted, bucketize -----------------------------------------------------------------
def _values_arg(name: str, v: Any, like: Tensor) -> Any:
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, (bool, int, float)):
        return like.backend.asarray(v)
    raise TypeError(f"{name}(): argument 'input' must be Tensor or Number, not "
                    f"{type(v).__name__}")


def _index_result(be: Any, data: Any, out_int32: bool) -> Tensor:
    if out_int32:
        data = be.ops.astype(data, be.xp_dtype(int32))
    return _tensor(be, data)


@op("searchsorted", method=False, differentiable=False)
def searchsorted(sorted_sequence: Tensor, values: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """The places where ``values`` (a tensor or a number) would be inserted into the sorted
    last dimension of ``sorted_sequence`` to keep it sorted: before equal elements, or after
    them with ``right=True`` / ``side="right"``. ``sorted_sequence`` is 1-d, or shares every
    dimension but the last with ``values``; ``sorter`` sorts an unsorted sequence. The result
    is int64 (int32 with ``out_int32``) and carries no gradient."""
    _check_tensor("searchsorted", sorted_sequence, "sorted_sequence")
    _check_bool("searchsorted", "out_int32", out_int32)
    _check_bool("searchsorted", "right", right)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    vdata = _values_arg("searchsorted", values, seq)
    vshape = tuple(vdata.shape)
    if seq.ndim > 1 and (len(vshape) != seq.ndim or vshape[:-1] != tuple(seq.shape[:-1])):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(seq.shape)} "
                           f"and input value tensor {list(vshape)}")
    srt = None
    if sorter is not None:
        _check_tensor("searchsorted", sorter, "sorter")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(seq.shape)} and got "
                               f"sorter tensor {list(sorter.shape)}")
        srt = sorter._data
    be = seq.backend
    return _index_result(be, be.ops.searchsorted_(seq._data, vdata, right, srt), out_int32)


@op("bucketize", method=False, differentiable=False)
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` (a tensor or a number) among the sorted 1-d
    ``boundaries``: the ``i`` with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``); int64 (int32 with
    ``out_int32``), no gradient."""
    _check_tensor("bucketize", boundaries, "boundaries", 2)
    _check_bool("bucketize", "out_int32", out_int32)
    _check_bool("bucketize", "right", right)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries.ndim})")
    vdata = _values_arg("bucketize", input, boundaries)
    be = boundaries.backend
    return _index_result(be, be.ops.searchsorted_(boundaries._data, vdata, right, None),
                         out_int32)


# -- unique ----------------------------------------------------------------------------------
def _not_implemented(fname: str) -> Any:
    def rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
        raise NotImplementedError(f"the derivative for '{fname}' is not implemented.")

    return rule


Unique2Backward0 = formula_node("Unique2Backward0", _not_implemented("_unique2"), arity=1)
UniqueDimBackward0 = formula_node("UniqueDimBackward0", _not_implemented("unique_dim"),
                                  arity=1)
UniqueConsecutiveBackward0 = formula_node(
    "UniqueConsecutiveBackward0", _not_implemented("unique_consecutive"), arity=1)


def _unique(name: str, x: Any, sort_: bool, return_inverse: Any, return_counts: Any,
            dim: Any, cls: Any) -> Any:
    _check_tensor(name, x)
    _check_bool(name, "return_inverse", return_inverse)
    _check_bool(name, "return_counts", return_counts)
    be = x.backend
    axis = None if dim is None else _dim(name, dim, x.ndim)
    data = x._data
    if axis is not None and x.ndim == 0:
        data = be.ops.reshape(data, (1,))
    vals, inverse, counts = be.ops.unique_(data, axis, sort_)
    out = _tensor(be, vals)
    if _grad.enabled and x._requires_grad:
        record(cls, out, (x,), (), (), None)
    res = [out]
    if return_inverse:
        res.append(_tensor(be, inverse))
    if return_counts:
        res.append(_tensor(be, counts))
    return out if len(res) == 1 else tuple(res)


@op("unique", differentiable=False)
def unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements of ``x`` (with ``dim``: its distinct slices along ``dim``), in
    ascending order (also for ``sorted=False``, as PyTorch's CPU kernel); NaNs are each
    distinct. With ``return_inverse`` / ``return_counts`` a tuple also holding, as int64,
    each element's (slice's) place in the result and each result's count. The result
    requires grad with ``x``, but its derivative is not implemented."""
    _check_bool("unique", "sorted", sorted)
    cls = Unique2Backward0 if dim is None else UniqueDimBackward0
    return _unique("unique", x, True, return_inverse, return_counts, dim, cls)


@op("unique_consecutive", differentiable=False)
def unique_consecutive(x: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """``x`` with each run of equal consecutive elements (slices along ``dim``) kept once;
    ``return_inverse`` / ``return_counts`` as in :func:`unique`. The result requires grad
    with ``x``, but its derivative is not implemented."""
    return _unique("unique_consecutive", x, False, return_inverse, return_counts, dim,
                   UniqueConsecutiveBackward0)
