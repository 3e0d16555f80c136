"""Reference kernels of the activations ops (see ``ops/activations.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The activations kernels on ``xp``."""

    def exp2(x: Any) -> Any:
        """``2 ** x`` (a power of an array of 2s: exact at the integers)."""
        return xp.pow(xp.full(x.shape, 2.0, dtype=x.dtype), x)

    def log2(x: Any) -> Any:
        """The base-2 logarithm."""
        return xp.log2(x)

    def log10(x: Any) -> Any:
        """The base-10 logarithm."""
        return xp.log10(x)

    def isinf(x: Any) -> Any:
        """Whether each element is infinite."""
        return xp.isinf(x)

    def isfinite(x: Any) -> Any:
        """Whether each element is finite."""
        return xp.isfinite(x)

    def ceil(x: Any) -> Any:
        """The smallest integer not below each element."""
        return xp.ceil(x)

    def trunc(x: Any) -> Any:
        """Each element rounded toward zero."""
        return xp.trunc(x)

    def frac(x: Any) -> Any:
        """``x - trunc(x)``."""
        return xp.subtract(x, xp.trunc(x))

    return {"ceil": ceil, "trunc": trunc, "frac": frac, "exp2": exp2, "log2": log2,
            "log10": log10, "isinf": isinf, "isfinite": isfinite}
