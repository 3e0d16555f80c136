"""More in-place forms PyTorch has as Tensor methods (``ceil_``, ``tril_``, ``cumsum_``,
``eq_``, ``addmm_``, ``logical_not_``, ``bitwise_and_``, ``floor_divide_``, ``logit_`` ...)
and the augmented operators ``&=``, ``|=``, ``^=``, ``//=``.

Each is its out-of-place op written into the tensor under the rules of ``ops.inplace``: the
version is bumped, a recorded write rebases the tensor's history (a view's base gets a
``CopySlices``), and a result whose dtype cannot be written back is refused before anything
changes. The in-place comparisons record PyTorch's zero-gradient nodes (``EqBackward0`` for a
number, ``EqBackward1`` for a tensor) and write 1 or 0 in the tensor's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import float64, get_default_dtype
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import activations, elementwise, layout, numeric, products, promotion, statistics
from ._core import record
from .declare import op
from .inplace import _check_broadcast, _declare_unary_, _inplace

__all__: list[str] = []


def _tensor_self(name: str, t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    return t


def _written(name: str, t: Tensor, operands: tuple[Any, ...], fn: Callable[[Tensor], Tensor],
             needs_old: bool = True) -> Tensor:
    """``fn(t)`` written into ``t`` (its dtype checked against ``t``'s first)."""
    be = t.backend

    def raw(a: Any) -> None:
        be.ops.assign_(a, promotion.to_dtype_of(t, fn(Tensor(a, be))))

    return _inplace(name, t, operands, fn, raw, needs_old)


def _binary_(name: str, fn: Callable[[Tensor, Any], Tensor], doc: str,
             method_only: bool = True) -> Callable[..., Tensor]:
    def inplace_op(t: Tensor, other: Any) -> Tensor:
        t = _tensor_self(name, t)
        _check_broadcast(name, t, other)
        probe = promotion.operands_result_type(
            t, other if isinstance(other, Tensor) else promotion.scalar_value(other))
        promotion.check_cast(probe, t.dtype)
        return _written(name, t, (other,) if isinstance(other, Tensor) else (),
                        lambda x: fn(x, other))

    inplace_op.__name__ = inplace_op.__qualname__ = name
    inplace_op.__doc__ = doc
    return op(name, function=not method_only, differentiable=False)(inplace_op)


# -- unary ----------------------------------------------------------------------------------
ceil_ = _declare_unary_("ceil_", activations.ceil, False, None, function=False)
trunc_ = _declare_unary_("trunc_", activations.trunc, False, None, function=False)
frac_ = _declare_unary_("frac_", activations.frac, False, None, function=False)
exp2_ = _declare_unary_("exp2_", activations.exp2, True, "in", function=False)
log2_ = _declare_unary_("log2_", activations.log2, True, "in", function=False)
log10_ = _declare_unary_("log10_", activations.log10, True, "in", function=False)
deg2rad_ = _declare_unary_("deg2rad_", numeric.deg2rad, True, None, function=False)
rad2deg_ = _declare_unary_("rad2deg_", numeric.rad2deg, True, None, function=False)
negative_ = _declare_unary_("negative_", elementwise.neg, False, None, function=False)
absolute_ = _declare_unary_("absolute_", elementwise.abs, False, "in", function=False)


@op("logit_", function=False, differentiable=False)
def logit_(t: Tensor, eps: float | None = None) -> Tensor:
    """``logit(t, eps)`` written into ``t`` (a floating tensor)."""
    t = _tensor_self("logit_", t)
    if not t.dtype.is_floating_point:
        promotion.check_cast(get_default_dtype(), t.dtype)
    return _written("logit_", t, (), lambda x: numeric.logit(x, eps))


@op("logical_not_", function=False, differentiable=False)
def logical_not_(t: Tensor) -> Tensor:
    """``logical_not(t)`` written into ``t`` (1 or 0 in its dtype)."""
    t = _tensor_self("logical_not_", t)
    return _written("logical_not_", t, (), numeric.logical_not, needs_old=False)


@op("bitwise_not_", function=False, differentiable=False)
def bitwise_not_(t: Tensor) -> Tensor:
    """``bitwise_not(t)`` written into ``t`` (an integer or bool tensor)."""
    t = _tensor_self("bitwise_not_", t)
    return _written("bitwise_not_", t, (), numeric.bitwise_not, needs_old=False)


# -- with a second operand ------------------------------------------------------------------
def _logical_(name: str, fn: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Tensor]:
    def inplace_op(t: Tensor, other: Tensor) -> Tensor:
        t = _tensor_self(name, t)
        _check_broadcast(name, t, other)
        return _written(name, t, (other,) if isinstance(other, Tensor) else (),
                        lambda x: fn(x, other), needs_old=False)

    inplace_op.__name__ = inplace_op.__qualname__ = name
    inplace_op.__doc__ = f"``{name[:-1]}(t, other)`` written into ``t`` (1 or 0 in its dtype)."
    return op(name, function=False, differentiable=False)(inplace_op)


logical_and_ = _logical_("logical_and_", elementwise.logical_and)
logical_or_ = _logical_("logical_or_", numeric.logical_or)
logical_xor_ = _logical_("logical_xor_", numeric.logical_xor)

bitwise_and_ = _binary_("bitwise_and_", numeric.bitwise_and,
                        "``bitwise_and(t, other)`` written into ``t``; also ``t &= other``.")
bitwise_or_ = _binary_("bitwise_or_", numeric.bitwise_or,
                       "``bitwise_or(t, other)`` written into ``t``; also ``t |= other``.")
bitwise_xor_ = _binary_("bitwise_xor_", numeric.bitwise_xor,
                        "``bitwise_xor(t, other)`` written into ``t``; also ``t ^= other``.")
floor_divide_ = _binary_("floor_divide_", numeric.floor_divide,
                         "``floor_divide(t, other)`` written into ``t``; also ``t //= other``.")
copysign_ = _binary_("copysign_", numeric.copysign,
                     "``copysign(t, other)`` written into ``t`` (a floating tensor).")
multiply_ = _binary_("multiply_", elementwise.mul, "``mul(t, other)`` written into ``t``.")
subtract_ = _binary_("subtract_", elementwise.sub, "``sub(t, other)`` written into ``t``.")
true_divide_ = _binary_("true_divide_", elementwise.div, "``div(t, other)`` written into ``t``.")


def rounded_div_(t: Tensor, other: Any, mode: str, rounded_div: Any) -> Tensor:
    """``t.div_(other, rounding_mode=mode)``: the rounded quotient written into ``t``."""
    t = _tensor_self("div_", t)
    _check_broadcast("div_", t, other)
    probe = promotion.operands_result_type(
        t, other if isinstance(other, Tensor) else promotion.scalar_value(other))
    promotion.check_cast(probe, t.dtype)
    return _written("div_", t, (other,) if isinstance(other, Tensor) else (),
                    lambda x: rounded_div(x, other, mode))


@op("float_power_", function=False, differentiable=False)
def float_power_(t: Tensor, exponent: Any) -> Tensor:
    """``float_power(t, exponent)`` written into ``t``, which must be float64 (the result's
    dtype), as in PyTorch."""
    t = _tensor_self("float_power_", t)
    if t.dtype is not float64:
        raise RetrogradError(f"the base given to float_power_ has dtype "
                             f"{promotion.torch_name(t.dtype)} but the operation's result "
                             "requires dtype Double")
    _check_broadcast("float_power_", t, exponent)
    return _written("float_power_", t, (exponent,) if isinstance(exponent, Tensor) else (),
                    lambda x: numeric.float_power(x, exponent))


def _augmented(fn: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    def augmented(self: Tensor, other: Any) -> Tensor:
        return fn(self, other)

    augmented.__doc__ = f"``self {fn.__name__} other`` in place (Python's augmented operator)."
    return augmented


op("__iand__", function=False, differentiable=False)(_augmented(bitwise_and_))
op("__ior__", function=False, differentiable=False)(_augmented(bitwise_or_))
op("__ixor__", function=False, differentiable=False)(_augmented(bitwise_xor_))
op("__ifloordiv__", function=False, differentiable=False)(_augmented(floor_divide_))


# -- comparisons ----------------------------------------------------------------------------
def _zero_rule(F: Any, g: Any, s: Any, a: Any, n: Any) -> tuple[Any, ...]:
    """The comparisons' gradient: zeros for the tensor (and a tensor ``other``)."""
    return tuple(F.zeros_like(F.reduce_to(g, a[i])) if n[i] else None for i in range(len(a)))


def _comparison_(name: str, fn: Callable[[Tensor, Any], Tensor]) -> Callable[..., Tensor]:
    node = name[:-1].capitalize()
    by_number = formula_node(f"{node}Backward0", _zero_rule, arity=1)
    by_tensor = formula_node(f"{node}Backward1", _zero_rule, arity=2)

    def recorded(x: Tensor, other: Any) -> Tensor:
        with_grad = _grad.enabled
        res = fn(x, other)
        out = Tensor(promotion.cast_data(res, x.dtype), x.backend)
        if with_grad and (x._requires_grad or (isinstance(other, Tensor)
                                               and other._requires_grad)):
            if isinstance(other, Tensor):
                record(by_tensor, out, (x, other), (), (),
                       (tuple(x.shape), tuple(other.shape)))
            else:
                record(by_number, out, (x,), (), (), (tuple(x.shape),))
        return out

    def inplace_op(t: Tensor, other: Any) -> Tensor:
        t = _tensor_self(name, t)
        _check_broadcast(name, t, other)
        return _written(name, t, (other,) if isinstance(other, Tensor) else (),
                        lambda x: recorded(x, other), needs_old=False)

    inplace_op.__name__ = inplace_op.__qualname__ = name
    inplace_op.__doc__ = (f"``{name[:-1]}(t, other)`` written into ``t`` as 1 or 0 in its "
                          "dtype.")
    return op(name, function=False, differentiable=False)(inplace_op)


eq_ = _comparison_("eq_", elementwise.eq)
ne_ = _comparison_("ne_", elementwise.ne)
lt_ = _comparison_("lt_", elementwise.lt)
le_ = _comparison_("le_", elementwise.le)
gt_ = _comparison_("gt_", elementwise.gt)
ge_ = _comparison_("ge_", elementwise.ge)


# -- shape-preserving ops with arguments ----------------------------------------------------
@op("tril_", function=False, differentiable=False)
def tril_(t: Tensor, diagonal: int = 0) -> Tensor:
    """``tril(t, diagonal)`` written into ``t``."""
    t = _tensor_self("tril_", t)
    return _written("tril_", t, (), lambda x: layout.tril(x, diagonal), needs_old=False)


@op("triu_", function=False, differentiable=False)
def triu_(t: Tensor, diagonal: int = 0) -> Tensor:
    """``triu(t, diagonal)`` written into ``t``."""
    t = _tensor_self("triu_", t)
    return _written("triu_", t, (), lambda x: layout.triu(x, diagonal), needs_old=False)


@op("cumsum_", function=False, differentiable=False)
def cumsum_(t: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``cumsum(t, dim)`` written into ``t``."""
    t = _tensor_self("cumsum_", t)
    return _written("cumsum_", t, (), lambda x: statistics.cumsum(x, dim, dtype=dtype),
                    needs_old=False)


@op("cumprod_", function=False, differentiable=False)
def cumprod_(t: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``cumprod(t, dim)`` written into ``t``."""
    t = _tensor_self("cumprod_", t)
    return _written("cumprod_", t, (), lambda x: statistics.cumprod(x, dim, dtype=dtype))


@op("addmm_", function=False, differentiable=False)
def addmm_(t: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addmm(t, mat1, mat2, beta=, alpha=)`` written into ``t`` (the product's shape must be
    ``t``'s)."""
    t = _tensor_self("addmm_", t)
    return _written("addmm_", t, (mat1, mat2),
                    lambda x: products.addmm(x, mat1, mat2, beta=beta, alpha=alpha),
                    needs_old=False)


@op("baddbmm_", function=False, differentiable=False)
def baddbmm_(t: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
             alpha: Any = 1) -> Tensor:
    """``baddbmm(t, batch1, batch2, beta=, alpha=)`` written into ``t``."""
    t = _tensor_self("baddbmm_", t)
    return _written("baddbmm_", t, (batch1, batch2),
                    lambda x: products.baddbmm(x, batch1, batch2, beta=beta, alpha=alpha),
                    needs_old=False)
