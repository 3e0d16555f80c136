"""Tensors as MPI buffers. MPI reads and writes contiguous memory it can address: host memory
always; device (CUDA) memory only when the MPI library is CUDA-aware. A tensor whose array
qualifies is handed over as it is; any other is *staged*: copied into a contiguous host array,
communicated, and copied back into the tensor afterwards (``copy_`` under ``no_grad``, so its
version counter moves as for any in-place write)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._version import bump
from ..grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["buffer_of", "host_array", "host_dtype", "write_back"]


def _is_device_array(arr: Any) -> bool:
    return hasattr(arr, "__cuda_array_interface__")


def buffer_of(t: Tensor, group: Any, *, writable: bool) -> tuple[Any, bool]:
    """An MPI buffer holding ``t``'s values, and whether it *is* ``t``'s memory (no copy back
    needed). Device arrays go to a CUDA-aware MPI directly, after the device has finished
    writing them; everything else through host memory."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a retrograd Tensor, got {type(t).__name__}")
    arr = t._data
    if isinstance(arr, np.ndarray):
        if arr.flags.c_contiguous and arr.dtype != np.float16 and (
                not writable or (arr.flags.writeable and t._vc is not None)):
            if writable and t._vc is not None:
                bump(t._vc)  # written in place below: an in-place change (E7)
            return arr, True
        return _host_copy(np.asarray(arr)), False
    if _is_device_array(arr) and group.cuda_aware and str(arr.dtype) != "float16":
        sync = getattr(t.backend, "synchronize", None)
        if sync is not None:
            sync()
        if arr.flags.c_contiguous:
            return arr, True
        out = arr.copy(order="C")
        if sync is not None:
            sync()
        return out, False
    return _host_copy(host_array(t)), False


def host_array(t: Tensor) -> np.ndarray:
    """``t``'s values as a NumPy array (``t``'s own memory on the cpu backend)."""
    return np.asarray(t.backend.to_numpy(t._data))


def _host_copy(arr: np.ndarray) -> np.ndarray:
    """A contiguous host copy MPI can take: float16 travels as float32 (MPI has no standard
    half-precision type), every other dtype as it is."""
    if arr.dtype == np.float16:
        return arr.astype(np.float32)
    return np.array(arr, order="C", copy=True)


def host_dtype(t: Tensor) -> np.dtype:
    """The NumPy dtype of ``t``'s values (whatever array type its backend uses)."""
    return np.dtype(t.dtype.name)


def write_back(t: Tensor, values: Any) -> None:
    """Copy ``values`` (a host array, or a device array of ``t``'s backend, of ``t``'s
    shape) into ``t``, in place: ``copy_`` casts and moves it to ``t``'s device."""
    if isinstance(values, np.ndarray):
        src = Tensor(values, _host_backend())
    else:
        src = Tensor(values, t.backend)
    with no_grad():
        t.copy_(src.reshape(t.shape))


def _host_backend() -> Any:
    from ..backends.registry import backend_for_device

    return backend_for_device("cpu")[0]
