"""Op-database entries of the activations ops (``retrograd/ops/activations.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows."""

from __future__ import annotations

from typing import Any

from .base import OpInfo

ENTRIES: tuple[OpInfo, ...] = ()

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops (built with ``opdb.sweeps``' helpers)."""
    return []
