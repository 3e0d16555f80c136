"""Op-database entries of the views ops (``retrograd/ops/views.py``)."""

from __future__ import annotations

from .base import OpInfo

ENTRIES: tuple[OpInfo, ...] = ()
