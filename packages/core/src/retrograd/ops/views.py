"""View ops that take part of a tensor or split it into views: ``narrow``, ``select``,
``unbind``, ``split``, ``chunk``, ``diagonal`` and the in-place metadata ops (``transpose_``)."""

from __future__ import annotations

__all__: list[str] = []
