"""Elementwise extras of the everyday API: logical and bitwise ops (and the ``&``, ``|``,
``^``, ``~`` operators), floor division (``//``), ``logit``, ``fmax``/``fmin``, ``copysign``,
``deg2rad``/``rad2deg``, ``float_power``, ``heaviside``, ``isneginf``/``isposinf``, and
PyTorch's other names for existing ops (``multiply``, ``subtract``, ``negative``,
``absolute``, ``greater`` ...).

Each op takes tensors and Python numbers as PyTorch does: the operands promote
(``ops.promotion``) and broadcast, and the gradients of a promoted operand are cast back to
its dtype. Ops PyTorch records without a derivative (``floor_divide``, ``heaviside``) record
the same ``NotImplemented`` node, which raises when a backward reaches it.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import DType, bool_, get_default_dtype
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import elementwise, linalg, promotion
from ._core import check_device, record
from .declare import GRAPH_KERNELS, op
from .not_implemented import record_not_implemented

__all__ = ["logical_not", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "floor_divide", "logit", "fmax", "fmin", "copysign",
           "deg2rad", "rad2deg", "float_power", "heaviside", "isneginf", "isposinf",
           "multiply", "subtract", "negative", "absolute", "true_divide", "greater",
           "greater_equal", "less", "less_equal", "not_equal", "ger"]


def _type_name(v: Any) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _operand(name: str, v: Any, pos: int, arg: str) -> Any:
    if isinstance(v, Tensor):
        return v
    n = promotion.scalar_value(v)
    if promotion.is_number(n):
        return n
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{_type_name(v)}")


def _operands(name: str, a: Any, b: Any, first_tensor: bool = True) -> tuple[Any, Any, Tensor]:
    """The two operands (tensors or numbers, at least one a tensor) and the tensor that
    decides the backend."""
    if first_tensor and not isinstance(a, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(a)}")
    av = _operand(name, a, 1, "input")
    bv = _operand(name, b, 2, "other")
    if isinstance(av, Tensor) and isinstance(bv, Tensor):
        check_device(name, av, bv)
    like = av if isinstance(av, Tensor) else bv
    if not isinstance(like, Tensor):
        raise TypeError(f"{name}(): expected a Tensor operand")
    return av, bv, like


def _data(v: Any, r: DType) -> Any:
    return promotion.cast_data(v, r) if isinstance(v, Tensor) else promotion.cast_scalar(v, r)


def _apply(name: str, kernel: str, a: Any, b: Any, r: DType, like: Tensor,
           out_dtype: DType | None = None) -> tuple[Tensor, Any, Any]:
    """``kernel(a, b)`` computed in dtype ``r``: the result tensor and the two cast operands."""
    be = like.backend
    ad, bd = _data(a, r), _data(b, r)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{name}(): expected a Tensor operand")
    if not isinstance(a, Tensor):
        ad = be.asarray(ad, r)
    if not isinstance(b, Tensor):
        bd = be.asarray(bd, r)
    try:
        data = getattr(be.ops, kernel)(ad, bd)
    except ValueError as exc:
        raise elementwise._broadcast_error(name, ad, bd, exc) from None
    return Tensor(promotion.fix_result(be, data, out_dtype or r), be), ad, bd


def _needs_grad(*vs: Any) -> bool:
    return _grad.enabled and any(isinstance(v, Tensor) and v._requires_grad for v in vs)


def _not_for(name: str, kernel: str, like: Tensor, dt: DType) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}_{like.device.type}\" not implemented for "
                               f"'{promotion.torch_name(dt)}' ({name} of a "
                               f"{dt} operand)")


# -- logical and bitwise --------------------------------------------------------------------
def _logical(name: str, kernel: str, a: Any, b: Any) -> Tensor:
    av, bv, like = _operands(name, a, b)
    if not isinstance(bv, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{_type_name(b)}")
    be = like.backend
    ad = be.ops.ne(av._data, be.asarray(0, av.dtype))
    bd = be.ops.ne(bv._data, be.asarray(0, bv.dtype))
    try:
        data = getattr(be.ops, kernel)(ad, bd)
    except ValueError as exc:
        raise elementwise._broadcast_error(name, ad, bd, exc) from None
    return Tensor(promotion.fix_result(be, data, bool_), be)


@op("logical_or", differentiable=False)
def logical_or(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise ``input or other`` (nonzero is true), a bool tensor; the two broadcast."""
    return _logical("logical_or", "logical_or", input, other)


@op("logical_xor", differentiable=False)
def logical_xor(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise ``input xor other`` (nonzero is true), a bool tensor; the two broadcast."""
    return _logical("logical_xor", "logical_xor", input, other)


@op("logical_not", differentiable=False)
def logical_not(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise ``not input`` (true where ``input`` is zero), a bool tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"logical_not(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    be = input.backend
    return Tensor(be.ops.eq(input._data, be.asarray(0, input.dtype)), be)


GRAPH_KERNELS["logical_or"] = logical_or  # for the derivative rules under create_graph

# ``Tensor.logical_and``: the function is one of the first ops (ops/elementwise.py)
op("logical_and", function=False, differentiable=False)(elementwise.logical_and)


def _bitwise(name: str, kernel: str, a: Any, b: Any) -> Tensor:
    av, bv, like = _operands(name, a, b, first_tensor=False)
    r = promotion.operands_result_type(av, bv)
    if r.is_floating_point:
        raise _not_for(name, f"{name}", like, r)
    out, _, _ = _apply(name, kernel, av, bv, r, like)
    return out


@op("bitwise_and", differentiable=False)
def bitwise_and(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise bitwise and of integer or bool tensors (or numbers); also ``a & b``."""
    return _bitwise("bitwise_and", "bitwise_and", input, other)


@op("bitwise_or", differentiable=False)
def bitwise_or(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise bitwise or of integer or bool tensors (or numbers); also ``a | b``."""
    return _bitwise("bitwise_or", "bitwise_or", input, other)


@op("bitwise_xor", differentiable=False)
def bitwise_xor(input: Any, other: Any) -> Tensor:  # noqa: A002
    """Elementwise bitwise xor of integer or bool tensors (or numbers); also ``a ^ b``."""
    return _bitwise("bitwise_xor", "bitwise_xor", input, other)


@op("bitwise_not", differentiable=False)
def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise bitwise not of an integer tensor, logical not of a bool one; also ``~a``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bitwise_not(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if input.dtype.is_floating_point:
        raise _not_for("bitwise_not", "bitwise_not", input, input.dtype)
    be = input.backend
    return Tensor(be.ops.bitwise_invert(input._data), be)


def _swap(fn: Any) -> Any:
    def swapped(self: Tensor, other: Any) -> Tensor:
        return fn(other, self)

    swapped.__doc__ = f"``other {fn.__name__} self``, for Python's reflected operator."
    return swapped


op("__and__", function=False, differentiable=False)(bitwise_and)
op("__rand__", function=False, differentiable=False)(_swap(bitwise_and))
op("__or__", function=False, differentiable=False)(bitwise_or)
op("__ror__", function=False, differentiable=False)(_swap(bitwise_or))
op("__xor__", function=False, differentiable=False)(bitwise_xor)
op("__rxor__", function=False, differentiable=False)(_swap(bitwise_xor))
op("__invert__", function=False, differentiable=False)(bitwise_not)


# -- floor division -------------------------------------------------------------------------
@op("floor_divide", differentiable=False)
def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``floor(input / other)`` elementwise, in the promoted dtype (integers divide exactly;
    an integer division by zero raises ``ZeroDivisionError``, as in PyTorch). Also ``a // b``.
    Not differentiable: PyTorch records a node that refuses a backward, and so does this."""
    av, bv, like = _operands("floor_divide", input, other, first_tensor=False)
    r = promotion.operands_result_type(av, bv)
    if r is bool_:
        raise _not_for("floor_divide", "div_floor", like, r)
    be = like.backend
    if not r.is_floating_point:
        zero = bool(be.ops.item(be.ops.any(be.ops.eq(_data(bv, r), 0), None))) \
            if isinstance(bv, Tensor) else bv == 0
        if zero:
            raise RetrogradError("ZeroDivisionError")
    out, _, _ = _apply("floor_divide", "floor_divide", av, bv, r, like)
    if _needs_grad(av, bv):
        record_not_implemented(out, tuple(v for v in (av, bv) if isinstance(v, Tensor)),
                               "floor_divide")
    return out


op("__floordiv__", function=False, differentiable=False)(floor_divide)
op("__rfloordiv__", function=False, differentiable=False)(_swap(floor_divide))


# -- logit ----------------------------------------------------------------------------------
def _logit_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``logit_backward``: ``g / (x (1 - x))``; without ``eps`` NaN outside
    ``[0, 1]``, with it 0 outside ``[eps, 1 - eps]``."""
    (x,) = saved
    (eps,) = attrs
    d = F.div(g, F.mul(x, F.sub(1.0, x)))
    if eps is None:
        outside = F.logical_or(F.lt(x, 0.0), F.gt(x, 1.0))
        return (F.where(outside, math.nan, d),)
    outside = F.logical_or(F.lt(x, eps), F.gt(x, 1.0 - eps))
    return (F.where(outside, 0.0, d),)


LogitBackward = formula_node("LogitBackward0", _logit_rule, arity=1)


@op("logit")
def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))``; ``eps``: ``p`` is first clamped to ``[eps, 1 - eps]``. Integers
    compute in the default float dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"logit(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    x = input
    r = x.dtype if x.dtype.is_floating_point else get_default_dtype()
    be = x.backend
    xd = promotion.cast_data(x, r)
    p = xd if eps is None else be.ops.clip(xd, eps, 1.0 - eps)
    data = be.ops.logit(p)
    out = Tensor(promotion.fix_result(be, data, r), be)
    if _grad.enabled and x._requires_grad:
        record(LogitBackward, out, (x,), (xd,), (x if xd is x._data else None,), (eps,))
    return out


# -- fmax / fmin / copysign -----------------------------------------------------------------
def _fmaxmin_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: ``input`` gets g where it won (``input >= other`` for fmax, ``<=`` for
    fmin, or ``other`` is NaN), ``other`` the rest."""
    a, b = saved
    sa, sb, is_max = attrs
    won = F.logical_or(F.ge(a, b) if is_max else F.le(a, b), F.ne(b, b))
    ga = F.reduce_to(F.where(won, g, 0.0), sa) if needs[0] else None
    gb = F.reduce_to(F.where(won, 0.0, g), sb) if needs[1] else None
    return ga, gb


FmaxBackward = formula_node("FmaxBackward0", _fmaxmin_rule, arity=2)
FminBackward = formula_node("FminBackward0", _fmaxmin_rule, arity=2)


def _binary_recorded(name: str, kernel: str, cls: Any, a: Any, b: Any,
                     attrs: tuple[Any, ...]) -> Tensor:
    """A broadcasting binary op of two tensors whose rule reads both (cast) operands;
    ``attrs`` follow the two shapes."""
    for arg, pos, v in (("input", 1, a), ("other", 2, b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {_type_name(v)}")
    check_device(name, a, b)
    r = promotion.operands_result_type(a, b)
    out, ad, bd = _apply(name, kernel, a, b, r, a)
    if _needs_grad(a, b):
        be = a.backend
        full: Any = (tuple(ad.shape), tuple(bd.shape), *attrs)
        casts = promotion.grad_casts(be, r, a, b)
        if casts is not None:
            cls = promotion.promoted_class(cls)
            full = (full, casts)
        record(cls, out, (a, b), (ad, bd),
               (a if ad is a._data else None, b if bd is b._data else None), full)
    return out


@op("fmax")
def fmax(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The elementwise maximum, ignoring NaN (NaN only where both are NaN); ties give the
    gradient to ``input``."""
    return _binary_recorded("fmax", "fmax", FmaxBackward, input, other, (True,))


@op("fmin")
def fmin(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The elementwise minimum, ignoring NaN (NaN only where both are NaN); ties give the
    gradient to ``input``."""
    return _binary_recorded("fmin", "fmin", FminBackward, input, other, (False,))


def _copysign_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """PyTorch's ``copysign_tensor_self_backward``: ``g * result / input``, 0 where ``input``
    is 0 (``result`` is the output itself, so a double backward sees what PyTorch's does);
    ``other`` (a tensor) gets zeros."""
    x, res = saved
    ratio = F.where(F.eq(x, 0.0), 0.0, F.div(res, x))
    gx = F.reduce_to(F.mul(g, ratio), attrs[0]) if needs[0] else None
    if not attrs[1]:
        return (gx,)
    return gx, (F.zeros_like(F.reduce_to(g, attrs[2])) if needs[1] else None)


CopysignBackward0 = formula_node("CopysignBackward0", _copysign_rule, arity=2)
CopysignBackward1 = formula_node("CopysignBackward1", _copysign_rule, arity=1)


@op("copysign")
def copysign(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (a tensor or a number; -0.0 counts as
    negative); integers compute in the default float dtype."""
    av, bv, like = _operands("copysign", input, other)
    r = promotion.operands_result_type(av, bv)
    if not r.is_floating_point:
        r = get_default_dtype()
    out, ad, bd = _apply("copysign", "copysign", av, bv, r, like)
    if _needs_grad(av, bv):
        if isinstance(bv, Tensor):
            record(CopysignBackward0, out, (av, bv), (ad, out._data),
                   (av if ad is av._data else None, 0),
                   (tuple(av.shape), True, tuple(bv.shape)))
        else:
            record(CopysignBackward1, out, (av,), (ad, out._data),
                   (av if ad is av._data else None, 0), (tuple(av.shape), False))
    return out


# -- degrees and radians ---------------------------------------------------------------------
def _scale_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.mul(g, attrs),)


Deg2RadBackward = formula_node("Deg2RadBackward0", _scale_rule, arity=1)
Rad2DegBackward = formula_node("Rad2DegBackward0", _scale_rule, arity=1)


def _scaled(name: str, cls: Any, x: Any, factor: float) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(x)}")
    r = x.dtype if x.dtype.is_floating_point else get_default_dtype()
    be = x.backend
    xd = promotion.cast_data(x, r)
    data = be.ops.mul(xd, promotion.cast_scalar(factor, r))
    out = Tensor(promotion.fix_result(be, data, r), be)
    if _grad.enabled and x._requires_grad:
        record(cls, out, (x,), (), (), factor)
    return out


@op("deg2rad")
def deg2rad(input: Tensor) -> Tensor:  # noqa: A002
    """Angles in degrees to radians (``input * pi / 180``)."""
    return _scaled("deg2rad", Deg2RadBackward, input, math.pi / 180.0)


@op("rad2deg")
def rad2deg(input: Tensor) -> Tensor:  # noqa: A002
    """Angles in radians to degrees (``input * 180 / pi``)."""
    return _scaled("rad2deg", Rad2DegBackward, input, 180.0 / math.pi)


# -- float_power, heaviside, isneginf/isposinf ------------------------------------------------
@op("float_power")
def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """``input ** exponent`` computed in float64 (either may be a number), as PyTorch's
    ``float_power``; the gradient flows back to each tensor in its own dtype."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected a Tensor operand")
    from ..dtypes import float64

    base = input.to(float64) if isinstance(input, Tensor) else float(input)
    exp = exponent.to(float64) if isinstance(exponent, Tensor) else float(exponent)
    return elementwise.pow(base, exp)


@op("heaviside", differentiable=False)
def heaviside(input: Tensor, values: Tensor) -> Tensor:  # noqa: A002
    """The Heaviside step: 0 where ``input < 0``, 1 where ``> 0``, ``values`` where 0 (the two
    share one dtype). Not differentiable: PyTorch records a node that refuses a backward."""
    for arg, pos, v in (("input", 1, input), ("values", 2, values)):
        if not isinstance(v, Tensor):
            raise TypeError(f"heaviside(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {_type_name(v)}")
    check_device("heaviside", input, values)
    if input.dtype is not values.dtype:
        raise RetrogradError("heaviside is not yet implemented for tensors with different "
                             "dtypes")
    out, _, _ = _apply("heaviside", "heaviside", input, values, input.dtype, input)
    if _needs_grad(input, values):
        record_not_implemented(out, (input, values), "heaviside")
    return out


def _inf_test(name: str, x: Any, negative: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(x)}")
    be = x.backend
    if not x.dtype.is_floating_point:
        return Tensor(be.ops.zeros_like(x._data, be.xp_dtype(bool_)), be)
    inf = -math.inf if negative else math.inf
    return Tensor(be.ops.eq(x._data, promotion.cast_scalar(inf, x.dtype)), be)


@op("isneginf", differentiable=False)
def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """Where ``input`` is negative infinity (a bool tensor)."""
    return _inf_test("isneginf", input, True)


@op("isposinf", differentiable=False)
def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where ``input`` is positive infinity (a bool tensor)."""
    return _inf_test("isposinf", input, False)


# -- PyTorch's other names ------------------------------------------------------------------
def _synonym(name: str, target: Any, what: str, differentiable: bool = True) -> Any:
    def synonym(*args: Any, **kwargs: Any) -> Tensor:
        return target(*args, **kwargs)

    synonym.__name__ = name
    synonym.__doc__ = f"PyTorch's other name for ``{what}``."
    op(name, differentiable=differentiable)(synonym)
    return synonym


multiply = _synonym("multiply", elementwise.mul, "mul")
subtract = _synonym("subtract", elementwise.sub, "sub")
negative = _synonym("negative", elementwise.neg, "neg")
absolute = _synonym("absolute", elementwise.abs, "abs")
true_divide = _synonym("true_divide", elementwise.div, "div")
ger = _synonym("ger", linalg.outer, "outer")
greater = _synonym("greater", elementwise.gt, "gt", differentiable=False)
greater_equal = _synonym("greater_equal", elementwise.ge, "ge", differentiable=False)
less = _synonym("less", elementwise.lt, "lt", differentiable=False)
less_equal = _synonym("less_equal", elementwise.le, "le", differentiable=False)
not_equal = _synonym("not_equal", elementwise.ne, "ne", differentiable=False)
