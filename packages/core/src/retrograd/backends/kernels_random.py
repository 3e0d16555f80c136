"""Reference kernels of the random ops (see ``ops/random.py``), in Array-API calls on ``xp``;
``reference_kernels`` merges them into every backend's table.

There are none: every draw is made host-side by the generator's NumPy stream (so that one
seed gives the same values on every backend) and reaches the device through the existing
``from_numpy`` kernel; an in-place sampler writes it with ``assign_``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The random kernels on ``xp`` (none: see the module's docstring)."""
    return {}
