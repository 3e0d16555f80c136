"""Neural-network ops with their own backward nodes: softmax, log_softmax, cross_entropy and
mse_loss."""

from __future__ import annotations

import warnings
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import int64
from ..errors import DTypeError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import OUTPUT, check_device, record
from .promotion import (
    FLOATING,
    HOST_F32,
    HOST_F64,
    cast_data,
    grad_casts,
    operands_result_type,
    promote_types,
    promoted_class,
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
    """``dim`` as an axis, checked as PyTorch checks it (IndexError "Dimension out of range",
    TypeError for a float); a 0-d tensor takes -1 and 0."""
    from .shape import wrap_dim

    if dim is None:
        raise TypeError(f"{name}: dim must be given explicitly")
    return wrap_dim(name, dim, x.ndim)


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


def _softmax_kw(name: str, cls: Any, x: Any, dim: Any, dtype: Any, out: Any, axis: Any
                ) -> Tensor:
    """``softmax``/``log_softmax`` with PyTorch's extra keywords: ``axis`` for ``dim``,
    ``x`` cast to ``dtype`` first (a recorded ``ToCopyBackward0``, as PyTorch), the result
    written into ``out`` (which must have the result's dtype)."""
    from .aliases import EXACT, cast_to, dim_alias, out_one, out_same_dtype

    dim = dim_alias(name, dim, axis)
    if out is not None:
        if isinstance(x, Tensor):
            from ..dtypes import as_dtype

            out_same_dtype(name, out, as_dtype(dtype) if dtype is not None else x.dtype, EXACT)
        return out_one(name, out, (x,), lambda: _softmax_kw(name, cls, x, dim, dtype, None,
                                                            None))
    if dtype is not None and isinstance(x, Tensor):
        x = cast_to(x, dtype)
    return _softmax_like(name, cls, x, dim)


def softmax(x: Tensor, dim: int | None = None, *, dtype: Any = None, out: Any = None,
            axis: Any = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim, keepdim=True)`` along ``dim``, which must be given
    (``SoftmaxBackward0``, which saves the output); floating dtypes only.
    ``axis``: NumPy's name for ``dim``. ``dtype``: the input cast to it first. ``out``: the
    result written into that tensor (``ops.inplace.write_out``)."""
    if dtype is not None or out is not None or axis is not None:
        return _softmax_kw("softmax", SoftmaxBackward, x, dim, dtype, out, axis)
    return _softmax_like("softmax", SoftmaxBackward, x, dim)


def log_softmax(x: Tensor, dim: int | None = None, *, dtype: Any = None, out: Any = None,
                axis: Any = None) -> Tensor:
    """``x - x.logsumexp(dim, keepdim=True)`` along ``dim``, which must be given
    (``LogSoftmaxBackward0``, which saves the output); floating dtypes only.
    ``axis``: NumPy's name for ``dim``. ``dtype``: the input cast to it first. ``out``: the
    result written into that tensor (``ops.inplace.write_out``)."""
    if dtype is not None or out is not None or axis is not None:
        return _softmax_kw("log_softmax", LogSoftmaxBackward, x, dim, dtype, out, axis)
    return _softmax_like("log_softmax", LogSoftmaxBackward, x, dim)


def _ce_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, logp, target = saved
    return (F.cross_entropy_backward(g, x, logp, target, attrs),)


CrossEntropyBackward = formula_node("CrossEntropyLossBackward0", _ce_rule)


_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(name: str, reduction: Any) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction ({name}: 'mean', "
                         "'sum' or 'none')")


def _check_tensors(name: str, input: Any, target: Any) -> None:  # noqa: A002
    for pos, (arg, v) in enumerate((("input", input), ("target", target)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean (or sum / none) negative log-likelihood of integer class targets under
    softmax(input). ``input`` is (N, C) logits, ``target`` (N,) int64 class indices; or
    ``input`` (C,) and a 0-d ``target``. Checked in PyTorch's order, with its words.

    A target outside ``[0, C)`` raises ``IndexError("Target 5 is out of bounds. ...")`` (the
    first bad one); -100, PyTorch's default ``ignore_index``, is not supported
    (NotImplementedError). The check is the backend's ``check_class_targets`` kernel: on
    ``cpu`` it raises here; on ``cuda`` it runs on the device without a sync, and the error is
    raised at the next sync point (``.item()``, ``.numpy()``/``.tolist()``/printing,
    ``.to("cpu")``, ``synchronize()``), not by this call."""
    _check_reduction("cross_entropy", reduction)
    _check_tensors("cross_entropy", input, target)
    if input.shape == target.shape:  # PyTorch reads this as class probabilities
        if not target.dtype.is_floating_point:
            raise DTypeError("Expected floating point type for target with class probabilities, "
                             f"got {torch_name(target.dtype)} (cross_entropy: a target of the "
                             "input's shape holds probabilities)")
        raise NotImplementedError("cross_entropy: class-probability targets (a floating target "
                                  "of the input's shape) are not supported; pass class indices")
    if _not_floating(input):
        raise _no_kernel("log_softmax_lastdim_kernel_impl", input.dtype)
    check_device("cross_entropy", input, target)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0) (cross_entropy: the input holds "
                         "(N, C) or (C,) logits)")
    if input.ndim != 1 and (target.ndim == 0 or input.shape[0] != target.shape[0]):
        got = target.shape[0] if target.ndim else "none: a 0-d target"
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({got}).")
    if input.ndim > 2:
        raise NotImplementedError(f"cross_entropy: inputs of more than 2 dimensions (N, C, d1, "
                                  f"...) are not supported; got shape {tuple(input.shape)}")
    if target.ndim > 1:
        raise ShapeError(f"0D or 1D target tensor expected, multi-target not supported "
                         f"(cross_entropy: target of shape {tuple(target.shape)})")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if target.dtype is not int64:
        raise DTypeError(f"expected target dtype to be Long or Byte, but got "
                         f"{torch_name(target.dtype)} (cross_entropy: class indices)")
    be = input.backend
    # PyTorch's bounds check of the class indices ("Target 5 is out of bounds." for the first
    # bad one, in order) as a backend kernel: the targets are not copied to the host here. A
    # host backend raises now; a device backend may check on the device and raise at its next
    # sync point (cuda: docs/vendors.md, retrograd_cuda.kernels.targets).
    be.ops.check_class_targets(target._data, input.shape[-1])
    if input.ndim == 1:
        from .shape import reshape, unsqueeze

        out = cross_entropy(unsqueeze(input, 0), reshape(target, (1,)), reduction)
        return out if reduction != "none" else reshape(out, ())
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


def _mse_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``mse_loss_backward``: norm * (input - target) * g for the input, and the
    same with the two swapped for the target; norm is 2 / numel for the mean, else 2."""
    x, t = saved
    norm = attrs
    gx = F.mul(F.mul(F.sub(x, t), norm), g) if needs[0] else None
    gt = F.mul(F.mul(F.sub(t, x), norm), g) if needs[1] else None
    return gx, gt


MseLossBackward = formula_node("MseLossBackward0", _mse_rule, arity=2)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """``(input - target) ** 2``, reduced: one MseLossBackward0 node, as in PyTorch. Mixed
    dtypes promote as the subtraction does; a target of another shape warns and broadcasts
    (PyTorch's UserWarning), and both are saved: changing either in place before the
    backward raises VersionMismatch."""
    _check_tensors("mse_loss", input, target)
    _check_reduction("mse_loss", reduction)
    if input.shape != target.shape:
        from .elementwise import broadcast_mismatch, broadcast_shape
        from .shape import expand_to

        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=2)
        err = broadcast_mismatch("mse_loss", input.shape, target.shape)
        if err is not None:
            raise err
        shape = broadcast_shape(input.shape, target.shape)
        if input.shape != shape:
            input = expand_to(input, shape)
        if target.shape != shape:
            target = expand_to(target, shape)
    if _not_floating(input) and _not_floating(target):
        raise _no_kernel("mse_cpu", promote_types(input.dtype, target.dtype))
    check_device("mse_loss", input, target)
    r = operands_result_type(input, target)
    xd, td = cast_data(input, r), cast_data(target, r)
    be = input.backend
    F = be.ops
    diff = F.sub(xd, td)
    data = F.mul(diff, diff)
    if reduction == "mean":
        data = F.mean(data, tuple(range(data.ndim)) if data.ndim else None, False)
    elif reduction == "sum":
        data = F.sum(data, None, False)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (input._requires_grad or target._requires_grad):
        n = 1
        for d in xd.shape:
            n *= d
        attrs: Any = 2.0 / n if reduction == "mean" and n else 2.0
        cls = MseLossBackward
        casts = grad_casts(be, r, input, target)
        if casts is not None:
            cls = promoted_class(cls)
            attrs = (attrs, casts)
        record(cls, out, (input, target), (xd, td), (input, target), attrs)
    return out
