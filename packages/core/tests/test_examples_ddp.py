"""examples/ddp_digits.py, run for real: ``mpiexec -n 2`` and one process without a launcher
(an MPI singleton), the same global batches and steps, float64. DDP averages the two shards'
gradients, which equals the whole batch's gradient up to rounding, so both runs must end with
the same loss (to 1e-6) and the same test accuracy -- at the full default length, >= 90%."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import retrograd.distributed as dist

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "ddp_digits.py"
LINE = re.compile(r"(\d+) rank\(s\), (\d+) steps .* final loss (\S+), train accuracy .*, "
                  r"test accuracy [\d.]+% \((\d+)/(\d+)\)")

pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")


def _mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
_REQUIRED = os.environ.get("RETROGRAD_REQUIRE_MPI") == "1"  # set by nox: a skip would be a lie
needs_mpi = pytest.mark.skipif(
    (MPIEXEC is None or not dist.is_mpi_available()) and not _REQUIRED,
    reason="mpi4py / mpiexec not installed (pip install 'retrograd[mpi]')")


def run(ranks: int, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The example on ``ranks`` processes (1: plain ``python``, no launcher)."""
    cmd = [sys.executable, str(EXAMPLE), "--no-progress", *args]
    if ranks > 1:
        assert MPIEXEC is not None, "mpiexec not found: pip install 'retrograd[mpi]'"
        cmd = [MPIEXEC, "-n", str(ranks), *cmd]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)


def result(proc: subprocess.CompletedProcess) -> dict[str, float]:
    """What rank 0 printed: ranks, steps, final loss, test accuracy."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = LINE.findall(proc.stdout)
    assert len(found) == 1, proc.stdout  # rank 0 only reports
    ranks, steps, loss, correct, total = found[0]
    return {"ranks": int(ranks), "steps": int(steps), "loss": float(loss),
            "accuracy": int(correct) / int(total)}


@needs_mpi
def test_two_ranks_match_one_process_on_a_full_run():
    two = result(run(2, "--dtype", "float64"))
    one = result(run(1, "--dtype", "float64"))
    assert (two["ranks"], one["ranks"]) == (2, 1)
    assert two["steps"] == one["steps"] == 600  # the default, full-length run
    assert abs(two["loss"] - one["loss"]) <= 1e-6 * max(1.0, abs(one["loss"]))
    assert two["accuracy"] == one["accuracy"]
    assert one["accuracy"] >= 0.9


@needs_mpi
def test_short_runs_agree_in_float64_while_the_loss_is_still_large():
    """After a few steps the loss is far from zero, so agreement is not just two ~0 losses."""
    two = result(run(2, "--dtype", "float64", "--steps", "25"))
    one = result(run(1, "--dtype", "float64", "--steps", "25"))
    assert one["loss"] > 0.05
    assert abs(two["loss"] - one["loss"]) <= 1e-9 * one["loss"]
    assert two["accuracy"] == one["accuracy"]


@needs_mpi
def test_a_batch_that_does_not_split_evenly_is_refused():
    proc = run(2, "--batch", "63", "--steps", "2")
    assert proc.returncode != 0
    assert "does not split evenly between 2 ranks" in proc.stdout + proc.stderr
