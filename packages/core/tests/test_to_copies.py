"""``.to()`` that changes the device is a new tensor with its own memory, as in PyTorch; a
``.to()`` to the tensor's own device and dtype is the tensor itself.

A cross-backend ``.to()`` goes through the host: the source's ``to_numpy`` may hand out a view
of its memory (array-api-strict's DLPack does) and the target's ``asarray`` may keep the array
it is given (NumPy's does), so before the fix ``v.to("cpu")`` of an array-api-strict tensor
shared ``v``'s memory: an in-place change of one showed in the other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd import backends
from retrograd.backends.numpy import NumpyBackend


class _KeepingBackend(NumpyBackend):
    """NumPy arrays under another device name; ``to_numpy`` and ``asarray`` keep the memory
    they are given (both legal: NumPy's own ``asarray`` does)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        return np.asarray(data) if dtype is None else np.asarray(data, self.xp_dtype(dtype))

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)


@contextlib.contextmanager
def _keeping(name: str = "keeping") -> Iterator[str]:
    backends.register_backend(name, _KeepingBackend(name))
    try:
        yield name
    finally:
        backends.unregister_backend(name)


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.backend.to_numpy(t.detach()._data))


def _independent(v: Any, w: Any) -> None:
    """An in-place change of either leaves the other as it was."""
    before_w = _host(w).copy()
    with rg.no_grad():
        v.add_(1.0)
    np.testing.assert_array_equal(_host(w), before_w)
    before_v = _host(v).copy()
    with rg.no_grad():
        w.mul_(3.0)
    np.testing.assert_array_equal(_host(v), before_v)


def test_strict_to_cpu_is_a_copy():
    pytest.importorskip("retrograd_array_api_strict")
    v = rg.tensor([1.0, 2.0, 3.0], device="array_api_strict")
    w = v.to("cpu")
    assert w.device.type == "cpu"
    assert not np.shares_memory(_host(v), w._data)  # shared v's memory before the fix
    _independent(v, w)
    np.testing.assert_array_equal(_host(w), [3.0, 6.0, 9.0])
    np.testing.assert_array_equal(_host(v), [2.0, 3.0, 4.0])


def test_cpu_to_strict_is_a_copy():
    pytest.importorskip("retrograd_array_api_strict")
    v = rg.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = v.to("array_api_strict")
    assert w.device.type == "array_api_strict"
    _independent(v, w)


def test_strict_to_cpu_of_a_view_is_a_copy():
    pytest.importorskip("retrograd_array_api_strict")
    base = rg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="array_api_strict")
    v = base.T
    w = v.to("cpu")
    _independent(base, w)
    np.testing.assert_array_equal(_host(w), [[3.0, 12.0], [6.0, 15.0], [9.0, 18.0]])


@pytest.mark.parametrize("dtype", [None, "float32"])
def test_to_a_backend_that_keeps_memory_copies_both_ways(dtype):
    with _keeping() as name:
        v = rg.tensor([1.0, 2.0, 3.0], dtype="float64")
        w = v.to(name) if dtype is None else v.to(name, dtype)
        assert w.device.type == name
        _independent(v, w)
        back = w.to("cpu")
        _independent(w, back)


def test_to_the_same_device_and_dtype_is_the_tensor_itself():
    v = rg.tensor([1.0, 2.0], requires_grad=True)
    assert v.to("cpu") is v
    assert v.to(v.device) is v
    assert v.to(dtype=v.dtype) is v
    assert v.to("cpu", v.dtype) is v


def test_to_cpu_0_is_a_copy_as_in_pytorch():
    v = rg.tensor([1.0, 2.0])
    w = v.to("cpu:0")
    assert w is not v
    _independent(v, w)


def test_to_another_dtype_is_a_copy():
    v = rg.tensor([1.0, 2.0], dtype="float32")
    w = v.to("float64")
    _independent(v, w)


def test_the_gradient_of_a_cross_backend_to_is_not_the_seed():
    """The gradient ``ToCopyBackward`` sends back is the source's own array: the seed stays
    the caller's, also when a second backward accumulates into ``x.grad`` in place."""
    with _keeping() as name:
        x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seed = rg.tensor([0.5, 0.25, 2.0], device=name)
        x.to(name).backward(seed)
        assert not np.shares_memory(x.grad._data, seed._data)
        x.to(name).backward(seed)
        np.testing.assert_array_equal(_host(seed), [0.5, 0.25, 2.0])
        np.testing.assert_array_equal(_host(x.grad), [1.0, 0.5, 4.0])


def test_the_gradient_of_to_cpu_0_is_not_the_seed():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    seed = rg.tensor([3.0, 4.0])
    x.to("cpu:0").backward(seed)
    x.to("cpu:0").backward(seed)
    np.testing.assert_array_equal(_host(seed), [3.0, 4.0])
    np.testing.assert_array_equal(_host(x.grad), [6.0, 8.0])


def test_may_share_reads_byte_ranges():
    from retrograd.ops.conversion import may_share

    be = backends.get_backend("cpu")
    a = np.arange(12.0).reshape(3, 4)
    assert may_share(be, a[:, :2], be, a[:, 1:])
    assert not may_share(be, a[0], be, a[1])
    assert not may_share(be, a[:0], be, a)  # an empty array holds no byte
    assert may_share(be, a.T, be, a[2, 3:])
    assert not may_share(be, a, be, a.copy())
