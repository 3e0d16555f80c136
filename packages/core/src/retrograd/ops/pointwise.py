"""Elementwise ops added to the first set (``ops/elementwise.py``), and their in-place forms
(``ops/inplace.py``).

Each derivative rule is PyTorch's formula (``derivatives.yaml``), written against ``F``. The
op namespace of a double backward (``GRAPH_F``) gets this module's differentiable ops for the
kernels added here (``cosh`` ...) through ``ops.declare.GRAPH_KERNELS``, so one rule serves
the fast walk and ``create_graph`` alike.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_, float32, float64, get_default_dtype, int64
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import promotion
from ._core import OUTPUT, check_device, record
from .declare import GRAPH_KERNELS, op
from .elementwise import ReciprocalBackward, _broadcast_error, _unary, broadcast_mismatch

__all__ = ["log1p", "expm1", "square", "reciprocal", "rsqrt", "sign", "floor", "tan", "sinh",
           "cosh", "asin", "acos", "atan", "erf", "atan2", "masked_fill", "isin", "signbit",
           "softplus", "silu", "gelu", "leaky_relu", "elu"]


def _zero_rule(F: Any, g: Any, s: Any, a: Any, n: Any) -> tuple[Any]:
    return (F.zeros_like(g),)


Log1PBackward = formula_node(
    "Log1PBackward0", lambda F, g, s, a, n: (F.div(g, F.add(s[0], 1.0)),), arity=1)
Expm1Backward = formula_node(
    "Expm1Backward0", lambda F, g, s, a, n: (F.mul(g, F.add(s[0], 1.0)),), arity=1)
RsqrtBackward = formula_node(  # -0.5 * g * out ** 3
    "RsqrtBackward0", lambda F, g, s, a, n: (F.mul(F.mul(g, -0.5), F.pow(s[0], 3)),), arity=1)
SignBackward = formula_node("SignBackward0", _zero_rule, arity=1)
FloorBackward = formula_node("FloorBackward0", _zero_rule, arity=1)
TanBackward = formula_node(  # g * (1 + out ** 2)
    "TanBackward0", lambda F, g, s, a, n: (F.mul(g, F.add(F.mul(s[0], s[0]), 1.0)),), arity=1)
SinhBackward = formula_node(
    "SinhBackward0", lambda F, g, s, a, n: (F.mul(g, F.cosh(s[0])),), arity=1)
CoshBackward = formula_node(
    "CoshBackward0", lambda F, g, s, a, n: (F.mul(g, F.sinh(s[0])),), arity=1)


def _one_minus_square_rsqrt(F: Any, x: Any) -> Any:
    """``(1 - x*x).rsqrt()``, as PyTorch writes it: ``(-x * x + 1).rsqrt()``."""
    return F.rsqrt(F.add(F.mul(F.neg(x), x), 1.0))


AsinBackward = formula_node(
    "AsinBackward0", lambda F, g, s, a, n: (F.mul(g, _one_minus_square_rsqrt(F, s[0])),),
    arity=1)
AcosBackward = formula_node(
    "AcosBackward0",
    lambda F, g, s, a, n: (F.mul(g, F.neg(_one_minus_square_rsqrt(F, s[0]))),), arity=1)
AtanBackward = formula_node(
    "AtanBackward0", lambda F, g, s, a, n: (F.div(g, F.add(F.mul(s[0], s[0]), 1.0)),), arity=1)


def _check(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _no_bool(kernel: str) -> Any:
    def error(x: Tensor) -> Exception:
        return NotImplementedError(f"\"{kernel}_{x.device.type}\" not implemented for 'Bool' "
                                   f"({kernel} of a bool tensor: convert it first)")

    return error


@op("log1p")
def log1p(x: Tensor) -> Tensor:
    """``log(1 + x)``, accurate for small ``x``; integers compute in the default float dtype."""
    _check("log1p", x)
    return _unary("log1p", Log1PBackward, x, "in", True)


@op("expm1")
def expm1(x: Tensor) -> Tensor:
    """``exp(x) - 1``, accurate for small ``x``; integers compute in the default float dtype."""
    _check("expm1", x)
    return _unary("expm1", Expm1Backward, x, "out", True)


@op("square")
def square(x: Tensor) -> Tensor:
    """``x * x``, PyTorch's ``pow(x, 2)`` (PowBackward0); a bool tensor gives int64."""
    from .elementwise import pow as pow_

    _check("square", x)
    if x.dtype is bool_:
        x = Tensor(promotion.cast_data(x, int64), x.backend)
    return pow_(x, 2)


@op("reciprocal")
def reciprocal(x: Tensor) -> Tensor:
    """``1 / x``; integers compute in the default float dtype (ReciprocalBackward0)."""
    _check("reciprocal", x)
    return _unary("reciprocal", ReciprocalBackward, x, "out", True)


@op("rsqrt")
def rsqrt(x: Tensor) -> Tensor:
    """``1 / sqrt(x)``; integers compute in the default float dtype."""
    _check("rsqrt", x)
    return _unary("rsqrt", RsqrtBackward, x, "out", True)


@op("sign")
def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 elementwise (0 at NaN), in ``x``'s dtype; its gradient is zero."""
    from .elementwise import _sgn

    _check("sign", x)
    be = x.backend
    dt = x.dtype
    if dt is bool_:
        data = be.ops.copy(x._data)
    elif dt.is_floating_point:
        data = _sgn(be.ops, x._data)
    else:
        data = be.ops.sign(x._data)
    out = Tensor(promotion.fix_result(be, data, dt), be)
    if _grad.enabled and x._requires_grad:
        record(SignBackward, out, (x,))
    return out


@op("floor")
def floor(x: Tensor) -> Tensor:
    """The largest integer not above ``x``, elementwise, in ``x``'s dtype (an integer tensor
    is copied); its gradient is zero."""
    _check("floor", x)
    if not x.dtype.is_floating_point and x.dtype is not bool_:
        be = x.backend
        return Tensor(be.ops.copy(x._data), be)
    return _unary("floor", FloorBackward, x, None, no_bool=_no_bool("floor_vml"))


@op("tan")
def tan(x: Tensor) -> Tensor:
    """``tan(x)``; integers compute in the default float dtype."""
    _check("tan", x)
    return _unary("tan", TanBackward, x, "out", True)


@op("sinh")
def sinh(x: Tensor) -> Tensor:
    """``sinh(x)``; integers compute in the default float dtype."""
    _check("sinh", x)
    return _unary("sinh", SinhBackward, x, "in", True)


@op("cosh")
def cosh(x: Tensor) -> Tensor:
    """``cosh(x)``; integers compute in the default float dtype."""
    _check("cosh", x)
    return _unary("cosh", CoshBackward, x, "in", True)


@op("asin")
def asin(x: Tensor) -> Tensor:
    """``arcsin(x)`` (NaN outside [-1, 1]); integers compute in the default float dtype."""
    _check("asin", x)
    return _unary("asin", AsinBackward, x, "in", True)


@op("acos")
def acos(x: Tensor) -> Tensor:
    """``arccos(x)`` (NaN outside [-1, 1]); integers compute in the default float dtype."""
    _check("acos", x)
    return _unary("acos", AcosBackward, x, "in", True)


@op("atan")
def atan(x: Tensor) -> Tensor:
    """``arctan(x)``; integers compute in the default float dtype."""
    _check("atan", x)
    return _unary("atan", AtanBackward, x, "in", True)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
ErfBackward = formula_node(  # 2/sqrt(pi) * exp(-x^2) * g
    "ErfBackward0", lambda F, g, s, a, n: (
        F.mul(F.mul(F.exp(F.neg(F.mul(s[0], s[0]))), _TWO_OVER_SQRT_PI), g),), arity=1)


@op("erf")
def erf(x: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``; integers compute in
    the default float dtype."""
    _check("erf", x)
    return _unary("erf", ErfBackward, x, "in", True)


# -- atan2 ---------------------------------------------------------------------------------------
def _atan2_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``atan2_backward``: with ``r = 1 / (a*a + b*b)`` -- taken as 0 where
    ``a*a + b*b`` is 0, so that the gradient at (0, 0) is 0, not NaN -- d/da = g * b * r and
    d/db = g * -a * r."""
    a, b = saved
    d = F.add(F.mul(a, a), F.mul(b, b))
    zero = F.eq(d, 0.0)
    recip = F.where(zero, 0.0, F.div(1.0, F.where(zero, 1.0, d)))
    ga = F.reduce_to(F.mul(F.mul(g, b), recip), attrs[0]) if needs[0] else None
    gb = F.reduce_to(F.mul(F.mul(g, F.neg(a)), recip), attrs[1]) if needs[1] else None
    return ga, gb


Atan2Backward = formula_node("Atan2Backward0", _atan2_rule, arity=2)


def _type_name(v: Any) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


@op("atan2")
def atan2(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The angle of the point ``(other, input)``: ``arctan(input / other)`` in the right
    quadrant. The two tensors broadcast and promote; integers compute in the default float
    dtype. ``out``: written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:
        from .inplace import write_out

        return write_out("atan2", out, (input, other), lambda: atan2(input, other))
    for arg, v in (("'input' (position 1)", input), ("'other' (position 2)", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"atan2(): argument {arg} must be Tensor, not {_type_name(v)}")
    check_device("atan2", input, other)
    be = input.backend
    r = promotion.operands_result_type(input, other)
    if not r.is_floating_point:
        r = get_default_dtype()
    ad = promotion.cast_data(input, r)
    bd = promotion.cast_data(other, r)
    try:
        data = be.ops.atan2(ad, bd)
    except ValueError as exc:
        raise _broadcast_error("atan2", ad, bd, exc) from None
    out = Tensor(promotion.fix_result(be, data, r), be)
    if _grad.enabled and (input._requires_grad or other._requires_grad):
        attrs: Any = (tuple(ad.shape), tuple(bd.shape))
        cls = Atan2Backward
        casts = promotion.grad_casts(be, r, input, other)
        if casts is not None:
            cls = promotion.promoted_class(cls)
            attrs = (attrs, casts)
        record(cls, out, (input, other), (ad, bd),
               (input if ad is input._data else None, other if bd is other._data else None),
               attrs)
    return out


# -- masked_fill ---------------------------------------------------------------------------------
def _masked_fill_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """``input``'s gradient: g with zeros where the mask holds (summed back to the input's
    shape); a tensor value's (MaskedFillBackward1): the sum of g where the mask holds."""
    (mask,) = saved
    shape, tensor_value, cast = attrs
    gx = F.reduce_to(F.where(mask, 0.0, g), shape) if needs[0] else None
    if not tensor_value:
        return (gx,)
    gv = F.sum(F.where(mask, g, 0.0), None, False) if needs[1] else None
    return gx, promotion._cast_grad(F, gv, cast)  # into the value's own dtype


MaskedFillBackward0 = formula_node("MaskedFillBackward0", _masked_fill_rule, arity=1)
MaskedFillBackward1 = formula_node("MaskedFillBackward1", _masked_fill_rule, arity=2)


def masked_fill_value(name: str, x: Tensor, mask: Any, value: Any) -> Any:
    """Check ``masked_fill``'s arguments as PyTorch does; the value as a Tensor (0-d) or a
    Python number."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(x)}")
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' (position 2) must be Tensor, not "
                        f"{_type_name(mask)}")
    check_device(name, x, mask)
    if mask.dtype is not bool_:
        raise DTypeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                         f"{promotion.c_name(mask.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ShapeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                             f"tensor with {value.ndim} dimension(s).")
        return value
    v = promotion.scalar_value(value)
    if not promotion.is_number(v):
        raise TypeError(f"{name}() received an invalid combination of arguments: value must be "
                        f"a number or a 0-d Tensor, not {_type_name(value)}")
    return v


@op("masked_fill")
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` (a number, or a 0-d tensor, whose gradient is the sum of the
    output's gradient where the mask holds) wherever the bool ``mask`` is True; ``input`` and
    ``mask`` broadcast together. The result keeps ``input``'s dtype."""
    value = masked_fill_value("masked_fill", input, mask, value)
    be = input.backend
    err = broadcast_mismatch("masked_fill", input.shape, mask.shape)
    if err is not None:
        raise err
    tv = isinstance(value, Tensor)
    if tv:
        check_device("masked_fill", input, value)
        v: Any = promotion.cast_data(value, input.dtype)
    else:
        v = promotion.number_as(value, input.dtype, False)
    data = be.ops.masked_fill(input._data, mask._data, v)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    needs_v = tv and value._requires_grad
    if _grad.enabled and (input._requires_grad or needs_v):
        attrs = (tuple(input._data.shape), tv,
                 promotion._pair(be, value, input.dtype) if tv else None)
        if tv:
            record(MaskedFillBackward1, out, (input, value), (mask._data,), (mask,), attrs)
        else:
            record(MaskedFillBackward0, out, (input,), (mask._data,), (mask,), attrs)
    return out


# -- ops without a gradient ----------------------------------------------------------------------
@op("isin", method=False, differentiable=False)
def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """A bool tensor of ``elements``' shape: whether each element is among
    ``test_elements`` (either may be a number; compared in their promoted dtype).
    ``invert``: whether each is not. ``assume_unique`` is accepted and changes nothing."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one of "
                        "elements and test_elements must be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    be = like.backend
    ops = []
    for v in (elements, test_elements):
        if isinstance(v, Tensor):
            check_device("isin", like, v)
            ops.append(v)
        else:
            n = promotion.scalar_value(v)
            if not promotion.is_number(n):
                raise TypeError(f"isin(): expected a Tensor or a number, got {_type_name(v)}")
            ops.append(n)
    r = promotion.operands_result_type(*ops)
    arrays = []
    for v in ops:
        if isinstance(v, Tensor):
            arrays.append(promotion.cast_data(v, r))
        else:
            arrays.append(be.asarray(promotion.cast_scalar(v, r), r))
    data = be.ops.isin(arrays[0], arrays[1], bool(invert))
    return Tensor(promotion.fix_result(be, data, bool_), be)


@op("signbit", differentiable=False)
def signbit(input: Tensor) -> Tensor:  # noqa: A002
    """Whether each element's sign bit is set (True at -0.0 and negative values); a bool
    tensor without gradient."""
    _check("signbit", input)
    be = input.backend
    data = input._data
    if not input.dtype.is_floating_point:
        data = promotion.cast_data(input, get_default_dtype())
    return Tensor(promotion.fix_result(be, be.ops.signbit(data), bool_), be)


# -- activations (``nn.functional``) -----------------------------------------------------------
# Declared with neither function nor method: PyTorch has them in ``torch.nn.functional`` only
# (re-exported by ``retrograd.nn.functional``); the declaration lists them in the registry.
def _activation_input(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(x)}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_{x.device.type}\" not implemented for "
                                  f"'{promotion.torch_name(x.dtype)}' ({name} takes a floating "
                                  "point tensor)")
    return x


def _finish(be: Any, data: Any) -> Tensor:
    return Tensor(data if type(data) is be.array_type else be.asarray(data), be)


def _softplus_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``softplus_backward``: g where ``x * beta > threshold``, else
    ``g * z / (z + 1)`` with ``z = exp(x * beta)``."""
    (x,) = saved
    beta, threshold = attrs
    xb = F.mul(x, beta)
    z = F.exp(xb)
    return (F.where(F.gt(xb, threshold), g, F.div(F.mul(g, z), F.add(z, 1.0))),)


SoftplusBackward = formula_node("SoftplusBackward0", _softplus_rule, arity=1)


@op("softplus", method=False, function=False)
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``."""
    x = _activation_input("softplus", input)
    be = x.backend
    F = be.ops
    xb = F.mul(x._data, beta)
    data = F.where(F.gt(xb, threshold), x._data, F.div(F.log1p(F.exp(xb)), beta))
    out = _finish(be, data)
    if _grad.enabled and x._requires_grad:
        record(SoftplusBackward, out, (x,), (x._data,), (x,), (beta, threshold))
    return out


def _silu_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``silu_backward``: ``g * s * (1 + x * (1 - s))``, ``s = sigmoid(x)``."""
    (x,) = saved
    sig = F.sigmoid(x)
    return (F.mul(F.mul(g, sig), F.add(F.mul(x, F.sub(1.0, sig)), 1.0)),)


SiluBackward = formula_node("SiluBackward0", _silu_rule, arity=1)


@op("silu", method=False, function=False)
def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)``; ``inplace``: written into ``input``."""
    x = _activation_input("silu", input)
    if inplace:
        from .inplace import _inplace

        return _inplace("silu_", x, (), silu, _raw_into(x, silu), True)
    be = x.backend
    F = be.ops
    out = _finish(be, F.mul(x._data, F.sigmoid(x._data)))
    if _grad.enabled and x._requires_grad:
        record(SiluBackward, out, (x,), (x._data,), (x,))
    return out


_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K_BETA = math.sqrt(2.0 / math.pi)
_K_KAPPA = 0.044715


def _gelu_derivative(F: Any, g: Any, x: Any, approximate: str) -> Any:
    """PyTorch's ``gelu_backward`` as a formula against ``F``: exact, ``g * (cdf + x *
    pdf)``; ``tanh``, the derivative of ``0.5 x (1 + tanh(k (x + 0.044715 x^3)))``."""
    if approximate == "none":
        cdf = F.mul(F.add(F.erf(F.mul(x, _SQRT1_2)), 1.0), 0.5)
        pdf = F.mul(F.exp(F.mul(F.mul(x, x), -0.5)), _INV_SQRT_2PI)
        return F.mul(g, F.add(cdf, F.mul(x, pdf)))
    x_sq = F.mul(x, x)
    inner = F.mul(F.add(x, F.mul(F.mul(x_sq, x), _K_KAPPA)), _K_BETA)
    t = F.tanh(inner)
    left_derivative = F.mul(F.add(t, 1.0), 0.5)
    right_derivative = F.mul(F.mul(F.mul(x, 0.5), F.sub(1.0, F.mul(t, t))),
                             F.mul(F.add(F.mul(x_sq, 3.0 * _K_KAPPA), 1.0), _K_BETA))
    return F.mul(g, F.add(left_derivative, right_derivative))


def _graph_gelu_backward(g: Tensor, x: Tensor, approximate: str) -> Tensor:
    """``gelu_backward`` on tensors (``GRAPH_F``'s): the formula on differentiable ops, so
    that the gradient can be differentiated again."""
    from .graph_namespace import GRAPH_F

    return _gelu_derivative(GRAPH_F, g, x, approximate)  # type: ignore[no-any-return]


def _gelu_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``gelu_backward`` (``attrs``: the form): one ``gelu_backward`` kernel in the
    walk, the differentiable formula under ``create_graph``."""
    return (F.gelu_backward(g, saved[0], attrs),)


GeluBackward = formula_node("GeluBackward0", _gelu_rule, arity=1)


@op("gelu", method=False, function=False)
def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)`` (``Phi`` the standard normal's distribution function); ``approximate=
    "tanh"``: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    x = _activation_input("gelu", input)
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh. (got "
                         f"{approximate!r})")
    be = x.backend
    F = be.ops
    a = x._data
    if x.dtype in (float32, float64):  # one blockwise kernel, the same roundings
        data = F.gelu(a, approximate)
    elif approximate == "none":
        data = F.mul(F.mul(a, 0.5), F.add(F.erf(F.mul(a, _SQRT1_2)), 1.0))
    else:
        inner = F.mul(F.add(a, F.mul(F.mul(F.mul(a, a), a), _K_KAPPA)), _K_BETA)
        data = F.mul(F.mul(a, 0.5), F.add(F.tanh(inner), 1.0))
    out = _finish(be, data)
    if _grad.enabled and x._requires_grad:
        record(GeluBackward, out, (x,), (x._data,), (x,), approximate)
    return out


def _leaky_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``g`` where the input (or, in place, the result) is positive, else ``g * slope``."""
    return (F.where(F.gt(saved[0], 0.0), g, F.mul(g, attrs)),)


def _leaky_result_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``_leaky_rule`` from the result (in place): refused for a negative slope, whose
    result's sign no longer tells the input's, as PyTorch refuses it (at the backward)."""
    if attrs < 0:
        raise RetrogradError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead.")
    return _leaky_rule(F, g, saved, attrs, needs)


LeakyReluBackward0 = formula_node("LeakyReluBackward0", _leaky_rule, arity=1)
LeakyReluBackward1 = formula_node("LeakyReluBackward1", _leaky_result_rule, arity=1)


def _raw_into(x: Tensor, fn: Any) -> Any:
    """The unrecorded in-place form of ``fn``: computed out of place, written into the
    array."""
    be = x.backend

    def raw(a: Any) -> None:
        be.ops.assign_(a, fn(Tensor(a, be))._data)

    return raw


@op("leaky_relu", method=False, function=False)
def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``; ``inplace``: written into
    ``input`` (its node then saves the result, LeakyReluBackward1)."""
    x = _activation_input("leaky_relu", input)
    if inplace:
        from .inplace import _inplace

        def recorded(old: Tensor) -> Tensor:
            return _leaky(old, negative_slope, True)

        return _inplace("leaky_relu_", x, (), recorded,
                        _raw_into(x, lambda t: _leaky(t, negative_slope, False)), False,
                        adopt=True)
    return _leaky(x, negative_slope, False)


def _leaky(x: Tensor, slope: float, saves_result: bool) -> Tensor:
    be = x.backend
    F = be.ops
    out = _finish(be, F.where(F.gt(x._data, 0.0), x._data, F.mul(x._data, slope)))
    if _grad.enabled and x._requires_grad:
        if saves_result:
            record(LeakyReluBackward1, out, (x,), (out._data,), OUTPUT, slope)
        else:
            record(LeakyReluBackward0, out, (x,), (x._data,), (x,), slope)
    return out


def _elu_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``elu_backward``: ``g`` where positive, else ``g * alpha * exp(x)`` -- or,
    from the result (in place, EluBackward1), ``g * (result + alpha)``. The value is read
    through ``where(v < 0, v, 0)``: the same at 0, and -- as PyTorch's double backward, which
    masks with ``v < 0`` -- no second derivative there."""
    (v,) = saved
    alpha, is_result = attrs
    below = F.where(F.lt(v, 0.0), v, 0.0)
    if is_result:
        neg = F.mul(g, F.add(below, alpha))
    else:
        neg = F.mul(F.mul(g, alpha), F.exp(below))
    return (F.where(F.gt(v, 0.0), g, neg),)


EluBackward0 = formula_node("EluBackward0", _elu_rule, arity=1)
EluBackward1 = formula_node("EluBackward1", _elu_rule, arity=1)


@op("elu", method=False, function=False)
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where positive, else ``alpha * (exp(x) - 1)``; ``inplace``: written into
    ``input`` (its node then saves the result, EluBackward1)."""
    x = _activation_input("elu", input)
    if inplace:
        from .inplace import _inplace

        def recorded(old: Tensor) -> Tensor:
            return _elu(old, alpha, True)

        return _inplace("elu_", x, (), recorded, _raw_into(x, lambda t: _elu(t, alpha, False)),
                        False, adopt=True)
    return _elu(x, alpha, False)


def _elu(x: Tensor, alpha: float, saves_result: bool) -> Tensor:
    be = x.backend
    F = be.ops
    a = x._data
    out = _finish(be, F.where(F.gt(a, 0.0), a, F.mul(F.expm1(a), alpha)))
    if _grad.enabled and x._requires_grad:
        if saves_result:
            record(EluBackward1, out, (x,), (out._data,), OUTPUT, (alpha, True))
        else:
            record(EluBackward0, out, (x,), (a,), (x,), (alpha, False))
    return out


_OPS: dict[str, Any] = {"cosh": cosh, "sinh": sinh, "rsqrt": rsqrt, "erf": erf,
                        "gelu_backward": _graph_gelu_backward}
GRAPH_KERNELS.update(_OPS)  # put in GRAPH_F: see ops.declare
