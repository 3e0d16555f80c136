"""Data-parallel training: ``DistributedDataParallel`` over ``retrograd.distributed``."""

from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
