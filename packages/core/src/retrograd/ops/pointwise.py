"""Elementwise ops added to the first set (``ops/elementwise.py``), and their in-place forms."""

from __future__ import annotations

__all__: list[str] = []
