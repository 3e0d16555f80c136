"""Ops that copy a tensor into a larger one by repetition: ``repeat`` and ``tile``."""

from __future__ import annotations

__all__: list[str] = []
