"""Normalization modules (``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``, ``LayerNorm``,
``GroupNorm``), as in PyTorch: the same constructor arguments and defaults, the same parameters
and buffers under the same names (so ``state_dict`` keys match), and the same ``repr``.

Each ``forward`` is one call of the functional form (``retrograd.nn.functional``), so the
backward graph is the op's single node (``NativeBatchNormBackward0`` ...)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm"]


def _functional() -> Any:
    # Imported late: nn/__init__ imports the modules before functional.
    from . import functional

    return functional


def _affine_parameters(module: Module, shape: Any, affine: bool, bias: bool, dtype: Any,
                       device: Any) -> None:
    """Register ``weight`` and ``bias`` of ``shape`` (uninitialised) when ``affine``, the bias
    only when ``bias``; ``None`` in their place otherwise (PyTorch's parameter names either
    way)."""
    from .. import empty

    module.register_parameter(
        "weight", Parameter(empty(shape, dtype=dtype, device=device)) if affine else None)
    module.register_parameter(
        "bias", Parameter(empty(shape, dtype=dtype, device=device)) if affine and bias else None)


def _reset_affine(module: Any) -> None:
    """The weight (where there is one) to ones and the bias (where there is one) to zeros."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    """What batch and instance normalization share (PyTorch's ``_NormBase``): per-channel
    ``weight`` (ones) and ``bias`` (zeros) when ``affine`` (``bias=False``: no bias), and the
    buffers ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (an
    int64 0-d count) when ``track_running_stats``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        from .. import int64, ones, tensor, zeros

        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches counted."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, and the weight to ones and the bias to zeros."""
        self.reset_running_stats()
        _reset_affine(self)


class _BatchNorm(_NormBase):
    """Batch normalization over the channel axis 1 (the shared part of ``BatchNorm1d/2d/3d``).

    ``weight``/``bias`` (when ``affine``) start at ones/zeros; the buffers ``running_mean``
    (zeros), ``running_var`` (ones) and ``num_batches_tracked`` (an int64 0-d count) exist when
    ``track_running_stats``. In training mode the batch statistics normalize and the running
    estimates are updated with ``momentum`` (``None``: a cumulative average over the batches
    counted by ``num_batches_tracked``); in evaluation mode the running estimates normalize
    (the batch statistics where they are not tracked)."""

    _dims: tuple[int, ...] = ()
    _expected = ""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002 - PyTorch's name
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._expected} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Normalize ``input`` (N, C, *) per channel (see the class docstring)."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return _functional().batch_norm(
            input, self.running_mean if keep else None, self.running_var if keep else None,
            self.weight, self.bias, use_batch, factor, self.eps)

    _version = 2  # version 2 added num_batches_tracked (PyTorch's numbering)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str,
                              local_metadata: Any, strict: bool, missing_keys: list[str],
                              unexpected_keys: list[str], error_msgs: list[str]) -> None:
        """A state dict of version 1, or without version (a plain mapping, a file), may lack
        ``num_batches_tracked``: it keeps its current count, as in PyTorch."""
        from .. import int64, tensor

        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked
                                   if self.num_batches_tracked is not None
                                   else tensor(0, dtype=int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def extra_repr(self) -> str:
        """The constructor arguments, as PyTorch prints them."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs over the channels C."""

    _dims = (2, 3)
    _expected = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs over the channels C."""

    _dims = (4,)
    _expected = "4D"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs over the channels C."""

    _dims = (5,)
    _expected = "5D"


class LayerNorm(Module):
    """Layer normalization over the last ``len(normalized_shape)`` axes (an int means one
    axis), with per-element ``weight`` (ones) and ``bias`` (zeros) of that shape when
    ``elementwise_affine`` (``bias=False``: no bias)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:

        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)  # type: ignore[arg-type]
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight to ones and the bias to zeros."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Normalize over the last axes (``nn.functional.layer_norm``)."""
        return _functional().layer_norm(input, self.normalized_shape, self.weight, self.bias,
                                        self.eps)

    def extra_repr(self) -> str:
        """The constructor arguments, as PyTorch prints them."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalization: the ``num_channels`` channels split into ``num_groups`` groups,
    each normalized per sample, then the per-channel ``weight`` (ones) and ``bias`` (zeros)
    when ``affine``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:

        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight to ones and the bias to zeros."""
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Normalize per (sample, group) (``nn.functional.group_norm``)."""
        return _functional().group_norm(input, self.num_groups, self.weight, self.bias,
                                        self.eps)

    def extra_repr(self) -> str:
        """The constructor arguments, as PyTorch prints them."""
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
