"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay.

The update is PyTorch's (so recipes and learning rates carry over), with its rounding (see
``_arith``)::

    g = grad + weight_decay * p
    buf = g                                  (first step)
    buf = momentum * buf + (1 - dampening) * g   (later steps)
    g = g + momentum * buf   if nesterov   else   buf
    p -= lr * g
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._arith import fma
from .optimizer import Optimizer, check_no_fused

__all__ = ["SGD"]


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False, foreach=None, differentiable=False, fused=None)``: ``torch.optim.SGD``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_no_fused("SGD", defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(group["lr"])
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
                g = fma(p, weight_decay, g)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = g.clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.copy_(fma(g, 1 - dampening, buf * momentum))
                g = fma(buf, momentum, g) if group["nesterov"] else buf
            p.copy_(fma(g, -lr, p))
