"""The node PyTorch records for an op whose derivative it does not implement
(``floor_divide``, ``heaviside``, ``fmod``'s divisor ...): the result has a ``grad_fn``, and a
backward that reaches it raises, naming the op."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record

__all__ = ["NotImplementedBackward", "record_not_implemented", "not_implemented_rule"]


def not_implemented_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """Refuse: ``attrs`` is the op's name."""
    raise RetrogradError(f"derivative for aten::{attrs} is not implemented")


#: PyTorch's ``torch::autograd::NotImplemented`` (its ``name()``), one input per tensor operand
NotImplementedBackward = formula_node("torch::autograd::NotImplemented", not_implemented_rule,
                                      arity=1)
_BY_ARITY: dict[int, Any] = {1: NotImplementedBackward}


def record_not_implemented(out: Tensor, inputs: tuple[Tensor, ...], name: str) -> None:
    """Record the refusing node on ``out`` for ``inputs`` (when grad mode is on and one of them
    requires grad)."""
    if not (_grad.enabled and any(t._requires_grad for t in inputs)):
        return
    cls = _BY_ARITY.get(len(inputs))
    if cls is None:
        cls = _BY_ARITY[len(inputs)] = formula_node(
            "torch::autograd::NotImplemented", not_implemented_rule, arity=len(inputs))
    record(cls, out, inputs, (), (), name)
