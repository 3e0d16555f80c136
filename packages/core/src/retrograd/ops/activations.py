"""The activations ops (see docs/api.md): ``mish``, ``selu``, ``hardtanh``, ``relu6`` and
``logsigmoid`` (``nn.functional``; ``selu`` also ``retrograd.selu``), and the unary
elementwise ``exp2``, ``log2``, ``log10``, ``isnan``, ``isinf``, ``isfinite``, ``ceil``,
``trunc``, ``frac``.

Each derivative rule is PyTorch's formula (``derivatives.yaml``), written once against ``F``
(the raw kernels, or ``GRAPH_F`` under ``create_graph``) from names both namespaces have, so
double backward works. Kinks follow PyTorch: ``hardtanh``'s gradient is ``g`` strictly inside
``(min_val, max_val)`` and 0 on the bounds; ``selu``'s takes the negative branch at 0.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import promotion
from ._core import OUTPUT, record
from .declare import op
from .elementwise import _unary

__all__ = ["mish", "selu", "hardtanh", "relu6", "logsigmoid", "exp2", "log2", "log10",
           "isnan", "isinf", "isfinite", "ceil", "trunc", "frac"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _type_name(v: Any) -> str:
    return "NoneType" if v is None else type(v).__name__


def _tensor_input(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(x)}")
    return x


def _float_input(name: str, kernel: str, x: Any) -> Tensor:
    """``x``, refused (as PyTorch) unless a floating point tensor."""
    x = _tensor_input(name, x)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}_{x.device.type}\" not implemented for "
                                  f"'{promotion.torch_name(x.dtype)}' ({name} takes a floating "
                                  "point tensor)")
    return x


def _finish(be: Any, data: Any, dtype: Any = None) -> Tensor:
    if dtype is not None:
        data = promotion.fix_result(be, data, dtype)
    return Tensor(data if type(data) is be.array_type else be.asarray(data), be)


def _raw_into(x: Tensor, fn: Any) -> Any:
    """The unrecorded in-place form of ``fn``: computed out of place, written into the
    array."""
    be = x.backend

    def raw(a: Any) -> None:
        be.ops.assign_(a, fn(Tensor(a, be))._data)

    return raw


# -- mish ---------------------------------------------------------------------------------------
def _tanh_softplus(F: Any, x: Any) -> tuple[Any, Any]:
    """``(sigmoid(x), tanh(softplus(x)))``, the latter as ``s (2 - s) / (1 + (1 - s)^2)``
    (``s = sigmoid(x)``): no overflow, no cancellation, and smooth (double backward)."""
    s = F.sigmoid(x)
    c = F.sub(1.0, s)
    return s, F.div(F.mul(s, F.sub(2.0, s)), F.add(F.mul(c, c), 1.0))


def _mish_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``mish_backward``: ``g * (t + x * s * (1 - t^2))``, ``t = tanh(softplus(x))``,
    ``s = sigmoid(x)``."""
    (x,) = saved
    s, t = _tanh_softplus(F, x)
    return (F.mul(g, F.add(t, F.mul(F.mul(x, s), F.sub(1.0, F.mul(t, t))))),)


MishBackward = formula_node("MishBackward0", _mish_rule, arity=1)


@op("mish", method=False, function=False)
def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``; ``inplace``: written into ``input``."""
    x = _float_input("mish", "mish", input)
    if inplace:
        from .inplace import _inplace

        return _inplace("mish_", x, (), mish, _raw_into(x, mish), True)
    be = x.backend
    F = be.ops
    _, t = _tanh_softplus(F, x._data)
    out = _finish(be, F.mul(x._data, t))
    if _grad.enabled and x._requires_grad:
        record(MishBackward, out, (x,), (x._data,), (x,))
    return out


# -- selu ---------------------------------------------------------------------------------------
def _selu_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``elu_backward`` with selu's coefficients: ``g * scale`` where positive,
    else ``g * alpha * scale * exp(x)`` -- or, from the result (in place, EluBackward1),
    ``g * (result + alpha * scale)``. The value is read through ``where(v < 0, v, 0)``."""
    (v,) = saved
    is_result = attrs
    below = F.where(F.lt(v, 0.0), v, 0.0)
    neg_coef = _SELU_ALPHA * _SELU_SCALE
    if is_result:
        neg = F.mul(g, F.add(below, neg_coef))
    else:
        neg = F.mul(F.mul(g, neg_coef), F.exp(below))
    return (F.where(F.gt(v, 0.0), F.mul(g, _SELU_SCALE), neg),)


SeluBackward0 = formula_node("EluBackward0", _selu_rule, arity=1)
SeluBackward1 = formula_node("EluBackward1", _selu_rule, arity=1)


def _selu(x: Tensor, saves_result: bool) -> Tensor:
    be = x.backend
    F = be.ops
    a = x._data
    data = F.mul(F.where(F.gt(a, 0.0), a, F.mul(F.expm1(a), _SELU_ALPHA)), _SELU_SCALE)
    out = _finish(be, data)
    if _grad.enabled and x._requires_grad:
        if saves_result:
            record(SeluBackward1, out, (x,), (out._data,), OUTPUT, True)
        else:
            record(SeluBackward0, out, (x,), (a,), (x,), False)
    return out


@op("selu", method=False)
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * (x`` where positive, else ``alpha * (exp(x) - 1))`` with PyTorch's fixed
    ``alpha``, ``scale``; ``inplace``: written into ``input`` (its node saves the result)."""
    x = _float_input("selu", "elu", input)
    if inplace:
        from .inplace import _inplace

        return _inplace("selu_", x, (), lambda old: _selu(old, True),
                        _raw_into(x, lambda t: _selu(t, False)), False, adopt=True)
    return _selu(x, False)


# -- hardtanh, relu6 ----------------------------------------------------------------------------
def _hardtanh_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``hardtanh_backward``: ``g`` strictly between the bounds, else 0 (the same
    read from the input or from the clamped result)."""
    (v,) = saved
    lo, hi = attrs
    return (F.where(F.logical_and(F.gt(v, lo), F.lt(v, hi)), g, 0.0),)


HardtanhBackward = formula_node("HardtanhBackward0", _hardtanh_rule, arity=1)


def _hardtanh(x: Tensor, lo: float, hi: float, saves_result: bool) -> Tensor:
    be = x.backend
    dt = x.dtype
    if dt.is_floating_point:
        blo, bhi = float(lo), float(hi)
    else:
        blo, bhi = int(lo), int(hi)
    out = _finish(be, be.ops.clip(x._data, blo, bhi), dt)
    if _grad.enabled and x._requires_grad:
        if saves_result:
            record(HardtanhBackward, out, (x,), (out._data,), OUTPUT, (lo, hi))
        else:
            record(HardtanhBackward, out, (x,), (x._data,), (x,), (lo, hi))
    return out


@op("hardtanh", method=False, function=False)
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]`` (gradient 1 strictly inside, else 0);
    ``inplace``: written into ``input``."""
    x = _tensor_input("hardtanh", input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if x.dtype is bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.name.startswith("uint") and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if inplace:
        from .inplace import _inplace

        return _inplace("hardtanh_", x, (), lambda old: _hardtanh(old, min_val, max_val, True),
                        _raw_into(x, lambda t: _hardtanh(t, min_val, max_val, False)), False,
                        adopt=True)
    return _hardtanh(x, min_val, max_val, False)


@op("relu6", method=False, function=False)
def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)``, PyTorch's ``hardtanh(x, 0, 6)`` (HardtanhBackward0)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# -- logsigmoid ---------------------------------------------------------------------------------
def _logsigmoid_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``log_sigmoid_backward``: ``g * sigmoid(-x)``."""
    (x,) = saved
    return (F.mul(g, F.sigmoid(F.neg(x))),)


LogSigmoidBackward = formula_node("LogSigmoidBackward0", _logsigmoid_rule, arity=1)


@op("logsigmoid", method=False, function=False)
def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, computed as ``min(x, 0) - log1p(exp(-|x|))`` (no overflow)."""
    x = _float_input("logsigmoid", "log_sigmoid", input)
    be = x.backend
    F = be.ops
    a = x._data
    data = F.sub(F.minimum(a, F.zeros_like(a)), F.log1p(F.exp(F.neg(F.abs(a)))))
    out = _finish(be, data, x.dtype)
    if _grad.enabled and x._requires_grad:
        record(LogSigmoidBackward, out, (x,), (a,), (x,))
    return out


# -- exp2, log2, log10 --------------------------------------------------------------------------
Exp2Backward = formula_node(  # g * out * ln 2
    "Exp2Backward0", lambda F, g, s, a, n: (F.mul(g, F.mul(s[0], _LN2)),), arity=1)
Log2Backward = formula_node(  # g / (x * ln 2)
    "Log2Backward0", lambda F, g, s, a, n: (F.div(g, F.mul(s[0], _LN2)),), arity=1)
Log10Backward = formula_node(  # g / (x * ln 10)
    "Log10Backward0", lambda F, g, s, a, n: (F.div(g, F.mul(s[0], _LN10)),), arity=1)


@op("exp2")
def exp2(input: Tensor) -> Tensor:  # noqa: A002
    """``2 ** x``; integers compute in the default float dtype."""
    _tensor_input("exp2", input)
    return _unary("exp2", Exp2Backward, input, "out", True)


@op("log2")
def log2(input: Tensor) -> Tensor:  # noqa: A002
    """The base-2 logarithm; integers compute in the default float dtype."""
    _tensor_input("log2", input)
    return _unary("log2", Log2Backward, input, "in", True)


@op("log10")
def log10(input: Tensor) -> Tensor:  # noqa: A002
    """The base-10 logarithm; integers compute in the default float dtype."""
    _tensor_input("log10", input)
    return _unary("log10", Log10Backward, input, "in", True)


# -- isnan, isinf, isfinite ---------------------------------------------------------------------
def _predicate(name: str, x: Any) -> Tensor:
    x = _tensor_input(name, x)
    be = x.backend
    return _finish(be, getattr(be.ops, name)(x._data), bool_)


@op("isnan", differentiable=False)
def isnan(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element is NaN (a bool tensor, no gradient)."""
    return _predicate("isnan", input)


@op("isinf", differentiable=False)
def isinf(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element is +inf or -inf (a bool tensor, no gradient)."""
    return _predicate("isinf", input)


@op("isfinite", differentiable=False)
def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element is neither infinite nor NaN (a bool tensor, no gradient)."""
    return _predicate("isfinite", input)


# -- ceil, trunc, frac --------------------------------------------------------------------------
def _zero_rule(F: Any, g: Any, s: Any, a: Any, n: Any) -> tuple[Any]:
    return (F.zeros_like(g),)


CeilBackward = formula_node("CeilBackward0", _zero_rule, arity=1)
TruncBackward = formula_node("TruncBackward0", _zero_rule, arity=1)
FracBackward = formula_node("FracBackward0", lambda F, g, s, a, n: (g,), arity=1)


def _rounding(name: str, cls: Any, x: Any) -> Tensor:
    x = _tensor_input(name, x)
    if x.dtype is bool_:
        raise NotImplementedError(f"\"{name}_vml_{x.device.type}\" not implemented for 'Bool' "
                                  f"({name} of a bool tensor: convert it first)")
    if not x.dtype.is_floating_point:
        be = x.backend
        return Tensor(be.ops.copy(x._data), be)
    return _unary(name, cls, x, None)


@op("ceil")
def ceil(input: Tensor) -> Tensor:  # noqa: A002
    """The smallest integer not below ``x``, in ``x``'s dtype (an integer tensor is copied);
    its gradient is zero (CeilBackward0)."""
    return _rounding("ceil", CeilBackward, input)


@op("trunc")
def trunc(input: Tensor) -> Tensor:  # noqa: A002
    """``x`` rounded toward zero, in ``x``'s dtype (an integer tensor is copied); its
    gradient is zero (TruncBackward0)."""
    return _rounding("trunc", TruncBackward, input)


@op("frac")
def frac(input: Tensor) -> Tensor:  # noqa: A002
    """``x - trunc(x)`` (the sign of ``x``); floating point tensors only; gradient ``g``."""
    x = _float_input("frac", "frac", input)
    return _unary("frac", FracBackward, x, None)
