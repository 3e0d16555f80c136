"""The rest of PyTorch's everyday modules (Unflatten, RMSNorm, PReLU, ...), as in PyTorch: the
same constructor arguments and defaults, parameters and buffers under the same names (so
``state_dict`` keys match) and the same ``repr``. Each ``forward`` is one call of the
functional form (``retrograd.nn.functional``)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .normalization import _NormBase
from .parameter import Parameter

__all__ = ["Unflatten", "Softmin", "Softsign", "Tanhshrink", "Threshold", "Hardsigmoid",
           "Hardswish", "CELU", "PReLU", "GLU", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d",
           "Dropout1d", "Dropout2d", "Upsample", "PixelShuffle", "PixelUnshuffle",
           "CosineSimilarity", "PairwiseDistance", "ZeroPad2d"]


def _functional() -> Any:
    # Imported late: nn/__init__ imports the modules before functional.
    from . import functional

    return functional


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class Unflatten(Module):
    """Expands axis ``dim`` of the input into the shape ``unflattened_size``."""

    def __init__(self, dim: int | str, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or not all(
                    isinstance(s, int) for s in unflattened_size):
                raise TypeError("unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
        else:
            raise TypeError(f"invalid argument type for dim parameter (retrograd has no named "
                            f"tensors), got {type(dim).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``input`` with axis ``dim`` unflattened."""
        from typing import cast

        return cast(Tensor, cast(Any, input).unflatten(self.dim, self.unflattened_size))

    def extra_repr(self) -> str:
        """``dim`` and ``unflattened_size``."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim`` (None: PyTorch's implicit choice, with its warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Softmin of ``input`` along ``dim``."""
        return _functional().softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """``dim``."""
        return f"dim={self.dim}"


class Softsign(Module):
    """``x / (1 + |x|)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Softsign of ``input``."""
        return _functional().softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Tanhshrink of ``input``."""
        return _functional().tanhshrink(input)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``; ``inplace``: written into the input."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Threshold of ``input``."""
        return _functional().threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        """``threshold`` and ``value`` (and ``inplace=True`` when set)."""
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class Hardsigmoid(Module):
    """``min(max(x + 3, 0), 6) / 6`` elementwise; ``inplace``: written into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Hardsigmoid of ``input``."""
        return _functional().hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """``x * min(max(x + 3, 0), 6) / 6`` elementwise; ``inplace``: written into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Hardswish of ``input``."""
        return _functional().hardswish(input, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; ``inplace``: written into the
    input."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """CELU of ``input``."""
        return _functional().celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha`` (and ``inplace=True`` when set)."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``x`` where positive, else ``weight * x``, with a learnt ``weight`` of
    ``num_parameters`` slopes (1, or the number of channels), all starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        from .. import empty

        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope back to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """PReLU of ``input``."""
        return _functional().prelu(input, self.weight)

    def extra_repr(self) -> str:
        """``num_parameters``."""
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    """The gated linear unit along ``dim``: halves ``a``, ``b``, then ``a * sigmoid(b)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """GLU of ``input``."""
        return _functional().glu(input, self.dim)

    def extra_repr(self) -> str:
        """``dim``."""
        return f"dim={self.dim}"


class RMSNorm(Module):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` axes (an int
    means one axis), times a per-element ``weight`` (ones) when ``elementwise_affine``;
    ``eps`` None: the machine epsilon of the input's dtype."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        from .. import empty

        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(normalized_shape)  # type: ignore[arg-type]
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """Normalize over the last axes (``nn.functional.rms_norm``)."""
        return _functional().rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The constructor arguments, as PyTorch prints them."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _InstanceNorm(_NormBase):
    """Instance normalization (the shared part of ``InstanceNorm1d/2d``): per-channel
    ``weight`` (ones) and ``bias`` (zeros) when ``affine``; running statistics
    (``running_mean``, ``running_var``, ``num_batches_tracked``) when
    ``track_running_stats``, used in evaluation mode (``bias=False``: no bias)."""

    _batched = 3
    _name = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """Normalize each sample's channels (an unbatched input gains and loses a batch
        axis)."""
        import warnings

        x: Any = input
        if x.dim() not in (self._batched - 1, self._batched):
            raise ValueError(f"expected {self._batched - 1}D or {self._batched}D input "
                             f"(got {x.dim()}D input)")
        feature_dim = x.dim() - (self._batched - 1)
        if x.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{x.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          "You can silence this warning by not passing in num_features, "
                          "which is not used because affine=False", stacklevel=2)
        if x.dim() == self._batched - 1:
            return self._apply_norm(x.unsqueeze(0)).squeeze(0)  # type: ignore[attr-defined]
        return self._apply_norm(x)

    def _apply_norm(self, x: Tensor) -> Tensor:
        return _functional().instance_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def extra_repr(self) -> str:
        """The constructor arguments, as PyTorch prints them."""
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or unbatched (C, L) inputs."""

    _batched = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or unbatched (C, H, W) inputs."""

    _batched = 4


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        from ..ops.dropout import check_p

        super().__init__()
        check_p(p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """``p`` and ``inplace``."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs with probability ``p`` in training
    mode; the identity in ``eval()`` mode."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``nn.functional.dropout1d`` while training."""
        return _functional().dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) inputs with probability ``p`` in training mode;
    the identity in ``eval()`` mode."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``nn.functional.dropout2d`` while training."""
        return _functional().dropout2d(input, self.p, self.training, self.inplace)


class Upsample(Module):
    """``nn.functional.interpolate`` with the module's ``size`` or ``scale_factor``, ``mode``
    and ``align_corners``."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``input`` resized."""
        return _functional().interpolate(input, self.size, self.scale_factor, self.mode,
                                         self.align_corners,
                                         recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """``size`` or ``scale_factor``, and ``mode``."""
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r) with ``r`` the ``upscale_factor``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``input`` shuffled."""
        return _functional().pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """``upscale_factor``."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W) with ``r`` the ``downscale_factor``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``input`` unshuffled."""
        return _functional().pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """``downscale_factor``."""
        return f"downscale_factor={self.downscale_factor}"


class CosineSimilarity(Module):
    """``nn.functional.cosine_similarity`` of two inputs along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The cosine similarity of ``x1`` and ``x2``."""
        return _functional().cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``nn.functional.pairwise_distance`` of two inputs (``p``-norm along the last axis)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The distance between ``x1`` and ``x2``."""
        return _functional().pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class ZeroPad2d(Module):
    """Pads the last two axes with zeros: ``padding`` an int (all four sides) or
    ``(left, right, top, bottom)``."""

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(padding, int):
            self.padding: tuple[int, ...] = (padding,) * 4
        else:
            self.padding = tuple(padding)
            if len(self.padding) != 4:
                raise ValueError(f"ZeroPad2d: padding must be an int or 4 ints, got "
                                 f"{len(self.padding)}")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        """``input`` padded with zeros."""
        return _functional().pad(input, self.padding, "constant", 0.0)

    def extra_repr(self) -> str:
        """``padding``."""
        return f"{self.padding}"
