"""Skips for the cuda package's tests, as fixtures: each skip says exactly what is missing.

Fixtures rather than importable markers because the repository runs pytest with
``--import-mode=importlib`` (test folders are not put on ``sys.path``). Use them with
``pytest.mark.usefixtures("gpu")`` or as arguments.

``RETROGRAD_REQUIRE_GPU=N`` (the GPU check sets it to 1): a test marked ``gpu`` that skips,
for whatever reason, fails instead, and so does one marked ``multi_gpu`` when N >= 2. A GPU
run that finds no GPU must not pass by skipping everything.

``fake_cupy``: CuPy arrays over fake device memory, for testing the launchers' host-side
logic (which path, which grid, which buffers, which device) on a machine without a GPU.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
from pathlib import Path

import pytest

from retrograd_cuda.availability import probe

REQUIRE_ENV = "RETROGRAD_REQUIRE_GPU"

CUPY_MISSING = (
    "CuPy is not installed in this environment (the plain test session installs "
    "retrograd-cuda without extras); these checks run in `nox -s cuda`"
)


def required_gpus() -> int:
    """The number of GPUs ``RETROGRAD_REQUIRE_GPU`` demands (0: skips stay skips)."""
    value = os.environ.get(REQUIRE_ENV, "").strip()
    if value in ("", "0"):
        return 0
    try:
        return max(1, int(value))
    except ValueError:
        return 1


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "multi_gpu: needs two CUDA GPUs (a gpu test too); skipped with a reason on one"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    need = required_gpus()
    if not (need and report.skipped) or hasattr(report, "wasxfail"):
        return
    marks = {m.name for m in item.iter_markers()}
    wanted = 2 if "multi_gpu" in marks else 1 if "gpu" in marks else 0
    if wanted and need >= wanted:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"{REQUIRE_ENV}={need}: this gpu test skipped instead of running: {reason}"


def _cupy_present() -> bool:
    try:
        return importlib.util.find_spec("cupy") is not None
    except ImportError:  # a finder that vetoes the name: as good as absent
        return False


def _nvrtc_missing() -> str:
    if not _cupy_present():
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
    if not _cupy_present():
        pytest.skip(CUPY_MISSING)


@pytest.fixture(scope="session")
def gpu():
    """Skip unless a CUDA GPU answers (the reason from the availability probe)."""
    state = probe()
    if not state.ok:
        pytest.skip(f"no CUDA GPU: {state.reason}")


@pytest.fixture(scope="session")
def two_gpus(gpu):
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("only one CUDA device: cuda:1 cannot be exercised")


@pytest.fixture(scope="session")
def no_gpu():
    """For the no-GPU error paths: skip where a GPU is present."""
    if probe().ok:
        pytest.skip("a CUDA GPU is present; this test checks the no-GPU error paths")


@pytest.fixture(scope="session")
def cp(gpu):
    import cupy

    return cupy


@pytest.fixture(scope="session")
def bias_order():
    """``_bias_order.py`` (the bias kernel's summation order in NumPy), loaded by path: the
    tests are imported with --import-mode=importlib, so a sibling module is not importable."""
    path = Path(__file__).with_name("_bias_order.py")
    spec = importlib.util.spec_from_file_location("retrograd_cuda_tests_bias_order", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeDevice:
    """``cupy.cuda.Device`` stand-in: a context manager that records the devices entered."""

    entered: list[int] = []

    def __init__(self, dev: int = 0) -> None:
        self.id = dev

    def __enter__(self):
        FakeDevice.entered.append(self.id)
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture
def fake_cupy(cupy_installed, no_gpu, monkeypatch):
    """CuPy with fake device memory (never dereferenced) and the driver calls the launchers
    make stubbed out: ``cupy.empty``/``ndarray`` views work, ``cupy.zeros``, ``cupy.arange``
    and ``cupy.matmul`` record their calls, and ``fused.raw_function``/``fused.elementwise`` record launches.
    Only where no GPU is present: a stray real launch on fake pointers would poison a real
    context. Yields a namespace with ``launches``, ``zeros``, ``aranges``, ``matmuls`` and
    ``array(shape, dtype, dev)``; ``cupy.cuda.Device`` is ``FakeDevice`` (``.entered``)."""
    import types

    import cupy
    import numpy as np

    from retrograd_cuda.kernels import fused

    next_ptr = [1 << 20]

    def alloc(size, dev=0):
        ptr = next_ptr[0]
        next_ptr[0] += (size + 1023) // 512 * 512
        return cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(ptr, max(size, 1), None, dev), 0)

    def array(shape, dtype="float32", dev=0):
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return cupy.ndarray(shape, dtype, memptr=alloc(n, dev))

    ns = types.SimpleNamespace(launches=[], zeros=[], aranges=[], matmuls=[], array=array)

    def zeros(shape, dtype=float):
        ns.zeros.append((shape, np.dtype(dtype)))
        return cupy.empty(shape, dtype)

    def arange(n, dtype=None):
        ns.aranges.append((n, np.dtype(dtype)))
        return cupy.empty((n,), dtype)

    def matmul(a, b):
        ns.matmuls.append((a.shape, b.shape))
        return cupy.empty((a.shape[0], b.shape[1]), a.dtype)

    def raw(name, dev):
        return lambda grid, block, args: ns.launches.append((name, dev, grid, block, args))

    def ew(key):
        def launch(*args):
            ns.launches.append((key, args))
            shapes = [a.shape for a in args if isinstance(a, cupy.ndarray)]
            return cupy.empty(np.broadcast_shapes(*shapes), args[0].dtype)

        return launch

    previous = cupy.cuda.get_allocator()
    cupy.cuda.set_allocator(alloc)
    monkeypatch.setattr(cupy.cuda.runtime, "getDevice", lambda: 0)
    monkeypatch.setattr(cupy.cuda, "Device", FakeDevice)
    monkeypatch.setattr(cupy, "zeros", zeros)
    monkeypatch.setattr(cupy, "matmul", matmul)
    monkeypatch.setattr(cupy, "arange", arange)
    monkeypatch.setattr(fused, "_stream_key", lambda: (0, 0))
    monkeypatch.setattr(fused, "_sm_count", lambda dev: 132)
    monkeypatch.setattr(fused, "raw_function", raw)
    monkeypatch.setattr(fused, "elementwise", ew)
    monkeypatch.setattr(fused, "_buffers", {})
    monkeypatch.setattr(fused, "_columns", {})
    FakeDevice.entered = []
    fused.CALLS.clear()
    try:
        yield ns
    finally:
        with contextlib.suppress(Exception):
            cupy.cuda.set_allocator(previous)
