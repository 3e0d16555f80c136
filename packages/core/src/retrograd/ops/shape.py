"""Shape ops and indexing. Views (reshape without copy, permute, transpose, expand, basic
slicing) share their base's version counter, so in-place changes through any alias are seen."""

from __future__ import annotations

from typing import Any

from .._version import rebased_of
from ..autograd.node import formula_node
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record

__all__ = [
    "reshape", "view", "permute", "transpose", "squeeze", "unsqueeze", "expand", "expand_to",
    "flatten", "getitem", "cat", "stack", "sum_to", "index_backward", "index_zero",
    "matrix_transpose",
]


def _view_result(x: Tensor, data: Any) -> Tensor:
    be = x.backend
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if be.ops.is_view(data, x._data):
        vc = x._counter()
        out._vc = vc
        out._base = x if x._base is None else x._base
        if x._requires_grad:
            if _grad.enabled:
                out._x().view_epoch = rebased_of(vc)
            else:
                out._x().view_creation = "no_grad"
        elif x._extra is not None and x._extra.view_creation is not None:
            out._x().view_creation = x._extra.view_creation  # a view of such a view
    return out


def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"shape entries must be ints, got {shape!r}")
    return tuple(shape)


# -- reshape / view / flatten / squeeze / unsqueeze: all undone by a reshape -------------------
ReshapeBackward = formula_node(
    "ReshapeAliasBackward0", lambda F, g, s, a, n: (F.reshape(g, a),)
)


def _reshaped(name: str, x: Tensor, shape: tuple[int, ...], view_only: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    try:
        data = x.backend.ops.reshape(x._data, shape)
    except ValueError as exc:
        raise ValueError(
            f"{name}: shape {list(shape)} is invalid for input of shape {x.shape} "
            f"({x.numel()} elements)"
        ) from exc
    out = _view_result(x, data)
    if view_only and out._base is None and x.numel() > 0:
        raise RetrogradError(
            f"view: size {list(shape)} is not compatible with the input's memory layout "
            f"(shape {x.shape}); use .reshape(...) instead"
        )
    if _grad.enabled and x._requires_grad:
        record(ReshapeBackward, out, (x,), (), (), tuple(x._data.shape))
    return out


def reshape(x: Tensor, *shape: Any) -> Tensor:
    return _reshaped("reshape", x, _shape_arg(shape), False)


def view(x: Tensor, *shape: Any) -> Tensor:
    return _reshaped("view", x, _shape_arg(shape), True)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = x.shape
    if not shape:
        return _reshaped("flatten", x, (1,), False)
    nd = len(shape)
    for name, d in (("start_dim", start_dim), ("end_dim", end_dim)):
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"flatten: {name} must be an int, got {type(d).__name__}")
        if not -nd <= d < nd:
            raise IndexError(f"flatten: {name} {d} is out of range for a tensor of shape "
                             f"{shape} (expected -{nd} <= dim < {nd})")
    s, e = start_dim % nd, end_dim % nd
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if s == e:  # nothing to merge: the tensor itself, as in PyTorch (not a view of it)
        return x
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return _reshaped("flatten", x, shape[:s] + (n,) + shape[e + 1:], False)


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    shape = x.shape
    if dim is None:
        new = tuple(n for n in shape if n != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        nd = max(len(shape), 1)
        for d in dims:
            if not -nd <= d < nd:
                raise IndexError(f"squeeze: dim {d} out of range for shape {shape}")
        axes = {d % nd for d in dims}
        new = tuple(n for i, n in enumerate(shape) if not (i in axes and n == 1))
    return _reshaped("squeeze", x, new, False)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    shape = x.shape
    nd = len(shape) + 1
    if not -nd <= dim < nd:
        raise IndexError(f"unsqueeze: dim {dim} out of range for a result of {nd} dimensions")
    d = dim % nd
    return _reshaped("unsqueeze", x, shape[:d] + (1,) + shape[d:], False)


# -- permute / transpose ---------------------------------------------------------------------
def _permute_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    inverse = [0] * len(attrs)
    for i, d in enumerate(attrs):
        inverse[d] = i
    return (F.permute(g, tuple(inverse)),)


PermuteBackward = formula_node("PermuteBackward0", _permute_rule)


def permute(x: Tensor, *dims: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"permute: expected a Tensor, got {type(x).__name__}")
    dims = _shape_arg(dims)
    nd = x.ndim
    if len(dims) != nd or sorted(d % max(nd, 1) for d in dims) != list(range(nd)):
        raise ValueError(f"permute: dims {list(dims)} are not a permutation of {nd} dims")
    dims = tuple(d % nd for d in dims) if nd else ()
    out = _view_result(x, x.backend.ops.permute(x._data, dims))
    if _grad.enabled and x._requires_grad:
        record(PermuteBackward, out, (x,), (), (), dims)
    return out


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    nd = x.ndim
    if nd == 0:
        return permute(x)
    for d in (dim0, dim1):
        if not -nd <= d < nd:
            raise IndexError(f"transpose: dim {d} out of range for shape {x.shape}")
    dims = list(range(nd))
    a, b = dim0 % nd, dim1 % nd
    dims[a], dims[b] = dims[b], dims[a]
    return permute(x, *dims)


def matrix_transpose(x: Tensor) -> Tensor:
    return transpose(x, -2, -1)


# -- expand / sum_to: each other's backward --------------------------------------------------
ExpandBackward = formula_node("ExpandBackward0", lambda F, g, s, a, n: (F.reduce_to(g, a),))
SumToBackward = formula_node("SumToSizeBackward0", lambda F, g, s, a, n: (F.expand(g, a),))


def expand(x: Tensor, *sizes: Any) -> Tensor:
    sizes = _shape_arg(sizes)
    shape = x.shape
    if len(sizes) < len(shape):
        raise ValueError(f"expand: the number of sizes {list(sizes)} must be >= the number "
                         f"of dimensions of shape {shape}")
    target = sizes
    if -1 in sizes:
        lead = len(sizes) - len(shape)
        target = tuple(shape[i - lead] if s == -1 and i >= lead else s
                       for i, s in enumerate(sizes))
        if -1 in target:
            raise ValueError("expand: -1 is not allowed in a new leading dimension")
    return expand_to(x, target)


def expand_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``expand`` for a shape already resolved (a tuple of ints, no -1): what derivative
    rules call under create_graph (``GRAPH_F.expand``)."""
    try:
        data = x.backend.ops.expand(x._data, shape)
    except ValueError as exc:
        raise ValueError(
            f"expand: shape {x.shape} cannot be expanded to {tuple(shape)}"
        ) from exc
    out = _view_result(x, data)
    if _grad.enabled and x._requires_grad:
        record(ExpandBackward, out, (x,), (), (), tuple(x._data.shape))
    return out


def sum_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum ``x`` down to ``shape`` (undo broadcasting); differentiable."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    be = x.backend
    out = Tensor(be.asarray(be.ops.reduce_to(x._data, shape)), be)
    if _grad.enabled and x._requires_grad:
        record(SumToBackward, out, (x,), (), (), x.shape)
    return out


# -- indexing ---------------------------------------------------------------------------------
def _norm_key(x: Tensor, key: Any) -> Any:
    be = x.backend
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if isinstance(k, Tensor):
            check_device("index", x, k)
            if k.dtype.is_floating_point:
                raise IndexError(f"tensors used as indices must be long or bool, got {k.dtype}")
            out.append(k._data if k.ndim else (bool(k.item()) if k.dtype.name == "bool"
                                               else int(k.item())))
        elif isinstance(k, bool):
            out.append(k)
        elif isinstance(k, (int, slice)) or k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, (list, tuple)):
            out.append(be.asarray(k))
        elif hasattr(k, "shape") and hasattr(k, "dtype"):
            out.append(be.asarray(k))
        else:
            raise TypeError(f"unsupported index type {type(k).__name__} in {key!r}")
    return tuple(out)


def _is_basic(key: tuple[Any, ...]) -> bool:
    return all(isinstance(k, (int, slice)) or k is None or k is Ellipsis for k in key)


IndexBackward = formula_node(
    "IndexBackward0", lambda F, g, s, a, n: (F.index_backward(g, a[0], a[1]),)
)
IndexBackwardBackward = formula_node(
    "IndexBackwardBackward0", lambda F, g, s, a, n: (F.getitem(g, a),)
)
IndexZeroBackward = formula_node(
    "IndexZeroBackward0", lambda F, g, s, a, n: (F.index_zero(g, a),)
)


def getitem(x: Tensor, key: Any) -> Tensor:
    k = _norm_key(x, key)
    try:
        data = x.backend.ops.getitem(x._data, k)
    except IndexError as exc:
        raise IndexError(f"index {key!r} is invalid for a tensor of shape {x.shape}: {exc}") \
            from None
    be = x.backend
    if _is_basic(k):
        out = _view_result(x, data)
    else:
        if type(data) is not be.array_type:
            data = be.asarray(data)
        out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(IndexBackward, out, (x,), (), (), (tuple(x._data.shape), k))
    return out


def index_backward(g: Tensor, shape: tuple[int, ...], key: Any) -> Tensor:
    """zeros(shape) with ``g`` scatter-added at ``key``; differentiable (backward: indexing)."""
    be = g.backend
    out = Tensor(be.asarray(be.ops.index_backward(g._data, tuple(shape), key)), be)
    if _grad.enabled and g._requires_grad:
        record(IndexBackwardBackward, out, (g,), (), (), key)
    return out


def index_zero(g: Tensor, key: Any) -> Tensor:
    """``g`` with the entries at ``key`` set to zero; differentiable (self-adjoint)."""
    be = g.backend
    out = Tensor(be.asarray(be.ops.index_zero(g._data, key)), be)
    if _grad.enabled and g._requires_grad:
        record(IndexZeroBackward, out, (g,), (), (), key)
    return out


# -- cat / stack --------------------------------------------------------------------------------
def _cat_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    dim, sizes = attrs
    lead = (slice(None),) * dim
    grads = []
    off = 0
    for i, n in enumerate(sizes):
        grads.append(F.getitem(g, lead + (slice(off, off + n),)) if needs[i] else None)
        off += n
    return tuple(grads)


def _stack_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    dim, count = attrs
    lead = (slice(None),) * dim
    return tuple(F.getitem(g, lead + (i,)) if needs[i] else None for i in range(count))


CatBackward = formula_node("CatBackward0", _cat_rule)
StackBackward = formula_node("StackBackward0", _stack_rule)


def _seq_operands(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}: expected a sequence of Tensors, got {type(tensors).__name__}")
    ts = list(tensors)
    if not ts:
        raise ValueError(f"{name}: expected a non-empty sequence of tensors")
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__}")
        check_device(name, ts[0], t)
    return ts


def cat(tensors: Any, dim: int = 0) -> Tensor:
    ts = _seq_operands("cat", tensors)
    nd = ts[0].ndim
    if nd == 0:
        raise ValueError("cat: zero-dimensional tensors cannot be concatenated")
    if not -nd <= dim < nd:
        raise IndexError(f"cat: dim {dim} out of range for {nd}-d tensors")
    d = dim % nd
    ref = ts[0].shape
    for t in ts:
        s = t.shape
        if len(s) != nd or any(a != b for i, (a, b) in enumerate(zip(s, ref)) if i != d):
            raise ValueError(
                f"cat: sizes of tensors must match except in dimension {d}; got shapes "
                f"{[t.shape for t in ts]}"
            )
    be = ts[0].backend
    out = Tensor(be.asarray(be.ops.concat([t._data for t in ts], d)), be)
    if _grad.enabled and any(t._requires_grad for t in ts):
        record(CatBackward, out, tuple(ts), (), (), (d, tuple(t.shape[d] for t in ts)))
    return out


def stack(tensors: Any, dim: int = 0) -> Tensor:
    ts = _seq_operands("stack", tensors)
    ref = ts[0].shape
    for t in ts:
        if t.shape != ref:
            raise ValueError(
                f"stack expects each tensor to be equal size, got shapes {[t.shape for t in ts]}"
            )
    nd = len(ref) + 1
    if not -nd <= dim < nd:
        raise IndexError(f"stack: dim {dim} out of range for a {nd}-d result")
    d = dim % nd
    be = ts[0].backend
    out = Tensor(be.asarray(be.ops.stack([t._data for t in ts], d)), be)
    if _grad.enabled and any(t._requires_grad for t in ts):
        record(StackBackward, out, tuple(ts), (), (), (d, len(ts)))
    return out
