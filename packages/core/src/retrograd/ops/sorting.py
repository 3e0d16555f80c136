"""Sorting and searching: ``sort``, ``argsort``, ``topk``, ``searchsorted``, ``bucketize``,
``unique``, ``unique_consecutive``."""

from __future__ import annotations

__all__: list[str] = []
