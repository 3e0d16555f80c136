"""Ops that move or repeat elements, added for the everyday API (repeat_interleave, take,
index_fill, index_copy, masked_scatter, unfold, rot90, scatter_reduce ...)."""

from __future__ import annotations

__all__: list[str] = []
