"""The public face of ``retrograd.nn``'s modules (``nn/__init__`` does ``from .modules import *``).

Each concept lives in its own file: ``parameter`` (Parameter), ``module`` (Module), ``layers``
(Linear and the activations), ``container`` (Sequential), ``loss``, and ``init`` (weight
initialisation, importable as ``retrograd.nn.init``).
"""

from __future__ import annotations

from .container import Sequential
from .layers import Flatten, Identity, Linear, ReLU, Sigmoid, Tanh
from .loss import CrossEntropyLoss, MSELoss
from .module import Module
from .parameter import Parameter

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Sequential",
    "Identity",
    "Flatten",
    "MSELoss",
    "CrossEntropyLoss",
]
