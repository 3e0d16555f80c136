"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``) and learning-rate
schedulers (``optim.lr_scheduler``).

Same constructors, defaults, update rules (to the last bit in float64, on the CPU),
``state_dict`` layout and ``zero_grad(set_to_none=True)`` as ``torch.optim``, so a PyTorch
training loop runs with ``torch`` replaced by ``retrograd``.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
