"""Is there a usable CUDA device? Answered quickly, without raising, and at most once.

Why a module of its own: ``retrograd.backends`` asks ``is_available()`` whenever a tensor is
created for ``device="cuda"`` and the conformance runner asks it for every backend it lists.
On a machine without CuPy, without a driver or without a GPU the answer must be a clean
``False`` with a reason a person can act on, and importing this package must never fail.

Order of the probe, cheapest first:

1. ``RETROGRAD_CUDA_DISABLE=1`` in the environment: report unavailable (lets a GPU machine run
   the no-GPU paths, and lets CI be explicit).
2. ``importlib.util.find_spec("cupy")``: no import at all when CuPy is not installed.
3. ``import cupy`` (CuPy loads no CUDA library at import time).
4. ``cupy.cuda.runtime.getDeviceCount()``: fails fast with ``cudaErrorInsufficientDriver`` /
   ``cudaErrorNoDevice`` where there is no driver or no GPU.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass

__all__ = ["Availability", "probe", "is_available", "unavailable_reason", "refresh"]

DISABLE_ENV = "RETROGRAD_CUDA_DISABLE"
INSTALL_HINT = "pip install 'retrograd-cuda[cuda12]' (or [cuda13], matching your driver)"


@dataclass(frozen=True)
class Availability:
    """The probe's result: ``ok`` with the number of devices, or a reason why not."""

    ok: bool
    device_count: int
    reason: str


_lock = threading.Lock()
_cached: Availability | None = None


def _probe_uncached() -> Availability:
    if os.environ.get(DISABLE_ENV, "").strip() not in ("", "0"):
        return Availability(False, 0, f"disabled by the environment variable {DISABLE_ENV}")
    try:
        spec = importlib.util.find_spec("cupy")
    except ModuleNotFoundError:  # a finder that vetoes the name: as good as absent
        spec = None
    except (ImportError, ValueError) as exc:
        return Availability(False, 0, f"CuPy cannot be located: {exc}")
    if spec is None:
        return Availability(False, 0, f"CuPy is not installed; {INSTALL_HINT}")
    try:
        import cupy
    except Exception as exc:  # a broken CuPy install must not break retrograd
        return Availability(False, 0, f"CuPy failed to import: {type(exc).__name__}: {exc}")
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError: no driver, driver too old, no device
        return Availability(
            False, 0, f"no usable CUDA driver or GPU ({type(exc).__name__}: {exc})"
        )
    if count <= 0:
        return Availability(False, 0, "the CUDA driver reports no GPU")
    return Availability(True, count, "")


def probe() -> Availability:
    """The cached result of the probe (run on first call)."""
    global _cached
    found = _cached
    if found is None:
        with _lock:
            if _cached is None:
                _cached = _probe_uncached()
            found = _cached
    return found


def refresh() -> Availability:
    """Forget the cached answer and probe again (tests; a driver installed at run time)."""
    global _cached
    with _lock:
        _cached = None
    return probe()


def is_available() -> bool:
    """True when CuPy imports and at least one CUDA device answers."""
    return probe().ok


def unavailable_reason() -> str:
    """Why ``is_available()`` is False ("" when it is True)."""
    return probe().reason
