"""Loss modules: thin wrappers over ``retrograd.nn.functional``, as in PyTorch (same
constructor arguments, attributes and buffers: a class ``weight`` is a buffer, ``None`` when
not given, so it is in ``state_dict`` only when set)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .module import Module

__all__ = ["MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss"]


def _legacy(reduction: str, size_average: Any, reduce: Any) -> str:
    """``reduction``, or the one PyTorch's deprecated ``size_average``/``reduce`` name."""
    if size_average is not None or reduce is not None:
        from ..ops.losses import resolve_reduction

        return resolve_reduction(reduction, size_average, reduce)
    return reduction


class _Loss(Module):
    """A loss with a ``reduction`` (``"mean"``, ``"sum"`` or ``"none"``)."""

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _legacy(reduction, size_average, reduce)


class _WeightedLoss(_Loss):
    """A loss with a per-class ``weight`` buffer."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error (``reduction`` ``"mean"``, ``"sum"`` or ``"none"``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``mse_loss(input, target)``."""
        from . import functional as F

        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|``, reduced."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``l1_loss(input, target)``."""
        from . import functional as F

        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices given log-probabilities (``nll_loss``)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``nll_loss(input, target, weight, ignore_index, reduction)``."""
        from . import functional as F

        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities
    (``cross_entropy``)."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        """``cross_entropy(input, target, weight, ignore_index, reduction,
        label_smoothing)``."""
        from . import functional as F

        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (``binary_cross_entropy``)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``binary_cross_entropy(input, target, weight, reduction)``."""
        from . import functional as F

        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits (``binary_cross_entropy_with_logits``); ``weight`` and
    ``pos_weight`` are buffers."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``binary_cross_entropy_with_logits(input, target, weight, reduction,
        pos_weight)``."""
        from . import functional as F

        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss: quadratic below ``beta``, linear above (``smooth_l1_loss``)."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``smooth_l1_loss(input, target, reduction, beta)``."""
        from . import functional as F

        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss: quadratic below ``delta``, ``delta``-scaled linear above (``huber_loss``)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``huber_loss(input, target, reduction, delta)``."""
        from . import functional as F

        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities (``kl_div``)."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """``kl_div(input, target, reduction, log_target)``."""
        from . import functional as F

        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
