"""Reference kernels of the normalization layers (see ``ops/normalization.py``), in Array-API
calls on ``xp``; ``reference_kernels`` merges them into every backend's table.

``norm_stats`` gives the statistics every normalization computes (the mean and the biased
variance over some axes, two passes with blocked sums, and ``1 / sqrt(var + eps)``);
``norm_affine`` applies them and the optional per-element scale and shift. The derivative rules
do not call these: they are written against ``F`` (``ops/normalization.py``) so that they run on
differentiable ops under ``create_graph``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .summation import blocked_mean

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The normalization layers' kernels on ``xp``."""

    def norm_stats(x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any, Any]:
        """``(mean, var, rstd)`` of ``x`` over ``axes``, each keeping those axes (size 1):
        the biased variance ``mean((x - mean) ** 2)`` and ``1 / sqrt(var + eps)``."""
        mean = xp.asarray(blocked_mean(xp, x, axes, True))
        centred = x - mean
        var = xp.asarray(blocked_mean(xp, centred * centred, axes, True))
        rstd = 1.0 / xp.sqrt(var + eps)
        return mean, var, rstd

    def norm_affine(x: Any, mean: Any, rstd: Any, weight: Any, bias: Any) -> Any:
        """``(x - mean) * rstd``, times ``weight`` and plus ``bias`` where given (each already
        shaped to broadcast against ``x``)."""
        y = (x - mean) * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y

    def running_update(running: Any, stat: Any, momentum: float) -> Any:
        """``(1 - momentum) * running + momentum * stat``: the running statistic's new value,
        which the op writes into the buffer the module holds (``retrograd._writes``)."""
        return momentum * stat + (1.0 - momentum) * running

    return {"norm_stats": norm_stats, "norm_affine": norm_affine,
            "running_update": running_update}
