"""The errors retrograd raises. Everything the engine raises derives from RetrogradError."""

from __future__ import annotations

__all__ = [
    "RetrogradError",
    "VersionMismatch",
    "GraphFreedError",
    "DoubleBackwardUnsupported",
]


class RetrogradError(RuntimeError):
    """Base class of every error raised by the autograd engine (a RuntimeError, as in PyTorch)."""


class VersionMismatch(RetrogradError):
    """A tensor saved for backward was modified in place after it was saved."""


class GraphFreedError(RetrogradError):
    """A node is traversed again after a backward pass released it (retain_graph=False)."""


class DoubleBackwardUnsupported(RetrogradError):
    """create_graph=True reached a node whose backward cannot be recorded."""
