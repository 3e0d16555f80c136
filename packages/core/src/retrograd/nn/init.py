"""Weight initialisation with ``torch.nn.init``'s names, arguments and formulas.

Every function fills its tensor in place under ``no_grad()`` (so a Parameter stays a leaf and
its version counter moves, as in PyTorch) and draws from ``generator`` or, by default, from
retrograd's default generator, so ``retrograd.manual_seed`` makes a model's initial weights
reproducible. The distributions, bounds and standard deviations are PyTorch's exactly (the
fans come from the same ``_calculate_fan_in_and_fan_out``); the random streams are
retrograd's own, so the values themselves differ from PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

from .. import grad_mode
from ..ops import random as _random
from ..ops.creation import eye as _eye
from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "zeros_",
    "ones_",
    "eye_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table; ``param`` is leaky_relu's
    negative slope, 0.01 by default)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope: float = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(
            param, float
        ):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *receptive)``."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for size in tuple(tensor.shape)[2:]:
        receptive *= int(size)
    return int(tensor.shape[1]) * receptive, int(tensor.shape[0]) * receptive


fan_in_and_fan_out = _calculate_fan_in_and_fan_out


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill ``tensor`` with values drawn uniformly from ``[a, b)``."""
    with grad_mode.no_grad():
        return _random.uniform_(tensor, a, b, generator=generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
) -> Tensor:
    """Fill ``tensor`` with values drawn from ``N(mean, std**2)``."""
    with grad_mode.no_grad():
        return _random.normal_(tensor, mean, std, generator=generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Fill ``tensor`` from ``N(mean, std**2)`` truncated to ``[a, b]``: values outside are
    drawn again until every value is inside (exact for any bounds)."""
    from .. import empty_like, where

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    with grad_mode.no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            # rejection from the normal itself: most draws land inside
            result: Any = _random.normal_(tensor, mean, std, generator=generator)
            while True:
                outside = (result < a) | (result > b)
                if not bool(outside.any()):
                    break
                fresh = _random.normal_(empty_like(result), mean, std, generator=generator)
                result.copy_(where(outside, fresh, result))
            return tensor
        # a narrow window: uniform proposals on [a, b] accepted with the normal's density
        # relative to its peak inside the window
        peak = max(a, min(mean, b))
        log_peak = -0.5 * ((peak - mean) / std) ** 2
        _random.uniform_(tensor, a, b, generator=generator)
        accept = empty_like(tensor)
        log_density = ((tensor - mean) / std) ** 2 * -0.5 - log_peak
        pending: Any = _random.uniform_(accept, generator=generator).log() > log_density
        while bool(pending.any()):
            proposal = _random.uniform_(empty_like(tensor), a, b, generator=generator)
            tensor.copy_(where(pending, proposal, tensor))
            log_density = ((proposal - mean) / std) ** 2 * -0.5 - log_peak
            rejected = _random.uniform_(accept, generator=generator).log() > log_density
            pending = pending & rejected
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``."""
    with grad_mode.no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    with grad_mode.no_grad():
        return tensor.zero_()


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d ``tensor`` with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with grad_mode.no_grad():
        rows, cols = (int(s) for s in tensor.shape)
        tensor.copy_(_eye(rows, cols, dtype=tensor.dtype, device=tensor.device))
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot initialisation: ``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot initialisation: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in +
    fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _zero_element(tensor: Tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He initialisation: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``, ``fan``
    chosen by ``mode`` and ``gain = calculate_gain(nonlinearity, a)``.

    ``Linear`` calls it with ``a=sqrt(5)``, which makes ``bound = 1 / sqrt(fan_in)``: the
    historical PyTorch default that users' training recipes are tuned for.
    """
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He initialisation: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill ``tensor`` (viewed as ``(rows, numel // rows)``) with a random (semi-)orthogonal
    matrix times ``gain``: the Q factor, with R's diagonal made positive, of a standard
    normal matrix -- Haar distributed, as PyTorch's."""
    from .. import float64, randn, zeros

    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = int(tensor.shape[0])
    cols = tensor.numel() // rows
    with grad_mode.no_grad():
        m, n = max(rows, cols), min(rows, cols)
        a = randn(m, n, dtype=float64, generator=generator, device=tensor.device)
        # Gram-Schmidt, each column orthogonalised twice against the ones before (the
        # columns not filled yet are zero): Q of the QR factorisation whose R has a positive
        # diagonal (the sign fix PyTorch applies after its QR)
        q_mat = zeros(m, n, dtype=float64, device=tensor.device)
        for j in range(n):
            v = a[:, j]
            for _ in range(2):
                v = v - q_mat @ (q_mat.T @ v)
            q_mat[:, j] = v / cast(Any, v).norm()
        if rows < cols:
            q_mat = q_mat.T
        tensor.copy_((q_mat * gain).reshape(tuple(tensor.shape)).to(tensor.dtype))
    return tensor
