"""Runs one child process (child.py) for one subject of a measurement and parses its result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from plan import Measurement, Subject
from threads import set_threads

CHILD = Path(__file__).with_name("child.py")
MARKER = "BENCH-RESULT "

def child_env(m: Measurement) -> dict[str, str]:
    """The parent's environment, the thread variables set, the allocator variable as asked."""
    env = dict(os.environ)
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    set_threads(m.threads, env)
    env.update(m.env())
    return env


def run_child(m: Measurement, s: Subject, backend: str, timeout: float) -> dict:
    """One fresh process; returns its result, or ``{"error": ...}`` with the tail of stderr."""
    spec = {
        "workload": m.workload,
        "lib": s.lib,
        "params": {**m.params, **s.params},
        "threads": m.threads,
        "mode": m.mode,
        "backend": backend,
        "warmup": m.warmup,
        "min_reps": m.min_reps,
        "max_reps": m.max_reps,
        "budget_s": m.budget_s,
    }
    try:
        proc = subprocess.run(
            [sys.executable, str(CHILD), json.dumps(spec)],
            env=child_env(m),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :])
    tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
    return {"error": f"exit status {proc.returncode}\n{tail}"}
