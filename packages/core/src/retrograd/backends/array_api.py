"""``ArrayAPIBackend``: any library with an Array-API namespace as a retrograd backend.

retrograd's kernels are written once in Array-API calls (reference.py), so a library that
speaks the standard -- directly, or through ``array-api-compat``'s wrappers (PyTorch, JAX,
Dask, CuPy, NumPy) -- needs no kernels of its own: a name, its namespace, the device it puts
arrays on, its :class:`~retrograd.backends.capabilities.Capabilities`, and overrides only
where the library can do better (or where the standard has no word, e.g. a scatter-add for
integer-array indexing). docs/vendors.md walks through one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base import Backend
from .capabilities import Capabilities

__all__ = ["ArrayAPIBackend"]


def compat_namespace(namespace: Any) -> Any:
    """The Array-API namespace of ``namespace``: itself when it is one, else
    ``array-api-compat``'s wrapper for the library it belongs to."""
    if hasattr(namespace, "__array_api_version__"):
        return namespace
    try:
        import array_api_compat
    except ImportError as e:
        raise ImportError(f"{getattr(namespace, '__name__', namespace)!r} is not an Array-API "
                          "namespace; install array-api-compat to wrap it") from e
    return array_api_compat.array_namespace(namespace.asarray(0))


class ArrayAPIBackend(Backend):
    """A backend over an Array-API namespace (``array_api_compat`` wraps the libraries that
    are not one). ``device`` is where ``asarray`` puts new arrays (the library's own device
    object or name; None: the library's default). With ``capabilities.inplace=False`` the
    in-place kernels refuse with ``NotImplementedError`` instead of silently doing nothing."""

    def __init__(self, namespace: Any, *, name: str, device: Any = None,
                 capabilities: Capabilities | None = None,
                 overrides: Mapping[str, Callable[..., Any]] | None = None,
                 array_type: type | None = None) -> None:
        xp = compat_namespace(namespace)
        self.device = device
        self.capabilities = capabilities or Capabilities()
        table = dict(overrides or {})
        if not self.capabilities.inplace:
            for kernel in ("accumulate_", "assign_"):
                table.setdefault(kernel, _refuse_inplace(name, kernel))
        super().__init__(name, xp, table, array_type=array_type)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """``data`` as an array of this backend, on its device."""
        kw: dict[str, Any] = {}
        if dtype is not None:
            kw["dtype"] = self.xp_dtype(dtype)
        if self.device is not None:
            kw["device"] = self.device
        if _read_only_numpy(data):
            data = data.copy()  # some libraries warn about (or refuse) a read-only buffer
        return self.xp.asarray(data, **kw)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array of ``array``'s values: through DLPack when the memory is the host's,
        else through the library's own conversion."""
        import numpy

        if isinstance(array, numpy.ndarray):
            return array
        try:
            return numpy.from_dlpack(array)
        except (TypeError, RuntimeError, BufferError, AttributeError, ValueError):
            return numpy.asarray(array)


def _read_only_numpy(data: Any) -> bool:
    flags = getattr(data, "flags", None)
    return flags is not None and type(data).__module__ == "numpy" and not flags.writeable


def _refuse_inplace(name: str, kernel: str) -> Callable[..., Any]:
    def refuse(*_: Any) -> None:
        raise NotImplementedError(
            f"backend {name!r} declares that its arrays cannot be written in place "
            f"(capabilities.inplace=False), so kernel {kernel} refuses rather than silently "
            "changing nothing; this operation needs a functional form on this backend")

    refuse.__name__ = kernel
    return refuse
