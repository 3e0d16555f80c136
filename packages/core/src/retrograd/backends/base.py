"""The backend protocol: an array namespace, a few conversions, and a kernel table.

docs/vendors.md shows how to write a backend against it and test it with the conformance suite.

Every op reaches its arrays through ``tensor.backend``; nothing in ``retrograd.ops`` or
``retrograd.autograd`` imports NumPy or CuPy. A backend starts from the reference kernels
(written once in Array-API calls) and overrides the ones it can do better.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from ..dtypes import Device, DType, as_dtype
from .capabilities import Capabilities

__all__ = ["Backend"]


class Backend:
    """A device backend. Subclasses set ``name`` and ``xp`` and may override kernels.

    ``kernels`` maps a kernel name to a callable; ``ops`` is the same table as attributes,
    which is what derivative rules receive as ``F`` in the fast (raw array) walk.
    """

    name: str
    xp: Any
    #: what the array library can do (capabilities.py); a subclass declares its own
    capabilities: Capabilities = Capabilities()

    def __init__(
        self,
        name: str,
        xp: Any,
        overrides: Mapping[str, Callable[..., Any]] | None = None,
        *,
        array_type: type | None = None,
    ) -> None:
        from .reference import bind_composites, reference_kernels

        self.name = name
        self.xp = xp
        table = reference_kernels(xp)
        if overrides:
            table.update(overrides)
        self.kernels: dict[str, Callable[..., Any]] = table
        self.ops = SimpleNamespace(**table)
        # composites not replaced by the backend run on *this* backend's (possibly overridden)
        # primitives
        bind_composites(table, self.ops, keep=set(overrides or ()))
        self.array_type = array_type if array_type is not None else type(xp.asarray(0.0))
        self._dtype_cache: dict[Any, DType] = {}
        self._xp_dtypes: dict[str, Any] = {}
        # Whether two of this backend's arrays can sit on different devices: only a backend
        # that says where an array is (overrides ``device_index``). The ops compare devices
        # only then -- on a one-device backend ``t.device`` is the same object every time.
        self.multi_device = type(self).device_index is not Backend.device_index
        # Whether tensors on this backend are written by replacing arrays (immutable arrays:
        # ``capabilities.inplace`` False), read once here by ``retrograd._writes``
        self.functional = not self.capabilities.inplace

    def override(self, **kernels: Callable[..., Any]) -> None:
        """Replace kernels after construction (used by device packages and by tests)."""
        self.kernels.update(kernels)
        for key, fn in kernels.items():
            setattr(self.ops, key, fn)

    # -- protocol -------------------------------------------------------------------------
    def is_available(self) -> bool:
        return True

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if dtype is None:
            return self.xp.asarray(data)
        return self.xp.asarray(data, dtype=self.xp_dtype(dtype))

    def to_numpy(self, array: Any) -> Any:
        import numpy

        return numpy.asarray(array)

    def device_index(self, array: Any) -> int | None:
        return None

    def trim_caches(self) -> None:
        """Let the array library drop what it caches per shape (compiled programs), between
        unrelated programs: the conformance suite calls it after each op and case. Nothing by
        default; JAX's caches grow with every new shape and are never evicted by size."""

    def use_device(self, index: int | None) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def current_index(self) -> int:
        """The index a device written without one (``"cuda"``) means now: the backend's
        current device (PyTorch's ``ensure_has_index``). Only multi-device backends are asked
        (``multi_device``); the default, 0, suits one that has no notion of a current device.
        Must not raise: a backend whose device is missing answers 0."""
        return 0

    def normalize_device(self, device: Device) -> Device:
        """``device`` with its index filled in as ``current_index()`` where it has none, on a
        multi-device backend; unchanged otherwise. A one-device backend's devices carry no
        index (PyTorch's rule for ``cpu``: ``t.to("cpu")`` is ``t``, ``t.to("cpu:0")`` a
        copy)."""
        if device.index is not None or not self.multi_device:
            return device
        return Device(device.type, self.current_index())

    # -- helpers the core uses ----------------------------------------------------------------
    def device_of(self, array: Any) -> Device:
        return Device(self.name, self.device_index(array))

    def xp_dtype(self, dtype: Any) -> Any:
        d = as_dtype(dtype)
        found = self._xp_dtypes.get(d.name)
        if found is None:
            found = getattr(self.xp, d.name)
            self._xp_dtypes[d.name] = found
        return found

    def dtype_of(self, array: Any) -> DType:
        key = array.dtype
        found = self._dtype_cache.get(key)
        if found is None:
            found = as_dtype(getattr(key, "name", None) or str(key))
            self._dtype_cache[key] = found
        return found

    def __repr__(self) -> str:
        return f"<retrograd backend {self.name!r}>"

