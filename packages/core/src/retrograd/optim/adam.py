"""Adam and AdamW (Kingma & Ba; Loshchilov & Hutter), with PyTorch's update order and
rounding (see ``_arith``)::

    g = grad (+ weight_decay * p for Adam)       p *= 1 - lr * weight_decay   (AdamW)
    m = lerp(m, g, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g          (amsgrad: v_max = max(v_max, v))
    p += -lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._arith import addcdiv, addcmul, fma, lerp
from .optimizer import Optimizer, check_no_fused

__all__ = ["Adam", "AdamW"]


def _scalar(value: Any) -> float:
    """A hyperparameter given as a number or a one-element tensor, as a Python float."""
    return float(value.item()) if hasattr(value, "item") else float(value)


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
    decoupled_weight_decay=False)``: ``torch.optim.Adam``; ``weight_decay`` is added to the
    gradient (L2) unless ``decoupled_weight_decay`` (then it is AdamW)."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if not 0.0 <= lr:  # also refuses NaN, as torch.optim.Adam does
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if any(hasattr(b, "item") for b in betas) and not all(hasattr(b, "item")
                                                             for b in betas):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {
            "lr": lr,
            "betas": tuple(_scalar(b) for b in betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        check_no_fused(type(self).__name__, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        from .. import maximum, tensor, zeros_like

        lr = _scalar(group["lr"])
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad.detach()
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensor(0.0)  # the default dtype, as torch's _get_scalar_dtype
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)
            if group["maximize"]:
                g = -g
            exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
            step_t += 1
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                else:
                    g = fma(p, weight_decay, g)
            exp_avg.copy_(lerp(exp_avg, g, 1 - beta1))
            exp_avg_sq.copy_(addcmul(exp_avg_sq * beta2, g, g, 1 - beta2))
            step = float(step_t.item())
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            if group["amsgrad"]:
                max_sq = state["max_exp_avg_sq"]
                max_sq.copy_(maximum(max_sq, exp_avg_sq))
                denom = max_sq.sqrt() / bias_correction2_sqrt + eps
            else:
                denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
            p.copy_(addcdiv(p, exp_avg, denom, -step_size))


class AdamW(Adam):
    """``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
    amsgrad=False, *, maximize=False, foreach=None, capturable=False, differentiable=False,
    fused=None)``: Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the
    update), ``torch.optim.AdamW``."""

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
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As ``Optimizer.load_state_dict``; the groups stay decoupled, as in PyTorch."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
