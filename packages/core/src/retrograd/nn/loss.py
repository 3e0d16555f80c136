"""Loss modules: thin wrappers over ``retrograd.nn.functional``, as in PyTorch."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .module import Module

__all__ = ["MSELoss", "CrossEntropyLoss"]


class MSELoss(Module):
    """Mean squared error (``reduction`` ``"mean"``, ``"sum"`` or ``"none"``)."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        from . import functional as F

        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(Module):
    """Cross entropy of logits ``(N, C)`` against class indices ``(N,)``."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        from . import functional as F

        return F.cross_entropy(input, target, reduction=self.reduction)
