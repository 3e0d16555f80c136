"""BLAS/OpenMP thread counts, set through the environment: NumPy's OpenBLAS, torch's OpenMP and
MKL read these variables when they load, so ``set_threads`` must run before NumPy or torch is
imported (this module imports neither)."""

from __future__ import annotations

import os

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_threads(threads: int, env: dict[str, str] | None = None) -> None:
    """Set every thread variable to ``threads`` in ``env`` (default: this process's)."""
    target = os.environ if env is None else env
    for var in THREAD_VARS:
        target[var] = str(threads)
