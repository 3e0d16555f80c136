"""The op database: one entry per differentiable op, with sample inputs, checked by
``gradcheck``, ``gradgradcheck`` and against PyTorch on every backend and dtype.

:data:`OPS` is the table (:mod:`.entries`); :func:`check_op` runs one entry (:mod:`.checks`);
:func:`missing_entries` lists the ops core registers (``retrograd.ops.registry()``) that have
no entry, which a test turns into a failure.
"""

from __future__ import annotations

from .base import OpInfo, Sample
from .checks import OpResult, check_op, missing_entries
from .entries import OPS, OPS_BY_NAME

__all__ = ["OPS", "OPS_BY_NAME", "OpInfo", "OpResult", "Sample", "check_op", "missing_entries"]
