"""Elementwise arithmetic added for the everyday API (hypot, fmod, remainder, lerp, addcmul,
addcdiv, logaddexp, xlogy, erfc, sgn, round, nan_to_num, clamp_min, clamp_max, clip and
``clamp`` with tensor bounds) and their in-place forms.

Each derivative rule is PyTorch's formula (``derivatives.yaml``), written against ``F`` (raw
kernels in the walk, differentiable ops under ``create_graph``). The operands promote as in
PyTorch (``ops.promotion``); a node whose inputs were cast gets the casting twin
(``promotion.promoted_class``/``promoted_class_n``), so each gradient comes back in its
input's dtype, summed back to its input's shape.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_, float16, float32, float64, get_default_dtype, int64
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import promotion
from ._core import check_device, record
from .declare import GRAPH_KERNELS, op
from .elementwise import _log_scalar, _unary, broadcast_mismatch
from .not_implemented import record_not_implemented

__all__ = ["hypot", "fmod", "remainder", "lerp", "addcmul", "addcdiv", "logaddexp", "xlogy",
           "erfc", "sgn", "round", "nan_to_num", "clamp_min", "clamp_max", "clip",
           "clamp_tensors", "hypot_", "fmod_", "remainder_", "lerp_", "addcmul_", "addcdiv_",
           "xlogy_", "erfc_", "sgn_", "round_", "nan_to_num_", "clamp_min_", "clamp_max_"]


# -- helpers -------------------------------------------------------------------------------------
def _type_name(v: Any) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _need_tensor(name: str, v: Any, arg: str) -> None:
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument {arg} must be Tensor, not {_type_name(v)}")


def _number_or_tensor(name: str, v: Any) -> Any:
    """``v`` as a Tensor or a Python number (NumPy scalars read as PyTorch reads them)."""
    if isinstance(v, Tensor):
        return v
    n = promotion.scalar_value(v)
    if not promotion.is_number(n):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"{_type_name(v)}, but expected a Tensor or a Number")
    return n


def _not_implemented(kernel: str, like: Tensor, dt: Any) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}_{like.device.type}\" not implemented for "
                               f"'{promotion.torch_name(dt)}'")


def _check_shapes(name: str, *operands: Any) -> None:
    err = broadcast_mismatch(name, *(tuple(v.shape) for v in operands if isinstance(v, Tensor)))
    if err is not None:
        raise err


def _cast(v: Any, dt: Any) -> Any:
    return promotion.cast_data(v, dt) if isinstance(v, Tensor) else \
        promotion.cast_scalar(v, dt)


def _src(t: Any, data: Any) -> Any:
    """The saved array's source: the tensor itself when the array is its own (not a cast)."""
    return t if isinstance(t, Tensor) and data is t._data else None


def _shape(v: Any) -> Any:
    return tuple(v.shape) if isinstance(v, Tensor) else None


def _reduce(F: Any, g: Any, shape: Any) -> Any:
    return F.reduce_to(g, shape)


def _finish(be: Any, data: Any, r: Any) -> Tensor:
    return Tensor(promotion.fix_result(be, data, r), be)


def _record_n(cls: Any, out: Tensor, be: Any, r: Any, inputs: tuple[Any, ...],
              saved: tuple[Any, ...], sources: tuple[Any, ...], attrs: Any) -> None:
    """Record ``cls`` over ``inputs`` (Tensors or None), with the casting twin when an input
    that requires grad has another dtype than the computation dtype ``r``."""
    pairs = tuple(promotion._pair(be, t, r) for t in inputs)
    if any(p is not None for p in pairs):
        cls = promotion.promoted_class_n(cls)
        attrs = (attrs, ((r, be.xp_dtype(r)), pairs))
    record(cls, out, inputs, saved, sources, attrs)


def _needs_grad(*vs: Any) -> bool:
    return _grad.enabled and any(isinstance(v, Tensor) and v._requires_grad for v in vs)


def _write_out(name: str, out: Any, inputs: tuple[Any, ...], compute: Any) -> Tensor:
    from .inplace import write_out

    return write_out(name, out, inputs, compute)


# -- hypot ---------------------------------------------------------------------------------------
def _hypot_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: d/da = g * a / result, d/db = g * b / result."""
    a, b, res = saved
    sa, sb = attrs
    ga = _reduce(F, F.div(F.mul(g, a), res), sa) if needs[0] else None
    gb = _reduce(F, F.div(F.mul(g, b), res), sb) if needs[1] else None
    return ga, gb


HypotBackward = formula_node("HypotBackward0", _hypot_rule, arity=2)


@op("hypot")
def hypot(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """``sqrt(input**2 + other**2)`` elementwise, without overflow; two floating tensors that
    broadcast and promote. ``out``: written into that tensor."""
    if out is not None:
        return _write_out("hypot", out, (input, other), lambda: hypot(input, other))
    _need_tensor("hypot", input, "'input' (position 1)")
    _need_tensor("hypot", other, "'other' (position 2)")
    check_device("hypot", input, other)
    r = promotion.operands_result_type(input, other)
    if not r.is_floating_point:
        raise _not_implemented("hypot", input, r)
    _check_shapes("hypot", input, other)
    be = input.backend
    ad, bd = _cast(input, r), _cast(other, r)
    res = _finish(be, be.ops.hypot(ad, bd), r)
    if _needs_grad(input, other):
        _record_n(HypotBackward, res, be, r, (input, other), (ad, bd, res._data),
                  (_src(input, ad), _src(other, bd), 0), (_shape(input), _shape(other)))
    return res


# -- fmod / remainder ----------------------------------------------------------------------------
def _mod_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``fmod``/``remainder`` of two tensors: d/da = g, d/db = -g * q with ``q``
    ``a / b`` rounded toward zero (fmod) or down (remainder), which has no derivative."""
    a, b = saved
    sa, sb, rounding = attrs
    ga = _reduce(F, g, sa) if needs[0] else None
    gb = None
    if needs[1]:
        q = getattr(F, rounding)(F.div(a, b))
        gb = _reduce(F, F.mul(F.neg(g), q), sb)
    return ga, gb


def _pass_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (g,)


FmodBackward0 = formula_node("FmodBackward0", _pass_rule, arity=1)
FmodBackward1 = formula_node("FmodBackward1", _mod_rule, arity=2)
RemainderBackward0 = formula_node("RemainderBackward0", _pass_rule, arity=1)
RemainderBackward1 = formula_node("RemainderBackward1", _mod_rule, arity=2)


def _mod(name: str, a: Any, b: Any) -> Tensor:
    """``fmod`` or ``remainder`` of a tensor and a tensor or number (``remainder`` also of a
    number and a tensor)."""
    if not isinstance(a, Tensor) and not (name == "remainder" and isinstance(b, Tensor)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({_type_name(a)}, {_type_name(b)}), but expected (Tensor input, "
                        "Tensor other) or (Tensor input, Number other)")
    av = _number_or_tensor(name, a)
    bv = _number_or_tensor(name, b)
    like = av if isinstance(av, Tensor) else bv
    if isinstance(av, Tensor) and isinstance(bv, Tensor):
        check_device(name, av, bv)
    r = promotion.operands_result_type(av, bv)
    if r is bool_:
        raise _not_implemented(name, like, r)
    _check_shapes(name, av, bv)
    be = like.backend
    ad, bd = _cast(av, r), _cast(bv, r)
    if not r.is_floating_point:
        zero = bool(be.ops.item(be.ops.any(be.ops.eq(bd, 0), None))) \
            if isinstance(bv, Tensor) else bd == 0
        if zero:
            raise RetrogradError("ZeroDivisionError")
    if not isinstance(av, Tensor):
        ad = be.asarray(ad, r)
    res = _finish(be, getattr(be.ops, name)(ad, bd), r)
    if _needs_grad(av, bv):
        ta = av if isinstance(av, Tensor) else None
        tb = bv if isinstance(bv, Tensor) else None
        if ta is None:
            assert tb is not None  # a number's remainder by a tensor
            record_not_implemented(res, (tb,), name)
        elif tb is None:
            record(FmodBackward0 if name == "fmod" else RemainderBackward0, res, (ta,))
        else:
            cls = FmodBackward1 if name == "fmod" else RemainderBackward1
            _record_n(cls, res, be, r, (ta, tb), (ad, bd), (_src(ta, ad), _src(tb, bd)),
                      (_shape(ta), _shape(tb), "trunc" if name == "fmod" else "floor"))
    return res


@op("fmod")
def fmod(input: Tensor, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """C's ``fmod``: the remainder of ``input / other`` rounded toward zero, with ``input``'s
    sign; ``other`` a tensor or a number. Integer division by zero raises
    ``ZeroDivisionError`` (a RuntimeError). ``out``: written into that tensor."""
    if out is not None:
        return _write_out("fmod", out, (input, other), lambda: fmod(input, other))
    return _mod("fmod", input, other)


@op("remainder")
def remainder(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """Python's ``%``: the remainder of ``input / other`` rounded down, with ``other``'s
    sign; either may be a number (not both). Integer division by zero raises
    ``ZeroDivisionError``; a number ``input`` has no derivative (its backward raises, as in
    PyTorch). ``out``: written into that tensor."""
    if out is not None:
        return _write_out("remainder", out, (input, other), lambda: remainder(input, other))
    return _mod("remainder", input, other)


# -- lerp ----------------------------------------------------------------------------------------
def _lerp_scalar_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: d/dinput = g * (1 - weight), d/dend = g * weight (a number weight)."""
    sa, sb, w = attrs
    ga = _reduce(F, F.mul(g, 1.0 - w), sa) if needs[0] else None
    gb = _reduce(F, F.mul(g, w), sb) if needs[1] else None
    return ga, gb


def _lerp_tensor_rule(F: Any, g: Any, saved: Any, attrs: Any,
                      needs: Any) -> tuple[Any, Any, Any]:
    """PyTorch's: d/dinput = g * (1 - weight), d/dend = g * weight, d/dweight = g * (end -
    input)."""
    a, b, w = saved
    sa, sb, sw = attrs
    ga = _reduce(F, F.mul(g, F.sub(1.0, w)), sa) if needs[0] else None
    gb = _reduce(F, F.mul(g, w), sb) if needs[1] else None
    gw = _reduce(F, F.mul(g, F.sub(b, a)), sw) if needs[2] else None
    return ga, gb, gw


LerpBackward0 = formula_node("LerpBackward0", _lerp_scalar_rule, arity=2)
LerpBackward1 = formula_node("LerpBackward1", _lerp_tensor_rule, arity=3)


def _lerp_weight(weight: Any) -> Any:
    if isinstance(weight, Tensor):
        return weight
    w = promotion.scalar_value(weight)
    if not promotion.is_number(w):
        raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not "
                        f"{_type_name(weight)}")
    return w


@op("lerp")
def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input + weight * (end - input)`` elementwise (the three broadcast); ``end`` (and a
    ``weight`` tensor of one or more dimensions) must have ``input``'s dtype; ``weight`` a
    number or a tensor. ``out``: written into that tensor."""
    if out is not None:
        return _write_out("lerp", out, (input, end, weight), lambda: lerp(input, end, weight))
    _need_tensor("lerp", input, "'input' (position 1)")
    _need_tensor("lerp", end, "'end' (position 2)")
    w = _lerp_weight(weight)
    tw = isinstance(w, Tensor)
    check_device("lerp", input, end)
    if tw:
        check_device("lerp", input, w)
    r = input.dtype
    if end.dtype is not r:
        raise RetrogradError(f"expected dtype {promotion.c_name(r)} for `end` but got dtype "
                             f"{promotion.c_name(end.dtype)}")
    if tw and w.ndim and w.dtype is not r:
        raise RetrogradError(f"expected dtype {promotion.c_name(r)} for `weight` but got "
                             f"dtype {promotion.c_name(w.dtype)}")
    if not r.is_floating_point:
        raise NotImplementedError(f"\"lerp_kernel_{'tensor' if tw else 'scalar'}\" not "
                                  f"implemented for '{promotion.torch_name(r)}'")
    _check_shapes("lerp", input, end, w)
    be = input.backend
    ad, bd = input._data, end._data
    wd = _cast(w, r) if tw else float(w)
    res = _finish(be, be.ops.lerp(ad, bd, wd), r)
    if _needs_grad(input, end, w):
        if tw:
            _record_n(LerpBackward1, res, be, r, (input, end, w), (ad, bd, wd),
                      (input, end, _src(w, wd)), (_shape(input), _shape(end), _shape(w)))
        else:
            record(LerpBackward0, res, (input, end), (), (),
                   (_shape(input), _shape(end), wd))
    return res


# -- addcmul / addcdiv ---------------------------------------------------------------------------
def _addc_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any, Any]:
    """PyTorch's ``addcmul``: g, g * (t2 * value), g * (t1 * value); ``addcdiv``: g,
    g * (value / t2), -g * (value * t1 / (t2 * t2))."""
    t1, t2 = saved
    s0, s1, s2, value, is_div = attrs
    gs = _reduce(F, g, s0) if needs[0] else None
    g1 = g2 = None
    if is_div:
        if needs[1]:
            g1 = _reduce(F, F.mul(g, F.div(value, t2)), s1)
        if needs[2]:
            g2 = _reduce(F, F.mul(F.neg(g), F.div(F.mul(t1, value), F.mul(t2, t2))), s2)
    else:
        if needs[1]:
            g1 = _reduce(F, F.mul(g, F.mul(t2, value)), s1)
        if needs[2]:
            g2 = _reduce(F, F.mul(g, F.mul(t1, value)), s2)
    return gs, g1, g2


AddcmulBackward = formula_node("AddcmulBackward0", _addc_rule, arity=3)
AddcdivBackward = formula_node("AddcdivBackward0", _addc_rule, arity=3)

_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _addc(name: str, input: Tensor, tensor1: Tensor, tensor2: Tensor,  # noqa: A002
          value: Any) -> Tensor:
    for v, arg in ((input, "'input' (position 1)"), (tensor1, "'tensor1' (position 2)"),
                   (tensor2, "'tensor2' (position 3)")):
        _need_tensor(name, v, arg)
    if isinstance(value, Tensor) and value.ndim == 0:
        value = value.item()
    v = promotion.scalar_value(value)
    if not promotion.is_number(v):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {_type_name(value)}")
    check_device(name, input, tensor1)
    check_device(name, input, tensor2)
    is_div = name == "addcdiv"
    if is_div and not tensor1.dtype.is_floating_point and \
            not tensor2.dtype.is_floating_point:
        raise RetrogradError(_ADDCDIV_INT)
    r = promotion.operands_result_type(input, tensor1, tensor2)
    if r is bool_:
        raise NotImplementedError(f"\"{name}_{input.device.type}_out\" not implemented for "
                                  "'Bool'")
    _check_shapes(name, input, tensor1, tensor2)
    be = input.backend
    sd, d1, d2 = _cast(input, r), _cast(tensor1, r), _cast(tensor2, r)
    val = promotion.number_as(v, r, False) if not r.is_floating_point else float(v)
    res = _finish(be, getattr(be.ops, name)(sd, d1, d2, val), r)
    if _needs_grad(input, tensor1, tensor2):
        cls = AddcdivBackward if is_div else AddcmulBackward
        _record_n(cls, res, be, r, (input, tensor1, tensor2), (d1, d2),
                  (_src(tensor1, d1), _src(tensor2, d2)),
                  (_shape(input), _shape(tensor1), _shape(tensor2), val, is_div))
    return res


@op("addcmul")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,  # noqa: A002
            out: Any = None) -> Tensor:
    """``input + value * tensor1 * tensor2`` elementwise (the three broadcast and promote;
    ``value`` a number, converted to the result dtype). ``out``: written into that tensor."""
    if out is not None:
        return _write_out("addcmul", out, (input, tensor1, tensor2),
                          lambda: addcmul(input, tensor1, tensor2, value=value))
    return _addc("addcmul", input, tensor1, tensor2, value)


@op("addcdiv")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,  # noqa: A002
            out: Any = None) -> Tensor:
    """``input + value * tensor1 / tensor2`` elementwise (the three broadcast and promote;
    two integer ``tensor1``/``tensor2`` are refused, as in PyTorch). ``out``: written into
    that tensor."""
    if out is not None:
        return _write_out("addcdiv", out, (input, tensor1, tensor2),
                          lambda: addcdiv(input, tensor1, tensor2, value=value))
    return _addc("addcdiv", input, tensor1, tensor2, value)


# -- logaddexp -----------------------------------------------------------------------------------
def _logaddexp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: d/da = g / (1 + exp(b - a)), d/db = g / (1 + exp(a - b))."""
    a, b = saved
    sa, sb = attrs
    ga = _reduce(F, F.div(g, F.add(F.exp(F.sub(b, a)), 1.0)), sa) if needs[0] else None
    gb = _reduce(F, F.div(g, F.add(F.exp(F.sub(a, b)), 1.0)), sb) if needs[1] else None
    return ga, gb


LogaddexpBackward = formula_node("LogaddexpBackward0", _logaddexp_rule, arity=2)


@op("logaddexp")
def logaddexp(input: Tensor, other: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """``log(exp(input) + exp(other))`` elementwise, without overflow; two floating tensors
    that broadcast and promote. ``out``: written into that tensor."""
    if out is not None:
        return _write_out("logaddexp", out, (input, other), lambda: logaddexp(input, other))
    _need_tensor("logaddexp", input, "'input' (position 1)")
    _need_tensor("logaddexp", other, "'other' (position 2)")
    check_device("logaddexp", input, other)
    r = promotion.operands_result_type(input, other)
    if not r.is_floating_point:
        raise _not_implemented("logaddexp", input, r)
    _check_shapes("logaddexp", input, other)
    be = input.backend
    ad, bd = _cast(input, r), _cast(other, r)
    res = _finish(be, be.ops.logaddexp(ad, bd), r)
    if _needs_grad(input, other):
        _record_n(LogaddexpBackward, res, be, r, (input, other), (ad, bd),
                  (_src(input, ad), _src(other, bd)), (_shape(input), _shape(other)))
    return res


# -- xlogy ---------------------------------------------------------------------------------------
def _xlogy_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: d/dx = g * xlogy(x != 0, y), d/dy = g * x / y."""
    a, b = saved
    sa, sb = attrs
    ga = _reduce(F, F.mul(g, F.xlogy(F.ne(a, 0.0), b)), sa) if needs[0] else None
    gb = _reduce(F, F.div(F.mul(g, a), b), sb) if needs[1] else None
    return ga, gb


def _xlogy_self_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """A number ``x`` (XlogyBackward1): d/dy = g * x / y."""
    return (F.div(F.mul(g, attrs), saved[0]),)


def _xlogy_other_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """A number ``y`` (XlogyBackward2): d/dx = g * xlogy(x != 0, y), with ``log(y)`` a
    number."""
    (a,) = saved
    y = attrs
    nan = y != y
    log_y = math.nan if nan else _log_scalar(y)
    return (F.where(F.ne(a, 0.0), F.mul(g, log_y), F.mul(g, math.nan if nan else 0.0)),)


XlogyBackward0 = formula_node("XlogyBackward0", _xlogy_rule, arity=2)
XlogyBackward1 = formula_node("XlogyBackward1", _xlogy_self_rule, arity=1)
XlogyBackward2 = formula_node("XlogyBackward2", _xlogy_other_rule, arity=1)


@op("xlogy")
def xlogy(input: Any, other: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """``input * log(other)`` elementwise, 0 where ``input`` is 0 (unless ``other`` is NaN);
    either may be a number (not both); integers compute in the default float dtype.
    ``out``: written into that tensor."""
    if out is not None:
        return _write_out("xlogy", out, (input, other), lambda: xlogy(input, other))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlogy() received an invalid combination of arguments - got "
                        f"({_type_name(input)}, {_type_name(other)}), but expected (Tensor "
                        "input, Tensor other) or (Number self, Tensor other)")
    av = _number_or_tensor("xlogy", input)
    bv = _number_or_tensor("xlogy", other)
    like = av if isinstance(av, Tensor) else bv
    if isinstance(av, Tensor) and isinstance(bv, Tensor):
        check_device("xlogy", av, bv)
    r = promotion.operands_result_type(av, bv)
    if not r.is_floating_point:
        r = get_default_dtype()
    _check_shapes("xlogy", av, bv)
    be = like.backend
    ad, bd = _cast(av, r), _cast(bv, r)
    res = _finish(be, be.ops.xlogy(ad, bd), r)
    if _needs_grad(av, bv):
        ta = av if isinstance(av, Tensor) else None
        tb = bv if isinstance(bv, Tensor) else None
        if ta is None:
            record(XlogyBackward1, res, (tb,), (bd,), (_src(tb, bd),), float(ad))
        elif tb is None:
            record(XlogyBackward2, res, (ta,), (ad,), (_src(ta, ad),), float(bd))
        else:
            _record_n(XlogyBackward0, res, be, r, (ta, tb), (ad, bd),
                      (_src(ta, ad), _src(tb, bd)), (_shape(ta), _shape(tb)))
    return res


# -- erfc, sgn, round, nan_to_num ----------------------------------------------------------------
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
ErfcBackward = formula_node(  # -2/sqrt(pi) * exp(-x^2) * g
    "ErfcBackward0", lambda F, g, s, a, n: (
        F.mul(F.mul(F.exp(F.neg(F.mul(s[0], s[0]))), -_TWO_OVER_SQRT_PI), g),), arity=1)


@op("erfc")
def erfc(input: Tensor) -> Tensor:  # noqa: A002
    """The complementary error function ``1 - erf(x)``, accurate where it is small;
    integers and bools compute in the default float dtype."""
    _need_tensor("erfc", input, "'input' (position 1)")
    return _unary("erfc", ErfcBackward, input, "in", True)


def _zero_rule(F: Any, g: Any, s: Any, a: Any, n: Any) -> tuple[Any]:
    return (F.mul(g, 0.0),)


SgnBackward = formula_node("SgnBackward0", _zero_rule, arity=1)
RoundBackward0 = formula_node("RoundBackward0", _zero_rule, arity=1)
RoundBackward1 = formula_node("RoundBackward1", _zero_rule, arity=1)


@op("sgn")
def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """The sign of each element (for real tensors, ``sign``: -1, 0 or 1, and 0 at NaN), in
    ``input``'s dtype; its gradient is zero."""
    from .elementwise import _sgn

    _need_tensor("sgn", input, "'input' (position 1)")
    be = input.backend
    dt = input.dtype
    if dt is bool_:
        data = be.ops.copy(input._data)
    elif dt.is_floating_point:
        data = _sgn(be.ops, input._data)
    else:
        data = be.ops.sign(input._data)
    res = _finish(be, data, dt)
    if _needs_grad(input):
        record(SgnBackward, res, (input,))
    return res


@op("round")
def round(input: Tensor, *, decimals: int | None = None) -> Tensor:  # noqa: A001, A002
    """Each element rounded to the nearest integer, halves to even, in ``input``'s dtype (an
    integer tensor is copied); ``decimals``: to that many decimal places (negative: to tens,
    hundreds ...; floating tensors only). Its gradient is zero."""
    _need_tensor("round", input, "'input' (position 1)")
    be = input.backend
    dt = input.dtype
    if dt is bool_:
        raise _not_implemented("round_vml" if decimals is None else "round", input, dt)
    if not dt.is_floating_point:
        if decimals is not None:
            raise _not_implemented("round", input, dt)
        return Tensor(be.ops.copy(input._data), be)
    if decimals is None:
        data = be.ops.round(input._data)
        cls = RoundBackward0
    else:
        if not isinstance(decimals, int) or isinstance(decimals, bool):
            raise TypeError(f"round(): argument 'decimals' must be int, not "
                            f"{_type_name(decimals)}")
        a = input._data if dt is not float16 else promotion.cast_data(input, float32)
        data = be.ops.round_decimals(a, decimals)
        cls = RoundBackward1
    res = _finish(be, data, dt)
    if _needs_grad(input):
        record(cls, res, (input,))
    return res


def _nan_to_num_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's: g where the input is finite, else 0."""
    (x,) = saved
    finite = F.logical_and(F.eq(x, x), F.ne(F.abs(x), math.inf))
    return (F.where(finite, g, 0.0),)


NanToNumBackward = formula_node("NanToNumBackward0", _nan_to_num_rule, arity=1)

_FINFO_MAX = {float16: 65504.0, float32: 3.4028234663852886e38, float64: 1.7976931348623157e308}


def _fill_number(name: str, v: Any, default: float) -> float:
    if v is None:
        return default
    n = promotion.scalar_value(v)
    if not promotion.is_number(n):
        raise TypeError(f"nan_to_num(): argument '{name}' must be float, not {_type_name(v)}")
    return float(n)


@op("nan_to_num")
def nan_to_num(input: Tensor, nan: Any = 0.0, posinf: Any = None,  # noqa: A002
               neginf: Any = None, *, out: Any = None) -> Tensor:
    """``input`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (default: the dtype's largest and lowest finite values); an integer or bool tensor is
    copied. The gradient is passed where the input is finite, else 0. ``out``: written into
    that tensor."""
    if out is not None:
        return _write_out("nan_to_num", out, (input,),
                          lambda: nan_to_num(input, nan, posinf, neginf))
    _need_tensor("nan_to_num", input, "'input' (position 1)")
    be = input.backend
    dt = input.dtype
    if not dt.is_floating_point:
        return Tensor(be.ops.copy(input._data), be)
    top = _FINFO_MAX[dt]
    fills = (_fill_number("nan", nan, 0.0), _fill_number("posinf", posinf, top),
             _fill_number("neginf", neginf, -top))
    res = _finish(be, be.ops.nan_to_num(input._data, *fills), dt)
    if _needs_grad(input):
        record(NanToNumBackward, res, (input,), (input._data,), (input,))
    return res


# -- clamp with tensor bounds, clamp_min, clamp_max, clip -----------------------------------------
def _clamp_tensor_rule(F: Any, g: Any, saved: Any, attrs: Any,
                       needs: Any) -> tuple[Any, ...]:
    """PyTorch's ``clamp_backward`` and ``clamp_backward_min_max`` for tensor bounds: the
    input's gradient where ``min <= x <= max``; ``min``'s where ``x < min`` (and ``min <
    max``); ``max``'s where ``x > max`` (or ``max < min``). ``attrs``: the shapes and which
    bounds the node has (``clamp``: both slots; ``clamp_min``/``clamp_max``: one)."""
    x, lo, hi = saved
    shapes, slots = attrs
    grads: list[Any] = []
    if lo is not None and hi is not None:
        inside = F.logical_and(F.ge(x, lo), F.le(x, hi))
        gx = F.where(inside, g, 0.0) if needs[0] else None
        glo = F.where(F.logical_and(F.lt(x, lo), F.lt(lo, hi)), g, 0.0) if needs[1] else None
        ghi = F.where(F.gt(x, hi), g, F.where(F.lt(hi, lo), g, 0.0)) if needs[2] else None
    elif lo is not None:
        gx = F.where(F.ge(x, lo), g, 0.0) if needs[0] else None
        glo = F.where(F.lt(x, lo), g, 0.0) if needs[1] else None
        ghi = None
    else:
        gx = F.where(F.le(x, hi), g, 0.0) if needs[0] else None
        glo = None
        ghi = F.where(F.gt(x, hi), g, 0.0) if needs[-1] else None
    for grad, slot in ((gx, 0), (glo, 1), (ghi, 2)):
        if slot in slots:
            k = len(grads)
            grads.append(None if grad is None else _reduce(F, grad, shapes[k]))
    return tuple(grads)


ClampBackward0 = formula_node("ClampBackward0", _clamp_tensor_rule, arity=3)
ClampMinBackward1 = formula_node("ClampMinBackward1", _clamp_tensor_rule, arity=2)
ClampMaxBackward1 = formula_node("ClampMaxBackward1", _clamp_tensor_rule, arity=2)


def clamp_tensors(name: str, x: Tensor, lo: Tensor | None, hi: Tensor | None) -> Tensor:
    """``x`` limited to ``[lo, hi]`` for tensor bounds (either may be None): the three
    broadcast and promote; a NaN bound gives NaN; ``lo > hi`` gives ``hi``. ``name``:
    ``clamp`` (ClampBackward0), ``clamp_min`` or ``clamp_max`` (ClampMin/MaxBackward1)."""
    ts = [t for t in (x, lo, hi) if t is not None]
    for t in ts[1:]:
        check_device(name, x, t)
    r = promotion.operands_result_type(*ts)
    _check_shapes(name, *ts)
    be = x.backend
    F = be.ops
    work = int64 if r is bool_ else r
    xd = _cast(x, work)
    lod = None if lo is None else _cast(lo, work)
    hid = None if hi is None else _cast(hi, work)
    data = xd
    if lod is not None:
        data = F.maximum(data, lod)
    if hid is not None:
        data = F.minimum(data, hid)
    if lod is None and hid is None:
        data = F.copy(data)
    res = _finish(be, data, r)
    if _needs_grad(x, lo, hi):
        inputs: tuple[Any, ...]
        slots: tuple[int, ...]
        if name == "clamp":
            cls, inputs, slots = ClampBackward0, (x, lo, hi), (0, 1, 2)
        elif name == "clamp_min":
            cls, inputs, slots = ClampMinBackward1, (x, lo), (0, 1)
        else:
            cls, inputs, slots = ClampMaxBackward1, (x, hi), (0, 2)
        _record_n(cls, res, be, r, inputs, (xd, lod, hid),
                  (_src(x, xd), _src(lo, lod), _src(hi, hid)),
                  (tuple(_shape(t) for t in inputs), slots))
    return res


def _bound(name: str, v: Any, arg: str) -> Any:
    if isinstance(v, Tensor):
        return v
    n = promotion.scalar_value(v)
    if not promotion.is_number(n):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"{arg}={_type_name(v)}, but expected a Tensor or a Number")
    return n


@op("clamp_min")
def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``maximum(input, min)``: ``clamp(input, min=min)`` with a number or a tensor ``min``
    (ClampMinBackward0/1)."""
    from .elementwise import ClampMinBackward0, _clamp_scalar

    _need_tensor("clamp_min", input, "'input' (position 1)")
    lo = _bound("clamp_min", min, "min")
    if isinstance(lo, Tensor):
        return clamp_tensors("clamp_min", input, lo, None)
    return _clamp_scalar(input, lo, None, ClampMinBackward0)


@op("clamp_max")
def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``minimum(input, max)``: ``clamp(input, max=max)`` with a number or a tensor ``max``
    (ClampMaxBackward0/1)."""
    from .elementwise import ClampMaxBackward0, _clamp_scalar

    _need_tensor("clamp_max", input, "'input' (position 1)")
    hi = _bound("clamp_max", max, "max")
    if isinstance(hi, Tensor):
        return clamp_tensors("clamp_max", input, None, hi)
    return _clamp_scalar(input, None, hi, ClampMaxBackward0)


@op("clip", method=False)
def clip(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``clamp``'s alias: ``input`` limited to ``[min, max]`` (numbers, or tensors that
    broadcast with it)."""
    from .elementwise import clamp

    return clamp(input, min, max)


# -- in-place forms ------------------------------------------------------------------------------
def _inplace_op(name: str, t: Any, operands: tuple[Any, ...], fn: Any, floating: bool = False,
                adopt: bool = False) -> Tensor:
    """``fn(t)`` written into ``t`` (``ops.inplace._inplace``): the tensor operands must
    broadcast to ``t``'s shape, and the result dtype may not be above ``t``'s."""
    from .inplace import _check_broadcast, _inplace

    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(t)}")
    vals = []
    for o in operands:
        if isinstance(o, Tensor):
            _check_broadcast(name, t, o)
            vals.append(o)
        else:
            n = promotion.scalar_value(o)
            if promotion.is_number(n):
                vals.append(n)
    r = promotion.operands_result_type(t, *vals)
    if floating and not r.is_floating_point:
        r = get_default_dtype()
    promotion.check_cast(r, t.dtype)
    be = t.backend

    def raw(a: Any) -> None:
        be.ops.assign_(a, promotion.to_dtype_of(t, fn(Tensor(a, be))))

    tensors = tuple(o for o in operands if isinstance(o, Tensor))
    return _inplace(name, t, tensors, fn, raw, True, adopt=adopt)


@op("hypot_", function=False, differentiable=False)
def hypot_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``hypot(input, other)`` written into ``input``; returns it."""
    _need_tensor("hypot_", other, "'other' (position 1)")
    return _inplace_op("hypot_", input, (other,), lambda x: hypot(x, other))


@op("fmod_", function=False, differentiable=False)
def fmod_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``fmod(input, other)`` written into ``input``; returns it."""
    return _inplace_op("fmod_", input, (other,), lambda x: fmod(x, other))


@op("remainder_", function=False, differentiable=False)
def remainder_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``remainder(input, other)`` written into ``input``; returns it."""
    return _inplace_op("remainder_", input, (other,), lambda x: remainder(x, other))


@op("lerp_", function=False, differentiable=False)
def lerp_(input: Tensor, end: Tensor, weight: Any) -> Tensor:  # noqa: A002
    """``lerp(input, end, weight)`` written into ``input``; returns it."""
    return _inplace_op("lerp_", input, (end, weight), lambda x: lerp(x, end, weight))


@op("addcmul_", function=False, differentiable=False)
def addcmul_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
             value: Any = 1) -> Tensor:
    """``addcmul(input, tensor1, tensor2, value=value)`` written into ``input``."""
    return _inplace_op("addcmul_", input, (tensor1, tensor2),
                       lambda x: addcmul(x, tensor1, tensor2, value=value))


@op("addcdiv_", function=False, differentiable=False)
def addcdiv_(input: Tensor, tensor1: Tensor, tensor2: Tensor, *,  # noqa: A002
             value: Any = 1) -> Tensor:
    """``addcdiv(input, tensor1, tensor2, value=value)`` written into ``input``."""
    return _inplace_op("addcdiv_", input, (tensor1, tensor2),
                       lambda x: addcdiv(x, tensor1, tensor2, value=value))


@op("xlogy_", differentiable=False)
def xlogy_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``xlogy(input, other)`` written into ``input`` (a floating tensor); returns it."""
    return _inplace_op("xlogy_", input, (other,), lambda x: xlogy(x, other), floating=True)


@op("erfc_", differentiable=False)
def erfc_(input: Tensor) -> Tensor:  # noqa: A002
    """``erfc(input)`` written into ``input`` (a floating tensor); returns it."""
    return _inplace_op("erfc_", input, (), erfc, floating=True)


@op("sgn_", function=False, differentiable=False)
def sgn_(input: Tensor) -> Tensor:  # noqa: A002
    """``sgn(input)`` written into ``input``; returns it."""
    return _inplace_op("sgn_", input, (), sgn)


@op("round_", differentiable=False)
def round_(input: Tensor, *, decimals: int | None = None) -> Tensor:  # noqa: A002
    """``round(input, decimals=decimals)`` written into ``input``; returns it."""
    return _inplace_op("round_", input, (), lambda x: round(x, decimals=decimals))


@op("nan_to_num_", differentiable=False)
def nan_to_num_(input: Tensor, nan: Any = 0.0, posinf: Any = None,  # noqa: A002
                neginf: Any = None) -> Tensor:
    """``nan_to_num(input, nan, posinf, neginf)`` written into ``input``; returns it."""
    return _inplace_op("nan_to_num_", input, (),
                       lambda x: nan_to_num(x, nan, posinf, neginf))


@op("clamp_min_", differentiable=False)
def clamp_min_(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``clamp_min(input, min)`` written into ``input``; returns it."""
    return _inplace_op("clamp_min_", input, (min,), lambda x: clamp_min(x, min))


@op("clamp_max_", differentiable=False)
def clamp_max_(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``clamp_max(input, max)`` written into ``input``; returns it."""
    return _inplace_op("clamp_max_", input, (max,), lambda x: clamp_max(x, max))


# the ``%`` operators: PyTorch's ``remainder`` (``a % b``, ``number % tensor``, ``a %= b``)
def _mod_operator(self: Tensor, other: Any) -> Any:
    """``self % other``: ``remainder(self, other)``."""
    if not isinstance(other, Tensor) and not promotion.is_number(promotion.scalar_value(other)):
        return NotImplemented
    return remainder(self, other)


def _rmod_operator(self: Tensor, other: Any) -> Any:
    """``other % self`` for a number ``other``: ``remainder(other, self)``."""
    if not promotion.is_number(promotion.scalar_value(other)):
        return NotImplemented
    return remainder(other, self)


def _imod_operator(self: Tensor, other: Any) -> Tensor:
    """``self %= other``: ``self.remainder_(other)``."""
    return remainder_(self, other)


op("__mod__", method=_mod_operator, function=False, differentiable=False)(_mod_operator)
op("__rmod__", method=_rmod_operator, function=False, differentiable=False)(_rmod_operator)
op("__imod__", method=_imod_operator, function=False, differentiable=False)(_imod_operator)


def _graph_kernels() -> dict[str, Any]:
    """The ops behind the kernels this module's rules call that ``GRAPH_F`` lacks."""
    from .activations import trunc
    from .pointwise import floor

    return {"xlogy": xlogy, "trunc": trunc, "floor": floor}


for _name, _fn in _graph_kernels().items():  # put in GRAPH_F: see ops.declare
    GRAPH_KERNELS.setdefault(_name, _fn)
