"""The op database: one entry per differentiable op, with sample inputs, checked by
``gradcheck``, ``gradgradcheck`` and against PyTorch on every backend and dtype, and the sweep
rows (``<op>/sizes``, ``/layouts``, ``/extremes``, ``/convention``, ``/promotion``,
``/ownership``: :mod:`.sweeps`).

:data:`OPS` is the table (:data:`ENTRIES`, then :data:`SWEEPS`); :func:`check_op` runs one row
(:mod:`.checks`); :func:`missing_entries` lists the ops core registers
(``retrograd.ops.registry()``) that have no entry, which a test turns into a failure.
"""

from __future__ import annotations

from .base import OpInfo, Sample
from .checks import OpResult, check_op, missing_entries
from .entries import ENTRIES, OPS, OPS_BY_NAME
from .sweeps import FAMILIES, SWEEPS, SweepInfo, SweepSample

__all__ = ["ENTRIES", "FAMILIES", "OPS", "OPS_BY_NAME", "OpInfo", "OpResult", "Sample",
           "SWEEPS", "SweepInfo", "SweepSample", "check_op", "missing_entries"]
