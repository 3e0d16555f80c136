"""The errors retrograd raises. Everything the engine raises derives from RetrogradError."""

from __future__ import annotations

__all__ = [
    "RetrogradError",
    "VersionMismatch",
    "GraphFreedError",
    "DoubleBackwardUnsupported",
    "ShapeError",
    "DTypeError",
    "DeviceError",
]


class RetrogradError(RuntimeError):
    """Base class of every error raised by the autograd engine (a RuntimeError, as in PyTorch)."""


class VersionMismatch(RetrogradError):
    """A tensor saved for backward was modified in place after it was saved."""


class GraphFreedError(RetrogradError):
    """A node is traversed again after a backward pass released it (retain_graph=False)."""


#: PyTorch's words for a walk through a released node (or its freed saved tensors): the
#: engine and custom Functions start their ``GraphFreedError`` with it.
GRAPH_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class DoubleBackwardUnsupported(RetrogradError):
    """create_graph=True reached a node whose backward cannot be recorded."""


class ShapeError(RetrogradError, ValueError):
    """A shape or size that does not fit. PyTorch raises RuntimeError for these; it is also a
    ValueError, so code written against NumPy's habits (``except ValueError``) still works."""


class DTypeError(RetrogradError, TypeError):
    """A dtype that does not fit where PyTorch raises RuntimeError (a seed, a ``.grad``, an
    operand); also a TypeError, for code that catches that."""


class DeviceError(RetrogradError, ValueError):
    """A device string that does not parse (``"cpu:x"``). PyTorch raises RuntimeError ("Invalid
    device string"); it is also a ValueError, which retrograd raised before."""
