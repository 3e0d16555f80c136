"""An example vendor backend: retrograd over ``array-api-strict``.

This is the smallest complete backend: a :class:`retrograd.backends.Backend` subclass that
names itself, gives its array namespace, converts to and from NumPy, and starts from
:func:`retrograd.backends.reference_kernels` (the base class does that for us; ``OVERRIDES``
is where a real vendor would put its fast kernels). The package's ``pyproject.toml`` registers
``backend`` in the ``retrograd.backends`` entry-point group; nothing in retrograd changes.
"""

from __future__ import annotations

import math
from typing import Any

import array_api_strict as xp
import numpy as np

from retrograd.backends import Backend, Capabilities

__all__ = ["ArrayApiStrictBackend", "backend", "OVERRIDES"]


def _accumulate_(dst: Any, src: Any) -> None:
    """``dst += src`` in place. array-api-strict arrays support in-place operators; a device
    vendor would write a fused kernel here."""
    dst += src


# ---- indexing -------------------------------------------------------------------------------
# The standard is stricter than NumPy about indices: a multi-axis index must name every axis
# (or hold an Ellipsis), and integer-array ("fancy") indexing is not general. retrograd hands
# kernels NumPy-style keys, so this backend normalizes them, and implements the one fancy form
# the op set needs (an integer array on the first axis) with ``take`` and, for its backward,
# a one-hot matmul: the Array API has no scatter-add.


ARRAY = type(xp.asarray(0))  # array_api_strict's array class (not exported by name)


def _is_int_array(k: Any) -> bool:
    return isinstance(k, ARRAY) and xp.isdtype(k.dtype, "integral")


def _normalize(key: Any) -> tuple[Any, ...]:
    items = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in items):
        return items
    if any(isinstance(k, ARRAY) and k.dtype == xp.bool for k in items):
        return items  # a boolean mask covers the axes it spans
    return items + (Ellipsis,)


def _fancy(key: Any) -> Any:
    """The integer index array when ``key`` is exactly one, else None (refuse other mixes)."""
    items = key if isinstance(key, tuple) else (key,)
    arrays = [k for k in items if _is_int_array(k)]
    if not arrays:
        return None
    if len(items) != 1:
        raise IndexError("the array_api_strict backend supports an integer-array index only "
                         "on its own (x[idx]), not mixed with other indices")
    return arrays[0]


def _positive(idx: Any, n: int) -> Any:
    return xp.where(idx < 0, idx + n, idx)


def _getitem(x: Any, key: Any) -> Any:
    idx = _fancy(key)
    if idx is None:
        return x[_normalize(key)]
    flat = _positive(xp.reshape(idx, (-1,)), x.shape[0])
    out = xp.take(x, flat, axis=0)
    return xp.reshape(out, tuple(idx.shape) + tuple(x.shape[1:]))


def _index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    idx = _fancy(key)
    if idx is None:
        out = xp.zeros(shape, dtype=g.dtype)
        _setitem(out, key, g)
        return out
    n = shape[0]
    flat = _positive(xp.reshape(idx, (-1,)), n)
    one_hot = xp.astype(xp.expand_dims(flat, axis=1) == xp.arange(n, dtype=flat.dtype),
                        g.dtype)  # (k, n): repeated indices add up in the matmul
    rows = xp.reshape(g, (flat.shape[0], math.prod(shape[1:])))  # also for no index at all
    return xp.reshape(xp.matmul(xp.matrix_transpose(one_hot), rows), shape)


def _setitem(x: Any, key: Any, value: Any) -> None:
    if _fancy(key) is not None:
        raise IndexError("the array_api_strict backend does not support assignment through "
                         "an integer-array index")
    items = _normalize(key)
    if any(k is None for k in items):
        # assignment may not insert axes: drop the ``None`` entries and the unit axes they made
        items = tuple(k for k in items if k is not None)
        if isinstance(value, ARRAY):
            value = xp.reshape(value, x[items].shape)
    x[items] = value


def _index_zero(g: Any, key: Any) -> Any:
    out = xp.asarray(g, copy=True)
    _setitem(out, key, 0)
    return out


def _memory_layout(a: Any) -> tuple[int, tuple[int, ...]] | None:
    """Where ``a``'s elements sit: read through DLPack, which shares the memory (a view taken
    before its base needed gradient is read off it when the base later gets history)."""
    host = np.from_dlpack(a)
    return host.__array_interface__["data"][0], tuple(host.strides)


# Kernels this backend replaces. Anything not listed comes from the reference kernels, written
# in Array-API calls, which array-api-strict runs as they are.
OVERRIDES: dict[str, Any] = {
    "accumulate_": _accumulate_,
    "getitem": _getitem,
    "index_backward": _index_backward,
    "setitem": _setitem,
    "index_zero": _index_zero,
    "memory_layout": _memory_layout,
}


class ArrayApiStrictBackend(Backend):
    """Tensors stored as ``array_api_strict.Array`` on its (single, CPU) device."""

    # what the namespace offers (the suite checks each claim): no float16 in the standard
    capabilities = Capabilities(dtypes=("bool", "int32", "int64", "float32", "float64"))

    def __init__(self) -> None:
        super().__init__("array_api_strict", xp, overrides=OVERRIDES)

    def is_available(self) -> bool:
        return True  # a pure-Python namespace: always there once installed

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if isinstance(data, self.array_type):
            return data if dtype is None else xp.astype(data, self.xp_dtype(dtype))
        if isinstance(data, np.ndarray | np.generic):
            # array-api-strict takes NumPy input through the buffer protocol; copy so the
            # tensor never aliases the caller's NumPy array.
            data = np.array(data, copy=True)
        if dtype is None:
            return xp.asarray(data)
        return xp.asarray(data, dtype=self.xp_dtype(dtype))

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.from_dlpack(array)


backend = ArrayApiStrictBackend()
