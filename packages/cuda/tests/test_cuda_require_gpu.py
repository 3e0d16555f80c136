"""``RETROGRAD_REQUIRE_GPU``: a GPU run that finds no GPU must fail, not pass by skipping.

Runs pytest in a subprocess on two of the gpu tests with the GPU hidden
(``RETROGRAD_CUDA_DISABLE=1``, so this holds on a GPU machine too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TESTS = ["packages/cuda/tests/test_cuda_gpu_backend.py::test_creation_and_round_trip",
         "packages/cuda/tests/test_cuda_gpu_backend.py::"
         "test_second_gpu_runs_every_op_on_its_own_device"]


def _pytest(require: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RETROGRAD_CUDA_DISABLE="1")
    env.pop("RETROGRAD_REQUIRE_GPU", None)
    if require is not None:
        env["RETROGRAD_REQUIRE_GPU"] = require
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *TESTS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_without_it_gpu_tests_skip_saying_why():
    proc = _pytest(None)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 skipped" in proc.stdout and "RETROGRAD_CUDA_DISABLE" in proc.stdout


@pytest.mark.parametrize("require, failed, skipped", [("1", 1, 1), ("2", 2, 0)])
def test_with_it_a_gpu_skip_is_a_failure(require, failed, skipped):
    """1: the one-GPU test fails, the two-GPU one still skips; 2: both fail."""
    proc = _pytest(require)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert f"RETROGRAD_REQUIRE_GPU={require}: this gpu test skipped instead of running" in out
    assert f"{failed} error" in out
    assert (f"{skipped} skipped" in out) == bool(skipped)
