"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay.

The update is PyTorch's (so recipes and learning rates carry over)::

    g = grad + weight_decay * p
    buf = g                                  (first step)
    buf = momentum * buf + (1 - dampening) * g   (later steps)
    g = g + momentum * buf   if nesterov   else   buf
    p -= lr * g
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    maximize=False)``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        super()._validate_group(group)
        if group["momentum"] < 0.0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if group["weight_decay"] < 0.0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = group["lr"]
        momentum = group["momentum"]
        dampening = group["dampening"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad.detach()
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                g = g + p * weight_decay
            if momentum != 0:
                state = self.state.setdefault_for(p)
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = g.clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum)
                    buf.add_(g * (1.0 - dampening) if dampening != 0 else g)
                g = g + buf * momentum if group["nesterov"] else buf
            p.sub_(g * lr)
