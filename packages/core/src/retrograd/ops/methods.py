"""Tensor methods and operators, bound to the op functions (kept out of tensor.py so that the
Tensor class stays about data and bookkeeping)."""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor
from . import conversion, elementwise, inplace, linalg, nn, reduction, shape

__all__: list[str] = []


def _swap(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


def _rmatmul(self: Tensor, other: Any) -> Tensor:
    return linalg.matmul(other, self)


def _T(self: Tensor) -> Tensor:
    """``x.T``: a view with every dimension reversed (a permute, ``PermuteBackward0``, also for
    a matrix); a 0-d or 1-d tensor keeps its shape."""
    # PyTorch's ``numpy_T``: a permute of every dimension, reversed (PermuteBackward0), also
    # of a matrix
    return shape.permute(self, tuple(reversed(range(self.ndim))))


def _mT(self: Tensor) -> Tensor:
    """``x.mT``: the last two dimensions swapped (``TransposeBackward0``), a batch of matrices
    transposed; a 1-d tensor is refused, a 0-d one is returned as it is."""
    nd = self.ndim
    if nd == 0:  # PyTorch: the identity on a 0-d tensor (deprecated there)
        return self
    if nd < 2:
        raise ShapeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                         f"{nd}-D tensor (shape {self.shape}).")
    return shape.transpose(self, -2, -1)


def _view_as(self: Tensor, other: Tensor) -> Tensor:
    """``x.view_as(other)``: ``x.view(other.shape)``."""
    return shape.view(self, other.shape)


def _expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``x.expand_as(other)``: ``x.expand(other.shape)``."""
    return shape.expand(self, other.shape)


def _expand(self: Tensor, *sizes: Any) -> Tensor:
    """``x.expand(*sizes)``: a view broadcast to ``sizes`` (see ``expand``); the method wants at
    least one argument, as PyTorch's does."""
    if not sizes:  # PyTorch's binding wants the argument (``()`` is one); the function
        # ``expand`` takes none, for the ops that expand to a 0-d shape
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    return shape.expand(self, *sizes)


def _setitem(self: Tensor, key: Any, value: Any) -> None:
    inplace.setitem(self, key, value)


def _iop(fn: Any) -> Any:
    def op(self: Tensor, other: Any) -> Tensor:
        return fn(self, other)

    return op


def _eq_operator(self: Tensor, other: Any) -> Any:
    """``t == other``; ``t == None`` is False, as PyTorch's operator (``t.eq(None)`` raises)."""
    return False if other is None else elementwise.eq(self, other)


def _ne_operator(self: Tensor, other: Any) -> Any:
    """``t != other``; ``t != None`` is True, as PyTorch's operator."""
    return True if other is None else elementwise.ne(self, other)


_METHODS: dict[str, Any] = {
    "__add__": elementwise.add_operator,
    "__radd__": elementwise.add_operator,  # scalar + t: t first, as PyTorch (and a bare node)
    "__sub__": elementwise.sub_operator,
    "__rsub__": _swap(elementwise.sub),
    "__mul__": elementwise.mul_operator,
    "__rmul__": elementwise.mul_operator,
    "__truediv__": elementwise.div_operator,
    "__rtruediv__": _swap(elementwise.div),
    "__pow__": elementwise.pow,
    "__rpow__": _swap(elementwise.pow),
    "__matmul__": linalg.matmul,
    "__rmatmul__": _rmatmul,
    "__neg__": elementwise.neg,
    "__abs__": elementwise.abs,
    "__eq__": _eq_operator,
    "__ne__": _ne_operator,
    "__lt__": elementwise.lt,
    "__le__": elementwise.le,
    "__gt__": elementwise.gt,
    "__ge__": elementwise.ge,
    "__getitem__": shape.getitem,
    "__setitem__": _setitem,
    "__iadd__": _iop(inplace.add_),
    "__isub__": _iop(inplace.sub_),
    "__imul__": _iop(inplace.mul_),
    "__itruediv__": _iop(inplace.div_),
    "add": elementwise.add,
    "sub": elementwise.sub,
    "mul": elementwise.mul,
    "div": elementwise.div,
    "pow": elementwise.pow,
    "neg": elementwise.neg,
    "abs": elementwise.abs,
    "exp": elementwise.exp,
    "log": elementwise.log,
    "sqrt": elementwise.sqrt,
    "sin": elementwise.sin,
    "cos": elementwise.cos,
    "tanh": elementwise.tanh,
    "sigmoid": elementwise.sigmoid,
    "relu": elementwise.relu,
    "clamp": elementwise.clamp,
    "clip": elementwise.clamp,
    "maximum": elementwise.maximum,
    "minimum": elementwise.minimum,
    "eq": elementwise.eq,
    "ne": elementwise.ne,
    "lt": elementwise.lt,
    "le": elementwise.le,
    "gt": elementwise.gt,
    "ge": elementwise.ge,
    "allclose": elementwise.allclose,
    "matmul": linalg.matmul,
    "sum": reduction.sum,
    "mean": reduction.mean,
    "amax": reduction.amax,
    "logsumexp": reduction.logsumexp,
    "softmax": nn.softmax,
    "log_softmax": nn.log_softmax,
    "reshape": shape.reshape,
    "view": shape.view,
    "view_as": _view_as,
    "permute": shape.permute,
    "transpose": shape.transpose,
    "t": shape.t,
    "squeeze": shape.squeeze,
    "unsqueeze": shape.unsqueeze,
    "expand": _expand,
    "expand_as": _expand_as,
    "flatten": shape.flatten,
    "clone": conversion.clone,
    "add_": inplace.add_,
    "sub_": inplace.sub_,
    "mul_": inplace.mul_,
    "div_": inplace.div_,
    "zero_": inplace.zero_,
    "fill_": inplace.fill_,
    "copy_": inplace.copy_,
}

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

Tensor.T = property(_T)  # type: ignore[assignment]
Tensor.mT = property(_mT)  # type: ignore[assignment]
Tensor.__hash__ = object.__hash__  # type: ignore[method-assign,assignment]
