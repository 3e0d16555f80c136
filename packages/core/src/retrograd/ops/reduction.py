"""Reductions: sum, mean, amax, logsumexp (with ``dim`` and ``keepdim``)."""

from __future__ import annotations

import operator
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import get_default_dtype
from ..errors import DTypeError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .aliases import cast_to, dim_alias, keepdim_alias, out_one, out_same_dtype
from .promotion import cast_data, torch_name
from .shape import wrap_dim

__all__ = ["sum", "mean", "amax", "logsumexp"]


def _keep_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _expand_back(F: Any, g: Any, attrs: Any) -> Any:
    xshape, kshape = attrs[0], attrs[1]
    if len(g.shape) and tuple(g.shape) != kshape:  # reduced dims were dropped: put them back
        g = F.reshape(g, kshape)
    return F.expand(g, xshape)  # a 0-d or keepdim gradient broadcasts as it is


def _sum_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (_expand_back(F, g, attrs),)


def _mean_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.div(_expand_back(F, g, attrs), float(attrs[2])),)


def _amax_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, out = saved
    kshape = attrs[1]
    hit = F.where(F.eq(x, F.reshape(out, kshape)), F.ones_like(x), 0.0)
    count = F.sum(hit, attrs[2], True)
    return (F.mul(hit, F.div(F.reshape(g, kshape), count)),)


def _logsumexp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, out = saved
    kshape = attrs[1]
    return (F.mul(F.reshape(g, kshape), F.exp(F.sub(x, F.reshape(out, kshape)))),)


# PyTorch's names: ``...0`` for the full reduction of ``x.sum()``/``x.mean()`` (no dim given),
# ``...1`` when a dim is given -- also ``dim=None`` or ``dim=()`` -- with the same rule
SumBackward0 = formula_node("SumBackward0", _sum_rule)
SumBackward = formula_node("SumBackward1", _sum_rule)
MeanBackward0 = formula_node("MeanBackward0", _mean_rule)
MeanBackward = formula_node("MeanBackward1", _mean_rule)


class _NoDim:
    """The default ``dim`` of ``sum``/``mean``: no dim given (PyTorch's ``...Backward0``), which
    reduces every axis as ``dim=None`` does."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"


_NO_DIM: Any = _NoDim()
AmaxBackward = formula_node("AmaxBackward0", _amax_rule)
LogsumexpBackward = formula_node("LogsumexpBackward0", _logsumexp_rule)


def _dim_int(d: Any) -> int | None:
    """``d`` as an axis if PyTorch's binding reads it as one (an int, or an object with
    ``__index__``: a NumPy integer, a one-element integer tensor); None otherwise."""
    if type(d) is int:
        return d
    if hasattr(d, "__index__"):
        try:
            return operator.index(d)
        except TypeError:
            return None
    return None


def _axes(name: str, dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` -- None, an int or a tuple/list of ints; ``[]`` and ``()`` mean every axis,
    as in PyTorch -- as sorted non-negative axes, checked as PyTorch checks it: TypeError for
    anything but ints (a float, a bool, a string), IndexError for an axis out of range,
    RuntimeError (ShapeError) for an axis given twice."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if not dim:
            return tuple(range(ndim))
        items = []
        for i, d in enumerate(dim):
            a = _dim_int(d)  # a bool inside a sequence is an int to PyTorch
            if a is None:
                raise TypeError(f"{name}(): argument 'dim' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(d).__name__}\"")
            items.append(a)
    else:
        a = None if isinstance(dim, bool) else _dim_int(dim)
        if a is None:
            found = type(dim).__name__
            if name in ("sum", "mean"):
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"(Tensor, dim={found}), but expected one of: (Tensor input, "
                                "int or tuple of ints dim, bool keepdim)")
            raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not {found}")
        items = [a]
    axes: list[int] = []
    for d in items:
        a = wrap_dim(name, d, ndim)
        if a in axes:
            raise ShapeError(f"dim {a} appears multiple times in the list of dims (dim="
                             f"{dim!r} for a tensor of {ndim} dimensions)")
        axes.append(a)
    return tuple(sorted(axes))


def _reduce(name: str, x: Any, dim: Any, keepdim: bool) -> tuple[Tensor, tuple[int, ...], Any]:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    if not isinstance(keepdim, bool):
        raise TypeError(f"{name}(): argument 'keepdim' must be bool, not "
                        f"{type(keepdim).__name__}")
    shape = x._data.shape
    axes = _axes(name, dim, len(shape))
    be = x.backend
    data = getattr(be.ops, name)(x._data, axes if len(shape) else None, keepdim)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be), axes, data


# the attrs of a full sum, one tuple per input shape: W2 sums a thousand (16,) tensors
_FULL_SUM_ATTRS: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = {}


def _full_sum_attrs(shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(shape)
    attrs = _FULL_SUM_ATTRS.get(shape)
    if attrs is None:
        if len(_FULL_SUM_ATTRS) >= 256:
            _FULL_SUM_ATTRS.clear()
        attrs = _FULL_SUM_ATTRS[shape] = (shape, (1,) * len(shape))
    return attrs


def sum(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,  # noqa: A001
        dtype: Any = None, out: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """The sum of all elements, or over ``dim`` (an int or a tuple of ints).

    ``keepdim=True`` keeps each reduced dimension with size 1. Integer and bool tensors sum as
    int64, as in PyTorch. Records ``SumBackward0`` for the full sum and ``SumBackward1`` over dims;
    the gradient is ``g`` expanded back to the input's shape. ``dtype``: ``x`` is cast to it
    first; ``out``: the result is written there (in ``out``'s dtype); ``axis``/``keepdims``:
    NumPy's names for ``dim``/``keepdim``."""
    if axis is not None or keepdims is not None or dtype is not None or out is not None:
        return _sum_kw(x, dim, keepdim, dtype, out, axis, keepdims)
    if dim is _NO_DIM and keepdim is False and type(x) is Tensor:  # x.sum(), inline
        be = x.backend
        # axis None: every axis (the Array API's spelling; no per-call tuple of axes)
        data = be.ops.sum(x._data, None, False)
        if type(data) is not be.array_type:
            data = be.asarray(data)
        out = Tensor(data, be)
        if _grad.enabled and x._requires_grad:
            record(SumBackward0, out, (x,), (), (), _FULL_SUM_ATTRS.get(x._data.shape) or
                   _full_sum_attrs(x._data.shape))
        return out
    full = dim is _NO_DIM  # x.sum() of a Tensor subclass (a Parameter), or keepdim=True
    out, axes, _ = _reduce("sum", x, None if full else dim, keepdim)
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        record(SumBackward0 if full and not keepdim else SumBackward, out, (x,), (), (),
               (shape, _keep_shape(shape, axes)))
    return out


def mean(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, dtype: Any = None,
         out: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """The mean of all elements, or over ``dim`` (an int or a tuple of ints); ``keepdim`` as in
    ``sum``.

    Only floating dtypes (an integer tensor raises, as in PyTorch, unless ``dtype`` is a
    floating one). Records ``MeanBackward0`` for the full mean and ``MeanBackward1`` over dims:
    ``g / N`` expanded back to the input's shape. ``dtype``, ``out``, ``axis``, ``keepdims``:
    as in ``sum``."""
    if axis is not None or keepdims is not None or dtype is not None or out is not None:
        return _mean_kw(x, dim, keepdim, dtype, out, axis, keepdims)
    if isinstance(x, Tensor) and not x.dtype.is_floating_point:
        raise DTypeError("mean(): could not infer output dtype. Input dtype must be either a "
                         f"floating point or complex dtype. Got: {torch_name(x.dtype)}")
    full = dim is _NO_DIM
    out, axes, _ = _reduce("mean", x, None if full else dim, keepdim)
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        n = 1
        for a in axes:
            n *= shape[a]
        record(MeanBackward0 if full and not keepdim else MeanBackward, out, (x,), (), (),
               (shape, _keep_shape(shape, axes), n))
    return out


def _check_amax_empty(x: Tensor, dim: Any) -> None:
    """PyTorch's refusals for an empty ``x``: no dim given (RuntimeError), or a reduced axis of
    size 0 (IndexError, naming it); reducing only non-empty axes is fine."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        raise ShapeError("amax(): Expected reduction dim to be specified for input.numel() == 0. "
                         "Specify the reduction dim with the 'dim' argument.")
    shape = x._data.shape
    for a in _axes("amax", dim, len(shape)):
        if len(shape) and shape[a] == 0:
            raise IndexError(f"amax(): Expected reduction dim {a} to have non-zero size (the "
                             f"tensor has shape {tuple(shape)}).")


def amax(x: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None,
         axis: Any = None, keepdims: Any = None) -> Tensor:
    """The maximum over ``dim`` (an int or a tuple; None or ``()``: every dimension), values only;
    ``keepdim`` as in ``sum``.

    ``AmaxBackward0``: the gradient is shared evenly among the elements equal to the maximum, as in
    PyTorch. An empty reduced dimension is refused. ``out``, ``axis``, ``keepdims``: as in
    ``sum`` (``out`` must have ``x``'s dtype)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("amax", dim, axis)
        keepdim = keepdim_alias("amax", keepdim, keepdims)
        if out is not None:
            if isinstance(x, Tensor):
                out_same_dtype("amax", out, x.dtype, _MATCH)
            return out_one("amax", out, (x,), lambda: amax(x, dim, keepdim))
    if isinstance(x, Tensor) and x.numel() == 0:
        _check_amax_empty(x, dim)
    out, axes, data = _reduce("amax", x, dim, keepdim)
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        record(AmaxBackward, out, (x,), (x._data, data), (x, 0),
               (shape, _keep_shape(shape, axes), axes))
    return out


def _empty_logsumexp(x: Tensor, dim: Any, keepdim: bool) -> tuple[Tensor, tuple[int, ...], Any]:
    """``logsumexp`` of an empty tensor, as PyTorch: the log of an empty sum, -inf (the kernel's
    running maximum has no identity); the result is itself empty unless every reduced axis
    is."""
    if not isinstance(keepdim, bool):
        raise TypeError(f"logsumexp(): argument 'keepdim' must be bool, not "
                        f"{type(keepdim).__name__}")
    shape = tuple(x._data.shape)
    axes = _axes("logsumexp", dim, len(shape))
    kept = _keep_shape(shape, axes)
    oshape = kept if keepdim else tuple(n for i, n in enumerate(shape) if i not in axes)
    be = x.backend
    ops = be.ops
    zeros = ops.sum(x._data, axes, True)  # of shape ``kept`` and x's dtype: zeros, or empty
    data = ops.reshape(ops.add(zeros, float("-inf")), oshape)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be), axes, data


def logsumexp(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, out: Any = None,
              axis: Any = None, keepdims: Any = None) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim`` (required, as in PyTorch; ``()`` or None: every
    dimension); an integer or bool input is computed in the default float dtype. ``out``,
    ``axis``, ``keepdims``: as in ``sum``."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("logsumexp", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("logsumexp", keepdim, keepdims)
        if out is not None:
            return out_one("logsumexp", out, (x,), lambda: logsumexp(x, dim, keepdim))
    if dim is _NO_DIM:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' (position 1) must be tuple of ints, not "
                        "NoneType")
    if isinstance(x, Tensor) and not x.dtype.is_floating_point:
        x = Tensor(cast_data(x, get_default_dtype()), x.backend)  # cannot require grad
    if isinstance(x, Tensor) and x.numel() == 0:
        out, axes, data = _empty_logsumexp(x, dim, keepdim)
    else:
        out, axes, data = _reduce("logsumexp", x, dim, keepdim)
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        record(LogsumexpBackward, out, (x,), (x._data, data), (x, 0),
               (shape, _keep_shape(shape, axes)))
    return out


_MATCH = ("Expected the dtype for input and out to match, but got {Res} for input's dtype and "
          "{Out} for out's dtype.")


def _sum_kw(x: Any, dim: Any, keepdim: Any, dtype: Any, out: Any, axis: Any,
            keepdims: Any) -> Tensor:
    """``sum`` with PyTorch's extra keywords: ``axis``/``keepdims`` resolved, ``x`` cast to
    ``dtype``, the result written into ``out`` (computed in ``out``'s dtype, as PyTorch)."""
    dim = dim_alias("sum", dim, axis, _NO_DIM)
    keepdim = keepdim_alias("sum", keepdim, keepdims)
    if keepdims is not None and dim is _NO_DIM:
        raise TypeError("sum() received an invalid combination of arguments - got "
                        "(keepdims=bool, ), but expected one of: (*, torch.dtype dtype = None) "
                        "or (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = "
                        "None)")
    if out is not None:
        if dim is _NO_DIM:
            raise TypeError("sum() received an invalid combination of arguments - got (Tensor, "
                            "out=Tensor), but expected one of: (Tensor input, *, torch.dtype "
                            "dtype = None) or (Tensor input, tuple of ints dim, bool keepdim "
                            "= False, *, torch.dtype dtype = None, Tensor out = None)")
        as_dt = dtype if dtype is not None else getattr(out, "dtype", None)
        return out_one("sum", out, (x,), lambda: sum(x, dim, keepdim, dtype=as_dt))
    if dtype is not None and isinstance(x, Tensor):
        x = cast_to(x, dtype)
        res = sum(x, dim, keepdim)
        if res.dtype is not x.dtype:  # an integral dtype: the sum's own, not int64
            res = Tensor(cast_data(res, x.dtype), res.backend)
        return res
    return sum(x, dim, keepdim)


def _mean_kw(x: Any, dim: Any, keepdim: Any, dtype: Any, out: Any, axis: Any,
             keepdims: Any) -> Tensor:
    """``mean`` with PyTorch's extra keywords (see ``_sum_kw``); ``dtype`` must be a floating
    one, and ``out`` may not be of a lower kind than the result."""
    dim = dim_alias("mean", dim, axis, _NO_DIM)
    keepdim = keepdim_alias("mean", keepdim, keepdims)
    if keepdims is not None and dim is _NO_DIM:
        raise TypeError("mean() received an invalid combination of arguments - got "
                        "(keepdims=bool, ), but expected one of: (*, torch.dtype dtype = None) "
                        "or (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = "
                        "None)")
    if out is not None:
        return out_one("mean", out, (x,), lambda: mean(x, dim, keepdim, dtype=dtype))
    if dtype is not None and isinstance(x, Tensor):
        from ..dtypes import as_dtype

        dt = as_dtype(dtype)
        if not dt.is_floating_point:
            raise DTypeError("mean(): could not infer output dtype. Optional dtype must be "
                             f"either a floating point or complex dtype. Got: {torch_name(dt)}")
        x = cast_to(x, dt)
    return mean(x, dim, keepdim)
