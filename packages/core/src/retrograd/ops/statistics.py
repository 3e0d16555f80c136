"""Reductions beyond sum and mean: variance and standard deviation, products, extremes with
their indices, truth reductions."""

from __future__ import annotations

__all__: list[str] = []
