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
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_tensors(name: str, input: Any, target: Any) -> None:  # noqa: A002
    for pos, (arg, v) in enumerate((("input", input), ("target", target)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The negative log-likelihood of ``target`` under ``softmax(input)`` along the class
    dimension (1; 0 for a ``(C,)`` input), reduced. ``target`` holds class indices (int64, the
    input's shape without the class dimension) or, when it has the input's shape, class
    probabilities (floating). ``weight`` (C,) weighs each class (the mean divides by the
    total weight of the kept targets); a target equal to ``ignore_index`` is left out;
    ``label_smoothing`` mixes the target with the uniform distribution. Checked in PyTorch's
    order, with its words. ``size_average``/``reduce``: PyTorch's deprecated flags.

    The plain case -- class indices of an ``(N, C)`` or ``(C,)`` input, no weight, no
    smoothing, the default ``ignore_index`` and no target equal to it -- is one fused
    ``CrossEntropyLossBackward0`` node (E12); every other case is PyTorch's own graph,
    ``NllLossBackward0`` (``NllLoss2DBackward0`` for 4-d inputs) over ``LogSoftmaxBackward0``.

    A target outside ``[0, C)`` raises ``IndexError("Target 5 is out of bounds. ...")`` (the
    first bad one). In the plain case the check is the backend's ``check_class_targets``
    kernel: on ``cpu`` it raises here; on ``cuda`` it runs on the device without a sync, and
    the error is raised at the next sync point (``.item()``, ``.numpy()``/``.tolist()``/
    printing, ``.to("cpu")``, ``synchronize()``), not by this call."""
    from .losses import resolve_reduction

    reduction = resolve_reduction(reduction, size_average, reduce)
    _check_tensors("cross_entropy", input, target)
    if input.shape == target.shape:  # PyTorch reads this as class probabilities
        if not target.dtype.is_floating_point:
            raise DTypeError("Expected floating point type for target with class probabilities, "
                             f"got {torch_name(target.dtype)} (cross_entropy: a target of the "
                             "input's shape holds probabilities)")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_probabilities(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
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
    if input.ndim > 2 or weight is not None or label_smoothing > 0.0 or \
            ignore_index != _IGNORE_INDEX:
        return _ce_composed(input, target, weight, ignore_index, reduction, label_smoothing)
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
    # sync point (cuda: docs/vendors.md, retrograd_cuda.kernels.targets). A target equal to the
    # default ignore_index is refused by the kernel (NotImplementedError): such a batch takes
    # PyTorch's graph, which leaves those samples out.
    try:
        be.ops.check_class_targets(target._data, input.shape[-1])
    except NotImplementedError:
        return _ce_composed(input, target, weight, ignore_index, reduction, label_smoothing)
    if input.ndim == 1:
        from .shape import reshape, unsqueeze

        out = cross_entropy(unsqueeze(input, 0), reshape(target, (1,)), reduction=reduction)
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


#: PyTorch's default ``ignore_index``
_IGNORE_INDEX = -100


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """``weight`` (C,) shaped to broadcast along ``class_dim`` of an ``ndim``-d input."""
    from .shape import reshape

    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return reshape(weight, tuple(shape))


def _ce_composed(input: Tensor, target: Tensor, weight: Any, ignore_index: int,  # noqa: A002
                 reduction: str, label_smoothing: float) -> Tensor:
    """PyTorch's ``cross_entropy`` for class indices: ``nll_loss_nd(log_softmax(input))``,
    mixed with the uniform distribution's loss when ``label_smoothing`` > 0."""
    from .elementwise import add, div, eq, mul, neg, where
    from .losses import nll_loss_nd, scalar_op
    from .reduction import sum

    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    nll = nll_loss_nd(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0.0:
        return nll
    n_classes = input.shape[class_dim]
    ignored = eq(target, ignore_index)
    if weight is not None:
        smooth = neg(sum(mul(logp, _class_weight(weight, input.ndim, class_dim)), class_dim))
    else:
        smooth = neg(sum(logp, class_dim))
    smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        from ..grad_mode import no_grad

        with no_grad():
            if weight is not None:
                safe = where(ignored, 0, target)
                den = sum(where(ignored, 0.0, weight[safe]))
            else:
                den = sum(eq(ignored, False))
        ret = div(sum(smooth), den)
    elif reduction == "sum":
        ret = sum(smooth)
    else:
        ret = smooth
    return add(scalar_op(nll, 1 - label_smoothing, False),
               scalar_op(ret, label_smoothing / n_classes, False))


def _ce_probabilities(input: Tensor, target: Tensor, weight: Any,  # noqa: A002
                      reduction: str, label_smoothing: float) -> Tensor:
    """PyTorch's ``cross_entropy`` for class probabilities: ``-(log_softmax(input) * target
    * weight)`` summed over the classes, reduced (the mean divides by ``numel / C``)."""
    from .elementwise import add, mul, neg
    from .losses import scalar_op
    from .reduction import sum

    if _not_floating(input):
        raise _no_kernel("log_softmax_lastdim_kernel_impl", input.dtype)
    check_device("cross_entropy", input, target)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0) (cross_entropy: the input holds "
                         "(N, C) or (C,) logits)")
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"[{', '.join(str(d) for d in weight.shape)}]")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                               f"{label_smoothing}")
        target = add(mul(target, 1 - label_smoothing), label_smoothing / n_classes)
    prod = mul(logp, target)
    if weight is not None:
        prod = mul(prod, _class_weight(weight, input.ndim, class_dim))
    if reduction == "none":
        return neg(sum(prod, class_dim))
    total = neg(sum(prod))
    if reduction == "sum":
        return total
    numel = 1
    for d in input.shape:
        numel *= d
    return scalar_op(total, numel / n_classes if numel else float("nan"), True)


def _mse_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``mse_loss_backward``: norm * (input - target) * g for the input, and the
    same with the two swapped for the target; norm is 2 / numel for the mean, else 2."""
    x, t = saved
    norm = attrs
    gx = F.mul(F.mul(F.sub(x, t), norm), g) if needs[0] else None
    gt = F.mul(F.mul(F.sub(t, x), norm), g) if needs[1] else None
    return gx, gt


MseLossBackward = formula_node("MseLossBackward0", _mse_rule, arity=2)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """``(input - target) ** 2``, reduced: one MseLossBackward0 node, as in PyTorch. Mixed
    dtypes promote as the subtraction does; a target of another shape warns and broadcasts
    (PyTorch's UserWarning), and both are saved: changing either in place before the
    backward raises VersionMismatch. ``weight`` (the input's shape) weighs each squared error,
    as PyTorch's composition (``pow``, ``mul``; the mean divides by the weights' sum).
    ``size_average``/``reduce``: PyTorch's deprecated flags."""
    _check_tensors("mse_loss", input, target)
    if size_average is not None or reduce is not None:
        from .losses import resolve_reduction

        reduction = resolve_reduction(reduction, size_average, reduce)
    if weight is not None:
        from .elementwise import pow as pow_
        from .elementwise import sub
        from .losses import _broadcast, _size_warning, _weighted

        _size_warning(input, target)
        x, t = _broadcast("mse_loss", input, target)
        return _weighted("mse_loss", pow_(sub(x, t), 2), weight, input.shape, reduction, True)
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
