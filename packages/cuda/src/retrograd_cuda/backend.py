"""The ``cuda`` backend: CuPy arrays, the core's reference kernels, and fused CUDA kernels.

Registered in the entry-point group ``retrograd.backends`` as ``cuda =
"retrograd_cuda.backend:backend"``. Loading that entry point must work on every machine, so
this module never imports CuPy at import time: ``CudaBackend`` builds its namespace and kernel
table (``Backend.__init__``) on the first access to ``xp``, ``kernels`` or ``ops``. After that
they are plain instance attributes, as on any other backend (no cost on the hot path).

Every op runs through the core's code on CuPy arrays (CuPy is close enough to the Array API
for ``reference_kernels(cupy)``); the package overrides only:

* the fused backward kernels (``kernels.fused``, sources in ``kernels.sources``);
* ``index_backward`` (integer-array keys need a scatter-add, ``cupyx.scatter_add``) and
  ``is_view`` (CuPy can answer it, so in-place ops on non-views are not refused);
* ``check_class_targets`` (cross_entropy's target check: on the device, no sync; a bad target
  raises at the next sync point -- ``item()``, ``to_numpy``, ``synchronize()`` --, not in
  ``cross_entropy``: ``kernels.targets``) and ``item`` (one of those sync points).

With more than one GPU, every kernel of the table runs under a device guard
(``device_guard``): CuPy launches on the *current* device, so an op on ``cuda:1`` arrays
would otherwise run on ``cuda:0`` (ElementwiseKernels turn on peer access and put the output
there; raw launches get another device's pointers). One GPU: no guard, no cost.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from typing import Any

from retrograd.backends import Backend, Capabilities, reference_kernels
from retrograd.errors import RetrogradError

from . import availability
from .device import check_index

__all__ = ["CudaBackend", "CudaUnavailableError", "backend"]

_LAZY = frozenset({"xp", "kernels", "ops", "array_type"})


class CudaUnavailableError(RetrogradError):
    """The cuda backend was used where CuPy or a CUDA device is missing."""


class _NoCupyArray:
    """``array_type`` where CuPy is not installed: nothing is an instance of it."""


def _extra_overrides(cupy: Any) -> dict[str, Callable[..., Any]]:
    import cupyx

    def has_integer_array(key: Any) -> bool:
        items = key if isinstance(key, tuple) else (key,)
        return any(
            isinstance(k, list) or (hasattr(k, "dtype") and k.dtype.kind in "iu" and k.ndim > 0)
            for k in items
        )

    def index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
        out = cupy.zeros(shape, dtype=g.dtype)
        if has_integer_array(key):
            # scatter_add accumulates repeated integer indices, as the chain rule requires
            cupyx.scatter_add(out, key, g)
        else:  # ints, slices, None, Ellipsis, bool masks: every position at most once
            out[key] = g
        return out

    def is_view(result: Any, base: Any) -> bool:
        return isinstance(result, cupy.ndarray) and bool(cupy.may_share_memory(result, base))

    return {"index_backward": index_backward, "is_view": is_view}


def first_device(args: tuple[Any, ...], ndarray: type) -> int | None:
    """The device of the first array among ``args`` (or inside a list/tuple argument, as
    ``concat`` and ``stack`` take them); None when no argument is an array."""
    for a in args:
        if isinstance(a, ndarray):
            return a.data.device_id
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, ndarray):
                    return b.data.device_id
    return None


def device_guard(fn: Callable[..., Any], ndarray: type, current: Callable[[], int],
                 enter: Callable[[int], Any]) -> Callable[..., Any]:
    """``fn`` run with its arrays' device made current (``enter(dev)``, a context manager)
    when that is not already the current one."""

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        dev = first_device(args, ndarray)
        if dev is None or dev == current():
            return fn(*args, **kwargs)
        with enter(dev):
            return fn(*args, **kwargs)

    return guarded


class CudaBackend(Backend):
    """CuPy storage on NVIDIA GPUs. ``cuda:N`` selects device N; ``cuda`` the current one."""

    capabilities = Capabilities(memory="device", devices=("cuda",))

    def __init__(self, name: str = "cuda") -> None:
        # Backend.__init__ needs the namespace, hence CuPy; it runs in _materialize instead.
        self.name = name
        self._dtype_cache = {}
        self._xp_dtypes = {}
        self._init_lock = threading.Lock()

    # -- lazy construction --------------------------------------------------------------------
    def __getattr__(self, attr: str) -> Any:
        # only called for attributes not found normally, i.e. before _materialize ran
        if attr in _LAZY:
            self._materialize(attr)
            return self.__dict__[attr]
        raise AttributeError(f"{type(self).__name__!s} object has no attribute {attr!r}")

    def _materialize(self, attr: str) -> None:
        with self._init_lock:
            if "kernels" in self.__dict__:
                return
            try:
                import cupy
            except Exception as exc:
                if attr == "array_type":
                    self.__dict__["array_type"] = _NoCupyArray
                    return
                raise CudaUnavailableError(
                    f"the cuda backend needs CuPy ({exc}); {availability.INSTALL_HINT}"
                ) from exc
            from .kernels.fused import fused_kernels
            from .kernels.targets import make_check_class_targets, make_item

            reference = reference_kernels(cupy)
            overrides = fused_kernels(reference)
            overrides.update(_extra_overrides(cupy))
            # cross_entropy's target check on the device, reported at the next sync point
            # (kernels.targets): item() is one of them
            overrides["check_class_targets"] = make_check_class_targets(
                reference["check_class_targets"])
            overrides["item"] = make_item(reference["item"])
            Backend.__init__(self, self.name, cupy, overrides=overrides, array_type=cupy.ndarray)
            if availability.probe().device_count > 1:
                current, enter = cupy.cuda.runtime.getDevice, cupy.cuda.Device
                self.override(**{name: device_guard(fn, cupy.ndarray, current, enter)
                                 for name, fn in self.kernels.items()})

    # -- protocol -------------------------------------------------------------------------
    def is_available(self) -> bool:
        return availability.is_available()

    def unavailable_reason(self) -> str:
        """Why ``is_available()`` is False ("" when it is True)."""
        return availability.unavailable_reason()

    def _require(self) -> Any:
        state = availability.probe()
        if not state.ok:
            raise CudaUnavailableError(f"the cuda backend is not available: {state.reason}")
        return self.xp

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        cupy = self._require()
        dt = self.xp_dtype(dtype) if dtype is not None else None
        if isinstance(data, cupy.ndarray) and data.device.id != cupy.cuda.runtime.getDevice():
            # another GPU's array: copy it onto the current device (peer copy through UVA)
            with data.device:
                src = cupy.ascontiguousarray(data)
            out = cupy.empty(src.shape, dtype=src.dtype)
            if src.nbytes:
                out.data.copy_from_device(src.data, src.nbytes)
            return out if dt is None else out.astype(dt, copy=False)
        return cupy.asarray(data, dtype=dt)

    def to_numpy(self, array: Any) -> Any:
        """The array on the host. A sync point: a pending ``check_class_targets`` failure
        (cross_entropy's bad target) is raised here first (``kernels.targets``)."""
        import numpy

        if isinstance(array, self.array_type):
            from .kernels.targets import check_pending

            check_pending()
            return self.xp.asnumpy(array)
        return numpy.asarray(array)

    def device_index(self, array: Any) -> int | None:
        dev = getattr(array, "device", None)
        return getattr(dev, "id", None)

    def use_device(self, index: int | None) -> contextlib.AbstractContextManager[Any]:
        if index is None:
            return contextlib.nullcontext()
        state = availability.probe()
        if not state.ok:
            raise CudaUnavailableError(f"device cuda:{index} is not available: {state.reason}")
        return self.xp.cuda.Device(check_index(index, state.device_count))

    def synchronize(self, index: int | None = None) -> None:
        """Wait for the device's queued work (benchmarks and tests time with this), then
        raise a pending ``check_class_targets`` failure, if any (``kernels.targets``)."""
        cupy = self._require()
        with self.use_device(index):
            cupy.cuda.get_current_stream().synchronize()
        from .kernels.targets import check_pending

        check_pending()

    def current_index(self) -> int:
        """The current CUDA device (what ``"cuda"`` without an index means, as in PyTorch);
        0 where CuPy, the driver or a GPU is missing (never raises)."""
        if not availability.probe().ok:
            return 0
        try:
            return int(self.xp.cuda.runtime.getDevice())
        except Exception:
            return 0

    def __repr__(self) -> str:
        state = "materialized" if "kernels" in self.__dict__ else "lazy"
        return f"<retrograd backend {self.name!r} (CuPy, {state})>"


backend = CudaBackend()
