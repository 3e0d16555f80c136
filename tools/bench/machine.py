"""What the results were measured on: the machine, the versions, the load around the run."""

from __future__ import annotations

import os
import platform
import re


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.MULTILINE)
        return m.group(1).strip() if m else platform.processor()
    except OSError:
        return platform.processor()


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemTotal:\s+(\d+) kB", f.read(), re.MULTILINE)
        return round(int(m.group(1)) / 1024**2, 1) if m else None
    except OSError:
        return None


def _blas() -> str:
    try:
        import numpy as np

        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # numpy's config layout is not a stable API
        return "unknown"


def load_average() -> list[float]:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return []


def git_state(root: str) -> dict:
    """The commit measured, and whether the core package differs from it (read-only git)."""
    import subprocess

    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
        except OSError:
            return ""
        return out.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "core_modified": bool(git("status", "--porcelain", "packages/core")),
    }


def describe() -> dict:
    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _mem_total_gib(),
        "python": platform.python_version(),
        "blas": _blas(),
    }
