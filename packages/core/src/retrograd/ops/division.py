"""Division with a rounding mode: ``div(a, b, rounding_mode="trunc" | "floor")`` and its
synonym ``divide``.

A rounded quotient is a step function, so PyTorch gives it zero gradients (``DivBackward2``,
whose zeros carry no history under ``create_graph``), not the ``NotImplemented`` node of
``floor_divide``. An explicit ``rounding_mode=None`` is true division recorded under the same
node name, with true division's gradients. Integers divide exactly in their own dtype, and an
integer division by zero raises ``ZeroDivisionError`` as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_
from ..errors import RetrogradError
from ..tensor import Tensor
from . import elementwise, numeric, promotion
from ._core import record
from .declare import op
from .zero_grad import zero_grad_node

__all__ = ["rounded_div", "divide", "where_method"]

_KERNEL = {"trunc": "div_trunc", "floor": "floor_divide"}


_ROUNDED = {n: zero_grad_node("DivBackward2", n) for n in (1, 2)}
#: ``rounding_mode=None`` said out loud: true division's rule under PyTorch's node name
TrueDivBackward2 = formula_node("DivBackward2", elementwise._div_rule, arity=2)


def _check_mode(mode: Any) -> None:
    if mode is not None and mode not in _KERNEL:
        raise RetrogradError("div expected rounding_mode to be one of None, 'trunc', or "
                             f"'floor' but found '{mode}'")


def rounded_div(a: Any, b: Any, mode: str | None) -> Tensor:
    """``a / b`` rounded as ``mode`` says (``None``: true division under ``DivBackward2``)."""
    _check_mode(mode)
    if mode is None:
        if isinstance(a, Tensor):
            return elementwise._binary("div", TrueDivBackward2, a, b, "div")
        return elementwise.div(a, b)
    av, bv, like = numeric._operands("div", a, b, first_tensor=False)
    r = promotion.operands_result_type(av, bv)
    if r is bool_:
        raise numeric._not_for("div", f"div_{mode}", like, r)
    be = like.backend
    if not r.is_floating_point:
        bd = numeric._data(bv, r)
        zero = bool(be.ops.item(be.ops.any(be.ops.eq(bd, 0), None))) \
            if isinstance(bv, Tensor) else bd == 0
        if zero:
            raise RetrogradError("ZeroDivisionError")
    out, _, _ = numeric._apply("div", _KERNEL[mode], av, bv, r, like)
    tensors = tuple(v for v in (av, bv) if isinstance(v, Tensor))
    if numeric._needs_grad(*tensors):
        record(_ROUNDED[len(tensors)], out, tensors, (), (), tuple(tuple(t.shape) for t in tensors))
    return out


@op("divide")
def divide(input: Any, other: Any, *, rounding_mode: Any = elementwise.UNSET,  # noqa: A002
           out: Any = None) -> Tensor:
    """PyTorch's other name for ``div`` (with ``rounding_mode`` and ``out``)."""
    return elementwise.div(input, other, rounding_mode=rounding_mode, out=out)


@op("where", function=False)
def where_method(self: Tensor, condition: Tensor, other: Any) -> Tensor:
    """``where(condition, self, other)``: ``self`` where ``condition`` holds, else ``other``."""
    return elementwise.where(condition, self, other)
