"""The backend is found through the entry-point group, and device strings reach it correctly."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

import retrograd as rg
import retrograd_cuda
from retrograd.backends import Backend, available_backends, backend_for_device, get_backend
from retrograd.dtypes import as_device
from retrograd_cuda.device import check_index, device_name


def test_entry_point_is_registered():
    eps = {ep.name: ep for ep in entry_points(group="retrograd.backends")}
    assert "cuda" in eps
    assert eps["cuda"].value == "retrograd_cuda.backend:backend"
    assert eps["cuda"].load() is retrograd_cuda.backend


def test_registry_returns_the_cuda_backend():
    b = get_backend("cuda")
    assert b is retrograd_cuda.backend
    assert isinstance(b, Backend) and isinstance(b, retrograd_cuda.CudaBackend)
    assert b.name == "cuda"
    assert "cuda" in available_backends() and "cpu" in available_backends()


def test_cpu_backend_is_untouched():
    assert get_backend("cpu").name == "cpu"
    assert get_backend("cpu").is_available() is True


@pytest.mark.parametrize(
    "text, index", [("cuda", None), ("cuda:0", 0), ("cuda:1", 1), (" cuda:12 ", 12)]
)
def test_device_strings_parse(text, index):
    dev = as_device(text)
    assert dev.type == "cuda" and dev.index == index
    assert str(dev) == device_name(index)


@pytest.mark.parametrize("text", ["cuda:", "cuda:x", ":1", "cuda:-1", "cuda:1.0", ""])
def test_bad_device_strings_raise(text):
    with pytest.raises(ValueError, match="device"):
        as_device(text)


def test_device_string_equality():
    assert as_device("cuda:0") == "cuda"
    assert as_device("cuda:1") != "cuda"
    assert as_device("cuda:1") == "cuda:1"


@pytest.mark.parametrize("index, count", [(0, 1), (1, 2), (3, 8)])
def test_check_index_accepts(index, count):
    assert check_index(index, count) == index


def test_check_index_accepts_numpy_integers():
    import numpy as np

    assert check_index(np.int64(1), 2) == 1


@pytest.mark.parametrize(
    "index, count, exc, pattern",
    [
        (1, 1, ValueError, r"cuda:1 does not exist: this machine has 1 CUDA device\(s\): cuda:0"),
        (0, 0, ValueError, "no CUDA device"),
        (-1, 4, ValueError, "start at 0"),
        (True, 4, TypeError, "must be an int"),
        (1.0, 4, TypeError, "must be an int"),
        ("1", 4, TypeError, "must be an int"),
    ],
)
def test_check_index_rejects(index, count, exc, pattern):
    with pytest.raises(exc, match=pattern):
        check_index(index, count)


def test_use_device_none_is_a_no_op():
    with retrograd_cuda.backend.use_device(None):
        pass


@pytest.mark.usefixtures("no_gpu")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_core_refuses_unavailable_cuda_device_naming_it(device):
    with pytest.raises(RuntimeError, match=device):
        backend_for_device(device)
    with pytest.raises(RuntimeError, match="cuda"):
        rg.tensor([1.0, 2.0], device=device)


@pytest.mark.usefixtures("cupy_installed")
def test_kernel_table_holds_every_fused_kernel():
    """With CuPy installed (no GPU needed) the table is built and the fused kernels are in it."""
    from retrograd_cuda.kernels.fused import FUSED_NAMES

    b = retrograd_cuda.CudaBackend()
    kernels = b.kernels
    reference = rg.backends.reference_kernels(b.xp)
    assert set(reference) <= set(kernels)
    for name in FUSED_NAMES:
        assert kernels[name].__module__ == "retrograd_cuda.kernels.fused", name
        assert getattr(b.ops, name) is kernels[name]
    for name in ("index_backward", "is_view"):
        assert kernels[name].__module__ == "retrograd_cuda.backend"
    import cupy

    assert b.xp is cupy and b.array_type is cupy.ndarray
