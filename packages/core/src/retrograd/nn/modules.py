"""The public face of ``retrograd.nn``'s modules (``nn/__init__`` does ``from .modules import *``).

Each concept lives in its own file: ``parameter`` (Parameter), ``module`` (Module), ``layers``
(Linear and the activations), ``container`` (Sequential), ``loss``, and ``init`` (weight
initialisation, importable as ``retrograd.nn.init``).
"""

from __future__ import annotations

from . import attention as _attention
from . import container as _container
from . import conv as _conv
from . import dropout as _dropout
from . import extras as _extras
from . import layers as _layers
from . import loss as _loss
from . import normalization as _normalization
from . import rnn as _rnn
from . import sparse as _sparse
from . import transformer as _transformer
from .attention import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .extras import *  # noqa: F403
from .layers import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module
from .normalization import *  # noqa: F403
from .parameter import Parameter
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = [
    "Module",
    "Parameter",
    *_layers.__all__,
    *_container.__all__,
    *_loss.__all__,
    *_conv.__all__,
    *_normalization.__all__,
    *_attention.__all__,
    *_sparse.__all__,
    *_dropout.__all__,
    *_extras.__all__,
    *_transformer.__all__,
    *_rnn.__all__,
]
