"""Op-database entries of the random ops (``retrograd/ops/random.py``): none.

The op database compares an op's values and gradients with PyTorch's. A random draw cannot
match PyTorch's stream and a sampler's gradient is zero by definition (nothing to check
against finite differences), so the random ops are declared ``differentiable=False`` and
have no entry, no ``<op>/sizes`` row and no kernels row; ``logspace`` is a creation op,
without inputs to differentiate. Their behaviour (statistics of the draws, reproducibility,
dtypes, node names, zero gradients, errors) is checked against PyTorch by the core package's
differential tests of the random ops."""

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
