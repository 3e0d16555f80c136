"""Elementwise ops: each forward next to its derivative rule.

A rule is ``rule(F, g, saved, attrs, needs) -> grads``: ``F`` is the op namespace (raw kernels
in the fast walk, differentiable ops under create_graph), ``needs[i]`` is falsy where input i
needs no gradient. Python scalars are operands with a None edge, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import (
    OUTPUT,
    Scalar,
    binary_operands,
    broadcast_error,
    check_device,
    record,
)

__all__ = [
    "add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "where", "maximum", "minimum",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
]


def _binary(name: str, cls: Any, a: Any, b: Any, save: str | None) -> Tensor:
    """A broadcasting binary op. ``save``: None (the rule needs no values), "cross" (each
    input's gradient needs only the *other* input, as for mul) or "both".

    The operand checks are ``_core.binary_operands`` written inline: this is the hottest op
    path, and the call measured 3-5% of a small ``x * 1.0001``."""
    if isinstance(a, Tensor):
        ta = a
        ad = a._data
        be = a.backend
        if isinstance(b, Tensor):
            tb = b
            bd = b._data
            if b.backend is not be or be.multi_device:
                check_device(name, a, b)  # raises only when the two devices differ
        elif isinstance(b, Scalar):
            tb = None
            bd = b
        else:
            raise TypeError(f"{name}: unsupported operand type {type(b).__name__} (expected a "
                            "Tensor or a number)")
    elif isinstance(b, Tensor) and isinstance(a, Scalar):
        ta = None
        ad = a
        tb = b
        bd = b._data
        be = b.backend
    else:
        raise TypeError(f"{name}: unsupported operand types {type(a).__name__} and "
                        f"{type(b).__name__}")
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled:
        ra = ta is not None and ta._requires_grad
        rb = tb is not None and tb._requires_grad
        if ra or rb:
            # attrs None: no operand was broadcast, so no gradient needs reducing (the common
            # case; it keeps one long-lived tuple per node away from the garbage collector)
            oshape = data.shape
            sa = None if ta is None else ad.shape
            sb = None if tb is None else bd.shape
            attrs = None if (sa is None or sa == oshape) and (sb is None or sb == oshape) \
                else (sa, sb)
            if save is None:
                record(cls, out, (ta, tb), (), (), attrs)
            elif save == "cross" and tb is None:  # tensor * scalar: d/da needs the scalar
                record(cls, out, (ta, tb),
                       _SCALAR_SAVED.get(id(bd) << 1 | 1) or _scalar_saved(bd, 1), (), attrs)
            elif save == "cross" and ta is None:
                record(cls, out, (ta, tb),
                       _SCALAR_SAVED.get(id(ad) << 1) or _scalar_saved(ad, 0), (), attrs)
            elif save == "cross":
                sa_src = ta if rb else None
                sb_src = tb if ra else None
                srcs = () if sa_src is None and sb_src is None else (sa_src, sb_src)
                record(cls, out, (ta, tb), (ad if rb else None, bd if ra else None), srcs, attrs)
            elif save == "div" and ta is None:  # 1 / tensor: d/db = -out**2
                record(cls, out, (ta, tb), (ad, None, data), (None, None, 0), attrs)
            elif save == "div":  # a/b: d/da needs only b; d/db needs a and b
                record(cls, out, (ta, tb), (ad if rb else None, bd),
                       (ta if rb else None, tb), attrs)
            else:
                record(cls, out, (ta, tb), (ad, bd), (ta, tb), attrs)
    return out


_SCALAR_SAVED: dict[int, tuple[Any, Any]] = {}


def _scalar_saved(c: Any, pos: int) -> tuple[Any, Any]:
    """The saved pair of ``tensor * c`` -- ``(None, c)``, or ``(c, None)`` for ``c * tensor``
    -- one shared tuple per scalar object instead of one per node: a loop multiplying by the
    same constant keeps no per-node tuple alive for the garbage collector to scan (W1).
    Keyed by the object's identity (exact: 0.0 and -0.0, nan), which the cached tuple keeps
    alive; the cache is bounded. Called on a miss (``_binary`` looks the key up inline)."""
    if len(_SCALAR_SAVED) >= 256:
        _SCALAR_SAVED.clear()
    pair = _SCALAR_SAVED[id(c) << 1 | pos] = (None, c) if pos else (c, None)
    return pair


# -- add / sub ---------------------------------------------------------------------------------
def _add_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    if attrs is None:
        return (g if needs[0] else None, g if needs[1] else None)
    sa, sb = attrs
    return (F.reduce_to(g, sa) if needs[0] else None, F.reduce_to(g, sb) if needs[1] else None)


def _sub_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    if attrs is None:
        return (g if needs[0] else None, F.neg(g) if needs[1] else None)
    sa, sb = attrs
    return (F.reduce_to(g, sa) if needs[0] else None,
            F.neg(F.reduce_to(g, sb)) if needs[1] else None)


def _reduced(F: Any, g: Any, attrs: Any, i: int) -> Any:
    return g if attrs is None else F.reduce_to(g, attrs[i])


AddBackward = formula_node("AddBackward0", _add_rule, arity=2)
SubBackward = formula_node("SubBackward0", _sub_rule, arity=2)


def add(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
    if alpha != 1:
        b = mul(b, alpha)
    return _binary("add", AddBackward, a, b, None)


def sub(a: Any, b: Any, *, alpha: Any = 1) -> Tensor:
    if alpha != 1:
        b = mul(b, alpha)
    return _binary("sub", SubBackward, a, b, None)


# -- mul / div ---------------------------------------------------------------------------------
def _mul_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    return (_reduced(F, F.mul(g, b), attrs, 0) if needs[0] else None,
            _reduced(F, F.mul(g, a), attrs, 1) if needs[1] else None)


def _div_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    ga = _reduced(F, F.div(g, b), attrs, 0) if needs[0] else None
    gb = _reduced(F, F.neg(F.div(F.mul(g, a), F.mul(b, b))), attrs, 1) if needs[1] else None
    return ga, gb


def _reciprocal_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """``1 / x`` (inputs: the scalar 1.0, x): d/dx = -g * out**2; only the output is kept."""
    return None, F.mul(F.neg(g), F.mul(saved[2], saved[2]))


MulBackward = formula_node("MulBackward0", _mul_rule, arity=2)
DivBackward = formula_node("DivBackward0", _div_rule, arity=2)
ReciprocalBackward = formula_node("ReciprocalBackward0", _reciprocal_rule, arity=2)


def mul(a: Any, b: Any) -> Tensor:
    return _binary("mul", MulBackward, a, b, "cross")


def div(a: Any, b: Any) -> Tensor:
    if isinstance(a, Scalar) and isinstance(b, Tensor):
        # ``c / x`` is PyTorch's ``x.reciprocal() * c``: the same values to the bit, and the
        # same two nodes. The reciprocal saves its own output, an array no user holds, so
        # changing ``c / x`` in place before the backward is legal, as in PyTorch.
        return mul(_binary("div", ReciprocalBackward, 1.0, b, "div"), a)
    return _binary("div", DivBackward, a, b, "div")


# -- pow -----------------------------------------------------------------------------------------
def _pow_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    scalar_exp = not hasattr(b, "shape")
    scalar_base = not hasattr(a, "shape")
    ga = gb = None
    if needs[0]:
        if scalar_exp:
            ga = F.pow_backward(g, a, b)
        else:
            ga = _reduced(F, F.mul(g, F.mul(b, F.pow(a, F.sub(b, 1.0)))), attrs, 0)
    if needs[1]:
        if scalar_base:
            gb = F.mul(g, F.mul(F.pow(a, b), _log_scalar(a)))
        else:
            term = F.mul(F.pow(a, b), F.log(F.where(F.eq(a, 0), 1.0, a)))
            gb = _reduced(F, F.mul(g, term), attrs, 1)
    return ga, gb


def _log_scalar(a: float) -> float:
    import math

    if a <= 0:
        return math.log(a) if a > 0 else (0.0 if a == 0 else float("nan"))
    return math.log(a)


PowBackward = formula_node("PowBackward0", _pow_rule, arity=2)


# ``pow_backward(g, a, b) = g * b * a**(b-1)`` (b a Python number) as one differentiable op,
# with its own derivative -- as PyTorch gives ``tanh_backward`` and friends theirs. The fast
# walk runs the composite of the same name on raw arrays (``backends.reference``); under
# create_graph, PowBackward's gradient is then one recorded node instead of three (pow, mul,
# mul), and a second backward walks one node instead of three.
def _pow_backward_rule(F: Any, gg: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    g, a = saved
    b = attrs
    dg = F.pow_backward(gg, a, b) if needs[0] else None
    # d/da (g * b * a**(b-1)) = g * b * (b-1) * a**(b-2): the same composite one power down
    da = F.pow_backward(F.mul(F.mul(gg, g), b), a, b - 1) if needs[1] and b != 0 else (
        F.mul(gg, 0.0) if needs[1] else None)
    return dg, da


PowBackwardBackward = formula_node("PowBackwardBackward0", _pow_backward_rule, arity=2)


def pow_backward(g: Tensor, a: Tensor, b: float) -> Tensor:
    """The gradient ``g * b * a**(b-1)`` of ``a ** b`` for a number ``b``, differentiable in
    ``g`` and ``a`` (``g`` and ``a`` have one shape: a number exponent broadcasts nothing)."""
    be = a.backend
    data = be.ops.pow_backward(g._data, a._data, b)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (g._requires_grad or a._requires_grad):
        record(PowBackwardBackward, out, (g, a), (g._data, a._data), (g, a), b)
    return out


def pow(a: Any, b: Any) -> Tensor:
    if isinstance(b, bool) or isinstance(a, bool):
        raise TypeError("pow: bool exponents are not supported")
    return _binary("pow", PowBackward, a, b, "both")


# -- unary ---------------------------------------------------------------------------------------
def _unary(name: str, cls: Any, x: Any, save: str | None) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    be = x.backend
    data = getattr(be.ops, name)(x._data)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        if save == "out":
            record(cls, out, (x,), (data,), OUTPUT)
        elif save == "in":
            record(cls, out, (x,), (x._data,), (x,))
        else:
            record(cls, out, (x,))
    return out


NegBackward = formula_node("NegBackward0", lambda F, g, s, a, n: (F.neg(g),))
AbsBackward = formula_node("AbsBackward0", lambda F, g, s, a, n: (F.mul(g, F.sign(s[0])),))
ExpBackward = formula_node("ExpBackward0", lambda F, g, s, a, n: (F.mul(g, s[0]),))
LogBackward = formula_node("LogBackward0", lambda F, g, s, a, n: (F.div(g, s[0]),))
SqrtBackward = formula_node(
    "SqrtBackward0", lambda F, g, s, a, n: (F.div(g, F.mul(s[0], 2.0)),)
)
SinBackward = formula_node("SinBackward0", lambda F, g, s, a, n: (F.mul(g, F.cos(s[0])),))
CosBackward = formula_node(
    "CosBackward0", lambda F, g, s, a, n: (F.neg(F.mul(g, F.sin(s[0]))),)
)
TanhBackward = formula_node("TanhBackward0", lambda F, g, s, a, n: (F.tanh_backward(g, s[0]),))
SigmoidBackward = formula_node(
    "SigmoidBackward0", lambda F, g, s, a, n: (F.sigmoid_backward(g, s[0]),)
)
ReluBackward = formula_node("ReluBackward0", lambda F, g, s, a, n: (F.relu_backward(g, s[0]),))


def neg(x: Tensor) -> Tensor:
    return _unary("neg", NegBackward, x, None)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    return _unary("abs", AbsBackward, x, "in")


def exp(x: Tensor) -> Tensor:
    return _unary("exp", ExpBackward, x, "out")


def log(x: Tensor) -> Tensor:
    return _unary("log", LogBackward, x, "in")


def sqrt(x: Tensor) -> Tensor:
    return _unary("sqrt", SqrtBackward, x, "out")


def sin(x: Tensor) -> Tensor:
    return _unary("sin", SinBackward, x, "in")


def cos(x: Tensor) -> Tensor:
    return _unary("cos", CosBackward, x, "in")


def tanh(x: Tensor) -> Tensor:
    return _unary("tanh", TanhBackward, x, "out")


def sigmoid(x: Tensor) -> Tensor:
    return _unary("sigmoid", SigmoidBackward, x, "out")


def relu(x: Tensor) -> Tensor:
    return _unary("relu", ReluBackward, x, "out")


# -- clamp ---------------------------------------------------------------------------------------
def _clamp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (x,) = saved
    lo, hi = attrs
    if lo is not None and hi is not None:
        mask = F.logical_and(F.ge(x, lo), F.le(x, hi))
    elif lo is not None:
        mask = F.ge(x, lo)
    else:
        mask = F.le(x, hi)
    return (F.where(mask, g, 0.0),)


ClampBackward = formula_node("ClampBackward1", _clamp_rule)


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    if not isinstance(x, Tensor):
        raise TypeError(f"clamp: expected a Tensor, got {type(x).__name__}")
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    for name, v in (("min", min), ("max", max)):
        if v is not None and not isinstance(v, Scalar):
            raise TypeError(f"clamp: {name} must be a number, got {type(v).__name__}")
    be = x.backend
    F = be.ops
    data = x._data
    if min is not None:
        data = F.maximum(data, min)
    if max is not None:
        data = F.minimum(data, max)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(ClampBackward, out, (x,), (x._data,), (x,), (min, max))
    return out


# -- where / maximum / minimum ------------------------------------------------------------------
def _where_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (cond,) = saved
    sa, sb = attrs
    ga = F.reduce_to(F.where(cond, g, 0.0), sa) if needs[0] else None
    gb = F.reduce_to(F.where(cond, 0.0, g), sb) if needs[1] else None
    return ga, gb


WhereBackward = formula_node("WhereBackward0", _where_rule, arity=2)


def where(cond: Tensor, a: Any, b: Any) -> Tensor:
    if not isinstance(cond, Tensor):
        raise TypeError(f"where: condition must be a bool Tensor, got {type(cond).__name__}")
    if cond.dtype.name != "bool":
        raise TypeError(f"where: condition must have dtype bool, got {cond.dtype}")
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    for t in (ta, tb):
        if t is not None:
            check_device("where", cond, t)
    if ta is None and tb is None:
        raise TypeError("where: at least one of the two values must be a Tensor")
    be = cond.backend
    ad = a if ta is None else ta._data
    bd = b if tb is None else tb._data
    try:
        data = be.ops.where(cond._data, ad, bd)
    except ValueError as exc:
        raise broadcast_error("where", ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and any(t is not None and t._requires_grad for t in (ta, tb)):
        attrs = (None if ta is None else ad.shape, None if tb is None else bd.shape)
        record(WhereBackward, out, (ta, tb), (cond._data,), (None,), attrs)
    return out


def _maxmin_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    sa, sb, is_max = attrs
    half = F.mul(g, 0.5)
    ties = F.eq(a, b)
    a_wins = F.gt(a, b) if is_max else F.lt(a, b)
    b_wins = F.lt(a, b) if is_max else F.gt(a, b)
    ga = F.reduce_to(F.where(a_wins, g, F.where(ties, half, 0.0)), sa) if needs[0] else None
    gb = F.reduce_to(F.where(b_wins, g, F.where(ties, half, 0.0)), sb) if needs[1] else None
    return ga, gb


MaxMinBackward = formula_node("MaximumBackward0", _maxmin_rule, arity=2)


def _maxmin(name: str, a: Any, b: Any, is_max: bool) -> Tensor:
    a, b, be = binary_operands(name, a, b)
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    ad = a if ta is None else ta._data
    bd = b if tb is None else tb._data
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and any(t is not None and t._requires_grad for t in (ta, tb)):
        attrs = (None if ta is None else ad.shape, None if tb is None else bd.shape, is_max)
        record(MaxMinBackward, out, (ta, tb), (ad, bd), (ta, tb), attrs)
    return out


def maximum(a: Any, b: Any) -> Tensor:
    return _maxmin("maximum", a, b, True)


def minimum(a: Any, b: Any) -> Tensor:
    return _maxmin("minimum", a, b, False)


# -- comparisons: bool tensors that never require grad -----------------------------------------
def _compare(name: str, a: Any, b: Any) -> Tensor:
    a, b, be = binary_operands(name, a, b)
    ad = a._data if isinstance(a, Tensor) else a
    bd = b._data if isinstance(b, Tensor) else b
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def eq(a: Any, b: Any) -> Tensor:
    return _compare("eq", a, b)


def ne(a: Any, b: Any) -> Tensor:
    return _compare("ne", a, b)


def lt(a: Any, b: Any) -> Tensor:
    return _compare("lt", a, b)


def le(a: Any, b: Any) -> Tensor:
    return _compare("le", a, b)


def gt(a: Any, b: Any) -> Tensor:
    return _compare("gt", a, b)


def ge(a: Any, b: Any) -> Tensor:
    return _compare("ge", a, b)


def logical_and(a: Tensor, b: Tensor) -> Tensor:
    return _compare("logical_and", a, b)


def sign(x: Tensor) -> Tensor:
    be = x.backend
    return Tensor(be.asarray(be.ops.sign(x._data)), be)

