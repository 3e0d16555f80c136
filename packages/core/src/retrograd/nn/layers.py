"""The layers a multilayer perceptron needs: ``Linear``, the activations, ``Flatten``.

Each layer's ``forward`` is one call into ``retrograd.nn.functional`` (or the op of the same
name), so the backward graph of a model is exactly the graph of those ops, which is what the
engine's fusion pass recognises (``linear`` followed by ``relu``/``tanh``/``sigmoid``).
"""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["Linear", "ReLU", "Tanh", "Sigmoid", "Identity", "Flatten"]


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
