"""View ops that take part of a tensor or split it into views: ``narrow``, ``select``,
``unbind``, ``split``, ``chunk``, ``diagonal``, ``as_strided`` and the in-place metadata ops
(``transpose_``, ``t_``, ``squeeze_``, ``unsqueeze_``, ``as_strided_``).

Each result is a view of its input (it shares memory and the version counter), recorded as
PyTorch records it. ``unbind``, ``split``, ``split_with_sizes`` and ``chunk`` return several
views from ONE node (``UnbindBackward0``, ``SplitBackward0`` ...: a multi-output formula node,
each output its own slot). As in PyTorch, such views may not be changed in place while
recording: the rebase of their base would have to go through a node shared with the other
outputs. An in-place op on one (or on a view of one) is refused with PyTorch's words, and so
is a later use of one after its base changed in place. ``unsafe_split`` and friends are the
same views without that bookkeeping: their outputs are no views for autograd, and may be
changed in place (at the caller's risk, as in PyTorch).
"""

from __future__ import annotations

from typing import Any

from .._version import rebased_of
from ..autograd.node import formula_node
from ..errors import RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..inference_mode import INFERENCE, INPLACE_ERROR
from ..tensor import Tensor
from ._core import edge_of, record
from .aliases import MISSING, dim_alias, required
from .declare import op
from .shape import (
    SelectBackward,
    SliceBackward,
    _as_int,
    _reshape_rule,
    _view_result,
    wrap_dim,
)

__all__ = [
    "narrow", "select", "unbind", "split", "split_with_sizes", "unsafe_split",
    "unsafe_split_with_sizes", "chunk", "unsafe_chunk", "tensor_split", "diagonal",
    "as_strided", "transpose_", "swapdims_", "swapaxes_", "t_", "squeeze_", "unsqueeze_",
    "as_strided_",
]

_FULL = slice(None)
GATHER = "gather"  # ops.view_inplace's step kind: flat indices into the step's input

_MULTI = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output "
    "of a function that returns multiple views. Such functions do not allow the output views "
    "to be modified inplace. You should replace the inplace operation by an out-of-place one."
)


def _check(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _recorded(x: Tensor) -> bool:
    return _grad.enabled and x._requires_grad and x._vc is not INFERENCE


def _sliced(x: Tensor, key: tuple[Any, ...]) -> Tensor:
    """``x[key]`` (a normalized basic key: ints and slices) as a view of ``x``, its step
    recorded for the in-place rules (``ops.view_inplace``) but no node."""
    data = x.backend.ops.getitem(x._data, key + (Ellipsis,))
    return _view_result(x, data, "getitem", key)


# -- narrow / select ------------------------------------------------------------------------
def _start_arg(start: Any) -> int:
    if isinstance(start, Tensor):
        if start.ndim != 0 or start.dtype.is_floating_point or start.dtype.name == "bool":
            raise RetrogradError("start must be an 0-dim integral Tensor.")
        return int(start.item())
    return _as_int("narrow", "start", start)


@op("narrow")
def narrow(x: Tensor, dim: Any = MISSING, start: Any = MISSING, length: Any = MISSING, *,
           axis: Any = None
           ) -> Tensor:
    """The ``length`` elements of ``x`` from ``start`` along ``dim``, as a view
    (``SliceBackward0``). ``start`` may be negative (counted from the end) or a 0-d integer
    tensor. ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("narrow", dim_alias("narrow", dim, axis, MISSING))
    required("narrow", start, "start")
    required("narrow", length, "length")
    _check("narrow", x)
    if x.ndim == 0:
        raise RetrogradError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim("narrow", dim, x.ndim)
    s = _start_arg(start)
    n_len = _as_int("narrow", "length", length)
    n = x.shape[d]
    if not -n <= s <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{s})")
    if s < 0:
        s += n
    if n_len < 0:
        raise RetrogradError("narrow(): length must be non-negative.")
    if s + n_len > n:
        raise RetrogradError(f"start ({s}) + length ({n_len}) exceeds dimension size ({n}).")
    return _slice_view(x, d, s, s + n_len)


def _slice_view(x: Tensor, d: int, lo: int, hi: int) -> Tensor:
    key = (_FULL,) * d + (slice(lo, hi, 1),)
    out = _sliced(x, key)
    if _recorded(x):
        record(SliceBackward, out, (x,), (), (), (tuple(x._data.shape), key + (Ellipsis,)))
    return out


@op("select")
def select(x: Tensor, dim: Any = MISSING, index: Any = MISSING, *, axis: Any = None
           ) -> Tensor:
    """``x`` at ``index`` along ``dim``, that dimension removed, as a view
    (``SelectBackward0``). ``axis``: NumPy's name for ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("select", dim_alias("select", dim, axis, MISSING))
    required("select", index, "index")
    _check("select", x)
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim("select", dim, x.ndim)
    i = _as_int("select", "index", index)
    n = x.shape[d]
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    key = (_FULL,) * d + (i % n,)
    out = _sliced(x, key)
    if _recorded(x):
        record(SelectBackward, out, (x,), (), (), (tuple(x._data.shape), key + (Ellipsis,)))
    return out


# -- several views from one node: unbind, split, chunk --------------------------------------
def _zeros(like: Any, shape: tuple[int, ...]) -> Any:
    """Zeros of ``shape`` in ``like``'s dtype: a tensor when ``like`` is one (create_graph)."""
    if isinstance(like, Tensor):
        be = like.backend
        return Tensor(be.ops.zeros(shape, like._data.dtype), be)
    return None


def _unbind_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The outputs' gradients stacked along ``dim`` (zeros for an output none reached)."""
    shape, dim = attrs
    first = next((gi for gi in g if gi is not None), None)
    if first is None:
        return (None,)
    if isinstance(first, Tensor):
        from .shape import stack

        piece = shape[:dim] + shape[dim + 1:]
        return (stack([gi if gi is not None else _zeros(first, piece) for gi in g], dim),)
    out = F.zeros(shape, first.dtype)
    for i, gi in enumerate(g):
        if gi is not None:
            out = F.put(out, (_FULL,) * dim + (i, Ellipsis), gi)
    return (out,)


def _split_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The outputs' gradients concatenated along ``dim`` (zeros for one none reached)."""
    shape, dim, sizes = attrs
    first = next((gi for gi in g if gi is not None), None)
    if first is None:
        return (None,)
    if isinstance(first, Tensor):
        from .shape import cat

        parts = []
        for gi, n in zip(g, sizes):
            parts.append(gi if gi is not None else
                         _zeros(first, shape[:dim] + (n,) + shape[dim + 1:]))
        return (cat(parts, dim),)
    out = F.zeros(shape, first.dtype)
    off = 0
    for gi, n in zip(g, sizes):
        if gi is not None:
            out = F.put(out, (_FULL,) * dim + (slice(off, off + n), Ellipsis), gi)
        off += n
    return (out,)


UnbindBackward = formula_node("UnbindBackward0", _unbind_rule, multi_output=True)
SplitBackward = formula_node("SplitBackward0", _split_rule, multi_output=True)
SplitWithSizesBackward = formula_node("SplitWithSizesBackward0", _split_rule,
                                      multi_output=True)
UnsafeSplitBackward = formula_node("UnsafeSplitBackward0", _split_rule, multi_output=True)
UnsafeSplitWithSizesBackward = formula_node("UnsafeSplitWithSizesBackward0", _split_rule,
                                            multi_output=True)


def _record_outputs(cls: Any, outs: list[Tensor], x: Tensor, attrs: Any) -> None:
    """One ``cls`` node for all of ``outs``: output ``i`` is its slot ``i``."""
    record(cls, outs[0], (x,), (), (), attrs)
    node = outs[0].grad_fn
    node._nin = len(outs)
    for i, o in enumerate(outs):
        o.grad_fn = node
        o._output_nr = i
        o._requires_grad = True


def _multi_views(x: Tensor, keys: list[tuple[Any, ...]], cls: Any, attrs: Any,
                 safe: bool = True) -> tuple[Tensor, ...]:
    """The views ``x[key]`` for each of ``keys``, recorded as the outputs of one ``cls`` node.
    ``safe``: PyTorch's multi-output views (unbind, split, chunk) -- refused in place while
    recording (the message names the output and the op); otherwise (``unsafe_split``) the
    outputs are plain tensors that share ``x``'s memory, no views for autograd."""
    be = x.backend
    name = cls.__name__[:-len("Backward0")]
    outs: list[Tensor] = []
    for key in keys:
        data = be.ops.getitem(x._data, key + (Ellipsis,))
        if safe:
            outs.append(_view_result(x, data, "getitem", key))
        else:
            outs.append(Tensor(data if type(data) is be.array_type else be.asarray(data), be))
    if not outs:
        return ()
    if _recorded(x):
        _record_outputs(cls, outs, x, attrs)
    if safe and _grad.enabled and x._vc is not INFERENCE:
        for i, o in enumerate(outs):
            if o._base is None:
                continue
            ex = o._x()
            msg = _MULTI.format(nr=i, name=name)
            if x._requires_grad:
                if ex.view_creation is None:  # (a view of a no_grad view keeps its refusal)
                    ex.view_chain = None  # never rebased: refused in place, or once stale
                    ex.view_creation = "multi_output: " + msg
                    ex.view_epoch = rebased_of(o._counter())
            else:
                ex.multi_output = msg  # refused only when an in-place op would record
    return tuple(outs)


@op("unbind")
def unbind(x: Tensor, dim: int = 0, *, axis: Any = None) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim``, that dimension removed: a tuple of views, the
    outputs of one ``UnbindBackward0`` node. ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("unbind", dim, axis, 0)
    _check("unbind", x)
    if x.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim("unbind", dim, x.ndim)
    keys = [(_FULL,) * d + (i,) for i in range(x.shape[d])]
    return _multi_views(x, keys, UnbindBackward, (tuple(x._data.shape), d))


def _sizes_of_split(x: Tensor, size: Any, d: int) -> tuple[int, ...]:
    n = x.shape[d]
    s = _as_int("split", "split_size", size)
    if s < 0:
        raise RetrogradError(f"split expects split_size be non-negative, but got "
                             f"split_size={s}")
    if s == 0 and n != 0:
        raise RetrogradError(f"split_size can only be 0 if dimension size is 0, but got "
                             f"dimension size of {n}")
    if n == 0:
        return (0,)
    k = max(-(-n // s), 1)
    return (s,) * (k - 1) + (n - s * (k - 1),)


def _pieces(x: Tensor, d: int, sizes: tuple[int, ...]) -> list[tuple[Any, ...]]:
    keys = []
    off = 0
    for s in sizes:
        keys.append((_FULL,) * d + (slice(off, off + s, 1),))
        off += s
    return keys


def _split_dim(name: str, x: Tensor, dim: Any) -> int:
    _check(name, x)
    if x.ndim == 0:
        raise RetrogradError(f"{name} expects at least a 1-dimensional tensor")
    return wrap_dim(name, dim, x.ndim)


def _check_sizes(name: str, x: Tensor, sizes: Any, d: int) -> tuple[int, ...]:
    if isinstance(sizes, Tensor):
        sizes = sizes.tolist()
    try:
        out = tuple(_as_int(name, "split_sizes", s) for s in sizes)
    except TypeError:
        raise TypeError(f"{name}(): argument 'split_sizes' must be tuple of ints") from None
    n = x.shape[d]
    if any(s < 0 for s in out):
        raise RetrogradError(f"split_with_sizes expects split_sizes have only non-negative "
                             f"entries, but got split_sizes={list(out)}")
    if sum(out) != n:
        raise RetrogradError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {d}), but got split_sizes={list(out)}")
    return out


def _split(x: Tensor, size: Any, dim: Any, safe: bool) -> tuple[Tensor, ...]:
    name = "split" if safe else "unsafe_split"
    d = _split_dim(name, x, dim)
    if isinstance(size, (list, tuple)) or (isinstance(size, Tensor) and size.ndim == 1):
        return _split_with_sizes(x, size, d, safe)
    sizes = _sizes_of_split(x, size, d)
    cls = SplitBackward if safe else UnsafeSplitBackward
    return _multi_views(x, _pieces(x, d, sizes), cls, (tuple(x._data.shape), d, sizes), safe)


def _split_with_sizes(x: Tensor, split_sizes: Any, d: int, safe: bool) -> tuple[Tensor, ...]:
    name = "split_with_sizes" if safe else "unsafe_split_with_sizes"
    sizes = _check_sizes(name, x, split_sizes, d)
    cls = SplitWithSizesBackward if safe else UnsafeSplitWithSizesBackward
    return _multi_views(x, _pieces(x, d, sizes), cls, (tuple(x._data.shape), d, sizes), safe)


@op("split")
def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``x`` cut along ``dim`` into pieces of ``split_size_or_sections`` elements (the last
    one shorter), or into pieces of the sizes listed: views, the outputs of one
    ``SplitBackward0`` (``SplitWithSizesBackward0``) node."""
    return _split(x, split_size_or_sections, dim, True)


@op("split_with_sizes")
def split_with_sizes(x: Tensor, split_sizes: Any, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``x`` cut along ``dim`` into pieces of the sizes listed (they must add up to the
    dimension's size): views, the outputs of one ``SplitWithSizesBackward0`` node.
    ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("split_with_sizes", dim, axis, 0)
    return _split_with_sizes(x, split_sizes, _split_dim("split_with_sizes", x, dim), True)


@op("unsafe_split")
def unsafe_split(x: Tensor, split_size: Any, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``split`` whose outputs are no views for autograd (they share ``x``'s memory): they
    may be changed in place; ``UnsafeSplitBackward0``. ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("unsafe_split", dim, axis, 0)
    return _split(x, split_size, dim, False)


@op("unsafe_split_with_sizes")
def unsafe_split_with_sizes(x: Tensor, split_sizes: Any, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``split_with_sizes`` whose outputs are no views for autograd (they share ``x``'s
    memory); ``UnsafeSplitWithSizesBackward0``. ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("unsafe_split_with_sizes", dim, axis, 0)
    return _split_with_sizes(x, split_sizes,
                             _split_dim("unsafe_split_with_sizes", x, dim), False)


def _chunk(name: str, x: Tensor, chunks: Any, dim: Any, safe: bool) -> tuple[Tensor, ...]:
    _check(name, x)
    if x.ndim == 0:
        raise RetrogradError("chunk expects at least a 1-dimensional tensor")
    c = _as_int(name, "chunks", chunks)
    if c <= 0:
        raise RetrogradError(f"chunk expects `chunks` to be greater than 0, got: {c}")
    d = wrap_dim(name, dim, x.ndim)
    n = x.shape[d]
    size = -(-n // c)
    if size == 0 and n == 0:  # PyTorch: c empty pieces, through split_with_sizes
        return _split_with_sizes(x, [0] * c, d, safe)
    return _split(x, size, d, safe)


@op("chunk")
def chunk(x: Tensor, chunks: int, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``x`` cut along ``dim`` into at most ``chunks`` pieces of ``ceil(n / chunks)``
    elements: ``split`` with that size (``SplitBackward0``). ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("chunk", dim, axis, 0)
    return _chunk("chunk", x, chunks, dim, True)


@op("unsafe_chunk")
def unsafe_chunk(x: Tensor, chunks: int, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``chunk`` whose outputs are no views for autograd (``UnsafeSplitBackward0``).
    ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("unsafe_chunk", dim, axis, 0)
    return _chunk("unsafe_chunk", x, chunks, dim, False)


@op("tensor_split")
def tensor_split(x: Tensor, indices_or_sections: Any, dim: int = 0, *, axis: Any = None
        ) -> tuple[Tensor, ...]:
    """``x`` cut along ``dim`` into ``indices_or_sections`` nearly equal pieces (the first
    ``n % sections`` one longer), or at the indices listed: independent slice views
    (``SliceBackward0`` each, as PyTorch's). ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("tensor_split", dim, axis, 0)
    _check("tensor_split", x)
    if x.ndim == 0:
        raise RetrogradError("tensor_split expected at least a 1-dimensional tensor, but got "
                             "a tensor with 0 dims")
    d = wrap_dim("tensor_split", dim, x.ndim)
    n = x.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios.tolist() if ios.ndim else int(ios.item())
    bounds: list[tuple[int, int]] = []
    if isinstance(ios, (list, tuple)):
        idx = [_as_int("tensor_split", "indices", i) for i in ios]
        prev = 0
        for i in idx + [n]:
            lo = min(max(prev + n if prev < 0 else prev, 0), n)
            hi = min(max(i + n if i < 0 else i, 0), n)
            bounds.append((lo, max(lo, hi)))
            prev = i
    else:
        s = _as_int("tensor_split", "sections", ios)
        if s <= 0:
            raise RetrogradError(f"number of sections must be larger than 0, got {s}")
        q, r = divmod(n, s)
        off = 0
        for k in range(s):
            m = q + (1 if k < r else 0)
            bounds.append((off, off + m))
            off += m
    return tuple(_slice_view(x, d, lo, hi) for lo, hi in bounds)


# -- diagonal / as_strided --------------------------------------------------------------------
def _gather_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The adjoint of reading the input at flat positions ``idx``: ``g`` scatter-added
    into zeros of the input's shape."""
    shape, idx = attrs
    n = 1
    for s in shape:
        n *= s
    return (F.reshape(F.index_backward(g, (n,), (idx,)), shape),)


def _diag(F: Any, x: Any, offset: int, d1: int, d2: int) -> Any:
    """``diagonal`` of a raw array (the kernel) or of a tensor (the differentiable op)."""
    if isinstance(x, Tensor):
        return diagonal(x, offset, d1, d2)
    return F.diagonal(x, offset, d1, d2)


def diag_adjoint(F: Any, g: Any, shape: tuple[int, ...], offset: int, d1: int,
                 d2: int) -> Any:
    """Zeros of ``shape`` with ``g`` on the diagonal: ``diagonal``'s adjoint, of a raw array
    (the kernel) or of a tensor (differentiable, ``DiagonalBackwardBackward0``)."""
    if not isinstance(g, Tensor):
        return F.diagonal_backward(g, shape, offset, d1, d2)
    be = g.backend
    out = Tensor(be.ops.diagonal_backward(g._data, tuple(shape), offset, d1, d2), be)
    if _grad.enabled and g._requires_grad:
        record(DiagonalBackwardBackward, out, (g,), (), (), (offset, d1, d2))
    return out


DiagonalBackward = formula_node(
    "DiagonalBackward0", lambda F, g, s, a, n: (diag_adjoint(F, g, *a),))
DiagonalBackwardBackward = formula_node(
    "DiagonalBackwardBackward0", lambda F, g, s, a, n: (_diag(F, g, *a),))
AsStridedBackward0 = formula_node("AsStridedBackward0", _gather_rule)
AsStridedBackward1 = formula_node("AsStridedBackward1", _gather_rule)


@op("diagonal")
def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` (above the main one when positive) of the planes of
    ``dim1`` and ``dim2``, as a new last dimension: a view (``DiagonalBackward0``)."""
    _check("diagonal", x)
    nd = x.ndim
    off = _as_int("diagonal", "offset", offset)
    d1 = wrap_dim("diagonal", dim1, nd)
    d2 = wrap_dim("diagonal", dim2, nd)
    if d1 == d2:
        raise RetrogradError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    be = x.backend
    data = be.ops.diagonal_view(x._data, off, d1, d2)
    if data is not None:
        out = _view_result(x, data, "diagonal", (off, d1, d2))
    else:  # an array library that makes no such view: a copy, no view for autograd either
        out = Tensor(be.asarray(be.ops.diagonal(x._data, off, d1, d2)), be)
    if _recorded(x):
        record(DiagonalBackward, out, (x,), (), (), (tuple(x._data.shape), off, d1, d2))
    return out


def _as_strided_args(name: str, x: Tensor, size: Any, stride: Any,
                     storage_offset: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    size = tuple(_as_int(name, "size", s) for s in size)
    stride = tuple(_as_int(name, "stride", s) for s in stride)
    if len(size) != len(stride):
        raise RetrogradError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RetrogradError(f"{name}: Negative strides are not supported at the moment, got "
                             f"strides: {list(stride)}")
    if storage_offset is None:
        off = _storage_offset(x)
    else:
        off = _as_int(name, "storage_offset", storage_offset)
    if off < 0:
        raise RetrogradError(f"Tensor: invalid storage offset {off}")
    root = x._base if x._base is not None else x
    total = root.numel()
    if all(s > 0 for s in size):
        need = off + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        if need > total:
            item = x.dtype.itemsize
            raise RetrogradError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{off}, and itemsize {item} requiring a storage size of {need * item} are "
                f"out of bounds for storage of size {total * item}")
    return size, stride, off


def _storage(x: Tensor) -> tuple[Tensor, Any]:
    """``x``'s storage: its root base, and that base's elements as a 1-d view (retrograd's
    storage is its root tensor's memory, laid out in C order)."""
    from .shape import _contiguous

    root = x._base if x._base is not None else x
    if not _contiguous(root._data):
        raise RetrogradError(
            f"as_strided: the storage of this tensor (a base of shape {root.shape} laid out "
            "non-contiguously) is not one retrograd can address; clone() it first")
    return root, root.backend.ops.reshape(root._data, (-1,))


def _storage_offset(x: Tensor) -> int:
    """Where ``x``'s first element sits in its storage (in elements)."""
    if x._base is None or x.numel() == 0:
        return 0
    layout = getattr(x.backend.ops, "memory_layout", None)
    a = layout(x._data) if layout is not None else None
    b = layout(x._base._data) if layout is not None else None
    if a is None or b is None:
        raise RetrogradError("as_strided: the storage offset of this view cannot be read on "
                             "this backend; pass storage_offset")
    return (a[0] - b[0]) // x.dtype.itemsize


def _relative(x: Tensor, root: Tensor, flat: Any) -> Any:
    """Storage positions ``flat`` as flat positions among ``x``'s elements (``x`` a view of
    ``root``, or ``root`` itself). A position outside ``x`` is refused."""
    if x is root:
        return flat
    from .view_inplace import _strided_chain

    chain = _strided_chain(x, root)
    be = x.backend
    xp = be.xp
    if chain is None:
        raise RetrogradError("as_strided: cannot read where this view sits in its storage on "
                             "this backend")
    mine = xp.reshape(chain[0][1], (-1,))
    where = xp.full((root.numel(),), -1, dtype=be.xp_dtype("int64"))
    where[mine] = xp.arange(mine.shape[0], dtype=be.xp_dtype("int64"))
    rel = xp.take(where, xp.reshape(flat, (-1,)))
    if rel.shape[0] and bool(xp.any(rel < 0)):
        raise RetrogradError(
            "as_strided: the strided view reads elements of the storage outside the tensor it "
            "is taken from; retrograd cannot differentiate that (take it from the base)")
    return xp.reshape(rel, tuple(flat.shape))


@op("as_strided")
def as_strided(x: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """The elements of ``x``'s storage at ``storage_offset + sum(i_k * stride[k])`` for each
    index ``i`` of ``size``, as a view (``AsStridedBackward0``). The storage is ``x``'s root
    base, in C order; ``storage_offset`` defaults to ``x``'s own."""
    _check("as_strided", x)
    size, stride, off = _as_strided_args("as_strided", x, size, stride, storage_offset)
    root, flat = _storage(x)
    be = x.backend
    ops = be.ops
    data = ops.as_strided_view(flat, size, stride, off)
    if data is not None:
        out = _view_result(x, data, GATHER, ())
    else:  # an array library that makes no such view: a copy, no view for autograd either
        out = Tensor(be.asarray(ops.as_strided(flat, size, stride, off)), be)
    rec = _recorded(x)
    if rec or (out._extra is not None and out._extra.view_chain):
        pos = ops.flat_positions(size, stride, off)
        if out._extra is not None and out._extra.view_chain:
            out._extra.view_chain = ((GATHER, pos),)  # from the root: whatever x's steps
        if rec:
            record(AsStridedBackward0, out, (x,), (), (),
                   (tuple(x._data.shape), _relative(x, root, pos)))
    return out


# -- in-place metadata ops ----------------------------------------------------------------------
TransposeBackward1 = formula_node("TransposeBackward1",
                                  lambda F, g, s, a, n: (F.permute(g, a),))
TBackward1 = formula_node("TBackward1", lambda F, g, s, a, n: (F.permute(g, a),))
SqueezeBackward3 = formula_node("SqueezeBackward3", _reshape_rule)  # squeeze_()
SqueezeBackward4 = formula_node("SqueezeBackward4", _reshape_rule)  # squeeze_(dim)
SqueezeBackward5 = formula_node("SqueezeBackward5", _reshape_rule)  # squeeze_(dims)
UnsqueezeBackward1 = formula_node("UnsqueezeBackward1", _reshape_rule)


def _inplace_view(name: str, t: Tensor, data: Any, cls: Any, attrs: Any,
                  step: Any) -> Tensor:
    """Give ``t`` the layout ``data`` (a view of ``t``'s memory) in place, as PyTorch's
    in-place view ops: checked as an in-place op (a view PyTorch will not rebase is refused,
    so is a leaf that requires grad), counted as a change of ``t``'s data, and recorded as a
    ``cls`` node on ``t``'s history. A view stays a view of its base, its steps extended by
    ``step`` (or, for a gather, replaced by it: ``step`` then starts from the base)."""
    from .inplace import _refuse_view, touch
    from .view_inplace import LEAF_VIEW, chain_of

    grad = _grad.enabled
    ex = t._extra
    if grad and ex is not None and ex.view_creation is not None and t._requires_grad:
        _refuse_view(ex.view_creation, t)  # (PyTorch checks only an op it records)
    if t._vc is INFERENCE and not _grad.inference:
        raise RetrogradError(INPLACE_ERROR)
    rec = grad and t._requires_grad and t._vc is not INFERENCE
    if rec:
        b = t._base
        if b is not None and b._requires_grad and b.grad_fn is None:
            raise RetrogradError(f"{name}: {LEAF_VIEW}")
        if t.grad_fn is None and b is None:
            raise RetrogradError(f"{name}: a leaf Variable that requires grad is being used in "
                                 "an in-place operation.")
        edge_of(t)  # a stale view: its history taken again from its base first
    be = t.backend
    if type(data) is not be.array_type:
        data = be.asarray(data)
    chain = None
    if ex is not None and ex.view_chain is not None and t._base is not None:
        chain = chain_of(t)
        chain = (step,) if step[0] == GATHER else chain + (step,)
    old_fn, old_nr = t.grad_fn, t._output_nr
    old = Tensor(t._data, be, t._requires_grad, old_fn, old_nr)
    vc = t._counter()
    touch(vc)
    t._data = data
    if chain is not None:
        ex.view_chain = chain  # type: ignore[union-attr]
    if rec:
        record(cls, t, (old,), (), (), attrs)
        t._output_nr = 0
        t._follow_retain(old_fn, old_nr)
        if chain is not None:
            ex.view_epoch = rebased_of(vc)  # type: ignore[union-attr]
    return t


def _swap_dims(t: Tensor, a: int, b: int) -> tuple[int, ...]:
    dims = list(range(t.ndim))
    if dims:
        dims[a], dims[b] = dims[b], dims[a]
    return tuple(dims)


@op("transpose_", differentiable=False)
def transpose_(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """``x`` with dimensions ``dim0`` and ``dim1`` swapped, in place (``TransposeBackward1``)."""
    _check("transpose_", x)
    a = wrap_dim("transpose_", dim0, x.ndim, "dim0")
    b = wrap_dim("transpose_", dim1, x.ndim, "dim1")
    dims = _swap_dims(x, a, b)
    return _inplace_view("transpose_", x, x.backend.ops.permute(x._data, dims),
                         TransposeBackward1, dims, ("permute", dims))


@op("swapdims_", differentiable=False)
def swapdims_(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose_``."""
    return transpose_(x, dim0, dim1)


@op("swapaxes_", differentiable=False)
def swapaxes_(x: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose_``."""
    return transpose_(x, axis0, axis1)


@op("t_", differentiable=False)
def t_(x: Tensor) -> Tensor:
    """``x.t()`` in place: a matrix transposed, a vector or 0-d tensor as it is
    (``TBackward1``)."""
    _check("t_", x)
    nd = x.ndim
    if nd > 2:
        raise RetrogradError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    dims = _swap_dims(x, 0, nd - 1 if nd else 0)
    return _inplace_view("t_", x, x.backend.ops.permute(x._data, dims), TBackward1, dims,
                         ("permute", dims))


@op("squeeze_", differentiable=False)
def squeeze_(x: Tensor, dim: Any = None, *, axis: Any = None) -> Tensor:
    """``x.squeeze(dim)`` in place (``SqueezeBackward3``/``4``/``5``).
    ``axis``: NumPy's name for ``dim``."""
    if axis is not None:
        dim = dim_alias("squeeze_", dim, axis)
    _check("squeeze_", x)
    shape = x.shape
    if dim is None:
        axes = {i for i, n in enumerate(shape) if n == 1}
        cls = SqueezeBackward3
    else:
        many = isinstance(dim, (tuple, list))
        dims = tuple(dim) if many else (dim,)
        axes = set()
        for d in dims:
            a = wrap_dim("squeeze_", d, len(shape))
            if a in axes:
                raise ShapeError(f"squeeze_(): dim {a} appears multiple times in the list of "
                                 f"dims {list(dims)}")
            axes.add(a)
        cls = SqueezeBackward5 if many else SqueezeBackward4
    new = tuple(n for i, n in enumerate(shape) if not (i in axes and n == 1))
    return _inplace_view("squeeze_", x, x.backend.ops.reshape(x._data, new), cls, shape,
                         ("reshape", new))


@op("unsqueeze_", differentiable=False)
def unsqueeze_(x: Tensor, dim: Any = MISSING, *, axis: Any = None) -> Tensor:
    """``x.unsqueeze(dim)`` in place (``UnsqueezeBackward1``). ``axis``: NumPy's name for
    ``dim``."""
    if dim is MISSING or axis is not None:
        dim = required("unsqueeze_", dim_alias("unsqueeze_", dim, axis, MISSING))
    _check("unsqueeze_", x)
    shape = x.shape
    d = wrap_dim("unsqueeze_", dim, len(shape) + 1)
    new = shape[:d] + (1,) + shape[d:]
    return _inplace_view("unsqueeze_", x, x.backend.ops.reshape(x._data, new),
                         UnsqueezeBackward1, shape, ("reshape", new))


@op("as_strided_", differentiable=False)
def as_strided_(x: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """``x.as_strided(size, stride, storage_offset)`` in place (``AsStridedBackward1``)."""
    _check("as_strided_", x)
    size, stride, off = _as_strided_args("as_strided_", x, size, stride, storage_offset)
    root, flat = _storage(x)
    ops = x.backend.ops
    data = ops.as_strided_view(flat, size, stride, off)
    if data is None:
        raise RetrogradError("as_strided_: this backend's arrays cannot be given another "
                             "layout in place (it makes no strided views); use as_strided()")
    pos = ops.flat_positions(size, stride, off)
    attrs = None
    if _grad.enabled and x._requires_grad and x._vc is not INFERENCE:
        attrs = (tuple(x._data.shape), _relative(x, root, pos))
    return _inplace_view("as_strided_", x, data, AsStridedBackward1, attrs, (GATHER, pos))
