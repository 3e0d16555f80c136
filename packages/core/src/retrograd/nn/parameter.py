"""``Parameter``: a tensor that a ``Module`` owns and an optimizer updates.

As in PyTorch, a Parameter *is* a Tensor (``isinstance(p, Tensor)``), it is always a leaf, it
requires grad unless asked otherwise, and it shares storage and version counter with the tensor
it was made from. Assigning one to a ``Module`` attribute registers it.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor registered by ``Module.__setattr__``; ``requires_grad=True`` by default.

    ``Parameter(t)`` detaches ``t`` (sharing its storage, like ``t.detach()``), so the parameter
    is a leaf even when ``t`` came out of a computation.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        from .. import empty

        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): data must be a Tensor, got {type(data).__name__}")
        leaf = data.detach()
        # detach() records its source as the base, making the result a view; a Parameter is
        # not a view in PyTorch (p._base is None), and a view would refuse recorded in-place
        # ops that a leaf may take. It keeps sharing storage and version counter.
        leaf._base = None
        # The subclass adds no slots, so the layouts match and the class can be swapped: the
        # result is the detached tensor itself (same storage, same version counter), as in PyTorch.
        leaf.__class__ = cls
        leaf.requires_grad_(requires_grad)
        return leaf  # type: ignore[return-value]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Everything happened in __new__; Tensor.__init__ must not run again on the result.
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
