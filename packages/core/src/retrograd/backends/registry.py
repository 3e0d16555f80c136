"""Backend registry: the entry-point group ``retrograd.backends`` plus programmatic registration.

A vendor's package registers ``name = "module:attribute"`` in that group and is then usable as
``device="name"`` and testable with the conformance suite, with no change to retrograd.
"""

from __future__ import annotations

import threading
from importlib.metadata import entry_points
from typing import Any

from ..dtypes import Device, as_device
from ..errors import RetrogradError
from .base import Backend

__all__ = ["get_backend", "register_backend", "available_backends", "backend_for_device",
           "ENTRY_POINT_GROUP", "registered_backends", "UnknownBackendError"]


class UnknownBackendError(RetrogradError, ValueError):
    """No backend of that name is registered or installed. PyTorch raises RuntimeError for an
    unknown device type; it is also a ValueError, which retrograd raised before."""

ENTRY_POINT_GROUP = "retrograd.backends"

_lock = threading.Lock()
_registered: dict[str, Backend] = {}
_entry_points: dict[str, Any] | None = None


def _discover() -> dict[str, Any]:
    global _entry_points
    if _entry_points is None:
        found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        _entry_points = found
    return _entry_points


def register_backend(name: str, backend: Backend) -> None:
    """Register (or replace) a backend under ``name`` for this process."""
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"backend name must be a non-empty string without ':', got {name!r}")
    with _lock:
        _registered[name] = backend


def unregister_backend(name: str) -> None:
    with _lock:
        _registered.pop(name, None)


def available_backends() -> list[str]:
    """Names of every backend known: registered ones and the entry-point group's."""
    names = set(_registered) | set(_discover()) | {"cpu"}
    return sorted(names)


def registered_backends() -> list[str]:
    """Names of backends already loaded or registered in this process."""
    return sorted(_registered)


def get_backend(name: str) -> Backend:
    """The backend registered as ``name`` (loading its entry point on first use)."""
    backend = _registered.get(name)
    if backend is not None:
        return backend
    with _lock:
        backend = _registered.get(name)
        if backend is not None:
            return backend
        ep = _discover().get(name)
        if ep is None and name == "cpu":
            from .numpy import backend as cpu_backend

            _registered["cpu"] = cpu_backend
            return cpu_backend
        if ep is None:
            known = ", ".join(available_backends())
            raise UnknownBackendError(
                f"unknown device/backend {name!r} (known backends: {known}): expected a known "
                "device type at start of device string"
            )
        try:
            obj = ep.load()
        except Exception as exc:  # a broken vendor package must not break retrograd
            raise RetrogradError(
                f"backend {name!r} (entry point {ep.value}) failed to load: {exc}"
            ) from exc
        if isinstance(obj, type):
            obj = obj()
        if not isinstance(obj, Backend):
            raise TypeError(
                f"entry point {name!r} = {ep.value} must be a retrograd.backends.Backend, "
                f"got {type(obj).__name__}"
            )
        _registered[name] = obj
        return obj


def backend_for_device(device: Any) -> tuple[Backend, Device]:
    """Resolve a device spec to its backend; raises if the backend is unavailable, with the
    backend's own ``unavailable_reason()`` (no driver, no GPU, a library missing) when it has
    one: "not available" alone gives a user nothing to act on."""
    dev = as_device(device if device is not None else "cpu")
    backend = get_backend(dev.type)
    if not backend.is_available():
        try:
            reason = str(getattr(backend, "unavailable_reason", lambda: "")() or "").strip()
        except Exception as exc:  # a broken vendor hook must not hide the real error
            reason = f"its unavailable_reason() raised {type(exc).__name__}: {exc}"
        why = (f"backend {backend.name!r} says: {reason}" if reason else
               f"backend {backend.name!r} reports is_available() == False (no device or driver "
               "on this machine)")
        raise RetrogradError(f"device {str(dev)!r} is not available: {why}")
    return backend, dev
