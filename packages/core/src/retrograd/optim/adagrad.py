"""Adagrad (Duchi et al.), with PyTorch's update order and rounding (see ``_arith``)::

    g = grad + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g
    p -= clr * g / (sqrt(s) + eps)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._arith import addcdiv, addcmul, fma
from .optimizer import Optimizer, check_no_fused

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)``:
    ``torch.optim.Adagrad``. As there, every parameter's state (``step`` and ``sum``) exists
    from construction on."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        check_no_fused("Adagrad", defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p: Any) -> None:
        from .. import full_like, tensor

        state = self.state[p]
        state["step"] = tensor(0.0)
        state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(group["lr"])
        lr_decay = group["lr_decay"]
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad.detach()
            state = self.state[p]
            if len(state) == 0:  # a group added after construction
                self._init_state(p)
            step_t, state_sum = state["step"], state["sum"]
            step_t += 1
            step = float(step_t.item())
            if group["maximize"]:
                g = -g
            if weight_decay != 0:
                g = fma(p, weight_decay, g)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum.copy_(addcmul(state_sum, g, g, 1))
            std = state_sum.sqrt() + eps
            p.copy_(addcdiv(p, g, std, -clr))
