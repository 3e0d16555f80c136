"""retrograd-cuda: the ``cuda`` backend of retrograd (CuPy storage, fused CUDA kernels).

Importing this package never imports CuPy and never touches a GPU: the backend object is
registered through the entry point ``retrograd.backends: cuda`` and builds its CuPy namespace
on first use. ``is_available()`` answers False, quickly and without raising, where CuPy, the
driver or a GPU is missing; ``unavailable_reason()`` says which.

    import retrograd as rg
    x = rg.randn(512, 784, device="cuda", requires_grad=True)
"""

from __future__ import annotations

from .availability import is_available, unavailable_reason
from .backend import CudaBackend, CudaUnavailableError, backend

__version__ = "0.1.0"

__all__ = [
    "CudaBackend",
    "CudaUnavailableError",
    "__version__",
    "backend",
    "is_available",
    "unavailable_reason",
]
