"""``retrograd.linalg``: the linear-algebra functions under PyTorch's ``torch.linalg`` names."""

from __future__ import annotations

from .ops.products import vector_norm

__all__ = ["vector_norm"]
