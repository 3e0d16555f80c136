"""Reference kernels of the selection ops (see ``ops/selection.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The selection kernels on ``xp``."""
    return {}
