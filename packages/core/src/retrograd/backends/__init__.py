"""Backends: the protocol, the registry and the reference kernels. Only this package imports
an array library; ops and autograd reach arrays through ``tensor.backend``."""

from .base import Backend
from .reference import COMPOSITES, reference_kernels
from .registry import (
    ENTRY_POINT_GROUP,
    available_backends,
    backend_for_device,
    get_backend,
    register_backend,
    registered_backends,
    unregister_backend,
)

__all__ = [
    "Backend",
    "COMPOSITES",
    "ENTRY_POINT_GROUP",
    "available_backends",
    "backend_for_device",
    "get_backend",
    "reference_kernels",
    "register_backend",
    "registered_backends",
    "unregister_backend",
]
