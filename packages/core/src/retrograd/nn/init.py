"""Weight initialisation, the few rules ``Linear`` needs, with PyTorch's formulas.

Every function fills its tensor in place under ``no_grad()`` (so a Parameter stays a leaf and
its version counter moves, exactly as ``torch.nn.init``) and draws from retrograd's generator,
so ``retrograd.manual_seed`` makes a model's initial weights reproducible.
"""

from __future__ import annotations

import math

from .. import grad_mode
from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "fan_in_and_fan_out",
    "uniform_",
    "normal_",
    "zeros_",
    "ones_",
    "constant_",
    "kaiming_uniform_",
    "xavier_uniform_",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (same table as ``torch.nn.init``)."""
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3.0
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope**2))
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *receptive)``."""
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out need a tensor of at least 2 dimensions, got shape "
            f"{tuple(tensor.shape)}"
        )
    receptive = 1
    for size in tuple(tensor.shape)[2:]:
        receptive *= int(size)
    return int(tensor.shape[1]) * receptive, int(tensor.shape[0]) * receptive


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``."""
    from .. import rand

    with grad_mode.no_grad():
        sample = rand(*tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
        tensor.copy_(sample * (b - a) + a)
    return tensor


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill ``tensor`` with values drawn from ``N(mean, std**2)``."""
    from .. import randn

    with grad_mode.no_grad():
        sample = randn(*tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)
        tensor.copy_(sample * std + mean)
    return tensor


def constant_(tensor: Tensor, value: float) -> Tensor:
    """Fill ``tensor`` with ``value``."""
    with grad_mode.no_grad():
        tensor.fill_(value)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """He initialisation: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``.

    ``Linear`` calls it with ``a=sqrt(5)``, which makes ``bound = 1 / sqrt(fan_in)``: the
    historical PyTorch default that users' training recipes are tuned for.
    """
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot initialisation: ``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)
