"""Convolution and pooling modules (``Conv1d``, ``Conv2d``, ``ConvTranspose1d``,
``ConvTranspose2d``, ``MaxPool1d``, ``MaxPool2d``, ``AvgPool1d``, ``AvgPool2d``,
``AdaptiveAvgPool1d``, ``AdaptiveAvgPool2d``) over ``retrograd.nn.functional``, with
PyTorch's constructor arguments, attributes, parameter names and shapes, initialisation rule
and reprs."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _functional() -> Any:
    from . import functional  # late: nn/__init__ imports the modules before functional

    return functional


def _ntuple(v: Any, n: int) -> tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """The shared part of the convolutions: arguments, parameters, initialisation, repr."""

    _n = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any,
                 padding: Any, dilation: Any, groups: int, bias: bool, padding_mode: str,
                 output_padding: Any = 0, device: Any = None, dtype: Any = None) -> None:
        from .. import empty

        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding: Any = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            pads: list[int] = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    pads[2 * i] = left
                    pads[2 * i + 1] = total - left
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = pads
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values as PyTorch does: ``kaiming_uniform_(a=sqrt(5))`` for the
        weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias (retrograd's generator)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1.0 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """The arguments PyTorch's ``repr`` of this module shows."""
        n = self._n
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input: Tensor, weight: Tensor,  # noqa: A002
                      bias: Tensor | None) -> Tensor:
        fn = getattr(_functional(), f"conv{self._n}d")
        if self.padding_mode != "zeros":
            x = _functional().pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The convolution of ``input`` with this module's weight and bias."""
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """A 1-D convolution layer: ``conv1d(input, weight, bias, ...)`` with ``weight`` of shape
    ``(out_channels, in_channels / groups, kernel_size)``."""

    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)


class Conv2d(_ConvNd):
    """A 2-D convolution layer: ``conv2d(input, weight, bias, ...)`` with ``weight`` of shape
    ``(out_channels, in_channels / groups, kH, kW)``. ``padding_mode``: ``"zeros"``, or
    ``"reflect"``/``"replicate"``/``"circular"`` (``pad`` first, as PyTorch)."""

    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)


class _ConvTransposeNd(_ConvNd):
    """The shared part of the transposed convolutions: ``output_size`` -> output padding."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:  # noqa: A002
        """The output padding that gives ``output_size`` (PyTorch's check of its range)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.ndim == n + 2 else 1
        size = [int(v) for v in output_size]
        if len(size) == lead + n:
            size = size[lead:]
        if len(size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(size)})")
        least = [(input.shape[lead + i] - 1) * self.stride[i] - 2 * self.padding[i]
                 + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(n)]
        most = [m + s - 1 for m, s in zip(least, self.stride)]
        for want, lo, hi in zip(size, least, most):
            if not lo <= want <= hi:
                raise ValueError(f"requested an output size of {size}, but valid sizes range "
                                 f"from {least} to {most} (for an input of "
                                 f"{list(input.shape[2:])})")
        return tuple(want - lo for want, lo in zip(size, least))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        """The transposed convolution of ``input``; ``output_size`` (the spatial sizes, or
        with the leading dimensions) picks the output padding."""
        op = self._output_padding(input, output_size)
        fn = getattr(_functional(), f"conv_transpose{self._n}d")
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """A 1-D transposed convolution layer (``conv_transpose1d``) with ``weight`` of shape
    ``(in_channels, out_channels / groups, kernel_size)``. Only ``padding_mode="zeros"``, as
    in PyTorch."""

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """A 2-D transposed convolution layer (``conv_transpose2d``) with ``weight`` of shape
    ``(in_channels, out_channels / groups, kH, kW)``. Only ``padding_mode="zeros"``, as in
    PyTorch."""

    _n = 2


class MaxPool2d(Module):
    """``max_pool2d`` as a module (``stride`` defaults to ``kernel_size``)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        """The windows' maxima (and indices with ``return_indices``)."""
        return _functional().max_pool2d(input, self.kernel_size, self.stride, self.padding,
                                        self.dilation, ceil_mode=self.ceil_mode,
                                        return_indices=self.return_indices)

    def extra_repr(self) -> str:
        """The arguments PyTorch's ``repr`` of this module shows."""
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    """``max_pool1d`` as a module (``stride`` defaults to ``kernel_size``)."""

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        """The windows' maxima (and indices with ``return_indices``)."""
        return _functional().max_pool1d(input, self.kernel_size, self.stride, self.padding,
                                        self.dilation, ceil_mode=self.ceil_mode,
                                        return_indices=self.return_indices)


class AvgPool2d(Module):
    """``avg_pool2d`` as a module (``stride`` defaults to ``kernel_size``)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The windows' means."""
        return _functional().avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                                        self.ceil_mode, self.count_include_pad,
                                        self.divisor_override)

    def extra_repr(self) -> str:
        """The arguments PyTorch's ``repr`` of this module shows."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """``avg_pool1d`` as a module (sizes kept as 1-tuples, as PyTorch's)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The windows' means."""
        return _functional().avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                        self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        """The arguments PyTorch's ``repr`` of this module shows."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """``adaptive_avg_pool2d`` as a module."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The means over the adaptive windows."""
        return _functional().adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        """The arguments PyTorch's ``repr`` of this module shows."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """``adaptive_avg_pool1d`` as a module."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The means over the adaptive windows."""
        return _functional().adaptive_avg_pool1d(input, self.output_size)
