"""Selection and NaN-aware reductions of the everyday API: ``nansum``, ``nanmean``,
``cummax``, ``cummin``, ``kthvalue``, ``mode``, ``msort``, ``quantile``, ``nanquantile``,
``diff``, ``argwhere``.

``nansum``, ``cummax``/``cummin``, ``kthvalue`` and ``mode`` record PyTorch's nodes, with
derivative rules written once against ``F``; the others are built, as in PyTorch, from
differentiable ops (``nanmean`` divides a ``nansum``; ``quantile`` sorts, gathers and
interpolates; ``diff`` subtracts slices), so their gradients and double backward come with
those ops. The ``(values, indices)`` results are named tuples on ``return_types``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_, float32, float64, int64
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .aliases import MISSING, cast_to, dim_alias, keepdim_alias, required
from .declare import op
from .promotion import torch_name
from .reduction import _dim_int, _expand_back, _keep_shape
from .shape import wrap_dim
from .statistics import (
    _axes_of,
    _MaskedNode,
    _record_select,
    _red_axes,
    _select_rule,
    _tensor,
    return_types,
)

__all__ = ["nansum", "nanmean", "cummax", "cummin", "kthvalue", "mode", "msort", "quantile",
           "nanquantile", "diff", "argwhere"]

# PyTorch's torch.return_types.cummax ..., on the same class as max/min's
_CummaxResult = namedtuple("cummax", ["values", "indices"])  # type: ignore[name-match]
_CumminResult = namedtuple("cummin", ["values", "indices"])  # type: ignore[name-match]
_KthvalueResult = namedtuple("kthvalue", ["values", "indices"])  # type: ignore[name-match]
_ModeResult = namedtuple("mode", ["values", "indices"])  # type: ignore[name-match]
return_types.cummax = _CummaxResult  # type: ignore[attr-defined]
return_types.cummin = _CumminResult  # type: ignore[attr-defined]
return_types.kthvalue = _KthvalueResult  # type: ignore[attr-defined]
return_types.mode = _ModeResult  # type: ignore[attr-defined]


# -- helpers ---------------------------------------------------------------------------------
def _check_tensor(name: str, x: Any, arg: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_bool(name: str, arg: str, v: Any) -> None:
    if not isinstance(v, bool):
        raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(v).__name__}")


def _int_arg(name: str, arg: str, v: Any, pos: int | None = None) -> int:
    i = None if isinstance(v, bool) else _dim_int(v)
    if i is None:
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{name}(): argument '{arg}'{where} must be int, not "
                        f"{type(v).__name__}")
    return i


def _dim(name: str, dim: Any, nd: int) -> int:
    return wrap_dim(name, _int_arg(name, "dim", dim), nd)


def _empty_dim(name: str, shape: tuple[int, ...], a: int) -> None:
    if shape and shape[a] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _zero_index(be: Any, like: Any) -> Any:
    return be.ops.astype(be.ops.zeros_like(like), be.xp_dtype(int64))


# -- nansum, nanmean -------------------------------------------------------------------------
def _nansum_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` back over the reduced dims, zero at the NaNs of the input (a product with the
    0/1 mask, as PyTorch's: a NaN ``g`` stays NaN)."""
    x = saved[0]
    keep = F.where(F.eq(x, x), F.ones_like(x), 0.0)
    return (F.mul(_expand_back(F, g, attrs), keep),)


# the input reaches the gradient only through the mask: under create_graph its history is
# the incoming gradient's alone, as in PyTorch
NansumBackward0 = type("NansumBackward0", (_MaskedNode,),
                       {"__slots__": (), "rule": staticmethod(_nansum_rule), "_arity": 1})


@op("nansum")
def nansum(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
           axis: Any = None, keepdims: Any = None) -> Tensor:
    """The sum over ``dim`` (an int, a tuple; None or ``()``: every dimension) counting NaNs
    as zero; integer and bool inputs give int64 unless ``dtype`` says otherwise."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("nansum", dim, axis)
        keepdim = keepdim_alias("nansum", keepdim, keepdims)
    _check_tensor("nansum", x)
    _check_bool("nansum", "keepdim", keepdim)
    shape = tuple(x._data.shape)
    axes = _axes_of("nansum", dim, len(shape))
    if dtype is not None:
        x = cast_to(x, dtype)
    elif not x.dtype.is_floating_point and x.dtype is not int64:
        x = _tensor(x.backend, x.backend.ops.astype(x._data, x.backend.xp_dtype(int64)))
    be = x.backend
    ops = be.ops
    data = x._data
    if x.dtype.is_floating_point:
        data = ops.where(ops.isnan(data), 0.0, data)
    out = _tensor(be, ops.sum(data, _red_axes(axes), keepdim))
    if _grad.enabled and x._requires_grad:
        record(NansumBackward0, out, (x,), (x._data,), (x,), (shape, _keep_shape(shape, axes)))
    return out


@op("nanmean")
def nanmean(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            axis: Any = None, keepdims: Any = None) -> Tensor:
    """The mean over ``dim`` of the elements that are not NaN (NaN where all are): a
    ``nansum`` divided by the count, as in PyTorch (``DivBackward0``); floating inputs only."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("nanmean", dim, axis)
        keepdim = keepdim_alias("nanmean", keepdim, keepdims)
    _check_tensor("nanmean", x)
    if not x.dtype.is_floating_point:
        raise DTypeError("nanmean(): expected input to have floating point or complex dtype "
                         f"but got {torch_name(x.dtype)}")
    if dtype is not None:
        from ..dtypes import as_dtype

        dt = as_dtype(dtype)
        if not dt.is_floating_point:
            raise DTypeError("nanmean(): could not infer output dtype. Optional dtype must be "
                             f"either a floating point or complex dtype. Got: {torch_name(dt)}")
    _check_bool("nanmean", "keepdim", keepdim)
    shape = tuple(x._data.shape)
    axes = _axes_of("nanmean", dim, len(shape))
    be = x.backend
    ops = be.ops
    present = ops.astype(ops.eq(x._data, x._data), be.xp_dtype(int64))
    count = _tensor(be, ops.sum(present, _red_axes(axes), keepdim))
    from .elementwise import div

    return div(nansum(x, dim, keepdim, dtype=dtype), count)


# -- cummax, cummin --------------------------------------------------------------------------
def _cumulative_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """Each ``g`` added to the place its value was taken from (a scatter-add by the
    indices, as PyTorch's ``cummaxmin_backward``)."""
    axis, shape = attrs
    if not shape or 0 in shape:  # a 0-d input is its own running extreme; empty: nothing
        return (g,)
    return (F.gather_backward(g, saved[0], axis, shape),)


CummaxBackward0 = formula_node("CummaxBackward0", _cumulative_rule)
CumminBackward0 = formula_node("CumminBackward0", _cumulative_rule)


def _cumulative(name: str, x: Any, dim: Any, axis: Any) -> Any:
    if axis is not None:
        dim = dim_alias(name, dim, axis, MISSING)
    dim = required(name, dim)
    _check_tensor(name, x)
    shape = tuple(x._data.shape)
    if not shape:
        d = _int_arg(name, "dim", dim)
        if d not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {d}")
    a = _dim(name, dim, len(shape))
    be = x.backend
    ops = be.ops
    if not shape or 0 in shape:
        vals = ops.copy(x._data)
        idx = _zero_index(be, x._data)
    else:
        vals, idx = getattr(ops, name)(x._data, a)
    values = _tensor(be, vals)
    indices = _tensor(be, idx)
    if _grad.enabled and x._requires_grad:
        cls = CummaxBackward0 if name == "cummax" else CumminBackward0
        record(cls, values, (x,), (idx,), (None,), (a, shape))
    kind = _CummaxResult if name == "cummax" else _CumminResult
    return kind(values, indices)


@op("cummax")
def cummax(x: Tensor, dim: Any = MISSING, *, axis: Any = None) -> Any:
    """The named tuple ``(values, indices)`` of the running maximum along ``dim``: each
    index is the last place holding the value so far; a NaN, once reached, stays (its index
    the latest NaN's), as in PyTorch."""
    return _cumulative("cummax", x, dim, axis)


@op("cummin")
def cummin(x: Tensor, dim: Any = MISSING, *, axis: Any = None) -> Any:
    """The named tuple ``(values, indices)`` of the running minimum along ``dim`` (ties and
    NaNs as in :func:`cummax`)."""
    return _cumulative("cummin", x, dim, axis)


# -- kthvalue, mode --------------------------------------------------------------------------
KthvalueBackward0 = formula_node("KthvalueBackward0", _select_rule)
ModeBackward0 = formula_node("ModeBackward0", _select_rule)


def _selected(name: str, x: Tensor, a: int, keepdim: bool, vals: Any, idx: Any,
              cls: Any) -> tuple[Tensor, Tensor]:
    """The ``(values, indices)`` tensors from the kept-axis picks ``vals``/``idx``, with
    ``cls`` recorded (the gradient goes to the picked places)."""
    be = x.backend
    ops = be.ops
    if x.ndim:
        vals_out = vals if keepdim else ops.squeeze(vals, (a,))
        idx_out = idx if keepdim else ops.squeeze(idx, (a,))
    else:
        vals_out, idx_out = vals, idx
    values = _tensor(be, vals_out)
    _record_select(cls, values, x, idx, a, keepdim)
    return values, _tensor(be, idx_out)


@op("kthvalue")
def kthvalue(x: Tensor, k: int, dim: Any = -1, keepdim: bool = False, *, axis: Any = None,
             keepdims: Any = None) -> Any:
    """The named tuple ``(values, indices)`` of the ``k``-th smallest element (1-based)
    along ``dim``; NaN counts as the largest. Among equal values the index is the ``k``-th
    place of the stable order (PyTorch's CPU kernel may name another of the ties)."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("kthvalue", dim, axis, -1)
        keepdim = keepdim_alias("kthvalue", keepdim, keepdims)
    _check_tensor("kthvalue", x)
    kk = _int_arg("kthvalue", "k", k, 2)
    _check_bool("kthvalue", "keepdim", keepdim)
    shape = tuple(x._data.shape)
    a = _dim("kthvalue", dim, len(shape))
    if x.dtype is bool_:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    _empty_dim("kthvalue", shape, a)
    n = shape[a] if shape else 1
    if not 1 <= kk <= n:
        raise RetrogradError(f"kthvalue(): selected number k out of range for dimension {a}")
    be = x.backend
    ops = be.ops
    if shape:
        order = ops.sort_order(x._data, a, False)
        key = (slice(None),) * a + (slice(kk - 1, kk),)
        idx = ops.getitem(order, key + (Ellipsis,))
        vals = ops.take_along(x._data, idx, a)
    else:
        vals, idx = ops.copy(x._data), _zero_index(be, x._data)
    values, indices = _selected("kthvalue", x, a, keepdim, vals, idx, KthvalueBackward0)
    return _KthvalueResult(values, indices)


@op("mode")
def mode(x: Tensor, dim: Any = -1, keepdim: bool = False, *, axis: Any = None,
         keepdims: Any = None) -> Any:
    """The named tuple ``(values, indices)`` of the most frequent value along ``dim`` (the
    smallest of equally frequent ones; each NaN counts once) and the index of its last
    occurrence; only the values carry a gradient."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("mode", dim, axis, -1)
        keepdim = keepdim_alias("mode", keepdim, keepdims)
    _check_tensor("mode", x)
    _check_bool("mode", "keepdim", keepdim)
    shape = tuple(x._data.shape)
    a = _dim("mode", dim, len(shape))
    _empty_dim("mode", shape, a)
    be = x.backend
    ops = be.ops
    if shape and x.numel():
        vals, idx = ops.mode(x._data, a)
    elif shape:  # empty elsewhere: an empty result
        kshape = _keep_shape(shape, (a,))
        vals = ops.reshape(ops.getitem(x._data, (slice(0, 0),) * len(shape)), kshape)
        idx = ops.astype(vals, be.xp_dtype(int64))
    else:
        vals, idx = ops.copy(x._data), _zero_index(be, x._data)
    values, indices = _selected("mode", x, a, keepdim, vals, idx, ModeBackward0)
    return _ModeResult(values, indices)


# -- msort, argwhere -------------------------------------------------------------------------
@op("msort")
def msort(x: Tensor) -> Tensor:
    """``x`` sorted along its first dimension (``sort(x, 0).values``; NaN the largest)."""
    _check_tensor("msort", x)
    from .sorting import sort

    return sort(x, 0).values


@op("argwhere", differentiable=False)
def argwhere(x: Tensor) -> Tensor:
    """The ``(n, ndim)`` int64 coordinates of the nonzero elements of ``x`` (NaN counts as
    nonzero), in row-major order; ``nonzero(x)``."""
    _check_tensor("argwhere", x)
    be = x.backend
    return _tensor(be, be.ops.nonzero(x._data))


# -- diff ------------------------------------------------------------------------------------
def _diff_other(x: Tensor, other: Any, arg: str, dim: int) -> None:
    if other is None:
        return
    if not isinstance(other, Tensor):
        raise TypeError(f"diff(): argument '{arg}' must be Tensor, not {type(other).__name__}")
    a = wrap_dim("diff", dim, x.ndim)
    if other.ndim != x.ndim:
        raise RetrogradError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.ndim):
        if i != a and other.shape[i] != x.shape[i]:
            raise ShapeError("diff expects the shape of tensor to prepend or append to match "
                             "that of input except along the differencing dimension; "
                             f"input.size({i}) = {x.shape[i]}, but got tensor.size({i}) = "
                             f"{other.shape[i]}")


@op("diff")
def diff(x: Tensor, n: int = 1, dim: Any = -1, prepend: Tensor | None = None,
         append: Tensor | None = None, *, axis: Any = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, applied
    ``n`` times; for bool, ``!=``), after concatenating ``prepend`` and ``append`` to ``x``
    along ``dim``; each step is one element shorter, stopping at an empty result."""
    if axis is not None:
        dim = dim_alias("diff", dim, axis, -1)
    _check_tensor("diff", x)
    nn = _int_arg("diff", "n", n)
    d = _int_arg("diff", "dim", dim)
    if x.ndim < 1:
        raise RetrogradError("diff expects input to be at least one-dimensional")
    if nn < 0:
        raise RetrogradError(f"order must be non-negative but got {nn}")
    _diff_other(x, prepend, "prepend", d)
    _diff_other(x, append, "append", d)
    from .creation import zeros_like
    from .elementwise import ne, sub
    from .shape import cat
    from .views import narrow

    if nn == 0:
        from .inplace import copy_

        return copy_(zeros_like(x), x)
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, x, append) if t is not None]
        x = cat(parts, d)
    a = wrap_dim("diff", d, x.ndim)
    size = x.shape[a]
    steps = min(nn, size)
    out_len = size - 1
    result = x
    step = ne if x.dtype is bool_ else sub
    for _ in range(steps):
        result = step(narrow(result, a, 1, out_len), narrow(result, a, 0, out_len))
        out_len -= 1
    return result


# -- quantile, nanquantile -------------------------------------------------------------------
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_number(q: float) -> str:
    """``q`` as PyTorch's message prints a double (six significant digits)."""
    return f"{float(q):g}"


def _quantile_args(name: str, x: Any, q: Any, dim: Any, keepdim: Any, interpolation: Any
                   ) -> tuple[Tensor | None, int | None]:
    """Checked arguments, in PyTorch's order: the tensor ``q`` (None for a number) and the
    wrapped ``dim`` (None: the flattened input)."""
    _check_tensor(name, x)
    number = isinstance(q, (bool, int, float)) and not isinstance(q, Tensor)
    if not number and not isinstance(q, Tensor) or not isinstance(interpolation, str) or (
            dim is not None and _dim_int(dim) is None) or isinstance(dim, bool):
        got = f"Tensor, {type(q).__name__}"
        if not isinstance(interpolation, str):
            got += f", interpolation={type(interpolation).__name__}"
        if dim is not None and (_dim_int(dim) is None or isinstance(dim, bool)):
            got += f", dim={type(dim).__name__}"
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}"
                        "), but expected one of:\n * (Tensor input, Tensor q, int dim = None, "
                        "bool keepdim = False, *, str interpolation = \"linear\", Tensor out = "
                        "None)\n * (Tensor input, float q, int dim = None, bool keepdim = "
                        "False, *, str interpolation = \"linear\", Tensor out = None)\n")
    _check_bool(name, "keepdim", keepdim)
    if number and not 0 <= float(q) <= 1:
        raise RetrogradError(f"quantile() q must be in the range [0, 1] but got "
                             f"{_q_number(q)}")
    if interpolation not in _MODES:
        raise RetrogradError("quantile() interpolation must be one of linear, lower, higher, "
                             f"midpoint or nearest, but got {interpolation}")
    if x.numel() == 0:
        raise RetrogradError("quantile() input tensor must be non-empty")
    qt = q if isinstance(q, Tensor) else None
    if qt is not None and qt.ndim > 1:
        raise ShapeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (float32, float64):
        raise DTypeError("quantile() input tensor must be either float or double dtype")
    if qt is not None and qt.dtype is not x.dtype:
        raise DTypeError("quantile() q tensor must be same dtype as the input tensor")
    a = None if dim is None else wrap_dim(name, _dim_int(dim), x.ndim)
    if qt is not None and qt.numel():
        ops = qt.backend.ops
        inside = ops.logical_and(ops.ge(qt._data, 0.0), ops.le(qt._data, 1.0))
        if not bool(ops.all(inside, None, False)):
            raise RetrogradError("quantile() q values must be in the range [0, 1]")
    return qt, a


def _quantile(name: str, x: Any, q: Any, dim: Any, keepdim: Any, interpolation: Any,
              ignore_nan: bool) -> Tensor:
    """PyTorch's composite: sort the reduced dim last, turn ``q`` into ranks (to the last
    place where a NaN is, for ``quantile``; among the non-NaN values for ``nanquantile``),
    gather the values at the ranks and interpolate between them."""
    from .arithmetic import lerp
    from .conversion import to
    from .creation import full_like
    from .elementwise import mul, sub, where
    from .indexing import gather
    from .shape import reshape, transpose, unsqueeze
    from .sorting import sort
    from .views import squeeze_, transpose_, unsqueeze_

    qt, a = _quantile_args(name, x, q, dim, keepdim, interpolation)
    shape = tuple(x.shape)
    if a is not None and shape:
        out_shape = list(shape)
        if keepdim:
            out_shape[a] = 1
        else:
            del out_shape[a]
    else:
        out_shape = [1] * len(shape) if keepdim else []
    if a is None:
        srt = sort(reshape(x, (-1,)), -1).values
    elif a == x.ndim - 1:
        srt = sort(x, -1).values
    else:
        srt = sort(transpose(unsqueeze(x, -1), a, -1), -1).values
    n = srt.shape[-1]
    srt = reshape(srt, tuple(out_shape) + (n,))
    be = x.backend
    ops = be.ops
    if qt is None:
        qt = _tensor(be, ops.full((), float(q), be.xp_dtype(x.dtype)))
    nan = ops.isnan(srt._data)
    if ignore_nan:
        present = ops.astype(ops.eq(srt._data, srt._data), be.xp_dtype(int64))
        count = _tensor(be, ops.sum(present, (len(out_shape),), True))
        ranks = mul(qt, sub(count, 1))
        ranks = where(_tensor(be, ops.lt(ranks._data, 0.0)), 0.0, ranks)
    else:
        last = n - 1
        any_nan = _tensor(be, ops.any(nan, (len(out_shape),), True))
        ranks = where(any_nan, float(last), mul(qt, last))
    if interpolation in ("lower", "higher", "nearest"):
        from .activations import ceil
        from .arithmetic import round as round_
        from .pointwise import floor

        ranks = {"lower": floor, "higher": ceil, "nearest": round_}[interpolation](ranks)
    below = to(ranks, int64)
    values = gather(srt, -1, below)
    if interpolation in ("linear", "midpoint"):
        from .activations import ceil

        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else sub(ranks, below)
        above = to(ceil(ranks), int64)
        values = lerp(values, gather(srt, -1, above), weights)
    if qt.ndim == 0:
        return squeeze_(values, -1)
    return squeeze_(transpose_(unsqueeze_(values, 0), 0, -1), -1)


@op("quantile")
def quantile(x: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear", axis: Any = None) -> Tensor:
    """The ``q``-th quantiles (``q`` a number or a 1-d tensor in [0, 1], of ``x``'s dtype)
    of ``x`` along ``dim`` (None: of all elements), interpolating between the two nearest
    ranks by ``interpolation`` (``linear``, ``lower``, ``higher``, ``midpoint``, ``nearest``);
    a tensor ``q`` adds its dimension first. NaN where a reduced slice holds a NaN."""
    if axis is not None:
        dim = dim_alias("quantile", dim, axis)
    return _quantile("quantile", x, q, dim, keepdim, interpolation, False)


@op("nanquantile")
def nanquantile(x: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear", axis: Any = None) -> Tensor:
    """:func:`quantile` ignoring NaNs: the quantiles of the other values of each slice (NaN
    where every value is NaN)."""
    if axis is not None:
        dim = dim_alias("nanquantile", dim, axis)
    return _quantile("nanquantile", x, q, dim, keepdim, interpolation, True)
