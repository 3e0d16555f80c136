"""The errors of ``retrograd.distributed``, with torch.distributed's names."""

from __future__ import annotations

__all__ = ["DistError", "DistBackendError"]


class DistError(RuntimeError):
    """Base of the distributed errors (a RuntimeError, as torch's ``DistError``)."""


class DistBackendError(DistError):
    """The communication failed: a timeout waiting for another rank, or an MPI error."""
