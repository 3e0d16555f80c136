"""retrograd_conformance.testing: the checks backend packages call from their own tests pass on
a correct backend and fail, naming what differs, on a wrong one."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd import backends
from retrograd.backends.numpy import NumpyBackend
from retrograd_conformance.testing import assert_suite_passes, assert_training_matches_cpu


class _SlightlyOffMul(NumpyBackend):
    """``mul`` is off by one part in 1e9 for float64 matrices: small enough to pass a quick
    look, large enough to fail both checks."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "slightly_off_dev"
        good = self.kernels["mul"]

        def mul(a, b):
            out = good(a, b)
            return out * (1 + 1e-9) if getattr(out, "ndim", 0) == 2 else out

        self.override(mul=mul)


@pytest.fixture
def slightly_off():
    backend = _SlightlyOffMul()
    backends.register_backend(backend.name, backend)
    yield backend.name
    backends.unregister_backend(backend.name)


def test_a_correct_backend_passes_both():
    assert_training_matches_cpu("cpu", array_type=np.ndarray)
    assert_suite_passes("cpu", suites=["documents"], fuzz=0, extra=["-k", "leaf-root"])


def test_a_wrong_kernel_fails_the_training_check_naming_the_parameter(slightly_off):
    with pytest.raises(AssertionError, match=r"parameter 0\.weight after 3 sgd steps"):
        assert_training_matches_cpu(slightly_off)


def test_a_wrong_kernel_fails_the_suite_with_its_report(slightly_off):
    with pytest.raises(AssertionError, match=r"exited 1:\n(.|\n)*mul"):
        assert_suite_passes(slightly_off, suites=["opdb"], fuzz=0, extra=["-k", "mul"])


def test_the_storage_type_is_checked_and_a_bad_optimizer_named():
    with pytest.raises(AssertionError, match="stored as ndarray"):
        assert_training_matches_cpu("cpu", array_type=tuple)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        assert_training_matches_cpu("cpu", optimizer="lbfgs")


def test_a_sharded_run_passes_and_fails_in_child_processes(tmp_path, monkeypatch):
    """Each part runs in its own process: the backend is given as MODULE:ATTR, importable
    there from the working directory."""
    (tmp_path / "off_by_a_little.py").write_text(
        "from retrograd.backends.numpy import NumpyBackend\n"
        "backend = NumpyBackend()\n"
        "backend.name = 'off_dev'\n"
        "good = backend.kernels['mul']\n"
        "backend.override(mul=lambda a, b: good(a, b) * (1 + 1e-9) if getattr(a, 'ndim', 0) == 2"
        " else good(a, b))\n")
    monkeypatch.chdir(tmp_path)
    assert_suite_passes("cpu", suites=["documents"], fuzz=0, extra=["-k", "leaf-root"],
                        shards=2)
    with pytest.raises(AssertionError, match=r"--shard [12]/2 exited 1"):
        assert_suite_passes("off_by_a_little:backend", suites=["opdb"], fuzz=0,
                            extra=["-k", "mul"], shards=2)
