"""CNN-MEM: peak RSS increase of one CNN training step (``models_cnn.py``), batch 64.

Measured as W4 measures its MLP (``w4_memory.py``, ``memory.py``): in a fresh process, with
the weights and the batch allocated and the gradients unset, the peak resident memory during
one forward+backward minus the resident memory just before it. torch's allocations are outside
``tracemalloc``'s sight, so only the kernel's own count (VmHWM) compares the libraries.

Warm-up: one step of the same model at batch 2, so that libraries, BLAS buffers and dispatch
caches are initialised but no batch-64 buffer has been freed into the allocator before the
measured step (the measured step is the first large one, as in a real process).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics
from memory import measure_peak
from models_cnn import make_case as make_step

HEADLINES = ["peak_increase_mib", "retained_mib", "step_ms"]
WARM_BATCH = 2


class StepMemory(Case):
    """The peak memory of one step of a CNN case (any library)."""

    def __init__(self, lib: str, params: dict, ad: Any) -> None:
        self.warm: Case | None = make_step(lib, {**params, "batch": WARM_BATCH}, ad)
        self.step = make_step(lib, params, ad)
        self.seconds = 0.0

    def warmup(self) -> None:
        if self.warm is not None:  # its buffers are freed before the measured step
            self.warm.rep()
            self.warm = None

    def _step(self) -> None:
        t0 = time.perf_counter()
        self.step.rep()
        self.seconds = time.perf_counter() - t0

    def rep(self) -> Metrics:
        gc.collect()
        m = measure_peak(self._step)
        return {**m, "step_ms": self.seconds * 1e3}  # type: ignore[dict-item]

    def outputs(self) -> dict[str, np.ndarray]:
        return self.step.outputs()


def make_case(lib: str, params: dict, ad: Any) -> Case:
    """The CNN step's memory on ``lib`` ("numpy": the floor)."""
    return StepMemory(lib, params, ad)
