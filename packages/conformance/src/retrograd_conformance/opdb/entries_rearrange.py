"""Op-database entries of the rearrange ops (``retrograd/ops/rearrange.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows."""

from __future__ import annotations

from typing import Any

from .base import OpInfo

__all__ = ["ENTRIES", "KERNEL_ROWS", "sizes_rows"]

ENTRIES: tuple[OpInfo, ...] = ()

# op -> (forward kernels, backward kernels)
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of this family's entries."""
    return []
