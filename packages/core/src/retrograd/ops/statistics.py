"""Reductions beyond sum and mean: variance and standard deviation, products, extremes with
their indices, medians, truth reductions, traces and cumulative sums.

Each derivative rule is written once against ``F``: the backend's raw kernels in the walk,
retrograd's differentiable ops under ``create_graph=True``. The few kernels a rule needs that
the differentiable namespace lacks (``prod``, ``cumsum``, ``cumprod``, ``logcumsumexp``) are
taken from this module's own ops there (:func:`_f`); the masks a rule builds (a diagonal, the
places an index picked) are constants of the gradient's backend (:func:`_constant`).
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ..autograd.node import FormulaNode, _graph_ops, formula_node
from ..dtypes import as_dtype, bool_, int64
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .aliases import (
    EXACT,
    MISSING,
    dim_alias,
    keepdim_alias,
    out_one,
    out_pair,
    out_same_dtype,
    required,
)
from .declare import GRAPH_KERNELS, op
from .elementwise import maximum, minimum
from .promotion import cast_data, torch_name
from .reduction import _MATCH, _NO_DIM, _axes, _dim_int, _expand_back, _keep_shape
from .shape import wrap_dim

__all__ = ["var", "std", "var_mean", "std_mean", "prod", "max", "min", "amin", "argmax",
           "argmin", "median", "nanmedian", "all", "any", "count_nonzero", "trace", "cumsum",
           "cumprod", "logcumsumexp", "return_types"]

_INF = float("inf")


# -- named results ---------------------------------------------------------------------------
class return_types:  # noqa: N801 - PyTorch's spelling: torch.return_types.max ...
    """The named ``(values, indices)`` tuples of ``max``/``min``/``median`` with a dim."""

    max = namedtuple("max", ["values", "indices"])
    min = namedtuple("min", ["values", "indices"])
    median = namedtuple("median", ["values", "indices"])
    nanmedian = namedtuple("nanmedian", ["values", "indices"])


# -- helpers ---------------------------------------------------------------------------------
def _tensor(be: Any, data: Any) -> Tensor:
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _check_tensor(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_keepdim(name: str, keepdim: Any) -> None:
    if not isinstance(keepdim, bool):
        raise TypeError(f"{name}(): argument 'keepdim' must be bool, not "
                        f"{type(keepdim).__name__}")


def _no_keepdim_without_dim(name: str, keepdim: Any) -> None:
    """PyTorch's refusal of ``keepdim`` given to the full reduction (the overload without a
    dim has no keepdim)."""
    if keepdim is not False:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(keepdim={type(keepdim).__name__}, ), but expected one of: (), "
                        "(int dim, bool keepdim = False)")


def _keep(F: Any, t: Any, kshape: tuple[int, ...]) -> Any:
    """``t`` (a reduced result or its gradient) reshaped to the kept-dims shape."""
    if tuple(t.shape) != kshape:
        return F.reshape(t, kshape)
    return t


def _prod_graph(x: Tensor, axes: Any, keepdim: bool) -> Tensor:
    return _prod(x, tuple(axes) if axes is not None else tuple(range(x.ndim)), keepdim,
                 ProdBackward1)


def _cumsum_graph(x: Tensor, dim: int) -> Tensor:
    return cumsum(x, dim)


_GRAPH_EXTRA: dict[str, Any] = {"prod": _prod_graph, "cumsum": _cumsum_graph}


def _axes_of(name: str, dim: Any, nd: int) -> tuple[int, ...]:
    """``dim`` as sorted axes (see ``reduction._axes``); a 0-d tensor's are ``()``, once
    ``dim`` is checked (0 and -1 are its dims)."""
    axes = _axes(name, dim, nd)
    return axes if nd else ()


def _constant(F: Any, like: Any, name: str, *args: Any) -> Any:
    """The kernel ``name`` of ``like``'s backend on ``args``: a constant (a mask) a rule
    builds, as an array in the walk and a Tensor (no history) under ``create_graph``."""
    if isinstance(like, Tensor):
        be = like.backend
        raw = tuple(a._data if isinstance(a, Tensor) else a for a in args)
        out = getattr(be.ops, name)(*raw)
        if isinstance(out, tuple):
            return tuple(_tensor(be, o) for o in out)
        return _tensor(be, out)
    return getattr(F, name)(*args)


def _red_axes(axes: tuple[int, ...]) -> Any:
    """``axes`` as the kernels take them: None (every axis) for a 0-d tensor's ``()``."""
    return axes if axes else None


# -- multi-output nodes ----------------------------------------------------------------------
def _record_pair(cls: Any, first: Tensor, second: Tensor, x: Tensor, saved: tuple[Any, ...],
                 sources: tuple[Any, ...], attrs: Any) -> None:
    record(cls, first, (x,), saved, sources, attrs)
    node = first.grad_fn
    node._nin = 2
    second.grad_fn = node
    second._output_nr = 1
    second._requires_grad = True


# -- variance and standard deviation ---------------------------------------------------------
def _var_args(name: str, x: Any, dim: Any, unbiased: Any, keepdim: Any, correction: Any
              ) -> tuple[tuple[int, ...], float]:
    _check_tensor(name, x)
    if not x.dtype.is_floating_point:
        raise DTypeError("std and var only support floating point and complex dtypes")
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'; give one of them")
    if unbiased is not None and not isinstance(unbiased, bool):
        raise TypeError(f"{name}(): argument 'unbiased' must be bool, not "
                        f"{type(unbiased).__name__}")
    _check_keepdim(name, keepdim)
    if correction is None:
        c = 0.0 if unbiased is False else 1.0
    else:
        if isinstance(correction, bool) or not isinstance(correction, (int, float)):
            raise TypeError(f"{name}(): argument 'correction' must be Number, not "
                            f"{type(correction).__name__}")
        c = float(correction)
    return _axes_of(name, dim, x.ndim), c


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _var_scale(denom: float) -> float:
    return 2.0 / denom if denom > 0 else _INF


def _centred(F: Any, x: Any, axes: tuple[int, ...]) -> Any:
    return F.sub(x, F.mean(x, _red_axes(axes), True))


def _var_part(F: Any, g: Any, x: Any, attrs: Any) -> Any:
    """The gradient of the variance for ``g``: ``2 / (N - correction) * g * (x - mean)``."""
    return F.mul(F.mul(_expand_back(F, g, attrs), _centred(F, x, attrs[2])),
                 _var_scale(attrs[3]))


def _std_grad_var(F: Any, g: Any, std: Any, kshape: tuple[int, ...]) -> Any:
    """The variance's gradient from the std's: ``g / (2 std)``, zero where std is 0 (as
    PyTorch's ``std_backward``)."""
    s = _keep(F, std, kshape)
    return F.where(F.eq(s, 0.0), 0.0, F.div(_keep(F, g, kshape), F.mul(s, 2.0)))


def _var_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (_var_part(F, g, saved[0], attrs),)


def _std_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, out = saved
    return (_var_part(F, _std_grad_var(F, g, out, attrs[1]), x, attrs),)


def _mean_part(F: Any, g: Any, attrs: Any) -> Any:
    return F.div(_expand_back(F, g, attrs), float(attrs[4]))


def _total(F: Any, parts: list[Any]) -> Any:
    """The sum of the gradient parts of a two-output node (None: no gradient reached it)."""
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else F.add(parts[0], parts[1])


def _var_mean_rule(F: Any, gs: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    gv, gm = gs
    parts = []
    if gv is not None:
        parts.append(_var_part(F, gv, saved[0], attrs))
    if gm is not None:
        parts.append(_mean_part(F, gm, attrs))
    return (_total(F, parts),)


def _std_mean_rule(F: Any, gs: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    gs_, gm = gs
    parts = []
    if gs_ is not None:
        x, out = saved
        parts.append(_var_part(F, _std_grad_var(F, gs_, out, attrs[1]), x, attrs))
    if gm is not None:
        parts.append(_mean_part(F, gm, attrs))
    return (_total(F, parts),)


VarBackward = formula_node("VarBackward0", _var_rule)
StdBackward = formula_node("StdBackward0", _std_rule)
VarMeanBackward = formula_node("VarMeanBackward0", _var_mean_rule, arity=1, multi_output=True)
StdMeanBackward = formula_node("StdMeanBackward0", _std_mean_rule, arity=1, multi_output=True)


def _variance(name: str, x: Any, dim: Any, unbiased: Any, keepdim: Any, correction: Any
              ) -> tuple[Any, Any, tuple[int, ...], float, tuple[int, ...]]:
    if isinstance(dim, bool):  # ``var(x, True)``: PyTorch's (input, unbiased) overload
        if unbiased is not None:
            raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not bool")
        dim, unbiased = None, dim
    axes, c = _var_args(name, x, dim, unbiased, keepdim, correction)
    shape = tuple(x._data.shape)
    n = _count(shape, axes)
    data = x.backend.ops.var(x._data, axes, c, keepdim)
    if n <= c and x.numel():
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return data, n, axes, (n - c if n > c else 0.0), shape


@op("var")
def var(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None, out: Any = None, axis: Any = None,
        keepdims: Any = None) -> Tensor:
    """The variance over ``dim`` (None: every dimension), dividing by ``N - correction``
    (``correction`` defaults to 1; ``unbiased=False`` means 0).
    ``axis``: NumPy's name for ``dim``; ``keepdims``, for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("var", dim, axis, None)
        keepdim = keepdim_alias("var", keepdim, keepdims)
        if out is not None:
            return out_one("var", out, (x,), lambda: var(
                x, dim, unbiased, keepdim, correction=correction))
    data, n, axes, denom, shape = _variance("var", x, dim, unbiased, keepdim, correction)
    out = _tensor(x.backend, data)
    if _grad.enabled and x._requires_grad:
        record(VarBackward, out, (x,), (x._data,), (x,),
               (shape, _keep_shape(shape, axes), axes, denom))
    return out


@op("std")
def std(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        *, correction: float | None = None, out: Any = None, axis: Any = None,
        keepdims: Any = None) -> Tensor:
    """The standard deviation over ``dim``: the square root of ``var`` with the same
    arguments.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("std", dim, axis, None)
        keepdim = keepdim_alias("std", keepdim, keepdims)
        if out is not None:
            return out_one("std", out, (x,), lambda: std(
                x, dim, unbiased, keepdim, correction=correction))
    data, n, axes, denom, shape = _variance("std", x, dim, unbiased, keepdim, correction)
    be = x.backend
    out = _tensor(be, be.ops.sqrt(data))
    if _grad.enabled and x._requires_grad:
        record(StdBackward, out, (x,), (x._data, out._data), (x, 0),
               (shape, _keep_shape(shape, axes), axes, denom))
    return out


@op("var_mean")
def var_mean(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None, axis: Any = None,
             keepdims: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim``, from one backward node with two outputs.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("var_mean", dim, axis, None)
        keepdim = keepdim_alias("var_mean", keepdim, keepdims)
    data, n, axes, denom, shape = _variance("var_mean", x, dim, unbiased, keepdim, correction)
    be = x.backend
    v = _tensor(be, data)
    m = _tensor(be, be.ops.mean(x._data, _red_axes(axes), keepdim))
    if _grad.enabled and x._requires_grad:
        _record_pair(VarMeanBackward, v, m, x, (x._data,), (x,),
                     (shape, _keep_shape(shape, axes), axes, denom, n))
    return v, m


@op("std_mean")
def std_mean(x: Tensor, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
             *, correction: float | None = None, axis: Any = None,
             keepdims: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim``, from one backward node with two outputs.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``."""
    if axis is not None or keepdims is not None:
        dim = dim_alias("std_mean", dim, axis, None)
        keepdim = keepdim_alias("std_mean", keepdim, keepdims)
    data, n, axes, denom, shape = _variance("std_mean", x, dim, unbiased, keepdim, correction)
    be = x.backend
    s = _tensor(be, be.ops.sqrt(data))
    m = _tensor(be, be.ops.mean(x._data, _red_axes(axes), keepdim))
    if _grad.enabled and x._requires_grad:
        _record_pair(StdMeanBackward, s, m, x, (x._data, s._data), (x, 0),
                     (shape, _keep_shape(shape, axes), axes, denom, n))
    return s, m


# -- product ---------------------------------------------------------------------------------
def _prod_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` times the product of the other elements of each slice. Without a zero that is
    ``out / x``; with zeros it is built so that its own derivative is exact too (double
    backward): per slice, ``z`` zeros and ``p`` the product of the non-zero elements; a zero
    element's other-product is ``p`` (z = 1), the other zero times ``p`` (z = 2) or 0; a
    non-zero one's is ``p / x`` (z = 0), the zero times ``p / x`` (z = 1) or 0. A full
    reduction with several zeros has a zero gradient, as in PyTorch."""
    xshape, kshape, axes, zeros, full = attrs
    if not xshape:  # a 0-d input is its own product (nothing saved)
        return (g,)
    x, out = saved
    gx = _expand_back(F, g, attrs)
    if not zeros:
        return (F.mul(gx, F.div(_keep(F, out, kshape), x)),)
    ax = _red_axes(axes)
    is0 = F.eq(x, 0.0)
    ones = F.ones_like(x)
    nil = F.zeros_like(x)
    z = F.sum(F.where(is0, ones, nil), ax, True)
    s0 = F.sum(F.where(is0, x, nil), ax, True)  # 0, with a derivative of 1 at each zero
    safe = F.where(is0, ones, x)
    p = F.prod(safe, ax, True)
    one_zero = F.eq(z, 1.0)
    c = F.where(F.eq(z, 0.0), 1.0, F.where(one_zero, s0, 0.0))
    if full:
        d = F.where(one_zero, 1.0, 0.0)
    else:
        d = F.where(one_zero, 1.0, F.where(F.eq(z, 2.0), F.sub(s0, x), 0.0))
    factor = F.where(is0, F.mul(F.add(nil, d), p), F.mul(F.div(c, safe), p))
    return (F.mul(gx, factor),)


ProdBackward0 = formula_node("ProdBackward0", _prod_rule)
ProdBackward1 = formula_node("ProdBackward1", _prod_rule)


def _prod(x: Tensor, axes: tuple[int, ...], keepdim: bool, cls: Any) -> Tensor:
    be = x.backend
    ops = be.ops
    data = ops.prod(x._data, _red_axes(axes), keepdim)
    out = _tensor(be, data)
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        attrs = (shape, _keep_shape(shape, axes), axes, False, cls is ProdBackward0)
        if not shape:
            record(cls, out, (x,), (), (), attrs)
            return out
        zeros = bool(ops.any(ops.eq(x._data, 0.0), None, False))
        record(cls, out, (x,), (x._data, out._data), (x, 0), attrs[:3] + (zeros,) + attrs[4:])
    return out


def _as_given(res: Tensor, dtype: Any) -> Tensor:
    """``res`` in the ``dtype`` asked for: an integral dtype that the kernel accumulated in
    int64 (no gradient) is cast back, as PyTorch computes in it."""
    if dtype is None:
        return res
    dt = as_dtype(dtype)
    return res if res.dtype is dt else Tensor(cast_data(res, dt), res.backend)


def _cast_input(name: str, x: Tensor, dtype: Any, integral_to_long: bool = True) -> Tensor:
    """``x`` in ``dtype`` (a recorded cast), or an integer/bool ``x`` as int64 (PyTorch's
    accumulation type of the integral reductions)."""
    if dtype is not None:
        dt = as_dtype(dtype)
        if dt is x.dtype:
            return x
        from .conversion import to

        return to(x, dt)
    if integral_to_long and not x.dtype.is_floating_point and x.dtype is not int64:
        return Tensor(cast_data(x, int64), x.backend)
    return x


@op("prod")
def prod(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, dtype: Any = None,
         out: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """The product of every element, or along the one dimension ``dim``; integer and bool
    inputs give int64 unless ``dtype`` says otherwise.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("prod", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("prod", keepdim, keepdims)
        if out is not None:
            as_dt = dtype if dtype is not None else getattr(out, "dtype", None)
            return out_one("prod", out, (x,), lambda: prod(x, dim, keepdim, dtype=as_dt))
    _check_tensor("prod", x)
    _check_keepdim("prod", keepdim)
    if dim is _NO_DIM:
        _no_keepdim_without_dim("prod", keepdim)
        x = _cast_input("prod", x, dtype)
        axes = tuple(range(x.ndim))
        return _as_given(_prod(x, axes, keepdim, ProdBackward0), dtype)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of: (Tensor input, *, "
                        "torch.dtype dtype = None) or (Tensor input, int dim, bool keepdim = "
                        "False, *, torch.dtype dtype = None)")
    a = wrap_dim("prod", d, x.ndim)
    x = _cast_input("prod", x, dtype)
    return _as_given(_prod(x, (a,) if x.ndim else (), keepdim, ProdBackward1), dtype)


# -- extremes --------------------------------------------------------------------------------
def _even_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` spread evenly over the elements equal to the result (NaN ones where it is
    NaN): ``max()``, ``min()``, ``amin``, ``median()``."""
    x, out = saved
    kshape, axes, nan = attrs[1], attrs[2], attrs[3]
    hit = F.ne(x, x) if nan else F.eq(x, _keep(F, out, kshape))
    mask = F.where(hit, F.ones_like(x), 0.0)
    count = F.sum(mask, _red_axes(axes), True)
    return (F.mul(mask, F.div(_keep(F, g, kshape), count)),)


def _select_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` to the element each result was taken from (``max(dim)``, ``median(dim)``):
    ``saved`` holds the int64 indices, with the reduced axis kept."""
    xshape, kshape, axis = attrs
    if not xshape:  # a 0-d input: its one element
        return (g,)
    mask = _constant(F, g, "index_mask", xshape, saved[0], axis)
    return (F.where(mask, _expand_back(F, g, attrs), 0.0),)


class _MaskedNode(FormulaNode):
    """A formula node whose gradient reaches the input only through a mask computed from it
    (the even share among ties): under ``create_graph`` the gradient has history through the
    incoming gradient alone, as in PyTorch, not a zero derivative by the input."""

    __slots__ = ()

    def graph_rule(self, grad_outputs: Sequence[Any], needs: Sequence[Any]) -> tuple[Any, ...]:
        return self.rule(_graph_ops(), grad_outputs[0], self.unpack_saved(), self._attrs,
                         needs)


def _even_node(name: str) -> type[FormulaNode]:
    return type(name, (_MaskedNode,), {"__slots__": (), "rule": staticmethod(_even_rule),
                                       "_arity": 1})


MaxBackward0 = formula_node("MaxBackward0", _select_rule)
MaxBackward1 = _even_node("MaxBackward1")
MinBackward0 = formula_node("MinBackward0", _select_rule)
MinBackward1 = _even_node("MinBackward1")
AminBackward0 = _even_node("AminBackward0")
MedianBackward0 = _even_node("MedianBackward0")
MedianBackward1 = formula_node("MedianBackward1", _select_rule)
NanmedianBackward0 = _even_node("NanmedianBackward0")
NanmedianBackward1 = formula_node("NanmedianBackward1", _select_rule)


def _record_even(cls: Any, out: Tensor, x: Tensor, axes: tuple[int, ...]) -> None:
    if _grad.enabled and x._requires_grad:
        be = x.backend
        shape = tuple(x._data.shape)
        nan = out.numel() == 1 and bool(be.ops.any(be.ops.isnan(out._data), None, False))
        record(cls, out, (x,), (x._data, out._data), (x, 0),
               (shape, _keep_shape(shape, axes), axes, nan))


def _record_select(cls: Any, values: Tensor, x: Tensor, idx: Any, axis: int,
                   keepdim: bool) -> None:
    """``idx``: the chosen positions along ``axis``, kept as a size-1 axis."""
    if _grad.enabled and x._requires_grad:
        shape = tuple(x._data.shape)
        if not shape:
            record(cls, values, (x,), (), (), (shape, shape, axis))
            return
        record(cls, values, (x,), (idx,), (None,), (shape, _keep_shape(shape, (axis,)), axis))


def _full_extreme(name: str, x: Tensor, cls: Any) -> Tensor:
    if x.numel() == 0:
        raise ShapeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                         "== 0. Specify the reduction dim with the 'dim' argument.")
    be = x.backend
    kernel = be.ops.amax if name == "max" else be.ops.amin
    out = _tensor(be, kernel(x._data, None, False))
    _record_even(cls, out, x, tuple(range(x.ndim)))
    return out


def _dim_extreme(name: str, x: Tensor, dim: Any, keepdim: Any) -> Any:
    _check_keepdim(name, keepdim)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(dim).__name__}), but expected one of: (Tensor input), "
                        "(Tensor input, int dim, bool keepdim = False), (Tensor input, Tensor "
                        "other)")
    shape = tuple(x._data.shape)
    a = wrap_dim(name, d, len(shape))
    if shape and shape[a] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")
    be = x.backend
    ops = be.ops
    if shape:
        vals = (ops.amax if name == "max" else ops.amin)(x._data, (a,), keepdim)
        idx = (ops.argmax if name == "max" else ops.argmin)(x._data, a, True)
        idx_out = idx if keepdim else ops.squeeze(idx, (a,))
    else:
        vals = ops.copy(x._data)
        idx = idx_out = ops.astype(ops.zeros_like(x._data), be.xp_dtype(int64))
    values = _tensor(be, vals)
    indices = _tensor(be, idx_out)
    _record_select(MaxBackward0 if name == "max" else MinBackward0, values, x, idx, a, keepdim)
    types = return_types.max if name == "max" else return_types.min
    return types(values, indices)


@op("max")
def max(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,  # noqa: A001
        out: Any = None, axis: Any = None, keepdims: Any = None) -> Any:
    """The largest element (no ``dim``); with ``dim``, the named tuple ``(values, indices)``
    along it; with a Tensor in place of ``dim``, the elementwise ``maximum``.
    ``axis``: NumPy's name for ``dim``; ``keepdims``, for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("max", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("max", keepdim, keepdims)
        if out is not None:
            if dim is _NO_DIM or isinstance(dim, Tensor):
                return out_one("max", out, (x, dim), lambda: max(x, dim))
            return out_pair("max", out, (x,), lambda: max(x, dim, keepdim))
    _check_tensor("max", x)
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    if dim is _NO_DIM:
        _no_keepdim_without_dim("max", keepdim)
        return _full_extreme("max", x, MaxBackward1)
    return _dim_extreme("max", x, dim, keepdim)


@op("min")
def min(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,  # noqa: A001
        out: Any = None, axis: Any = None, keepdims: Any = None) -> Any:
    """The smallest element (no ``dim``); with ``dim``, the named tuple ``(values, indices)``
    along it; with a Tensor in place of ``dim``, the elementwise ``minimum``.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("min", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("min", keepdim, keepdims)
        if out is not None:
            if dim is _NO_DIM or isinstance(dim, Tensor):
                return out_one("min", out, (x, dim), lambda: min(x, dim))
            return out_pair("min", out, (x,), lambda: min(x, dim, keepdim))
    _check_tensor("min", x)
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    if dim is _NO_DIM:
        _no_keepdim_without_dim("min", keepdim)
        return _full_extreme("min", x, MinBackward1)
    return _dim_extreme("min", x, dim, keepdim)


@op("amin")
def amin(x: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None,
         axis: Any = None, keepdims: Any = None) -> Tensor:
    """The smallest value over ``dim`` (an int, a tuple, or None/``()``: every dimension);
    the gradient is shared evenly among ties.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("amin", dim, axis, None)
        keepdim = keepdim_alias("amin", keepdim, keepdims)
        if out is not None:
            if isinstance(x, Tensor):
                out_same_dtype("amin", out, x.dtype, _MATCH)
            return out_one("amin", out, (x,), lambda: amin(x, dim, keepdim))
    _check_tensor("amin", x)
    _check_keepdim("amin", keepdim)
    shape = tuple(x._data.shape)
    if x.numel() == 0:
        if dim is None or (isinstance(dim, (tuple, list)) and not dim):
            raise ShapeError("amin(): Expected reduction dim to be specified for input.numel() "
                             "== 0. Specify the reduction dim with the 'dim' argument.")
        for a in _axes("amin", dim, len(shape)):
            if shape and shape[a] == 0:
                raise IndexError(f"amin(): Expected reduction dim {a} to have non-zero size.")
    axes = _axes_of("amin", dim, len(shape))
    be = x.backend
    out = _tensor(be, be.ops.amin(x._data, _red_axes(axes), keepdim))
    _record_even(AminBackward0, out, x, axes)
    return out


def _arg_extreme(name: str, x: Any, dim: Any, keepdim: Any) -> Tensor:
    _check_tensor(name, x)
    _check_keepdim(name, keepdim)
    be = x.backend
    shape = tuple(x._data.shape)
    kernel = be.ops.argmax if name == "argmax" else be.ops.argmin
    if dim is None:
        if x.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        data = kernel(be.ops.reshape(x._data, (-1,)), 0, False)
        if keepdim:
            data = be.ops.reshape(data, (1,) * len(shape))
        return _tensor(be, data)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    a = wrap_dim(name, d, len(shape))
    if not shape:
        return _tensor(be, be.ops.astype(be.ops.zeros_like(x._data), be.xp_dtype(int64)))
    if shape[a] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")
    return _tensor(be, kernel(x._data, a, keepdim))


@op("argmax", differentiable=False)
def argmax(x: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None,
           axis: Any = None, keepdims: Any = None) -> Tensor:
    """The int64 index of the largest element along ``dim`` (None: of the flattened
    tensor); the first one among ties, a NaN counting as the largest.
    ``axis``: NumPy's name for ``dim``; ``keepdims``, for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("argmax", dim, axis, None)
        keepdim = keepdim_alias("argmax", keepdim, keepdims)
        if out is not None:
            out_same_dtype("argmax", out, int64, EXACT)
            return out_one("argmax", out, (x,), lambda: argmax(x, dim, keepdim))
    return _arg_extreme("argmax", x, dim, keepdim)


@op("argmin", differentiable=False)
def argmin(x: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None,
           axis: Any = None, keepdims: Any = None) -> Tensor:
    """The int64 index of the smallest element along ``dim`` (None: of the flattened
    tensor); the first one among ties, a NaN counting as the smallest.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("argmin", dim, axis, None)
        keepdim = keepdim_alias("argmin", keepdim, keepdims)
        if out is not None:
            out_same_dtype("argmin", out, int64, EXACT)
            return out_one("argmin", out, (x,), lambda: argmin(x, dim, keepdim))
    return _arg_extreme("argmin", x, dim, keepdim)


# -- medians ---------------------------------------------------------------------------------
def _median(name: str, x: Any, dim: Any, keepdim: Any) -> Any:
    _check_tensor(name, x)
    ignore_nan = name == "nanmedian"
    be = x.backend
    ops = be.ops
    shape = tuple(x._data.shape)
    if dim is _NO_DIM:
        if keepdim is not False:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        if x.numel() == 0:  # NaN, as PyTorch (its gradient: empty)
            out = _tensor(be, ops.add(ops.sum(ops.reshape(x._data, (-1,)), None, False),
                                      float("nan")))
        else:
            val, _ = ops.median(ops.reshape(x._data, (-1,)), 0, ignore_nan)
            out = _tensor(be, ops.reshape(val, ()))
        _record_even(NanmedianBackward0 if ignore_nan else MedianBackward0, out, x,
                     tuple(range(len(shape))))
        return out
    _check_keepdim(name, keepdim)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    a = wrap_dim(name, d, len(shape))
    if shape and shape[a] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")
    if shape:
        val, idx = ops.median(x._data, a, ignore_nan)
        vals = val if keepdim else ops.squeeze(val, (a,))
        idx_out = idx if keepdim else ops.squeeze(idx, (a,))
    else:
        vals = ops.copy(x._data)
        idx = idx_out = ops.astype(ops.zeros_like(x._data), be.xp_dtype(int64))
    values = _tensor(be, vals)
    indices = _tensor(be, idx_out)
    _record_select(NanmedianBackward1 if ignore_nan else MedianBackward1, values, x, idx, a,
                   keepdim)
    return getattr(return_types, name)(values, indices)


@op("median")
def median(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,
           out: Any = None, axis: Any = None, keepdims: Any = None) -> Any:
    """The lower median of every element (NaN if any is NaN; its gradient shared among the
    elements equal to it); with ``dim``, the named tuple ``(values, indices)`` along it.
    ``axis``: NumPy's name for ``dim``; ``keepdims``, for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("median", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("median", keepdim, keepdims)
        if out is not None:
            if dim is _NO_DIM:
                return out_one("median", out, (x,), lambda: median(x))
            return out_pair("median", out, (x,), lambda: median(x, dim, keepdim))
    return _median("median", x, dim, keepdim)


@op("nanmedian")
def nanmedian(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *,
           out: Any = None, axis: Any = None, keepdims: Any = None) -> Any:
    """``median`` ignoring NaNs (NaN only where every element is); with ``dim``, the named
    tuple ``(values, indices)`` along it.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("nanmedian", dim, axis, _NO_DIM)
        keepdim = keepdim_alias("nanmedian", keepdim, keepdims)
        if out is not None:
            if dim is _NO_DIM:
                return out_one("nanmedian", out, (x,), lambda: nanmedian(x))
            return out_pair("nanmedian", out, (x,), lambda: nanmedian(x, dim, keepdim))
    return _median("nanmedian", x, dim, keepdim)


# -- truth reductions and counts -------------------------------------------------------------
def _truth(name: str, x: Any, dim: Any, keepdim: Any) -> Tensor:
    _check_tensor(name, x)
    _check_keepdim(name, keepdim)
    shape = tuple(x._data.shape)
    axes = _axes_of(name, dim, len(shape))
    be = x.backend
    kernel = be.ops.all if name == "all" else be.ops.any
    return _tensor(be, kernel(x._data, _red_axes(axes), keepdim))


@op("all", differentiable=False)
def all(x: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """Whether every element is nonzero, over ``dim`` (None: every dimension); bool.
    ``axis``: NumPy's name for ``dim``; ``keepdims``, for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("all", dim, axis, None)
        keepdim = keepdim_alias("all", keepdim, keepdims)
        if out is not None:
            out_same_dtype("all", out, bool_,
                           "all only supports bool tensor for result, got: {Out}")
            return out_one("all", out, (x,), lambda: all(x, dim, keepdim))
    return _truth("all", x, dim, keepdim)


@op("any", differentiable=False)
def any(x: Tensor, dim: Any = None, keepdim: bool = False, *,  # noqa: A001
        out: Any = None, axis: Any = None, keepdims: Any = None) -> Tensor:
    """Whether some element is nonzero, over ``dim`` (None: every dimension); bool.
    ``axis``: NumPy's name for ``dim``; ``keepdims`` for ``keepdim``. ``out``: the result
    written into that tensor (``ops.inplace.write_out``)."""
    if axis is not None or keepdims is not None or out is not None:
        dim = dim_alias("any", dim, axis, None)
        keepdim = keepdim_alias("any", keepdim, keepdims)
        if out is not None:
            out_same_dtype("any", out, bool_,
                           "any only supports bool tensor for result, got: {Out}")
            return out_one("any", out, (x,), lambda: any(x, dim, keepdim))
    return _truth("any", x, dim, keepdim)


@op("count_nonzero", differentiable=False)
def count_nonzero(x: Tensor, dim: Any = None, *, axis: Any = None) -> Tensor:
    """The number of nonzero elements over ``dim`` (an int, a tuple, None: all); int64.
    ``axis``: NumPy's name for ``dim``."""
    dim = dim_alias("count_nonzero", dim, axis)
    _check_tensor("count_nonzero", x)
    shape = tuple(x._data.shape)
    axes = _axes_of("count_nonzero", dim, len(shape))
    be = x.backend
    return _tensor(be, be.ops.count_nonzero(x._data, _red_axes(axes)))


# -- trace -----------------------------------------------------------------------------------
def _trace_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    mask = _constant(F, g, "diagonal_mask", *attrs)
    return (F.where(mask, F.expand(g, attrs), 0.0),)


TraceBackward = formula_node("TraceBackward0", _trace_rule)


@op("trace")
def trace(x: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (also a non-square one); integer and bool
    inputs give int64."""
    _check_tensor("trace", x)
    if x.ndim != 2:
        raise RetrogradError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    x = _cast_input("trace", x, None)
    be = x.backend
    ops = be.ops
    rows, cols = x._data.shape
    mask = ops.diagonal_mask(rows, cols)
    out = _tensor(be, ops.sum(ops.where(mask, x._data, ops.zeros_like(x._data)), None, False))
    if _grad.enabled and x._requires_grad:
        record(TraceBackward, out, (x,), (), (), (rows, cols))
    return out


# -- cumulative sums and products ------------------------------------------------------------
def _revcumsum(F: Any, v: Any, dim: int) -> Any:
    """The sum of ``v`` from each place to the end of ``dim``: the backend's reversed running
    sum in the walk; ``total - cumsum(v) + v`` under ``create_graph`` (differentiable)."""
    if not isinstance(v, Tensor):
        return F.cumsum_reverse(v, dim)
    return F.add(F.sub(F.sum(v, (dim,), True), F.cumsum(v, dim)), v)


def _cumsum_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The sum of ``g`` from each place to the end."""
    dim, nd = attrs
    if nd == 0:
        return (g,)
    return (_revcumsum(F, g, dim),)


def _cumprod_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """Without zeros: ``revcumsum(g * out) / x``. With zeros, per slice with its first zero
    at ``z``: that formula before ``z``; at ``z``, ``revcumsum(g * cumprod(x with x_z = 1))``;
    0 after (O(n), in the walk). Under ``create_graph`` the derivative of ``out_j`` by
    ``x_i`` (``j >= i``) -- the running product up to ``j`` with ``x_i`` left out -- is taken
    over an extra axis ``i`` instead, O(n^2) as PyTorch's: exact for a second derivative too,
    where the one above is not (it is constant after ``z``)."""
    dim, nd, zeros, n = attrs
    if nd == 0:
        return (g,)
    x, out = saved[0], saved[1]
    if not zeros:
        return (F.div(_revcumsum(F, F.mul(g, out), dim), x),)
    if not isinstance(g, Tensor):
        is0 = F.eq(x, 0.0)
        seen = F.cumsum(F.where(is0, F.ones_like(x), 0.0), dim)  # zeros up to each place
        before = F.eq(seen, 0.0)
        first = F.logical_and(is0, F.eq(seen, 1.0))
        head = F.div(_revcumsum(F, F.mul(g, out), dim), F.where(before, x, 1.0))
        at = _revcumsum(F, F.mul(g, F.cumprod(F.where(first, 1.0, x), dim)), dim)
        return (F.where(before, head, F.where(first, at, 0.0)),)
    # k == i, and j >= i, over (.., j or k, i, ..)
    same, later = _constant(F, g, "position_masks", n, dim, nd)
    shape = tuple(x.shape)
    big = shape[:dim + 1] + (n,) + shape[dim + 1:]
    xb = F.expand(F.unsqueeze(x, dim + 1), big)  # x_k along dim, i along dim + 1
    partial = F.cumprod(F.where(same, 1.0, xb), dim)
    gj = F.expand(F.unsqueeze(g, dim + 1), big)
    return (F.sum(F.where(later, F.mul(gj, partial), 0.0), (dim,), False),)


def _cumprod_graph(x: Tensor, dim: int) -> Tensor:
    return cumprod(x, dim)


_GRAPH_EXTRA["cumprod"] = _cumprod_graph

def _logcumsumexp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``sum_{j >= i} g_j exp(x_i - out_j)``, as PyTorch computes it: the positive and the
    negative parts of ``g`` each through a log-space running sum the other way round (no
    overflow; ``lowest``, the dtype's lowest finite value, stands for log 0)."""
    dim, nd, reverse, lowest = attrs
    if nd == 0:
        return (g,)
    x, out = saved
    other_way = F.logcumsumexp
    log_abs = F.log(F.abs(g))
    parts = []
    for side in (F.gt(g, 0.0), F.lt(g, 0.0)):
        logs = F.where(side, log_abs, lowest)
        parts.append(F.exp(F.add(other_way(F.sub(logs, out), dim, not reverse), x)))
    return (F.sub(parts[0], parts[1]),)


def _logcumsumexp_graph(x: Tensor, dim: int, reverse: bool = False) -> Tensor:
    return _logcumsumexp(x, dim, reverse)


_GRAPH_EXTRA["logcumsumexp"] = _logcumsumexp_graph
GRAPH_KERNELS.update(_GRAPH_EXTRA)  # put in GRAPH_F: see ops.declare
_LOWEST = {"float16": -65504.0, "float32": -3.4028234663852886e38,
           "float64": -1.7976931348623157e308}

CumsumBackward = formula_node("CumsumBackward0", _cumsum_rule)
LogcumsumexpBackward = formula_node("LogcumsumexpBackward0", _logcumsumexp_rule)
CumprodBackward = formula_node("CumprodBackward0", _cumprod_rule)


def _cumulative(name: str, x: Any, dim: Any, dtype: Any) -> tuple[Tensor, int]:
    _check_tensor(name, x)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    a = wrap_dim(name, d, x.ndim)
    x = _cast_input(name, x, dtype)
    return x, a


@op("cumsum")
def cumsum(x: Tensor, dim: Any = MISSING, *, dtype: Any = None, out: Any = None,
           axis: Any = None) -> Tensor:
    """The running sum along ``dim``; integer and bool inputs give int64 unless ``dtype``
    says otherwise.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if dim is MISSING or axis is not None or out is not None:
        dim = required("cumsum", dim_alias("cumsum", dim, axis, MISSING))
        if out is not None:
            as_dt = dtype if dtype is not None else getattr(out, "dtype", None)
            return out_one("cumsum", out, (x,), lambda: cumsum(x, dim, dtype=as_dt))
    x, a = _cumulative("cumsum", x, dim, dtype)
    be = x.backend
    out = _tensor(be, be.ops.cumsum(x._data, a))
    if _grad.enabled and x._requires_grad:
        record(CumsumBackward, out, (x,), (), (), (a, x.ndim))
    return out


@op("cumprod")
def cumprod(x: Tensor, dim: Any = MISSING, *, dtype: Any = None, out: Any = None,
           axis: Any = None) -> Tensor:
    """The running product along ``dim``; integer and bool inputs give int64 unless
    ``dtype`` says otherwise.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if dim is MISSING or axis is not None or out is not None:
        dim = required("cumprod", dim_alias("cumprod", dim, axis, MISSING))
        if out is not None:
            as_dt = dtype if dtype is not None else getattr(out, "dtype", None)
            return out_one("cumprod", out, (x,), lambda: cumprod(x, dim, dtype=as_dt))
    x, a = _cumulative("cumprod", x, dim, dtype)
    be = x.backend
    ops = be.ops
    out = _tensor(be, ops.cumprod(x._data, a))
    if _grad.enabled and x._requires_grad:
        if not x.ndim:  # a 0-d input is its own running product (nothing saved)
            record(CumprodBackward, out, (x,), (), (), (a, 0, False, 1))
            return out
        zeros = bool(ops.any(ops.eq(x._data, 0.0), None, False))
        n = x._data.shape[a]
        record(CumprodBackward, out, (x,), (x._data, out._data), (x, 0), (a, x.ndim, zeros, n))
    return out



def _logcumsumexp(x: Tensor, a: int, reverse: bool) -> Tensor:
    be = x.backend
    out = _tensor(be, be.ops.logcumsumexp(x._data, a, reverse))
    if _grad.enabled and x._requires_grad:
        if not x.ndim:
            record(LogcumsumexpBackward, out, (x,), (), (), (a, 0, reverse, 0.0))
            return out
        record(LogcumsumexpBackward, out, (x,), (x._data, out._data), (x, 0),
               (a, x.ndim, reverse, _LOWEST.get(x.dtype.name, -1.7976931348623157e308)))
    return out


@op("logcumsumexp")
def logcumsumexp(x: Tensor, dim: Any = MISSING, *, out: Any = None,
                 axis: Any = None) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``dim``, computed without overflow or underflow of the
    early terms; floating-point inputs only.
    ``axis``: NumPy's name for ``dim``. ``out``: the result written into that tensor
    (``ops.inplace.write_out``)."""
    if dim is MISSING or axis is not None or out is not None:
        dim = required("logcumsumexp", dim_alias("logcumsumexp", dim, axis, MISSING))
        if out is not None:
            return out_one("logcumsumexp", out, (x,), lambda: logcumsumexp(x, dim))
    _check_tensor("logcumsumexp", x)
    d = None if isinstance(dim, bool) else _dim_int(dim)
    if d is None:
        raise TypeError(f"logcumsumexp(): argument 'dim' must be int, not {type(dim).__name__}")
    a = wrap_dim("logcumsumexp", d, x.ndim)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{torch_name(x.dtype)}'")
    return _logcumsumexp(x, a, False)
