"""Skips for the cuda package's tests, as fixtures: each skip says exactly what is missing.

Fixtures rather than importable markers because the repository runs pytest with
``--import-mode=importlib`` (test folders are not put on ``sys.path``). Use them with
``pytest.mark.usefixtures("gpu")`` or as arguments.
"""

from __future__ import annotations

import importlib.util

import pytest

from retrograd_cuda.availability import probe

CUPY_MISSING = (
    "CuPy is not installed in this environment (the plain test session installs "
    "retrograd-cuda without extras); these checks run in `nox -s cuda`"
)


def _nvrtc_missing() -> str:
    if importlib.util.find_spec("cupy") is None:
        return CUPY_MISSING
    from retrograd_cuda.kernels.nvrtc import NvrtcUnavailable, nvrtc_version

    try:
        nvrtc_version()
    except NvrtcUnavailable as exc:
        return f"NVRTC cannot be loaded: {exc}"
    return ""


@pytest.fixture(scope="session")
def nvrtc():
    """The ``retrograd_cuda.kernels.nvrtc`` module, or a skip naming what is missing."""
    reason = _nvrtc_missing()
    if reason:
        pytest.skip(reason)
    from retrograd_cuda.kernels import nvrtc as module

    return module


@pytest.fixture(scope="session")
def cupy_installed():
    if importlib.util.find_spec("cupy") is None:
        pytest.skip(CUPY_MISSING)


@pytest.fixture(scope="session")
def gpu():
    """Skip unless a CUDA GPU answers (the reason from the availability probe)."""
    state = probe()
    if not state.ok:
        pytest.skip(f"no CUDA GPU: {state.reason}")


@pytest.fixture(scope="session")
def no_gpu():
    """For the no-GPU error paths: skip where a GPU is present."""
    if probe().ok:
        pytest.skip("a CUDA GPU is present; this test checks the no-GPU error paths")


@pytest.fixture(scope="session")
def cp(gpu):
    import cupy

    return cupy
