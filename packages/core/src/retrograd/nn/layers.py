"""The layers a multilayer perceptron needs: ``Linear``, the activations, ``Flatten``.

Each layer's ``forward`` is one call into ``retrograd.nn.functional`` (or the op of the same
name), so the backward graph of a model is exactly the graph of those ops, which is what the
engine's fusion pass recognises (``linear`` followed by ``relu``/``tanh``/``sigmoid``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "ReLU", "Tanh", "Sigmoid", "Identity", "Flatten", "GELU", "SiLU",
           "LeakyReLU", "ELU", "Softplus", "Softmax", "LogSoftmax", "Hardtanh", "Mish", "SELU",
           "ReLU6", "LogSigmoid"]


def _functional() -> Any:
    # Imported late: nn/__init__ (the lead's) imports this module before functional.
    from . import functional

    return functional


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as in PyTorch: ``weight`` by ``kaiming_uniform_(a=sqrt(5))`` and ``bias`` from
    ``U(-1/sqrt(in_features), 1/sqrt(in_features))``, so both bounds are ``1/sqrt(fan_in)``.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        from .. import empty

        super().__init__()
        if int(in_features) < 0 or int(out_features) < 0:
            raise ValueError(
                f"Linear({in_features}, {out_features}): feature counts must be non-negative"
            )
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.weight = Parameter(
            empty(self.out_features, self.in_features, dtype=dtype, device=device)
        )
        if bias:
            self.bias = Parameter(empty(self.out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh initial values (from ``retrograd.manual_seed``'s generator)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return _functional().linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class ReLU(Module):
    """``max(x, 0)`` elementwise; ``inplace``: written into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return _functional().relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """``tanh(x)`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return _functional().tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return _functional().sigmoid(input)


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Flattens dimensions ``start_dim..end_dim`` (default: all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class GELU(Module):
    """``x * Phi(x)`` elementwise (``approximate='tanh'``: the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """GELU of ``input``."""
        return _functional().gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        """``approximate``."""
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` elementwise; ``inplace``: written into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """SiLU of ``input``."""
        return _functional().silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set."""
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """``x`` where positive, else ``negative_slope * x``; ``inplace``: written into the
    input."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Leaky ReLU of ``input``."""
        return _functional().leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        """``negative_slope`` (and ``inplace=True`` when set)."""
        return f"negative_slope={self.negative_slope}" + (
            ", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``; ``inplace``: written into the
    input."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """ELU of ``input``."""
        return _functional().elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        """``alpha`` (and ``inplace=True`` when set)."""
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` elementwise, ``x`` itself where ``beta * x >
    threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Softplus of ``input``."""
        return _functional().softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        """``beta`` and ``threshold``."""
        return f"beta={self.beta}, threshold={self.threshold}"


def _softmax_dim(name: str, ndim: int, dim: int | None) -> int:
    """``dim``, or PyTorch's deprecated implicit choice (0 for 0-, 1- and 3-d inputs, else 1)
    with its warning."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim`` (None: PyTorch's implicit choice, with its
    deprecation warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Softmax of ``input`` along ``dim``."""
        return _functional().softmax(input, _softmax_dim("softmax", input.ndim, self.dim))

    def extra_repr(self) -> str:
        """``dim``."""
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim`` (None: PyTorch's implicit choice, with its
    deprecation warning)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-softmax of ``input`` along ``dim``."""
        return _functional().log_softmax(input, _softmax_dim("log_softmax", input.ndim,
                                                             self.dim))

    def extra_repr(self) -> str:
        """``dim``."""
        return f"dim={self.dim}"


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``; ``inplace``: written into the input."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Hardtanh of ``input``."""
        return _functional().hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        """The bounds (and ``inplace=True`` when set)."""
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` elementwise (a ``Hardtanh(0, 6)``, as in PyTorch)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set."""
        return _inplace_repr(self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))`` elementwise; ``inplace``: written into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Mish of ``input``."""
        return _functional().mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set."""
        return _inplace_repr(self.inplace)


class SELU(Module):
    """``scale * elu(x, alpha)`` with the self-normalising constants; ``inplace``: written
    into the input."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """SELU of ``input``."""
        return _functional().selu(input, self.inplace)

    def extra_repr(self) -> str:
        """``inplace=True`` when set."""
        return _inplace_repr(self.inplace)


class LogSigmoid(Module):
    """``log(sigmoid(x))`` elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-sigmoid of ``input``."""
        return _functional().logsigmoid(input)
