"""The layout ops: ``flip``, ``roll``, ``tril``, ``triu``, ``movedim``/``moveaxis``,
``swapaxes``/``swapdims``, ``unflatten``, ``reshape_as``, ``diag``, ``pad`` and the
``Tensor.new_*`` constructors.

The views among them (``movedim``, ``swapaxes``, ``unflatten``, ``reshape_as``) are built from
``ops/shape.py``'s views (``permute``, ``transpose``, ``view``, ``reshape``), so they share
their base's data and version and in-place writes through them rebase the base. The others
copy; each derivative rule is written once against ``F``, falling back to this module's own
differentiable ops under ``create_graph`` where ``F`` lacks the kernel's name."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..errors import ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import creation
from . import shape as _shape
from ._core import record
from .declare import GRAPH_KERNELS, op
from .shape import wrap_dim

__all__ = ["flip", "roll", "tril", "triu", "movedim", "moveaxis", "swapaxes", "swapdims",
           "unflatten", "reshape_as", "diag", "pad", "new_zeros", "new_ones", "new_full",
           "new_tensor", "new_empty"]


# -- helpers ---------------------------------------------------------------------------------
def _check_tensor(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _int(name: str, arg: str, v: Any, kind: str = "int") -> int:
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' must be {kind}, not {type(v).__name__}")
    return int(v.__index__())


def _ints(name: str, arg: str, v: Any, pos: int, allow_int: bool = True) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)):
        return tuple(_int(name, arg, e, "tuple of ints") for e in v)
    if allow_int and not isinstance(v, bool) and hasattr(v, "__index__"):
        return (int(v.__index__()),)
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
                    f"{type(v).__name__}")


def _new(x: Tensor, data: Any) -> Tensor:
    be = x.backend
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _tracks(x: Tensor) -> bool:
    return bool(_grad.enabled and x._requires_grad)


# -- flip ------------------------------------------------------------------------------------
def _flip_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.flip(g, attrs),)


FlipBackward0 = formula_node("FlipBackward0", _flip_rule, arity=1)


def _flip_method(x: Tensor, *dims: Any, **kw: Any) -> Tensor:
    """``x.flip(*dims)``: ``flip`` with the dims as ints or one sequence (or ``dims=``)."""
    if kw:
        if dims or set(kw) != {"dims"}:
            bad = next((k for k in kw if k != "dims"), "dims")
            raise TypeError(f"flip() got an unexpected keyword argument '{bad}'")
        return flip(x, kw["dims"])
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        return flip(x, dims[0])
    return flip(x, tuple(dims))


@op("flip", method=_flip_method)
def flip(x: Tensor, dims: Any) -> Tensor:
    """A copy of ``x`` with the order of its elements reversed along each of ``dims`` (a
    sequence of ints)."""
    _check_tensor("flip", x)
    ds = _ints("flip", "dims", dims, 2, allow_int=False)
    nd = x.ndim
    axes = tuple(wrap_dim("flip", d, nd) for d in ds)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    axes = tuple(sorted(axes)) if nd else ()
    out = _new(x, x.backend.ops.flip(x._data, axes))
    if _tracks(x):
        record(FlipBackward0, out, (x,), (), (), axes)
    return out


# -- roll ------------------------------------------------------------------------------------
def _roll_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    shifts, dims = attrs
    return (F.roll(g, tuple(-s for s in shifts), dims),)


RollBackward0 = formula_node("RollBackward0", _roll_rule, arity=1)


@op("roll")
def roll(x: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """A copy of ``x`` with its elements shifted by ``shifts`` along ``dims`` (ints or
    sequences of equal length), wrapping around; without ``dims`` the flattened tensor is
    rolled and the shape restored."""
    _check_tensor("roll", x)
    sh = _ints("roll", "shifts", shifts, 2)
    nd = x.ndim
    ds: tuple[int, ...] | None
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        ds = None
    else:
        raw = _ints("roll", "dims", dims, 3)
        if len(sh) != len(raw):
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(raw)}")
        if nd == 0:
            raise IndexError(f"Dimension specified as {raw[0]} but tensor has no dimensions")
        ds = tuple(wrap_dim("roll", d, nd) for d in raw)
    out = _new(x, x.backend.ops.roll(x._data, sh, ds))
    if _tracks(x):
        record(RollBackward0, out, (x,), (), (), (sh, ds))
    return out


# -- tril / triu -----------------------------------------------------------------------------
def _tri_rule(kind: str) -> Any:
    def rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
        return (getattr(F, kind)(g, attrs),)
    return rule


TrilBackward0 = formula_node("TrilBackward0", _tri_rule("tril"), arity=1)
TriuBackward0 = formula_node("TriuBackward0", _tri_rule("triu"), arity=1)


def _tri(kind: str, x: Tensor, diagonal: Any, cls: Any) -> Tensor:
    _check_tensor(kind, x)
    k = _int(kind, "diagonal", diagonal)
    if x.ndim < 2:
        raise ShapeError(f"{kind}: input tensor must have at least 2 dimensions")
    out = _new(x, getattr(x.backend.ops, kind)(x._data, k))
    if _tracks(x):
        record(cls, out, (x,), (), (), k)
    return out


@op("tril")
def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of (each matrix of the last two dims of) ``x``: the elements on and
    below the ``diagonal``-th diagonal, the others zero."""
    return _tri("tril", x, diagonal, TrilBackward0)


@op("triu")
def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of (each matrix of the last two dims of) ``x``: the elements on and
    above the ``diagonal``-th diagonal, the others zero."""
    return _tri("triu", x, diagonal, TriuBackward0)


# -- movedim / swapaxes / unflatten / reshape_as (views) -------------------------------------
@op("movedim")
def movedim(x: Tensor, source: Any, destination: Any) -> Tensor:
    """A view of ``x`` with the dims ``source`` moved to the places ``destination`` (ints or
    equally long sequences), the other dims keeping their order (a ``permute``)."""
    _check_tensor("movedim", x)
    src = _ints("movedim", "source", source, 2)
    dst = _ints("movedim", "destination", destination, 3)
    if len(src) != len(dst):
        raise ShapeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)")
    nd = x.ndim
    s = [wrap_dim("movedim", d, nd) for d in src]
    d = [wrap_dim("movedim", e, nd) for e in dst]
    if len(set(s)) != len(s):
        raise ShapeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(d)) != len(d):
        raise ShapeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if nd == 0:  # PyTorch returns an alias of a 0-d tensor
        return _shape.getitem(x, Ellipsis)
    perm: list[int | None] = [None] * nd
    for a, b in zip(s, d):
        perm[b] = a
    rest = iter(i for i in range(nd) if i not in s)
    order = tuple(p if p is not None else next(rest) for p in perm)
    return _shape.permute(x, order)


@op("moveaxis")
def moveaxis(x: Tensor, source: Any, destination: Any) -> Tensor:
    """Alias of ``movedim``."""
    return movedim(x, source, destination)


@op("swapaxes")
def swapaxes(x: Tensor, axis0: int, axis1: int) -> Tensor:
    """Alias of ``transpose``: a view of ``x`` with ``axis0`` and ``axis1`` swapped."""
    return _shape.transpose(x, axis0, axis1)


@op("swapdims")
def swapdims(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Alias of ``transpose``: a view of ``x`` with ``dim0`` and ``dim1`` swapped."""
    return _shape.transpose(x, dim0, dim1)


@op("unflatten")
def unflatten(x: Tensor, dim: int, sizes: Any) -> Tensor:
    """A view of ``x`` with dimension ``dim`` split into ``sizes`` (a sequence whose product is
    that dimension's size; one entry may be -1)."""
    _check_tensor("unflatten", x)
    nd = x.ndim
    if nd == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} "
                           "but tensor has no dimensions")
    a = wrap_dim("unflatten", dim, nd)
    sz = _ints("unflatten", "sizes", sizes, 3, allow_int=False)
    if not sz:
        raise ShapeError("unflatten: sizes must be non-empty")
    n = x.shape[a] if nd else 1
    known = 1
    for v in sz:
        if v != -1:
            known *= v
    if sz.count(-1) > 1:
        raise ShapeError("unflatten: only one dimension can be inferred")
    if (-1 not in sz and known != n) or (-1 in sz and (known == 0 or n % known)):
        raise ShapeError(f"unflatten: Provided sizes {list(sz)} don't multiply up to the size "
                         f"of dim {dim} ({n}) in the input tensor")
    shape = tuple(x.shape[:a]) + sz + tuple(x.shape[a + 1:])
    return _shape.view(x, shape)


@op("reshape_as", function=False)
def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    """``x`` reshaped to ``other``'s shape (a view where possible, as ``reshape``)."""
    _check_tensor("reshape_as", x)
    if not isinstance(other, Tensor):
        raise TypeError(f"reshape_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return _shape.reshape(x, tuple(other.shape))


# -- diag ------------------------------------------------------------------------------------
def _diag_part_raw(ops: Any, m: Any, k: int) -> Any:
    return ops.copy(ops.diagonal(m, k, 0, 1))


def _embed_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The adjoint of writing ``v`` on diagonal ``k`` is reading diagonal ``k``."""
    k = attrs
    if not isinstance(g, Tensor):  # the raw kernels
        return (_diag_part_raw(F, g, k),)
    return (diag(g, k),)


def _part_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    shape, k = attrs
    if not isinstance(g, Tensor):
        return (F.diagonal_backward(g, tuple(shape), k, 0, 1),)
    return (_diag_fill_graph(g, shape, k),)


DiagEmbedBackward0 = formula_node("DiagEmbedBackward0", _embed_rule, arity=1)
DiagonalBackward0 = formula_node("DiagonalBackward0_copy", _part_rule, arity=1)
DiagonalBackwardBackward0 = formula_node("DiagonalBackwardBackward0", _embed_rule, arity=1)


def _diag_fill_graph(g: Tensor, shape: tuple[int, ...], k: int) -> Tensor:
    """Differentiable: zeros of ``shape`` with ``g`` written on diagonal ``k``."""
    out = _new(g, g.backend.ops.diagonal_backward(g._data, tuple(shape), k, 0, 1))
    if _tracks(g):
        record(DiagonalBackwardBackward0, out, (g,), (), (), k)
    return out


@op("diag")
def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d ``x``: the square matrix with ``x`` on its ``diagonal``-th diagonal (0: main,
    > 0 above, < 0 below); a 2-d ``x``: a copy of its ``diagonal``-th diagonal as 1-d."""
    _check_tensor("diag", x)
    k = _int("diag", "diagonal", diagonal)
    ops = x.backend.ops
    if x.ndim == 1:
        n = x.shape[0] + abs(k)
        out = _new(x, ops.diagonal_backward(x._data, (n, n), k, 0, 1))
        if _tracks(x):
            record(DiagEmbedBackward0, out, (x,), (), (), k)
        return out
    if x.ndim != 2:
        raise ShapeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    out = _new(x, _diag_part_raw(ops, x._data, k))
    if _tracks(x):
        record(DiagonalBackward0, out, (x,), (), (), (tuple(x.shape), k))
    return out


# -- pad -------------------------------------------------------------------------------------
def _pad_constant_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.pad_constant(g, tuple(-p for p in attrs), 0),)


ConstantPadNdBackward0 = formula_node("ConstantPadNdBackward0", _pad_constant_rule, arity=1)


def _pad_constant_graph(x: Tensor, pad: tuple[int, ...], value: Any) -> Tensor:
    out = _new(x, x.backend.ops.pad_constant(x._data, tuple(pad), value))
    if _tracks(x):
        record(ConstantPadNdBackward0, out, (x,), (), (), tuple(pad))
    return out


def _take_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The padded axes, undone last to first by their adjoints."""
    for ax, mode, lo, hi, n in reversed(attrs):
        g = F.pad_take_backward(g, ax, mode, lo, hi, n)
    return (g,)


def _take_graph(x: Tensor, axis: int, mode: str, lo: int, hi: int) -> Tensor:
    """Differentiable ``pad_take``."""
    out = _new(x, x.backend.ops.pad_take(x._data, axis, mode, lo, hi))
    if _tracks(x):
        record(_TakeBackward, out, (x,), (), (), ((axis, mode, lo, hi, x.shape[axis]),))
    return out


def _take_backward_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    axis, mode, lo, hi = attrs
    return (F.pad_take(g, axis, mode, lo, hi),)


_TakeBackward = formula_node("PadBackward0", _take_rule, arity=1)
_TakeBackwardBackward = formula_node("PadBackwardBackward0", _take_backward_rule, arity=1)


def _take_backward_graph(g: Tensor, axis: int, mode: str, lo: int, hi: int, n: int) -> Tensor:
    """Differentiable ``pad_take_backward``."""
    out = _new(g, g.backend.ops.pad_take_backward(g._data, axis, mode, lo, hi, n))
    if _tracks(g):
        record(_TakeBackwardBackward, out, (g,), (), (), (axis, mode, lo, hi))
    return out


_PAD_NODES: dict[tuple[str, int], Any] = {
    (mode, d): formula_node(f"{name}{d}DBackward0", _take_rule, arity=1)
    for mode, name in (("reflect", "ReflectionPad"), ("replicate", "ReplicationPad"))
    for d in (1, 2, 3)
}


@op("pad", method=False, function=False)
def pad(x: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """``x`` padded on its last ``len(pad) // 2`` dims by ``pad`` = (before, after) pairs from
    the last dim backwards: with ``value`` (mode ``constant``; negative pads crop), or with the
    mirrored (``reflect``), edge (``replicate``) or wrapped-around (``circular``) elements."""
    _check_tensor("pad", x)
    pads = _ints("pad", "pad", pad, 2, allow_int=False)
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = x.ndim
    if len(pads) // 2 > nd:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pads)} and input of dimension {nd}")
    if mode == "constant":
        for i in range(len(pads) // 2):
            ax = nd - 1 - i
            if x.shape[ax] + pads[2 * i] + pads[2 * i + 1] < 0:
                raise RuntimeError(
                    f"The input size {x.shape[ax]}, plus negative padding {pads[2 * i]} and "
                    f"{pads[2 * i + 1]} resulted in a negative output size, which is invalid. "
                    f"Check dimension {ax} of your input.")
        return _pad_constant_graph(x, pads, 0 if value is None else value)
    if mode == "circular":
        return _pad_circular(x, pads)
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pads) // 2
    if any(p < 0 for p in pads) and k in (1, 2, 3) and nd in (k + 1, k + 2):
        cropped = _pad_op(x, tuple(min(p, 0) for p in pads))  # negative pads crop first
        return _pad_op(cropped, tuple(max(p, 0) for p in pads), mode)
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {nd}D input tensor.")
    ops = x.backend.ops
    data = x._data
    steps = []
    for i in range(k):
        ax = nd - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        n = x.shape[ax]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {ax} of input "
                f"{list(x.shape)}")
        if mode == "replicate" and n == 0:
            raise RuntimeError("input tensor must have a non-empty dimension to pad")
        data = ops.pad_take(data, ax, mode, lo, hi)
        steps.append((ax, mode, lo, hi, n))
    out = _new(x, data)
    if _tracks(x):
        record(_PAD_NODES[(mode, k)], out, (x,), (), (), tuple(steps))
    return out


_pad_op = pad

#: circular padding: PyTorch fills a new tensor by slice copies, so its node is the in-place
#: copy's (``torch::autograd::CopySlices``, retrograd's ``CopySlices``); one node here, whose
#: gradient sums each wrapped part back onto the elements it repeats
CircularPadBackward = formula_node("torch::autograd::CopySlices", _take_rule, arity=1)


def _pad_circular(x: Tensor, pads: tuple[int, ...]) -> Tensor:
    """``pad(x, pads, mode="circular")``: the last ``lo`` elements put before and the first
    ``hi`` after, along each padded axis (at most its size: one wrap); negative pads crop
    first, and the cropped tensor is wrapped."""
    nd = x.ndim
    k = len(pads) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {nd}D input tensor.")
    for i in range(k):
        n = x.shape[nd - 1 - i]
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    if any(p < 0 for p in pads):
        x = _pad_op(x, tuple(min(p, 0) for p in pads))  # crop, then wrap what is left
        for i in range(k):
            n = x.shape[nd - 1 - i]
            if max(pads[2 * i], 0) > n or max(pads[2 * i + 1], 0) > n:
                raise RuntimeError("Padding value causes wrapping around more than once (of "
                                   "the input cropped by the negative padding).")
        pads = tuple(max(p, 0) for p in pads)
    ops = x.backend.ops
    data = x._data
    steps = []
    for i in range(k):
        ax = nd - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        data = ops.pad_take(data, ax, "circular", lo, hi)
        steps.append((ax, "circular", lo, hi, x.shape[ax]))
    out = _new(x, data)
    if _tracks(x):
        record(CircularPadBackward, out, (x,), (), (), tuple(steps))
    return out

_GRAPH_EXTRA: dict[str, Any] = {
    "flip": flip, "roll": roll, "tril": tril, "triu": triu,
    "pad_constant": _pad_constant_graph, "pad_take": _take_graph,
    "pad_take_backward": _take_backward_graph,
}
GRAPH_KERNELS.update(_GRAPH_EXTRA)  # put in GRAPH_F: see ops.declare


# -- Tensor.new_* ----------------------------------------------------------------------------
def _size(args: tuple[Any, ...], size: Any) -> Any:
    if size is not None:
        if args:
            raise TypeError("new_*(): got multiple values for argument 'size'")
        return tuple(size)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


@op("new_zeros", function=False, differentiable=False)
def new_zeros(x: Tensor, *args: Any, size: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of shape ``size``, with ``x``'s dtype and device unless given."""
    return creation.zeros(*_size(args, size), dtype=dtype or x.dtype,
                          device=device or x.device, requires_grad=requires_grad)


@op("new_ones", function=False, differentiable=False)
def new_ones(x: Tensor, *args: Any, size: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A tensor of ones of shape ``size``, with ``x``'s dtype and device unless given."""
    return creation.ones(*_size(args, size), dtype=dtype or x.dtype,
                         device=device or x.device, requires_grad=requires_grad)


@op("new_empty", function=False, differentiable=False)
def new_empty(x: Tensor, *args: Any, size: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor of shape ``size``, with ``x``'s dtype and device unless
    given."""
    return creation.empty(*_size(args, size), dtype=dtype or x.dtype,
                          device=device or x.device, requires_grad=requires_grad)


@op("new_full", function=False, differentiable=False)
def new_full(x: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``, with ``x``'s dtype and device
    unless given."""
    return creation.full(tuple(size), fill_value, dtype=dtype or x.dtype,
                         device=device or x.device, requires_grad=requires_grad)


@op("new_tensor", function=False, differentiable=False)
def new_tensor(x: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data``, with ``x``'s dtype and device unless
    given."""
    return creation.tensor(data, dtype=dtype or x.dtype, device=device or x.device,
                           requires_grad=requires_grad)
