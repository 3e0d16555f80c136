"""Neural-network ops with their own backward nodes: softmax, log_softmax, cross_entropy;
and mse_loss as a composite of differentiable ops."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..dtypes import bool_
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import OUTPUT, check_device, record
from .promotion import (
    FLOATING,
    HOST_F32,
    HOST_F64,
    operands_result_type,
    promote_types,
    torch_name,
)

__all__ = ["softmax", "log_softmax", "cross_entropy", "mse_loss"]

SoftmaxBackward = formula_node(
    "SoftmaxBackward0", lambda F, g, s, a, n: (F.softmax_backward(g, s[0], a),)
)
LogSoftmaxBackward = formula_node(
    "LogSoftmaxBackward0", lambda F, g, s, a, n: (F.log_softmax_backward(g, s[0], a),)
)


def _dim(x: Tensor, dim: int | None, name: str) -> int:
    if dim is None:
        raise TypeError(f"{name}: dim must be given explicitly")
    nd = max(x.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"{name}: dim {dim} out of range for shape {x.shape}")
    return dim % nd


def _not_floating(x: Tensor) -> bool:
    """Whether ``x`` is not floating (an identity test for float32/float64 first)."""
    dt = x._data.dtype
    return dt is not HOST_F32 and dt is not HOST_F64 and id(dt) not in FLOATING and \
        not x.dtype.is_floating_point


def _no_kernel(kernel: str, dtype: Any) -> NotImplementedError:
    """PyTorch's refusal of an integer or bool input: its kernel has no such dtype."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{torch_name(dtype)}'")


def _softmax_like(name: str, cls: Any, x: Tensor, dim: int | None) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    d = _dim(x, dim, name)
    if _not_floating(x):
        last = "_lastdim" if x.ndim == 0 or d == x.ndim - 1 else ""
        raise _no_kernel(f"{name}{last}_kernel_impl", x.dtype)
    be = x.backend
    if x.ndim == 0:
        data = getattr(be.ops, name)(be.ops.reshape(x._data, (1,)), 0)
        data = be.ops.reshape(data, ())
    else:
        data = getattr(be.ops, name)(x._data, d)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(cls, out, (x,), (data,), OUTPUT, d if x.ndim else None)
    return out


def softmax(x: Tensor, dim: int | None = None) -> Tensor:
    return _softmax_like("softmax", SoftmaxBackward, x, dim)


def log_softmax(x: Tensor, dim: int | None = None) -> Tensor:
    return _softmax_like("log_softmax", LogSoftmaxBackward, x, dim)


def _ce_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, logp, target = saved
    return (F.cross_entropy_backward(g, x, logp, target, attrs),)


CrossEntropyBackward = formula_node("CrossEntropyLossBackward0", _ce_rule)


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean (or sum / none) negative log-likelihood of integer class targets under
    softmax(input). ``input`` is (N, C) logits, ``target`` (N,) int64 class indices."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError("cross_entropy: input and target must be Tensors")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', "
                         f"got {reduction!r}")
    if target.dtype.is_floating_point:
        raise TypeError(f"cross_entropy: target must hold integer class indices, got "
                        f"{target.dtype}")
    if _not_floating(input):
        raise _no_kernel("log_softmax_lastdim_kernel_impl", input.dtype)
    check_device("cross_entropy", input, target)
    if input.ndim == 1 and target.ndim == 0:
        from .shape import unsqueeze

        out = cross_entropy(unsqueeze(input, 0), unsqueeze(target, 0), reduction)
        return out if reduction != "none" else out.reshape(())
    if input.ndim != 2 or target.shape != (input.shape[0],):
        raise ValueError(
            f"cross_entropy: expected input (N, C) and target (N,), got {input.shape} and "
            f"{target.shape}"
        )
    be = input.backend
    tnp = be.to_numpy(target._data)
    if tnp.size and (tnp.min() < 0 or tnp.max() >= input.shape[1]):
        raise IndexError(
            f"cross_entropy: target values must be in [0, {input.shape[1]}), got "
            f"min {tnp.min()} max {tnp.max()}"
        )
    loss, logp = be.ops.cross_entropy_forward(input._data, target._data, reduction)
    if type(loss) is not be.array_type:
        loss = be.asarray(loss)
    out = Tensor(loss, be)
    if _grad.enabled and input._requires_grad:
        # the target is saved with its tensor as source: an in-place change to it before the
        # backward raises VersionMismatch, as in PyTorch (whose nll_loss saves the target)
        record(CrossEntropyBackward, out, (input,), (input._data, logp, target._data),
               (input, None, target), reduction)
    return out


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """``(input - target) ** 2``, reduced; mixed dtypes promote as the subtraction does."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError("mse_loss: input and target must be Tensors")
    if input.shape != target.shape:
        raise ValueError(f"mse_loss: input shape {input.shape} and target shape "
                         f"{target.shape} differ")
    if _not_floating(input) and _not_floating(target):
        raise _no_kernel("mse_cpu", promote_types(input.dtype, target.dtype))
    if input.dtype is bool_ or target.dtype is bool_:  # the loss kernel takes a bool operand
        from .conversion import to  # (a subtraction would not): cast it first

        r = operands_result_type(input, target)
        input, target = to(input, r), to(target, r)
    diff = input - target
    sq = diff * diff
    if reduction == "mean":
        return sq.mean()
    if reduction == "sum":
        return sq.sum()
    if reduction == "none":
        return sq
    raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
