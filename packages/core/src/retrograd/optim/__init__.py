"""Optimizers: ``SGD`` (momentum, Nesterov, weight decay), ``Adam`` and ``AdamW``.

Same constructors, update rules and ``zero_grad(set_to_none=True)`` as ``torch.optim``, so a
PyTorch training loop runs with ``torch`` replaced by ``retrograd``.
"""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
