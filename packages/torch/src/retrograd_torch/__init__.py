"""retrograd over PyTorch tensors: ``device="torch"``.

A worked example of :class:`retrograd.backends.ArrayAPIBackend`: every kernel is retrograd's
reference kernel, written once in Array-API calls, run on ``array_api_compat.torch``. The
overrides are where the standard has no word: the scatter-add behind the backward of
integer-array indexing (``x[idx]`` with repeated indices: torch's ``index_add_``), and the
memory facts retrograd reads of NumPy arrays through ``base`` and the array interface
(``_base``, ``data_ptr`` and ``stride`` here).
Tensors live on torch's CPU (``device="torch"``) or on its CUDA device
(``device="torch_cuda"``, where torch sees a GPU); ``conformance_xfails()`` is the file of the
suite's checks these backends are known to fail, each with its reason.
"""

from __future__ import annotations

import math
from importlib import resources
from typing import Any

import numpy as np
import torch

from retrograd.backends import ArrayAPIBackend, Capabilities

__all__ = ["TorchBackend", "backend", "cuda_backend", "conformance_xfails"]


def _index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    """The gradient of ``x[key]`` w.r.t. ``x``: ``g`` added at the positions ``key`` selects,
    repeated positions adding up. The positions come from indexing ``arange`` with the same
    key, so every key torch's indexing takes (slices, masks, integer arrays, None) works."""
    n = math.prod(shape)
    positions = torch.arange(n, device=g.device).reshape(shape)[key]
    out = torch.zeros(n, dtype=g.dtype, device=g.device)
    out.index_add_(0, positions.reshape(-1), g.reshape(-1))
    return out.reshape(shape)


def _memory_layout(a: Any) -> tuple[int, tuple[int, ...]]:
    """``(address of the first element, strides in bytes)``: torch tensors show no array
    interface, but say both themselves. It lets a view taken before its base needed gradient
    be read off memory later (``ops.late_views``)."""
    size = a.element_size()
    return a.data_ptr(), tuple(s * size for s in a.stride())


def _may_alias(a: Any) -> bool:
    """Whether ``a`` shares memory with another tensor: torch's views know their base."""
    return a._base is not None


class TorchBackend(ArrayAPIBackend):
    """Tensors stored as ``torch.Tensor``: on the CPU (``device="torch"``), or on torch's
    current CUDA device (``device="torch_cuda"``: a second GPU path beside CuPy's, available
    where torch sees a GPU)."""

    def __init__(self, torch_device: str = "cpu") -> None:
        self.torch_device = torch_device
        cuda = torch_device == "cuda"
        super().__init__(torch, name="torch_cuda" if cuda else "torch", device=torch_device,
                         capabilities=Capabilities(inplace=True, lazy=False,
                                                   memory="device" if cuda else "host",
                                                   devices=(torch_device,)),
                         overrides={"index_backward": _index_backward,
                                    "memory_layout": _memory_layout, "may_alias": _may_alias},
                         array_type=torch.Tensor)

    def is_available(self) -> bool:
        """The CPU always; CUDA where torch finds a GPU."""
        return self.torch_device == "cpu" or torch.cuda.is_available()

    def unavailable_reason(self) -> str:
        """Why ``is_available()`` is False (the conformance report says it)."""
        return (f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() "
                "is False)")

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array of the tensor's values (shares memory when it can)."""
        if isinstance(array, np.ndarray):
            return array
        return array.detach().cpu().numpy()


def conformance_xfails() -> str:
    """The path of the xfails file to give ``retrograd-conformance --xfails-file``."""
    return str(resources.files(__name__) / "xfails.txt")


backend = TorchBackend()
cuda_backend = TorchBackend("cuda")
