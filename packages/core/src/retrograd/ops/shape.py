"""Shape ops and indexing. Views (reshape without copy, permute, transpose, expand, basic
slicing) share their base's version counter, so in-place changes through any alias are seen."""

from __future__ import annotations

import operator
from typing import Any

from .._version import rebased_of
from .._writes import adopt_view, reshape_is_view
from ..autograd.anomaly import _state as _anomaly
from ..autograd.anomaly import forward_stack
from ..autograd.node import formula_node
from ..errors import ShapeError
from ..grad_mode import _state as _grad
from ..inference_mode import INFERENCE
from ..tensor import Tensor
from ._core import InferenceView, check_device, record
from .aliases import MISSING, dim_alias, required
from .conversion import CloneBackward
from .late_views import LAZY, is_registered, register
from .promotion import promote_types, promoted_class_n, promoted_operands, torch_name

__all__ = [
    "reshape", "view", "permute", "transpose", "squeeze", "unsqueeze", "expand", "expand_to",
    "flatten", "getitem", "cat", "stack", "sum_to", "index_backward", "index_zero",
    "index_put", "matrix_transpose", "alias_like", "t",
]


def _view_result(x: Tensor, data: Any, kind: str, arg: Any = None) -> Tensor:
    """``data`` (a view op's result on ``x``) as a tensor; a view of ``x``'s base when it
    shares its memory. A view that needs autograd also records the step ``(kind, arg)`` that
    made it (``arg`` None: the result's shape), after those of ``x``, so that an in-place op
    through it can rebase the base and a stale view can be taken again: see
    ``ops.view_inplace``. Nothing is recorded for views of tensors that need no gradient."""
    be = x.backend
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if be.ops.is_view(data, x._data) and not (
            be.functional and kind == "reshape" and not reshape_is_view(x, tuple(data.shape))):
        vc = x._counter()
        out._vc = vc
        out._base = x if x._base is None else x._base
        if be.functional:  # immutable arrays: the view's derivation, for writes (retrograd._writes)
            adopt_view(out, x, (kind, tuple(data.shape) if arg is None else arg))
        # a view of an inference tensor is not differentiable, as in PyTorch (its view ops
        # record nothing either: the ``x._vc is not INFERENCE`` after each call)
        if x._requires_grad and vc is not INFERENCE:
            if _grad.enabled:
                ex = out._x()
                ex.view_epoch = rebased_of(vc)
                step = (kind, tuple(data.shape) if arg is None else arg)
                if x._base is None:
                    ex.view_chain = (step,)
                elif x._extra is not None:
                    if x._extra.view_chain is LAZY:  # a woken view: its steps read now
                        from .view_inplace import chain_of

                        ex.view_chain = chain_of(x) + (step,)
                    elif x._extra.view_chain is not None:
                        ex.view_chain = x._extra.view_chain + (step,)
                    else:  # a view of a view that may not be rebased: neither may this one
                        ex.view_creation = x._extra.view_creation
            else:
                # PyTorch: the view still requires grad (it is a view of a tensor that does),
                # but it has no history, and gradient reaching it goes nowhere
                ex = out._x()
                ex.view_creation = InferenceView("no_grad") if _grad.inference else "no_grad"
                ex.view_epoch = rebased_of(vc)  # refused once its base is rebased: _core
                out._requires_grad = True
        else:
            xc = x._extra.view_creation if x._extra is not None else None
            if x._extra is not None and x._extra.multi_output is not None:
                out._x().multi_output = x._extra.multi_output  # a view of an unbind output
            if xc is not None:
                out._x().view_creation = xc  # a view of such a view
            elif not _grad.enabled:
                # PyTorch refuses a recorded in-place op through any view made in no_grad mode
                ex = out._x()
                ex.view_creation = (InferenceView("no_grad_plain") if _grad.inference
                                    else "no_grad_plain")
                ex.view_epoch = rebased_of(vc)
            if vc is not INFERENCE and (xc is None or xc == "no_grad_plain") and (
                    x._base is None or is_registered(x)):
                register(out, out._base)  # followed if the base comes to need gradient
            elif vc is not INFERENCE and xc is None:
                out._x().alias_view = True  # a view of a detached alias: still a view
    return out


def _as_int(name: str, arg: str, value: Any) -> int:
    """An int argument read as PyTorch's binding reads it: ints and objects with ``__index__``
    (NumPy integers, one-element integer tensors) pass; bools and floats are a TypeError."""
    if type(value) is int:
        return value
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")


def wrap_dim(name: str, dim: Any, ndim: int, arg: str = "dim") -> int:
    """``dim`` as a non-negative axis of a tensor of ``ndim`` dimensions (a 0-d tensor takes
    -1 and 0, as in PyTorch); IndexError with PyTorch's wording when out of range."""
    d = _as_int(name, arg, dim)
    n = ndim if ndim > 0 else 1
    if not -n <= d < n:
        raise IndexError(
            f"{name}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {d})"
        )
    return d % n


def _shape_arg(name: str, shape: tuple[Any, ...], arg: str = "shape") -> tuple[int, ...]:
    if not shape:  # ``x.reshape()``: PyTorch's binding wants the argument (``()`` is one)
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if type(s) is not int:
            break
    else:
        return tuple(shape)
    out = []
    for i, s in enumerate(shape):
        try:
            out.append(_as_int(name, arg, s))
        except TypeError:
            raise TypeError(
                f"{name}(): argument '{arg}' must be tuple of ints, but found element of type "
                f"{type(s).__name__} at pos {i}"
            ) from None
    return tuple(out)


def _reshape_error(name: str, shape: tuple[int, ...], x: Tensor) -> ShapeError:
    """Why ``shape`` does not fit ``x``, in PyTorch's words (its ``infer_size`` checks)."""
    numel = x.numel()
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                return ShapeError(f"{name}: only one dimension can be inferred (shape "
                                  f"{list(shape)})")
            infer = i
        elif s < 0:
            return ShapeError(f"{name}: invalid shape dimension {s} at index {i} of shape "
                              f"{list(shape)}")
        else:
            known *= s
    if infer is not None and known == 0 and numel == 0:
        return ShapeError(
            f"{name}: cannot reshape tensor of 0 elements into shape {list(shape)} because the "
            "unspecified dimension size -1 can be any value and is ambiguous"
        )
    return ShapeError(f"{name}: shape '{list(shape)}' is invalid for input of size {numel} "
                      f"(a tensor of shape {x.shape})")


# -- the nodes of the view ops, named and linked as PyTorch's --------------------------------
def _reshape_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.reshape(g, attrs),)  # attrs: the input's shape


def _identity_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (g,)


# reshape and view: ``ViewBackward0`` for a view of a contiguous tensor (and for ``view``),
# ``ReshapeAliasBackward0`` for a reshape that is a view of a non-contiguous one, and
# ``UnsafeViewBackward0`` over ``CloneBackward0`` for a reshape that must copy
ViewBackward = formula_node("ViewBackward0", _reshape_rule)
ReshapeAliasBackward = formula_node("ReshapeAliasBackward0", _reshape_rule)
UnsafeViewBackward = formula_node("UnsafeViewBackward0", _reshape_rule)
SqueezeBackward0 = formula_node("SqueezeBackward0", _reshape_rule)  # squeeze()
SqueezeBackward1 = formula_node("SqueezeBackward1", _reshape_rule)  # squeeze(dim)
SqueezeBackward2 = formula_node("SqueezeBackward2", _reshape_rule)  # squeeze((dims...))
UnsqueezeBackward = formula_node("UnsqueezeBackward0", _reshape_rule)
AliasBackward = formula_node("AliasBackward0", _identity_rule)  # x[...], x[:, :]


def _link(cls: Any, out: Tensor, attrs: Any) -> None:
    """One more node of a chain PyTorch records for one op (``x[0, 1:]``: a select, then a
    slice; a reshape that copies: a clone, then an unsafe view): a ``cls`` node whose one edge
    is ``out``'s current node, made ``out``'s node. The first node of the chain was recorded
    by ``record``, with the op's input as its edge."""
    node = cls(out.backend, out.grad_fn, (), (), (), attrs)
    if _anomaly.enabled:
        node.metadata["traceback_"] = forward_stack()
    out.grad_fn = node


def _contiguous(data: Any) -> bool:
    """Whether ``data`` is laid out C-contiguously (PyTorch's ``is_contiguous``: strides of
    dimensions of size 1, and of empty arrays, do not count -- NumPy's flag says the same).
    An array type without strides counts as contiguous."""
    flags = getattr(data, "flags", None)
    return True if flags is None else bool(getattr(flags, "c_contiguous", True))


def _reshaped(name: str, x: Tensor, shape: tuple[int, ...], view_only: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    if shape and min(shape) < -1:  # NumPy reads any negative size as "infer"; PyTorch refuses
        raise _reshape_error(name, shape, x)
    try:
        data = x.backend.ops.reshape(x._data, shape)
    except ValueError:
        for i, s in enumerate(shape):
            if s >= _I64:  # PyTorch cannot even read it: its binding's TypeError
                arg = "size" if name == "view" else "shape"
                raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos "
                                f"{i + 1} with error \"Overflow when unpacking long long\" "
                                f"(size {s} does not fit in int64)") from None
        raise _reshape_error(name, shape, x) from None
    out = _view_result(x, data, "reshape")
    if view_only and out._base is None and x.numel() > 0:
        raise ShapeError(
            f"view size is not compatible with input tensor's size and stride (view size "
            f"{list(shape)} of a tensor of shape {x.shape} laid out non-contiguously): no view "
            "can have that size; use .reshape(...) instead"
        )
    if _grad.enabled and x._requires_grad and (out._base is None or x._vc is not INFERENCE):
        in_shape = tuple(x._data.shape)
        if view_only or _contiguous(x._data):
            record(ViewBackward, out, (x,), (), (), in_shape)
        elif out._base is not None or x.numel() == 0:  # PyTorch's _reshape_alias
            record(ReshapeAliasBackward, out, (x,), (), (), in_shape)
        else:  # no view has that shape: PyTorch clones, then views the clone
            record(CloneBackward, out, (x,))
            _link(UnsafeViewBackward, out, in_shape)
    return out


def reshape(x: Tensor, *shape: Any) -> Tensor:
    """``x`` with a new shape (ints or one sequence; one entry may be -1): a view where the data
    allows one (``ViewBackward0``), otherwise a copy (``CloneBackward0`` then
    ``UnsafeViewBackward0``), as in PyTorch."""
    return _reshaped("reshape", x, _shape_arg("reshape", shape), False)


def view(x: Tensor, *shape: Any) -> Tensor:
    """A view of ``x`` with a new shape (ints or one sequence; one entry may be -1), sharing its
    data and version counter (``ViewBackward0``); refused where no view has that shape, as in
    PyTorch (use ``reshape``)."""
    return _reshaped("view", x, _shape_arg("view", shape, "size"), True)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``x`` with dimensions ``start_dim`` to ``end_dim`` (inclusive) merged into one, through
    ``reshape``; a 0-d tensor gives shape ``(1,)``, and ``start_dim == end_dim`` returns ``x``
    itself, as in PyTorch."""
    shape = x.shape
    nd = len(shape)
    s = wrap_dim("flatten", start_dim, nd, "start_dim")
    e = wrap_dim("flatten", end_dim, nd, "end_dim")
    if s > e:
        raise ShapeError(
            "flatten() has invalid args: start_dim cannot come after end_dim (start_dim "
            f"{start_dim}, end_dim {end_dim} for a tensor of shape {shape})"
        )
    if not shape:
        return _reshaped("flatten", x, (1,), False)
    if s == e:  # nothing to merge: the tensor itself, as in PyTorch (not a view of it)
        return x
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return _reshaped("flatten", x, shape[:s] + (n,) + shape[e + 1:], False)


def _resized(x: Tensor, shape: tuple[int, ...], cls: Any,
             drop: tuple[int, ...] = ()) -> Tensor:
    """``x`` with dimensions of size 1 removed (``drop``, with the backend's squeeze kernel)
    or inserted (squeeze, unsqueeze): always a view, recorded as a ``cls`` node."""
    ops = x.backend.ops
    data = ops.squeeze(x._data, drop) if drop else ops.reshape(x._data, shape)
    out = _view_result(x, data, "reshape", shape)
    if _grad.enabled and x._requires_grad and x._vc is not INFERENCE:
        record(cls, out, (x,), (), (), tuple(x._data.shape))
    return out


def squeeze(x: Tensor, dim: Any = None, *, axis: Any = None) -> Tensor:
    """A view of ``x`` without dimensions of size 1: all of them (``dim=None``,
    ``SqueezeBackward0``), or those among ``dim``, an int (``SqueezeBackward1``) or a tuple
    (``SqueezeBackward2``); a named dimension of another size is kept.
    ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("squeeze", dim, axis)
    if not isinstance(x, Tensor):
        raise TypeError(f"squeeze: expected a Tensor, got {type(x).__name__}")
    shape = x.shape
    axes: set[int] = set()
    if dim is None:
        axes.update(i for i, n in enumerate(shape) if n == 1)
        new = tuple(n for n in shape if n != 1)
        cls = SqueezeBackward0
    else:
        many = isinstance(dim, (tuple, list))
        dims = tuple(dim) if many else (dim,)
        for d in dims:
            a = wrap_dim("squeeze", d, len(shape))
            if a in axes:
                raise ShapeError(f"squeeze(): dim {a} appears multiple times in the list of "
                                 f"dims {list(dims)}")
            axes.add(a)
        new = tuple(n for i, n in enumerate(shape) if not (i in axes and n == 1))
        cls = SqueezeBackward2 if many else SqueezeBackward1
    drop = tuple(sorted(i for i in axes if i < len(shape) and shape[i] == 1))
    return _resized(x, new, cls, drop)


def unsqueeze(x: Tensor, dim: Any = MISSING, *, axis: Any = None) -> Tensor:
    """A view of ``x`` with a dimension of size 1 inserted at ``dim`` (in ``[-x.ndim - 1,
    x.ndim]``), recording ``UnsqueezeBackward0``. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("unsqueeze", dim_alias("unsqueeze", dim, axis, MISSING))
    if not isinstance(x, Tensor):
        raise TypeError(f"unsqueeze: expected a Tensor, got {type(x).__name__}")
    shape = x.shape
    d = wrap_dim("unsqueeze", dim, len(shape) + 1)
    return _resized(x, shape[:d] + (1,) + shape[d:], UnsqueezeBackward)


# -- permute / transpose ---------------------------------------------------------------------
def _permute_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    inverse = [0] * len(attrs)
    for i, d in enumerate(attrs):
        inverse[d] = i
    return (F.permute(g, tuple(inverse)),)


PermuteBackward = formula_node("PermuteBackward0", _permute_rule)
# a transpose's dims (attrs) swap two dimensions: their own inverse
TransposeBackward = formula_node("TransposeBackward0",
                                 lambda F, g, s, a, n: (F.permute(g, a),))
TBackward = formula_node("TBackward0", lambda F, g, s, a, n: (F.permute(g, a),))


def permute(x: Tensor, *dims: Any) -> Tensor:
    """A view of ``x`` with its dimensions reordered by ``dims`` (ints or one sequence, a
    permutation of all of them; negative dims count from the end), recording
    ``PermuteBackward0``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"permute: expected a Tensor, got {type(x).__name__}")
    dims = _shape_arg("permute", dims, "dims")
    nd = x.ndim
    if len(dims) != nd:
        raise ShapeError(
            "permute(): number of dims don't match in permute: the number of dimensions in the "
            "tensor input does not match the length of the desired ordering of dimensions, "
            f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
        )
    if nd:
        if min(dims) < -nd or max(dims) >= nd:
            for d in dims:
                wrap_dim("permute", d, nd)  # raises for the first one out of range
        dims = tuple(d % nd for d in dims)
        if len(set(dims)) != nd:
            raise ShapeError(f"permute(): duplicate dims are not allowed (dims {list(dims)} "
                             f"for a tensor of shape {x.shape})")
    return _permuted(x, dims, PermuteBackward)


def _permuted(x: Tensor, dims: tuple[int, ...], cls: Any) -> Tensor:
    out = _view_result(x, x.backend.ops.permute(x._data, dims), "permute", dims)
    if _grad.enabled and x._requires_grad and x._vc is not INFERENCE:
        record(cls, out, (x,), (), (), dims)
    return out


def _swapped(x: Tensor, a: int, b: int, cls: Any) -> Tensor:
    dims = list(range(x.ndim))
    if dims:
        dims[a], dims[b] = dims[b], dims[a]
    return _permuted(x, tuple(dims), cls)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view of ``x`` with dimensions ``dim0`` and ``dim1`` swapped, recording
    ``TransposeBackward0``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"transpose: expected a Tensor, got {type(x).__name__}")
    nd = x.ndim
    a = wrap_dim("transpose", dim0, nd, "dim0")
    b = wrap_dim("transpose", dim1, nd, "dim1")
    return _swapped(x, a, b, TransposeBackward)


def t(x: Tensor) -> Tensor:
    """``x.t()``: a matrix transposed, a vector or a 0-d tensor as it is (still a view, with
    PyTorch's ``TBackward0``)."""
    nd = x.ndim
    if nd > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D "
                         f"(shape {x.shape})")
    return _swapped(x, 0, nd - 1 if nd else 0, TBackward)


def matrix_transpose(x: Tensor) -> Tensor:
    return transpose(x, -2, -1)


# -- expand / sum_to: each other's backward --------------------------------------------------
ExpandBackward = formula_node("ExpandBackward0", lambda F, g, s, a, n: (F.reduce_to(g, a),))
SumToBackward = formula_node("SumToSizeBackward0", lambda F, g, s, a, n: (F.expand(g, a),))


def expand_shape(name: str, shape: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``expand(*sizes)`` gives a tensor of ``shape`` (-1 keeps a dimension), or
    ShapeError with PyTorch's wording (its ``inferExpandGeometry`` checks)."""
    nd, n = len(shape), len(sizes)
    if n < nd:
        raise ShapeError(
            f"{name}: the number of sizes provided ({n}) must be greater or equal to the number "
            f"of dimensions in the tensor ({nd}) (sizes {list(sizes)}, tensor shape {shape})"
        )
    lead = n - nd
    out = list(sizes)
    for i in range(n - 1, -1, -1):
        target = sizes[i]
        if i < lead:
            if target < 0:
                raise ShapeError(
                    f"{name}: The expanded size of the tensor ({target}) isn't allowed in a "
                    f"leading, non-existing dimension {i} (sizes {list(sizes)})"
                )
            continue
        size = shape[i - lead]
        if target == -1:
            out[i] = size
        elif target != size and (size != 1 or target < 0):
            raise ShapeError(
                f"{name}: The expanded size of the tensor ({target}) must match the existing "
                f"size ({size}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shape)}"
            )
    return tuple(out)


def expand(x: Tensor, *sizes: Any) -> Tensor:
    """A view of ``x`` broadcast to ``sizes`` (ints or one sequence) without copying: size-1
    dimensions grow, -1 keeps a dimension, new leading dimensions may be added. Records
    ``ExpandBackward0`` (the gradient is summed back to ``x``'s shape)."""
    sizes = _shape_arg("expand", sizes, "size") if sizes else ()  # the method wants one
    target = sizes if sizes == x.shape else expand_shape("expand", x.shape, sizes)
    return expand_to(x, target)


def expand_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``expand`` for a shape already resolved (a tuple of ints, no -1): what derivative
    rules call under create_graph (``GRAPH_F.expand``)."""
    try:
        data = x.backend.ops.expand(x._data, shape)
    except ValueError:
        expand_shape("expand", x.shape, tuple(shape))  # raises with the reason
        raise ShapeError(f"expand: a tensor of shape {x.shape} cannot be expanded to "
                         f"{tuple(shape)}") from None
    out = _view_result(x, data, "expand")
    if _grad.enabled and x._requires_grad and x._vc is not INFERENCE:
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
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 f"tensors, got a tensor of dtype {k.dtype}")
            out.append(k._data if k.ndim else (bool(k.item()) if k.dtype.name == "bool"
                                               else int(k.item())))
        elif isinstance(k, bool):
            out.append(k)
        elif isinstance(k, int):
            if not -_I64 <= k < _I64:
                raise _index_overflow(k)
            out.append(int(k))  # an int subclass as the int it is (getitem tests type(k))
        elif isinstance(k, slice) or k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, (list, tuple)):
            arr = be.asarray(k)
            kind = arr.dtype.kind  # Python ints beyond int64 make objects, or uint64
            if kind == "O" or (kind == "u" and arr.size and int(arr.max()) >= _I64):
                raise _index_overflow(k)
            out.append(arr)
        elif hasattr(k, "shape") and hasattr(k, "dtype"):
            from ..backends.host import xp as numpy  # the host array library, via backends

            if isinstance(k, numpy.generic) and k.dtype.kind not in "iu":
                # PyTorch reads a NumPy scalar as a number only when it is an integer
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    f"Variables are valid indices (got {type(k).__module__}."
                    f"{type(k).__name__})")
            arr = be.asarray(k)
            if arr.ndim == 0 and _is_mask(arr):  # a 0-d array: its number (PyTorch: a
                out.append(bool(arr))             # NumPy scalar or 0-d array is an int)
            elif arr.ndim == 0 and _is_integer(arr):
                out.append(int(arr))
            else:
                out.append(arr)
        elif isinstance(k, str):  # PyTorch tries to read it as data for an index tensor
            raise TypeError(f"invalid data type 'str' for an index: {k!r}")
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and integer or bool "
                f"tensors are valid indices (got {type(k).__name__})"
            )
    return tuple(out)


_I64 = 2**63


def _is_mask(arr: Any) -> bool:
    """Whether the index array ``arr`` is a bool mask (NumPy's dtype kind; by name where the
    dtype has no kind)."""
    kind = getattr(arr.dtype, "kind", None)
    return kind == "b" if kind is not None else str(arr.dtype).rpartition(".")[2] == "bool"


def _is_integer(arr: Any) -> bool:
    kind = getattr(arr.dtype, "kind", None)
    if kind is not None:
        return kind in "iu"
    return "int" in str(arr.dtype).rpartition(".")[2]


def _dims_of(item: Any) -> int:
    """How many dimensions of the indexed tensor the index array ``item`` takes."""
    return item.ndim if _is_mask(item) else 1


def _index_overflow(k: Any) -> ValueError:
    return ValueError(f"Overflow when unpacking long long: the index {k!r} does not fit in "
                      "int64")


def _index_message(x: Tensor, k: tuple[Any, ...]) -> str | None:
    """Why the normalized key ``k`` does not index ``x``, in PyTorch's words (None when no
    reason is found here: the backend's own message is used then)."""
    from ..backends.host import xp as numpy  # the host array library, via backends

    shape = x.shape
    nd = len(shape)
    arrays: dict[int, Any] = {}

    def used(i: int, item: Any) -> int:  # dimensions of x that item consumes
        if item is None or item is Ellipsis or isinstance(item, bool):
            return 0
        if isinstance(item, (int, slice)):
            return 1
        arr = arrays[i] = numpy.asarray(x.backend.to_numpy(item))
        return arr.ndim if arr.dtype == numpy.bool_ else 1

    counts = [used(i, item) for i, item in enumerate(k)]
    if sum(counts) > nd:
        if nd == 0:
            return ("invalid index of a 0-dim tensor; use tensor.item() to read its value "
                    "as a Python number")
        return f"too many indices for tensor of dimension {nd}"
    ellipsis = next((i for i, item in enumerate(k) if item is Ellipsis), None)
    d = 0
    for i, item in enumerate(k):
        if i == ellipsis:
            d = nd - sum(counts[i + 1:])
            continue
        if isinstance(item, int) and not isinstance(item, bool):
            if not -shape[d] <= item < shape[d]:
                return f"index {item} is out of bounds for dimension {d} with size {shape[d]}"
        elif i in arrays:
            arr = arrays[i]
            if arr.dtype == numpy.bool_:
                for j, (m, n) in enumerate(zip(arr.shape, shape[d:d + arr.ndim])):
                    if m != n:
                        return (f"The shape of the mask {list(arr.shape)} at index {j} does "
                                f"not match the shape of the indexed tensor {list(shape)} at "
                                f"index {d + j}")
            elif arr.size and arr.dtype.kind in "iu":
                for v in (int(arr.max()), int(arr.min())):
                    if not -shape[d] <= v < shape[d]:
                        return (f"index {v} is out of bounds for dimension {d} with size "
                                f"{shape[d]}")
        d += counts[i]
    return None


def _index_error(x: Tensor, key: Any, k: tuple[Any, ...], exc: Exception) -> IndexError:
    why = _index_message(x, k) or str(exc)
    return IndexError(f"{why} (indexing a tensor of shape {x.shape} with {key!r})")


def _is_basic(key: tuple[Any, ...]) -> bool:
    return all(isinstance(k, (int, slice)) or k is None or k is Ellipsis for k in key)


# -- index arrays a node keeps: version-checked like every other saved value -------------------
class _Slot:
    """Where an index array sat in a key a node keeps in ``attrs``: the array itself is one of
    the node's saved values (``split_key``), so that it is stamped and version-checked."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<index>"


_SLOT = _Slot()
_ONE_SLOT = (_SLOT,)


def _basic_item(item: Any) -> bool:
    return isinstance(item, (int, slice)) or item is None or item is Ellipsis


def kept_key(x: Tensor, key: Any, k: tuple[Any, ...]) -> tuple[Any, ...]:
    """The normalized key ``k`` (of the user's ``key``) as a node keeps it: each index array
    given as a Tensor is that Tensor (``split_key`` then stamps it: changing the index tensor
    in place before the backward raises VersionMismatch, as in PyTorch, whatever its dtype);
    an array made from a list is the node's own; one the caller gave as an array (NumPy's)
    is copied now, as the caller may change it (no version counter can watch it; PyTorch
    shares it and then computes with the changed indices: a deliberate difference)."""
    items = key if isinstance(key, tuple) else (key,)
    out = list(k)
    for i, (item, n) in enumerate(zip(items, k)):
        if _basic_item(n):
            continue
        if isinstance(item, Tensor):
            out[i] = item
        elif not isinstance(item, (list, tuple)):
            out[i] = x.backend.ops.copy(n)
    return tuple(out)


def split_key(key: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...],
                                             tuple[Any, ...]]:
    """A kept key (``kept_key``: index arrays as Tensors or as arrays of the node's own) split
    for ``record``: the key of raw arrays for the kernel, the key for ``attrs`` (each array a
    ``_SLOT``: a node's attrs hold no array), the arrays to save, and their sources (the
    Tensor an array came from, stamped; None for the node's own array)."""
    if _is_basic(key):
        return key, key, (), ()
    raw: list[Any] = []
    tmpl: list[Any] = []
    saved: list[Any] = []
    srcs: list[Any] = []
    for item in key:
        if _basic_item(item):
            raw.append(item)
            tmpl.append(item)
            continue
        arr = item._data if isinstance(item, Tensor) else item
        raw.append(arr)
        tmpl.append(_SLOT)
        saved.append(arr)
        srcs.append(item if isinstance(item, Tensor) else None)
    return tuple(raw), tuple(tmpl), tuple(saved), \
        (tuple(srcs) if any(s is not None for s in srcs) else ())


def join_key(tmpl: Any, saved: Any) -> Any:
    """The key a rule uses: ``tmpl`` with its slots filled from ``saved`` (raw arrays in the
    fast walk, tensors under create_graph, which the differentiable index ops stamp again)."""
    if not saved:
        return tmpl
    it = iter(saved)
    return tuple(next(it) if item is _SLOT else item for item in tmpl)


IndexBackward = formula_node(
    "IndexBackward0", lambda F, g, s, a, n: (F.index_backward(g, a[0], join_key(a[1], s)),)
)
IndexBackwardBackward = formula_node(
    "IndexBackwardBackward0", lambda F, g, s, a, n: (F.getitem(g, join_key(a, s)),)
)
IndexZeroBackward = formula_node(
    "IndexZeroBackward0", lambda F, g, s, a, n: (F.index_zero(g, join_key(a, s)),)
)


def _index_put_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``index_put`` derivative: the base gets ``g`` with the written entries
    zeroed; the values get ``g`` read at the key -- every value, also one whose write a later
    duplicate index overwrote (PyTorch gives it the same)."""
    key = join_key(attrs, saved)
    return (F.index_zero(g, key) if needs[0] else None, F.getitem(g, key) if needs[1] else None)


IndexPutBackward = formula_node("IndexPutBackward0", _index_put_rule, arity=2)


def _write_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The backward of a select or a slice: zeros of the input's shape with ``g`` written at
    the basic key (no element is read twice: a plain write, not ``index_backward``'s
    scatter-add, which NumPy does many times slower). Under create_graph the differentiable
    ``index_backward``."""
    shape, key = attrs
    if isinstance(g, Tensor):
        return (F.index_backward(g, shape, key),)
    return (F.put(F.zeros(shape, g.dtype), key, g),)


SelectBackward = formula_node("SelectBackward0", _write_rule)
SliceBackward = formula_node("SliceBackward0", _write_rule)
_FULL = slice(None)


def _basic_steps(shape: tuple[int, ...], k: tuple[Any, ...], one_slice: bool) -> list[Any]:
    """The nodes PyTorch records for the basic items of the key ``k`` on a tensor of
    ``shape``, in its order (``applySlicing``): a ``SelectBackward0`` per int, a
    ``SliceBackward0`` per slice that is not the whole dimension (in a tuple key ``0:n``,
    ``:`` and ``::1`` are skipped; a key that is one slice is never skipped), an
    ``UnsqueezeBackward0`` per None and per bool (a bool's index array follows in the
    advanced part). Index arrays take their dimensions and record nothing here. ``k`` is
    known to index ``shape``: the backend has just applied it. The nodes' keys end in ``...``
    (an Array API namespace indexes no dimension implicitly)."""
    cur = list(shape)
    n_ell = len(shape)
    for item in k:  # how many dimensions the Ellipsis stands for
        if type(item) is int or type(item) is slice:
            n_ell -= 1
        elif item is not None and item is not Ellipsis and not isinstance(item, bool):
            n_ell -= _dims_of(item)
    steps: list[Any] = []
    dim = 0
    for item in k:
        tp = type(item)
        if tp is int:
            n = cur[dim]
            steps.append((SelectBackward, (tuple(cur), (_FULL,) * dim + (item % n, ...))))
            del cur[dim]
        elif tp is slice:
            n = cur[dim]
            start, stop, step = item.start, item.stop, item.step
            if one_slice or not ((start is None or start == 0) and (step is None or step == 1)
                                 and (stop is None or stop >= n)):
                norm = slice(*item.indices(n))
                steps.append((SliceBackward, (tuple(cur), (_FULL,) * dim + (norm, ...))))
                cur[dim] = len(range(*norm.indices(n)))
            dim += 1
        elif item is None or tp is bool:
            steps.append((UnsqueezeBackward, tuple(cur)))
            cur.insert(dim, 1)
            dim += 1
        elif item is Ellipsis:
            dim += n_ell
        else:  # an index array: its dimensions stay for the advanced part
            dim += _dims_of(item)
    return steps


def _check_steps(k: tuple[Any, ...]) -> None:
    for item in k:
        if type(item) is slice and item.step is not None and item.step <= 0:
            raise ValueError(f"step must be greater than zero (slice {item})")


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` as PyTorch computes and records it: the basic items (ints, slices, None,
    Ellipsis; bools as an unsqueeze) give a view, recorded as PyTorch's chain of
    ``SelectBackward0``/``SliceBackward0``/``UnsqueezeBackward0`` nodes (``AliasBackward0``
    when no item changes anything); index arrays (and bools) then index that view, a copy
    recorded as one ``IndexBackward0`` -- PyTorch's order, which also gives its shape for a
    key that mixes ints and index arrays (``y[0, :, [0, 1]]``: (3, 2), NumPy's (2, 3))."""
    k = _norm_key(x, key)
    be = x.backend
    for item in k:
        tp = type(item)
        if tp is slice:
            if item.step is not None and item.step <= 0:
                raise ValueError(f"step must be greater than zero (slice {item})")
        elif tp is not int and item is not None and item is not Ellipsis:
            return _advanced(x, key, k)
    try:
        # an all-integer key (``x[0]`` of a 1-d tensor) would give NumPy's scalar, a copy: with
        # a trailing Ellipsis it is a 0-d view, as PyTorch's ``x[0]`` is
        data = be.ops.getitem(x._data, k if Ellipsis in k else k + (Ellipsis,))
    except IndexError as exc:
        raise _index_error(x, key, k, exc) from None
    out = _view_result(x, data, "getitem", k)
    if _grad.enabled and x._requires_grad and x._vc is not INFERENCE:
        if type(key) is int:  # ``x[i]``, the common case: one select
            shape = tuple(x._data.shape)
            record(SelectBackward, out, (x,), (), (), (shape, (key % shape[0], ...)))
            return out
        steps = _basic_steps(tuple(x._data.shape), k, type(key) is slice)
        if not steps:
            record(AliasBackward, out, (x,))
        else:
            cls, attrs = steps[0]
            record(cls, out, (x,), (), (), attrs)
            for cls, attrs in steps[1:]:
                _link(cls, out, attrs)
    return out


def _advanced(x: Tensor, key: Any, k: tuple[Any, ...]) -> Tensor:
    """``getitem`` of a key with index arrays (or bools): the basic items first (a view, its
    nodes as ``getitem`` records them), then the arrays on that view, in one
    ``IndexBackward0`` whose key holds an array or ``:`` per dimension of the view."""
    be = x.backend
    ops = be.ops
    if type(key) is Tensor and type(k[0]) is not bool:  # ``x[i]``: one index array
        try:
            data = ops.getitem(x._data, k)
        except IndexError as exc:
            raise _index_error(x, key, k, exc) from None
        if type(data) is not be.array_type:
            data = be.asarray(data)
        out = Tensor(data, be)
        if _grad.enabled and x._requires_grad:
            record(IndexBackward, out, (x,), k, (key,), (tuple(x._data.shape), _ONE_SLOT))
        return out
    _check_steps(k)
    recorded = _grad.enabled and x._requires_grad
    items = key if isinstance(key, tuple) else (key,)
    basic: list[Any] = []  # the key of the basic part: each array as ``:`` (a bool: None)
    kept: list[Any] = []  # the key of the advanced part, as its node keeps it (kept_key)
    nd = len(x._data.shape)
    n_ell = nd
    for item in k:
        if type(item) is int or type(item) is slice:
            n_ell -= 1
        elif item is not None and item is not Ellipsis and not isinstance(item, bool):
            n_ell -= _dims_of(item)
    for orig, item in zip(items, k):
        tp = type(item)
        if tp is int:
            basic.append(item)
        elif tp is slice or item is None:
            basic.append(item)
            kept.append(_FULL)
        elif item is Ellipsis:
            basic.append(item)
            kept.extend((_FULL,) * max(n_ell, 0))
        elif tp is bool:  # PyTorch: an unsqueeze, then an index array of 1 or 0 zeros
            basic.append(None)
            kept.append(ops.arange(0, 1 if item else 0, 1, be.xp_dtype("int64")))
        else:
            m = _dims_of(item)
            basic.extend((_FULL,) * m)
            if isinstance(orig, Tensor):
                kept.append(orig)  # split_key stamps it: version-checked
            elif recorded and not isinstance(orig, (list, tuple)):
                kept.append(ops.copy(item))  # the caller's array may change: the node's copy
            else:
                kept.append(item)  # the node's own array (made from a list), or no node
    bkey = tuple(basic)
    while kept and kept[-1] is _FULL:
        kept.pop()
    raw, tmpl, saved, srcs = split_key(tuple(kept))
    try:
        mid = ops.getitem(x._data, bkey if Ellipsis in bkey else bkey + (Ellipsis,))
        data = ops.getitem(mid, raw)
    except IndexError as exc:
        raise _index_error(x, key, k, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if recorded:
        src = x
        steps = _basic_steps(tuple(x._data.shape), bkey, False)
        if steps:  # the view the arrays index: a tensor of its own (it is no view of x)
            src = Tensor(mid, be)
            cls, attrs = steps[0]
            record(cls, src, (x,), (), (), attrs)
            for cls, attrs in steps[1:]:
                _link(cls, src, attrs)
        record(IndexBackward, out, (src,), saved, srcs, (tuple(mid.shape), tmpl))
    return out


def index_backward(g: Tensor, shape: tuple[int, ...], key: Any) -> Tensor:
    """zeros(shape) with ``g`` scatter-added at ``key``; differentiable (backward: indexing).
    ``key`` is a kept key (``kept_key``): its index tensors are version-checked."""
    be = g.backend
    raw, tmpl, saved, srcs = split_key(key)
    out = Tensor(be.asarray(be.ops.index_backward(g._data, tuple(shape), raw)), be)
    if _grad.enabled and g._requires_grad:
        record(IndexBackwardBackward, out, (g,), saved, srcs, tmpl)
    return out


def index_zero(g: Tensor, key: Any) -> Tensor:
    """``g`` with the entries at ``key`` set to zero; differentiable (self-adjoint). ``key``
    is a kept key (``kept_key``): its index tensors are version-checked."""
    be = g.backend
    raw, tmpl, saved, srcs = split_key(key)
    out = Tensor(be.asarray(be.ops.index_zero(g._data, raw)), be)
    if _grad.enabled and g._requires_grad:
        record(IndexZeroBackward, out, (g,), saved, srcs, tmpl)
    return out


def index_put(x: Tensor, key: Any, values: Tensor) -> Tensor:
    """``x`` with ``values`` (the shape of ``x[key]``, ``x``'s dtype) written at the kept key
    ``key``, out of place; differentiable in both. At a repeated index the last write wins, as
    in PyTorch (and as retrograd's own unrecorded ``__setitem__`` writes)."""
    be = x.backend
    raw, tmpl, saved, srcs = split_key(key)
    data = be.ops.put(be.ops.copy(x._data), raw, values._data)
    out = Tensor(data, be)
    if _grad.enabled and (x._requires_grad or values._requires_grad):
        record(IndexPutBackward, out, (x, values), saved, srcs, tmpl)
    return out


# -- copies of views ------------------------------------------------------------------------------
def alias_like(t: Tensor, base: Tensor, new_base: Tensor) -> Any:
    """An array of ``new_base``'s memory laid out as ``t``'s is in ``base``'s (``t`` a view or
    a detached alias of ``base``, ``new_base`` a copy of ``base``): what ``copy.deepcopy``
    makes of a view whose base it copies too, as PyTorch's deepcopy keeps a view on its
    base's storage (writes through either show in the other). Read off the arrays' memory
    layout, which needs a host array interface (NumPy's); None where there is none, where
    ``t`` is empty, or where ``t`` is not a strided selection of ``new_base``."""
    from ..backends.host import xp as numpy
    from .view_inplace import _strided_chain

    nb = new_base._data
    if t.numel() == 0 or getattr(nb, "strides", None) is None or \
            type(nb) is not numpy.ndarray:
        return None
    chain = _strided_chain(t, base)  # each element's flat (C-order) position in base
    if chain is None:
        return None
    flat = numpy.asarray(chain[0][1])
    coords = numpy.unravel_index(flat, base.shape) if base.ndim else ()
    addr = numpy.zeros(flat.shape, dtype=numpy.int64)  # byte offsets of the same elements of nb
    for c, st in zip(coords, nb.strides):
        addr = addr + c * st
    shape = t.shape
    first = (0,) * len(shape)
    off = int(addr[first])
    strides = []
    expect = numpy.full(shape, off, dtype=numpy.int64)
    for d, n in enumerate(shape):
        st = 0
        if n > 1:
            st = int(addr[first[:d] + (1,) + first[d + 1:]]) - off
        strides.append(st)
        step = [1] * len(shape)
        step[d] = n
        expect = expect + numpy.reshape(numpy.arange(n, dtype=numpy.int64) * st, step)
    if not numpy.array_equal(expect, addr) or min(strides, default=0) < 0:
        return None
    start = nb[tuple(slice(int(c.reshape(-1)[0]), None) for c in coords)] if coords else nb
    writeable = bool(getattr(getattr(t._data, "flags", None), "writeable", True))
    return numpy.lib.stride_tricks.as_strided(start, shape, tuple(strides),
                                              writeable=writeable)


# -- cat / stack --------------------------------------------------------------------------------
def _cat_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    dim, sizes = attrs
    lead = (slice(None),) * dim
    grads = []
    off = 0
    for i, n in enumerate(sizes):
        grads.append(F.getitem(g, lead + (slice(off, off + n), ...)) if needs[i] else None)
        off += n
    return tuple(grads)


def _stack_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    dim, count = attrs
    lead = (slice(None),) * dim
    return tuple(F.getitem(g, lead + (i, ...)) if needs[i] else None for i in range(count))


CatBackward = formula_node("CatBackward0", _cat_rule)
StackBackward = formula_node("StackBackward0", _stack_rule)


def _seq_operands(name: str, tensors: Any) -> list[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    ts = list(tensors)
    if not ts:
        if name == "cat":  # PyTorch: a ValueError from cat, a RuntimeError from stack
            raise ValueError("cat(): expected a non-empty list of Tensors")
        raise ShapeError(f"{name} expects a non-empty TensorList")
    for i, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 'tensors', "
                            f"but got {type(t).__name__}")
        check_device(name, ts[0], t)
    return ts


def cat(tensors: Any, dim: int = 0, *, out: Any = None, axis: Any = None) -> Tensor:
    """The tensors joined along the existing dimension ``dim`` (sizes must match in every other
    dimension; 0-d tensors are refused); mixed dtypes promote, as in PyTorch. Records
    ``CatBackward0``, which splits the gradient back.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if axis is not None or out is not None:
        dim = dim_alias("cat", dim, axis, 0)
        if out is not None:
            return _out_join("cat", cat, tensors, dim, out)
    ts = _seq_operands("cat", tensors)
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise ShapeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be "
                             "concatenated")
    nd = ts[0].ndim
    d = wrap_dim("cat", dim, nd)
    ref = ts[0].shape
    for n, t in enumerate(ts):
        s = t.shape
        if len(s) != nd:
            raise ShapeError(f"cat(): Tensors must have same number of dimensions: got {nd} "
                             f"and {len(s)} (shapes {[t.shape for t in ts]})")
        for i, (a, b) in enumerate(zip(ref, s)):
            if a != b and i != d:
                raise ShapeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. Expected "
                    f"size {a} but got size {b} for tensor number {n} in the list (shapes "
                    f"{[t.shape for t in ts]})"
                )
    be = ts[0].backend
    _, datas, casts = promoted_operands(be, ts)  # int64 with float32: float32, as PyTorch
    out = Tensor(be.asarray(be.ops.concat(datas, d)), be)
    if _grad.enabled and any(t._requires_grad for t in ts):
        attrs = (d, tuple(t.shape[d] for t in ts))
        if casts is None:
            record(CatBackward, out, tuple(ts), (), (), attrs)
        else:  # each input's gradient in its own dtype
            record(promoted_class_n(CatBackward), out, tuple(ts), (), (), (attrs, casts))
    return out


def stack(tensors: Any, dim: int = 0, *, out: Any = None, axis: Any = None) -> Tensor:
    """The tensors (all of one shape) joined along a new dimension ``dim``, recording
    ``StackBackward0``.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if axis is not None or out is not None:
        dim = dim_alias("stack", dim, axis, 0)
        if out is not None:
            return _out_join("stack", stack, tensors, dim, out)
    ts = _seq_operands("stack", tensors)
    ref = ts[0].shape
    d = wrap_dim("stack", dim, len(ref) + 1)
    for n, t in enumerate(ts):
        if t.shape != ref:
            raise ShapeError(
                f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 "
                f"and {list(t.shape)} at entry {n}"
            )
    be = ts[0].backend
    _, datas, casts = promoted_operands(be, ts)
    out = Tensor(be.asarray(be.ops.stack(datas, d)), be)
    if _grad.enabled and any(t._requires_grad for t in ts):
        if casts is None:
            record(StackBackward, out, tuple(ts), (), (), (d, len(ts)))
        else:
            record(promoted_class_n(StackBackward), out, tuple(ts), (), (), ((d, len(ts)), casts))
    return out


def _out_join(name: str, join: Any, tensors: Any, dim: Any, out: Any) -> Tensor:
    """``cat``/``stack`` written into ``out`` (``ops.inplace.write_out``); an ``out`` of a
    lower kind than the inputs is refused with PyTorch's message."""
    from .aliases import out_one

    ts = tuple(tensors) if isinstance(tensors, (tuple, list)) else tensors
    if isinstance(out, Tensor) and isinstance(ts, tuple) and ts and \
            all(isinstance(t, Tensor) for t in ts):
        res = ts[0].dtype
        for t in ts[1:]:
            res = promote_types(res, t.dtype)
        if not _can_cast(res, out.dtype):
            raise TypeError("torch.cat(): input types can't be cast to the desired output "
                            f"type {torch_name(out.dtype)}")
    return out_one(name, out, ts if isinstance(ts, tuple) else (), lambda: join(ts, dim))


def _can_cast(src: Any, dst: Any) -> bool:
    def kind(d: Any) -> int:
        return 0 if d.name == "bool" else 2 if d.is_floating_point else 1

    return kind(src) <= kind(dst)
