"""``Dropout``: zeroes elements with probability ``p`` in training mode."""

from __future__ import annotations

from ..tensor import Tensor
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """``nn.functional.dropout`` with ``p`` in training mode (``train()``); the identity in
    ``eval()`` mode. ``inplace``: written into the input."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        from ..ops.dropout import check_p

        super().__init__()
        check_p(p)
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The input with elements zeroed (and the rest scaled) while training."""
        from .functional import dropout

        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        """``p`` and ``inplace``."""
        return f"p={self.p}, inplace={self.inplace}"
