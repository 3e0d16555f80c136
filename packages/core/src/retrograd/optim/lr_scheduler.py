"""Learning-rate schedulers, PyTorch's: ``LRScheduler`` (the base), ``LambdaLR``,
``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``, ``ConstantLR``, ``LinearLR``,
``ExponentialLR``, ``PolynomialLR``, ``CosineAnnealingLR``, ``SequentialLR``,
``ChainedScheduler``, ``OneCycleLR`` and ``ReduceLROnPlateau``.

Same constructors, errors, warnings, ``state_dict`` and learning-rate sequences (to the last
bit) as ``torch.optim.lr_scheduler``.
"""

from __future__ import annotations

from .epoch_schedules import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from .lr_scheduler_base import LRScheduler
from .one_cycle_lr import OneCycleLR
from .reduce_lr_on_plateau import ReduceLROnPlateau
from .sequential_lr import ChainedScheduler, SequentialLR

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "SequentialLR",
    "ChainedScheduler",
    "OneCycleLR",
    "ReduceLROnPlateau",
]
