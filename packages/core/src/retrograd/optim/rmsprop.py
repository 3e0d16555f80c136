"""RMSprop (Hinton), with PyTorch's update order and rounding (see ``_arith``)::

    g = grad + weight_decay * p
    v = alpha * v + (1 - alpha) * g * g
    avg = sqrt(v - lerp(m_g, g, 1 - alpha)**2)   if centered   else   sqrt(v)
    buf = momentum * buf + g / (avg + eps); p -= lr * buf    if momentum > 0
    p -= lr * g / (avg + eps)                                 otherwise
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._arith import addcdiv, addcmul, fma, lerp
from .optimizer import Optimizer, check_no_fused

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False)``:
    ``torch.optim.RMSprop``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)
        check_no_fused("RMSprop", defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        from .. import tensor, zeros_like

        lr = float(group["lr"])
        alpha = group["alpha"]
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        momentum = group["momentum"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad.detach()
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0)
                state["square_avg"] = zeros_like(p)
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p)
            if group["maximize"]:
                g = -g
            square_avg = state["square_avg"]
            state["step"] += 1
            if weight_decay != 0:
                g = fma(p, weight_decay, g)
            square_avg.copy_(addcmul(square_avg * alpha, g, g, 1 - alpha))
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.copy_(lerp(grad_avg, g, 1 - alpha))
                avg = addcmul(square_avg, grad_avg, grad_avg, -1).sqrt()
            else:
                avg = square_avg.sqrt()
            avg = avg + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.copy_(addcdiv(buf * momentum, g, avg))
                p.copy_(fma(buf, -lr, p))
            else:
                p.copy_(addcdiv(p, g, avg, -lr))
