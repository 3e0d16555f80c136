"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with PyTorch's update order::

g = grad (+ weight_decay * p for Adam)       p *= 1 - lr * weight_decay   (AdamW)
m = beta1 * m + (1 - beta1) * g
v = beta2 * v + (1 - beta2) * g * g          (amsgrad: v_max = max(v_max, v))
p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
    maximize=False)``; ``weight_decay`` is added to the gradient (L2), as in ``torch.optim.Adam``.
    """

    _decoupled = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=tuple(betas),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        if not 0.0 <= group["lr"]:  # also refuses NaN, as torch.optim.Adam does
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if not 0.0 <= group["eps"]:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        for i, beta in enumerate(group["betas"]):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta} (betas must be "
                                 "in [0, 1))")
        if not 0.0 <= group["weight_decay"]:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")

    def _update_group(self, group: dict[str, Any]) -> None:
        from .. import maximum, zeros_like

        lr = group["lr"]
        beta1, beta2 = group["betas"]
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad.detach()
            if group["maximize"]:
                g = -g
            state = self.state.setdefault_for(p)
            if not state:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)
            state["step"] += 1
            step = state["step"]
            if weight_decay != 0:
                if self._decoupled:
                    p.mul_(1.0 - lr * weight_decay)
                else:
                    g = g + p * weight_decay
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.mul_(beta1)
            exp_avg.add_(g * (1.0 - beta1))
            exp_avg_sq.mul_(beta2)
            exp_avg_sq.add_(g * g * (1.0 - beta2))
            bias_correction1 = 1.0 - beta1**step
            bias_correction2_sqrt = math.sqrt(1.0 - beta2**step)
            second = exp_avg_sq
            if group["amsgrad"]:
                state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], exp_avg_sq))
                second = state["max_exp_avg_sq"]
            denom = second.sqrt() / bias_correction2_sqrt + eps
            p.sub_(exp_avg / denom * (lr / bias_correction1))


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the update);
    the default ``weight_decay`` is 0.01, as in ``torch.optim.AdamW``."""

    _decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
