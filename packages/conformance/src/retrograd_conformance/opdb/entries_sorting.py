"""Op-database entries of the sorting and searching ops (``retrograd/ops/sorting.py``)."""

from __future__ import annotations

from .base import OpInfo

ENTRIES: tuple[OpInfo, ...] = ()
