"""Reference kernels of the rearrange ops (see ``ops/rearrange.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The rearrange kernels on ``xp``."""
    return {}
