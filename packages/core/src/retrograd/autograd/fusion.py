"""The fusion pass (E12): collapse ``LinearBackward -> {Relu,Tanh,Sigmoid}Backward`` pairs
into one fused node, for this walk only.

The fused node calls the backend's ``linear_<act>_backward`` kernel: the activation's
derivative, the two matmuls and the bias reduction in one call (on CuPy, one elementwise
kernel around the cuBLAS matmuls instead of several temporaries). The user's graph is never
modified: a graph kept with retain_graph=True walks the same way again.

Never fused: a pre-activation tensor with hooks or retain_grad, nodes with hooks, a pair where
the linear output has another consumer, or a node whose gradient a ``grad`` call captures.
"""

from __future__ import annotations

import sys
from typing import Any

from ..ops.elementwise import ReluBackward, SigmoidBackward, TanhBackward
from ..ops.linalg import LinearBackward
from .node import Node, next_entries

__all__ = ["fuse_order", "FusedLinearActivation"]

# activation node class -> (the fused kernel, the activation's in-place derivative kernel)
_KERNELS = {
    ReluBackward: ("linear_relu_backward", "relu_backward_"),
    TanhBackward: ("linear_tanh_backward", "tanh_backward_"),
    SigmoidBackward: ("linear_sigmoid_backward", "sigmoid_backward_"),
}


class FusedLinearActivation(Node):
    """One walk's stand-in for ``act(linear(x, W, b))``'s two backward nodes."""

    __slots__ = ("act", "linear", "kernel", "kernel_in_place", "_backend", "release_act")

    fused = True

    def __init__(self, act: Any, linear: Any, kernels: tuple[str, str],
                 release_act: bool = False) -> None:
        Node.__init__(self, next_entries(linear))
        # True when the walk keeps no graph (retain_graph=False): the activation's saved
        # output is dropped as soon as its derivative is applied, before the matmuls, as the
        # unfused walk drops it when ReluBackward finishes -- one activation-sized buffer
        # less at the peak (W4)
        self.release_act = release_act
        self.act = act
        self.linear = linear
        self.kernel, self.kernel_in_place = kernels
        self._backend = linear._backend
        self._versions = act._versions + linear._versions
        self._walk = act._walk

    # The fused node stands in for ``act`` in the walk: gradients addressed to ``act`` are
    # found under the fused node in the pending map.
    def __hash__(self) -> int:
        return hash(self.act)

    def __eq__(self, other: object) -> bool:
        return other is self or other is self.act

    @property
    def parts(self) -> tuple[Node, Node]:
        return (self.act, self.linear)

    def name(self) -> str:
        return f"Fused[{self.linear.name()}+{self.act.name()}]"

    @property
    def _released(self) -> bool:  # type: ignore[override]
        return self.act._released or self.linear._released

    @_released.setter
    def _released(self, value: bool) -> None:
        pass

    def validate_versions(self) -> None:
        self.act.validate_versions()
        self.linear.validate_versions()

    def _raise_version_mismatch(self, index: int, counter: Any, stamp: Any) -> None:
        n_act = len(self.act._versions) // 3
        if index < n_act:
            self.act._raise_version_mismatch(index, counter, stamp)
        self.linear._raise_version_mismatch(index - n_act, counter, stamp)

    def apply(self, grad_outputs: Any) -> tuple[Any, ...]:
        lin = self.linear
        x, w = lin._saved
        has_bias = lin._attrs[1]
        nexts = next_entries(lin)
        ops = self._backend.ops
        need = (nexts[0] is not None, nexts[1] is not None,
                bool(has_bias and nexts[2] is not None))
        g = grad_outputs[0]
        # When nothing but this walk's pending slot holds the incoming gradient (references:
        # that slot, ``g``, getrefcount's argument), the activation's derivative can be
        # applied in its buffer: no activation-sized temporary. Backends that have an
        # in-place variant (``relu_backward_`` ...) opt in; the others get the fused kernel.
        in_place = getattr(ops, self.kernel_in_place, None)
        if in_place is not None and sys.getrefcount(g) <= 3:
            gz = in_place(g, self.act._saved[0])
            if self.release_act:
                self.act.release_saved()
            gx, gw, gb = ops.linear_backward(gz, x, w, *need)
        else:
            gx, gw, gb = getattr(ops, self.kernel)(g, self.act._saved[0], x, w, *need)
        return (gx, gw, gb) if has_bias else (gx, gw)

    def saved_arrays(self) -> list[Any]:
        return self.act.saved_arrays() + self.linear.saved_arrays()

    def release_saved(self) -> None:
        self.act.release_saved()
        self.linear.release_saved()


def fuse_order(order: list[Node], captures: Any, retain: bool = True) -> list[Node]:
    """``order`` with each fusable ``LinearBackward -> activation`` pair replaced by one
    ``FusedLinearActivation`` (at the activation's place); ``order`` itself when none is.

    It runs on every fused walk, so it is kept to two plain passes over the nodes (about as
    long as the walk's own ``topo_order``): one for the candidate pairs, one counting the
    consumers of their linear nodes (a pair whose linear output feeds anything else stays)."""
    candidates: dict[Node, tuple[Node, tuple[str, str]]] | None = None
    kernels_of = _KERNELS
    for node in order:
        kernels = kernels_of.get(type(node))  # type: ignore[arg-type]
        if kernels is None or node._hooks is not None:
            continue
        # an activation has one input: its _next is bare when that edge goes to slot 0 of a
        # node (a linear output always does), else a 1-tuple -- never a LinearBackward
        lin = node._next
        if type(lin) is not LinearBackward or lin._hooks is not None or lin._released:
            continue
        if len(lin._attrs[0]) != 2:  # the fused kernels take 2-D inputs
            continue
        if captures is not None and (lin in captures or node in captures):
            continue
        if candidates is None:
            candidates = {}
        candidates[lin] = (node, kernels)
    if candidates is None:
        return order
    consumers = dict.fromkeys(candidates, 0)
    for node in order:
        nx = node._next
        if type(nx) is not tuple:  # bare: one edge, to slot 0 of node ``nx``
            if nx in consumers:
                consumers[nx] += 1
            continue
        for edge in nx:
            if edge is not None:
                target = edge[0] if type(edge) is tuple else edge
                if target in consumers:
                    consumers[target] += 1
    replace: dict[Node, Node] = {}
    for lin, (act, kernels) in candidates.items():
        if consumers[lin] == 1:
            replace[act] = FusedLinearActivation(act, lin, kernels, release_act=not retain)
            replace[lin] = None  # type: ignore[assignment]
    if not replace:
        return order
    fused = []
    for node in order:
        if node in replace:
            node = replace[node]
            if node is None:  # the linear half of a fused pair
                continue
        fused.append(node)
    return fused
