"""The products ops (see docs/api.md)."""

from __future__ import annotations

__all__: list[str] = []
