"""``dropout``, seeded by the Generator.

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports.

As PyTorch's CPU path: the input times a noise tensor of 0 and ``1/(1-p)`` (``MulBackward0``),
the noise drawn by ``bernoulli_(1 - p)`` from the default generator (so
``retrograd.manual_seed`` makes it reproducible; the values differ from torch's stream).
``p == 0``, ``training=False`` or an empty input return the input itself; ``p == 1``
multiplies by a 0-d zero.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .declare import op

__all__ = ["dropout"]


def check_p(p: Any) -> float:
    """``p`` as a float, refused (ValueError, PyTorch's words) outside ``[0, 1]``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


@op("dropout", method=False, function=False)
def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by ``1/(1-p)`` when
    ``training``; otherwise (or with ``p=0``) returns ``input`` itself. ``inplace``: written
    into ``input``."""
    from .creation import empty_like, zeros
    from .elementwise import mul
    from .inplace import div_, mul_
    from .random import bernoulli_

    if not isinstance(input, Tensor):
        raise TypeError("dropout(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    q = check_p(p)
    if not training or q == 0.0 or input.numel() == 0:
        return input
    if q == 1.0:
        noise = zeros((), dtype=input.dtype, device=input.device)
    else:
        noise = empty_like(input)
        bernoulli_(noise, 1.0 - q)
        div_(noise, 1.0 - q)
    return mul_(input, noise) if inplace else mul(input, noise)
