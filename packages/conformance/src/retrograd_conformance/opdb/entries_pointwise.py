"""Op-database entries of the pointwise ops (``retrograd/ops/pointwise.py``)."""

from __future__ import annotations

from .base import OpInfo

ENTRIES: tuple[OpInfo, ...] = ()
