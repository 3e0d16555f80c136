"""Adapters that give the workloads one PyTorch-shaped surface over torch and retrograd.

retrograd follows PyTorch's API (docs/api.md), so a workload is written once against an
adapter and run on both libraries: the two sides then execute the very same user program, and
a ratio between them measures the libraries, not two differently written benchmarks. The
hand-written NumPy floor has no autograd and is written separately in each workload module.

Nothing here imports torch or retrograd at module level: the child process imports exactly one
library, after its thread settings are in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

LIBRARIES = ("retrograd", "torch", "numpy")


class AutogradLib:
    """The part of a PyTorch-shaped library that the workloads use."""

    name: str
    mod: Any  # the imported module (torch or retrograd)
    F: Any  # its nn.functional

    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        raise NotImplementedError

    def grad(self, outputs: Any, inputs: Sequence[Any], create_graph: bool = False) -> tuple:
        raise NotImplementedError

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.asarray(t.detach().cpu().numpy())

    def sync(self) -> None:
        """Wait for queued device work (a no-op on the CPU)."""

    def set_fusion(self, enabled: bool) -> None:
        """Switch backward fusion (retrograd only; torch has no such pass)."""


class TorchLib(AutogradLib):
    def __init__(self, threads: int | None) -> None:
        import torch
        import torch.nn.functional as F

        if threads is not None:
            torch.set_num_threads(threads)
        self.name = "torch"
        self.mod = torch
        self.F = F
        self.version = torch.__version__

    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        t = self.mod.from_numpy(np.array(array, copy=True))
        return t.requires_grad_(True) if requires_grad else t

    def grad(self, outputs: Any, inputs: Sequence[Any], create_graph: bool = False) -> tuple:
        return self.mod.autograd.grad(outputs, list(inputs), create_graph=create_graph)


class RetrogradLib(AutogradLib):
    def __init__(self, backend: str = "cpu") -> None:
        import retrograd
        import retrograd.nn.functional as F

        self.name = "retrograd"
        self.mod = retrograd
        self.F = F
        self.backend = backend
        self.version = getattr(retrograd, "__version__", "unknown")
        self._dtypes = {
            np.dtype(np.float64): retrograd.float64,
            np.dtype(np.float32): retrograd.float32,
            np.dtype(np.int64): retrograd.int64,
            np.dtype(np.int32): retrograd.int32,
        }
        self._sync = _device_sync(retrograd, backend)

    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        return self.mod.tensor(
            np.array(array, copy=True),
            dtype=self._dtypes[np.asarray(array).dtype],
            device=self.backend,
            requires_grad=requires_grad,
        )

    def grad(self, outputs: Any, inputs: Sequence[Any], create_graph: bool = False) -> tuple:
        return tuple(self.mod.autograd.grad(outputs, list(inputs), create_graph=create_graph))

    def sync(self) -> None:
        if self._sync is not None:
            self._sync()

    def set_fusion(self, enabled: bool) -> None:
        self.mod.autograd.set_fusion(enabled)


def _device_sync(retrograd: Any, backend: str) -> Callable[[], None] | None:
    """A function that waits for the backend's queued work, if its namespace is asynchronous.

    The Backend protocol has no synchronize(); CuPy-like namespaces expose
    ``xp.cuda.get_current_stream().synchronize()``, which is what a timed region must wait for.
    """
    if backend == "cpu":
        return None
    xp = retrograd.backends.get_backend(backend).xp
    cuda = getattr(xp, "cuda", None)
    if cuda is None or not hasattr(cuda, "get_current_stream"):
        return None
    return lambda: cuda.get_current_stream().synchronize()


def load(name: str, *, backend: str = "cpu", threads: int | None = None) -> AutogradLib:
    """Import one autograd library behind the adapter ("torch" or "retrograd")."""
    if name == "torch":
        return TorchLib(threads)
    if name == "retrograd":
        return RetrogradLib(backend)
    raise ValueError(f"no autograd adapter for {name!r} (the NumPy floor has none)")
