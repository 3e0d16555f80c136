"""``retrograd.nn.functional``: the PyTorch-named functional forms."""

from __future__ import annotations

from ..ops import attention as _attention
from ..ops import conv as _conv
from ..ops import dropout as _dropout
from ..ops import embedding as _embedding
from ..ops import losses as _losses
from ..ops import nn_extras as _nn_extras
from ..ops import normalization as _normalization
from ..ops import pooling as _pooling
from ..ops.activations import hardtanh, logsigmoid, mish, relu6, selu
from ..ops.attention import *  # noqa: F403
from ..ops.conv import *  # noqa: F403
from ..ops.dropout import *  # noqa: F403
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid, tanh
from ..ops.embedding import *  # noqa: F403
from ..ops.layout import pad
from ..ops.linalg import linear
from ..ops.losses import *  # noqa: F403
from ..ops.nn import cross_entropy, log_softmax, mse_loss, softmax
from ..ops.nn_extras import *  # noqa: F403
from ..ops.normalization import *  # noqa: F403
from ..ops.pointwise import elu, gelu, leaky_relu, silu, softplus
from ..ops.pooling import *  # noqa: F403
from ..tensor import Tensor

__all__ = ["pad", "elu", "gelu", "leaky_relu", "silu", "softplus", "mish", "selu", "hardtanh",
           "relu6", "logsigmoid",
           "linear", "relu", "tanh", "sigmoid", "softmax", "log_softmax", "cross_entropy",
           "mse_loss",
           *_conv.__all__, *_pooling.__all__, *_normalization.__all__, *_losses.__all__,
           *_attention.__all__, *_embedding.__all__, *_dropout.__all__, *_nn_extras.__all__]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's name
    """``max(input, 0)`` elementwise; ``inplace``: written into ``input`` (``relu_``, with
    the in-place rules: version bump, history rebased, through a view onto its base)."""
    if inplace:
        from ..ops.inplace import relu_

        return relu_(input)
    return _relu(input)
