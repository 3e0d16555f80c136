"""Peak resident memory of one region of code, measured inside the process that runs it.

Method: read VmRSS from /proc/self/status, write "5" to /proc/self/clear_refs (Linux >= 4.0),
which resets the kernel's peak-RSS mark VmHWM to the current RSS, run the region, then read
VmHWM. The increase is ``VmHWM - VmRSS(before)``: the kernel tracks the peak exactly, every page
fault included, with no sampling and no overhead in the measured code.

Where clear_refs cannot be written (not Linux, or not permitted) a thread samples the RSS every
0.2 ms instead (psutil if present, else /proc/self/statm); a sampler can miss a short peak, so
the result says which method produced it.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any

MIB = 1024 * 1024


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.MULTILINE)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _rss_bytes() -> int:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = _rss_bytes()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak = max(self.peak, _rss_bytes())
            time.sleep(0.0002)

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return max(self.peak, _rss_bytes())


def measure_peak(fn: Callable[[], Any]) -> dict[str, float | str]:
    """Run ``fn`` once; return the RSS before, the peak increase and the increase retained after."""
    before_kib = _status_kib("VmRSS")
    if before_kib is not None and _reset_peak() and _status_kib("VmHWM") is not None:
        before = before_kib * 1024
        fn()
        peak = (_status_kib("VmHWM") or 0) * 1024
        after = (_status_kib("VmRSS") or 0) * 1024
        method = "VmHWM after clear_refs"
    else:
        before = _rss_bytes()
        sampler = _Sampler()
        sampler.start()
        fn()
        peak = sampler.stop()
        after = _rss_bytes()
        method = "RSS sampled every 0.2 ms"
    return {
        "rss_before_mib": before / MIB,
        "peak_increase_mib": (peak - before) / MIB,
        "retained_mib": (after - before) / MIB,
        "memory_method": method,
    }
