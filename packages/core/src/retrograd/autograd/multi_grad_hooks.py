"""``register_multi_grad_hook``: one hook over the gradients of several tensors.

Built, as in PyTorch, from one tensor hook per tensor and the walk's identity
(``engine.current_graph_task_id``), so that two backward calls never mix their gradients:

* ``mode="all"``: ``fn(grads)`` runs once per backward, after the last of the tensors this
  backward reaches has its gradient; ``grads[i]`` is None for a tensor it does not reach.
  How many gradients to wait for is counted at the first one: the tensors whose grad_fn (or
  accumulator) the walk runs (``will_engine_execute_node``).
* ``mode="any"``: ``fn(grad)`` runs once per backward, with the first gradient that arrives.

A backward that fails part-way leaves its partial state behind under its own id; the next
backward starts afresh.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..tensor import Tensor
from .engine import current_graph_task_id, will_engine_execute_node

__all__ = ["register_multi_grad_hook", "MultiHandle"]

_MODES = ("all", "any")


class MultiHandle:
    """The handle ``register_multi_grad_hook`` returns: ``remove()`` removes every tensor
    hook it registered."""

    def __init__(self, handles: Sequence[Any]) -> None:
        self.handles = tuple(handles)

    def remove(self) -> None:
        """Unregister the hook from every tensor."""
        for h in self.handles:
            h.remove()

    def __enter__(self) -> MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _node_of(t: Tensor) -> Any:
    from .accumulate import accumulator_of

    return t.grad_fn if t.grad_fn is not None else accumulator_of(t)


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[..., None], *,
                             mode: str = "all") -> MultiHandle:
    """Register ``fn`` over the gradients of ``tensors``: with ``mode="all"``, called as
    ``fn(grads)`` once every gradient this backward computes for them is known (None for
    those it does not reach); with ``mode="any"``, ``fn(grad)`` on the first one."""
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "any":
        ran: set[int] = set()

        def any_hook(grad: Any) -> None:
            task = current_graph_task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        return MultiHandle([t.register_hook(any_hook) for t in tensors if t.requires_grad])

    count: dict[int, int] = {}
    buffers: dict[int, list[Any]] = {}
    expected: dict[int, int] = {}
    nodes = [_node_of(t) if t.requires_grad else None for t in tensors]

    def hook_for(i: int) -> Callable[[Any], None]:
        def all_hook(grad: Any) -> None:
            task = current_graph_task_id()
            with lock:
                seen = count.get(task, 0)
                count[task] = seen + 1
                if seen == 0:
                    buffers[task] = [None] * len(tensors)
                    expected[task] = sum(1 for n in nodes
                                         if n is not None and will_engine_execute_node(n))
                buffers[task][i] = grad
                done = seen + 1 == expected[task]
                if done:
                    grads = buffers.pop(task)
                    del count[task], expected[task]
            if done:
                fn(grads)

        return all_hook

    # every tensor, as PyTorch: one that does not require grad is refused by register_hook
    return MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])
