"""Op-database entries of the statistics ops (``retrograd/ops/statistics.py``)."""

from __future__ import annotations

from .base import OpInfo

ENTRIES: tuple[OpInfo, ...] = ()
