"""``retrograd.nn.functional``: the PyTorch-named functional forms."""

from __future__ import annotations

from ..ops.elementwise import relu, sigmoid, tanh
from ..ops.linalg import linear
from ..ops.nn import cross_entropy, log_softmax, mse_loss, softmax

__all__ = ["linear", "relu", "tanh", "sigmoid", "softmax", "log_softmax", "cross_entropy",
           "mse_loss"]
