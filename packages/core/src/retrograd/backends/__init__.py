"""Backends: the protocol, the registry and the reference kernels. Only this package imports
an array library; ops and autograd reach arrays through ``tensor.backend``."""

from .array_api import ArrayAPIBackend
from .base import Backend
from .capabilities import Capabilities
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
    "ArrayAPIBackend",
    "Backend",
    "Capabilities",
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
