"""``GradientEdge``: where a tensor's gradient arrives, held apart from the tensor.

A gradient edge is a node and one of its input slots: a non-leaf tensor's ``(grad_fn,
output_nr)``, a leaf's ``(AccumulateGrad, 0)``. ``autograd.grad`` and ``autograd.backward``
take edges wherever they take inputs. An edge taken before an in-place op still names the
tensor's *old* history: ``grad(y, edge)`` then gives the gradient with respect to the value
the tensor had when the edge was taken, as in PyTorch.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import RetrogradError
from ..tensor import Tensor

__all__ = ["GradientEdge", "get_gradient_edge", "edge_target"]


class GradientEdge(NamedTuple):
    """A node of the graph and the input slot of it a gradient flows to (PyTorch's
    ``torch.autograd.graph.GradientEdge``)."""

    node: Any
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge ``tensor``'s gradient arrives at: ``(tensor.grad_fn, tensor.output_nr)``,
    or, for a leaf, its gradient accumulator and 0."""
    from .accumulate import accumulator_of

    if not isinstance(tensor, Tensor):
        raise TypeError(f"get_gradient_edge(): expected a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise RetrogradError("It is not possible to get the gradient edge for a Tensor that "
                             "does not require gradients")
    fn = tensor.grad_fn
    if fn is not None:
        return GradientEdge(fn, tensor.output_nr)
    acc = accumulator_of(tensor)
    if acc is None:  # a view made under no_grad: it has nowhere to send a gradient
        raise RetrogradError("It is not possible to get the gradient edge for a view created "
                             "in no_grad mode, which has no history and no accumulator")
    return GradientEdge(acc, 0)


def edge_target(edge: GradientEdge) -> tuple[Any, int]:
    """The ``(node, slot)`` of an edge given as an input, checked."""
    node, nr = edge
    if node is None or not hasattr(node, "_nin"):
        raise TypeError(f"GradientEdge: node must be a graph node, got {type(node).__name__}")
    if not isinstance(nr, int) or not 0 <= nr < node._nin:
        raise RetrogradError(f"GradientEdge: output_nr {nr!r} is out of range for "
                             f"{node.name()}, which takes {node._nin} gradient(s)")
    return node, nr
