"""``retrograd.nn.functional``: the PyTorch-named functional forms."""

from __future__ import annotations

from ..ops.activations import hardtanh, logsigmoid, mish, relu6, selu
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh
from ..ops.layout import pad
from ..ops.linalg import linear
from ..ops.nn import cross_entropy, log_softmax, mse_loss, softmax
from ..ops.pointwise import elu, gelu, leaky_relu, silu, softplus
from ..tensor import Tensor

__all__ = ["pad", "elu", "gelu", "leaky_relu", "silu", "softplus", "mish", "selu", "hardtanh",
           "relu6", "logsigmoid",
           "linear", "relu", "tanh", "sigmoid", "softmax", "log_softmax", "cross_entropy",
           "mse_loss"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's name
    """``max(input, 0)`` elementwise; ``inplace``: written into ``input`` (``relu_``, with
    the in-place rules: version bump, history rebased, through a view onto its base)."""
    if inplace:
        from ..ops.inplace import relu_

        return relu_(input)
    return _relu(input)
