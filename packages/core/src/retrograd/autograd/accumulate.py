"""AccumulateGrad: the terminal node of a leaf. One per leaf, shared by every graph built while
it is alive (the leaf holds it weakly; each graph holds it strongly)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from ..tensor import _create_lock
from .node import Node

__all__ = ["AccumulateGrad", "accumulator_of"]


class AccumulateGrad(Node):
    """Writes the gradient arriving at a leaf into ``leaf.grad`` (first write stores, later
    writes add). Inside a backward walk the engine stages these writes and commits them only
    once the whole walk has succeeded (E13)."""

    __slots__ = ("variable",)

    def __init__(self, variable: Any) -> None:
        Node.__init__(self, ())
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def apply(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        """Accumulate directly (outside the engine): used when a user calls the node."""
        from ..tensor import Tensor
        from .commit import commit_leaf_grad

        g = grad_outputs[0]
        if g is not None:
            if isinstance(g, Tensor):
                g = g._data
            commit_leaf_grad(self.variable, self.variable.backend.ops.copy(g), False, None)
        return ()

    def release_saved(self) -> None:
        """A leaf's accumulator is shared across graphs: it is never released."""


def accumulator_of(leaf: Any) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad, made on first need. None for a view made under no_grad of
    a tensor that requires grad: it requires grad but, as in PyTorch, has nowhere to send
    a gradient."""
    ex = leaf._extra
    if ex is None:
        ex = leaf._x()
    elif ex.view_creation == "no_grad" or (leaf._base is not None and
                                           ex.view_chain is not None):
        # (a view requiring grad through its base, without history of its own:
        # ops.late_views)
        return None
    ref = ex.acc
    acc = ref() if ref is not None else None
    if acc is None:
        # made outside the lock, published under it after a second look: two threads making
        # the first op on one leaf at once must both reach the one accumulator, or a graph
        # ends in one the leaf does not know (autograd.grad: "not used in the graph")
        new = AccumulateGrad(leaf)
        new_ref = weakref.ref(new)
        with _create_lock:
            ref = ex.acc
            acc = ref() if ref is not None else None
            if acc is None:
                ex.acc = new_ref
                acc = new
    return acc
