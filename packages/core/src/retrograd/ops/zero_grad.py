"""Nodes whose gradient is zero by definition (samplers, rounded quotients): PyTorch writes
their formula as ``zeros_like(grad)``, so the zeros carry no history even under
``create_graph`` -- unlike a zero derivative computed from the incoming gradient."""

from __future__ import annotations

from typing import Any

from ..autograd.node import FormulaNode
from . import creation

__all__ = ["ZeroGradNode", "zero_grad_node"]


def _zero_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Zero gradients for each input (``attrs``: their shapes)."""
    out: list[Any] = []
    for shape, need in zip(attrs, needs):
        if not need:
            out.append(None)
            continue
        z = F.zeros_like(g)
        out.append(z if tuple(z.shape) == shape else F.reduce_to(z, shape))
    return tuple(out)


class ZeroGradNode(FormulaNode):
    """Zero gradients of the inputs' shapes (the node's attrs), without history."""

    __slots__ = ()

    def graph_rule(self, grad_outputs: Any, needs: Any) -> tuple[Any, ...]:
        g = grad_outputs[0]
        return tuple(None if not need else creation.zeros(shape, dtype=g.dtype, device=g.device)
                     for shape, need in zip(self._attrs, needs))


def zero_grad_node(name: str, arity: int) -> Any:
    """A ``ZeroGradNode`` class named ``name`` (its ``name()``) with ``arity`` inputs; record
    it with the inputs' shapes as its attrs."""
    return type(name, (ZeroGradNode,), {"__slots__": (), "rule": staticmethod(_zero_rule),
                                        "_arity": arity})
