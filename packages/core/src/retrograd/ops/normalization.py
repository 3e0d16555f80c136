"""Normalization: ``batch_norm`` (training statistics, running estimates), ``layer_norm``,
``group_norm``.

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports with
``torch.nn.functional``'s signatures. ``retrograd.batch_norm``, ``retrograd.layer_norm`` and
``retrograd.group_norm`` are declared ops with ``torch.batch_norm``'s (weight and bias before the
running statistics, every argument required), ``torch.layer_norm``'s and ``torch.group_norm``'s
signatures (a trailing ``cudnn_enable(d)`` flag, ignored here).

Each op records one node with PyTorch's name (``NativeBatchNormBackward0``,
``NativeLayerNormBackward0``, ``NativeGroupNormBackward0``) whose rule is written once against
``F``: it recomputes the statistics from the saved input, so under ``create_graph`` the gradient
is a function of the input and can be differentiated again (double backward)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._writes import write
from ..autograd.node import formula_node
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record
from .declare import op
from .promotion import torch_name

__all__ = ["batch_norm", "layer_norm", "group_norm"]


# ---- derivative rules (against F: raw kernels in the walk, differentiable ops under
# ---- create_graph) ---------------------------------------------------------------------------
def _stats(F: Any, x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """``(x - mean, 1 / sqrt(var + eps))`` over ``axes`` (kept, size 1): the biased variance."""
    centred = F.sub(x, F.mean(x, axes, True))
    var = F.mean(F.mul(centred, centred), axes, True)
    return centred, F.div(1.0, F.sqrt(F.add(var, eps)))


def _input_grad(F: Any, gy: Any, xhat: Any, rstd: Any, axes: tuple[int, ...]) -> Any:
    """The input's gradient of ``xhat = (x - mean) * rstd`` over ``axes`` for the gradient
    ``gy`` of ``xhat``: ``rstd * (gy - mean(gy) - xhat * mean(gy * xhat))``."""
    mean_gy = F.mean(gy, axes, True)
    mean_gy_xhat = F.mean(F.mul(gy, xhat), axes, True)
    return F.mul(F.sub(F.sub(gy, mean_gy), F.mul(xhat, mean_gy_xhat)), rstd)


def _empty_grads(F: Any, g: Any, needs: Any, reduce: Any) -> tuple[Any, ...]:
    """The gradients of a normalization of an empty input: an empty input gradient, zero
    parameter gradients (``reduce`` sums a gradient down to a parameter's shape)."""
    zero = F.mul(g, 0.0)
    return (zero if needs[0] else None, reduce(zero) if needs[1] else None,
            reduce(g) if needs[2] else None)


def _is_empty(x: Any) -> bool:
    return any(d == 0 for d in x.shape)


def _batch_norm_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Training: the batch statistics are functions of the input; evaluation: the running
    estimates are constants, so the input's gradient is ``g * weight * rstd``."""
    x, w, running_mean, running_var = saved
    training, eps, axes, cshape = attrs
    if _is_empty(x):
        return _empty_grads(F, g, needs, lambda t: F.sum(t, axes, False))
    if training:
        centred, rstd = _stats(F, x, axes, eps)
    else:
        rstd = F.div(1.0, F.sqrt(F.add(F.reshape(running_var, cshape), eps)))
        centred = F.sub(x, F.reshape(running_mean, cshape))
    xhat = F.mul(centred, rstd)
    gx = gw = gb = None
    if needs[0]:
        gy = g if w is None else F.mul(g, F.reshape(w, cshape))
        gx = _input_grad(F, gy, xhat, rstd, axes) if training else F.mul(gy, rstd)
    if needs[1]:
        gw = F.sum(F.mul(g, xhat), axes, False)
    if needs[2]:
        gb = F.sum(g, axes, False)
    return gx, gw, gb


def _layer_norm_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Statistics over the last ``len(normalized_shape)`` axes; weight and bias have the
    normalized shape and their gradients sum over the leading axes. The walk reuses the
    forward's saved ``mean`` and ``rstd`` (``xhat = (x - mean) * rstd``; the input's
    gradient ``rstd * (gy - mean(gy) - xhat * mean(gy * xhat))``, ``gy = g * weight``);
    under ``create_graph`` (saved values as tensors) the statistics are recomputed from
    the input, so that the gradient is a function of it and can be differentiated again."""
    x, w, mean, rstd = saved
    axes, eps, shape = attrs
    if _is_empty(x):
        return _empty_grads(F, g, needs, lambda t: F.reduce_to(t, shape))
    if isinstance(x, Tensor) or mean is None:
        centred, rstd = _stats(F, x, axes, eps)
    else:
        centred = F.sub(x, mean)
    xhat = F.mul(centred, rstd)
    gx = gw = gb = None
    if needs[0]:
        gx = _input_grad(F, g if w is None else F.mul(g, w), xhat, rstd, axes)
    if needs[1]:
        gw = F.reduce_to(F.mul(g, xhat), shape)
    if needs[2]:
        gb = F.reduce_to(g, shape)
    return gx, gw, gb


def _group_norm_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Statistics per (sample, group): over the last axis of the input seen as
    ``(N, groups, -1)``; weight and bias are per channel."""
    x, w = saved
    eps, gshape, xshape, cshape, waxes = attrs
    if _is_empty(x):
        return _empty_grads(F, g, needs, lambda t: F.sum(t, waxes, False))
    centred, rstd = _stats(F, F.reshape(x, gshape), (2,), eps)
    xhat_g = F.mul(centred, rstd)
    gx = gw = gb = None
    if needs[0]:
        gy = g if w is None else F.mul(g, F.reshape(w, cshape))
        gx = F.reshape(_input_grad(F, F.reshape(gy, gshape), xhat_g, rstd, (2,)), xshape)
    if needs[1]:
        gw = F.sum(F.mul(g, F.reshape(xhat_g, xshape)), waxes, False)
    if needs[2]:
        gb = F.sum(g, waxes, False)
    return gx, gw, gb


BatchNormBackward = formula_node("NativeBatchNormBackward0", _batch_norm_rule, arity=3)
LayerNormBackward = formula_node("NativeLayerNormBackward0", _layer_norm_rule, arity=3)
GroupNormBackward = formula_node("NativeGroupNormBackward0", _group_norm_rule, arity=3)


# ---- checks -----------------------------------------------------------------------------------
def _check_input(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_floating(x: Tensor, kernel: str) -> None:
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_name(x.dtype)}'")


def _check_params(x: Tensor, *params: Tensor | None) -> None:
    """Parameters and statistics share the input's dtype and device (PyTorch's CPU words)."""
    for p in params:
        if p is None:
            continue
        if not isinstance(p, Tensor):
            raise TypeError(f"expected a Tensor or None for a normalization parameter, got "
                            f"{type(p).__name__}")
        check_device("normalization", x, p)
        if p.dtype != x.dtype:
            if x.dtype.name == "float32":
                raise RetrogradError("mixed dtype (CPU): expect parameter to have scalar type "
                                     "of Float")
            raise RetrogradError("mixed dtype (CPU): all inputs must share same datatype.")


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _wrap(be: Any, data: Any) -> Tensor:
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _needs_grad(*ts: Tensor | None) -> bool:
    return _grad.enabled and any(t is not None and t._requires_grad for t in ts)


def _verify_batch_size(size: Sequence[int]) -> None:
    """PyTorch's refusal to normalize one value per channel in training."""
    n = size[0]
    for d in size[2:]:
        n *= d
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{list(size)}")


def _momentum(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(value).__name__}")
    return float(value)


# ---- batch_norm -------------------------------------------------------------------------------
def _batch_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                momentum: float, eps: float) -> Tensor:
    """The op behind both signatures (checked as ``torch.batch_norm`` checks)."""
    _check_input("batch_norm", x)
    momentum = _momentum(momentum)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if not training and running_mean is None:
        raise RetrogradError("running_mean must be defined in evaluation mode")
    if x.ndim < 2:
        if x.ndim == 1:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        raise RetrogradError("batch_norm: expected an input of at least 2 dimensions (N, C, ...), "
                             "got a 0-d tensor")
    _check_floating(x, "batch_norm")
    _check_params(x, weight, bias, running_mean, running_var)
    channels = x.shape[1]
    for label, p in (("running_mean", running_mean), ("running_var", running_var),
                     ("weight", weight), ("bias", bias)):
        if p is not None and p.numel() != channels:
            raise RetrogradError(f"{label} should contain {channels} elements not {p.numel()}")
    nd = x.ndim
    axes = (0,) + tuple(range(2, nd))
    cshape = (1, channels) + (1,) * (nd - 2)
    be = x.backend
    ops = be.ops
    xd = x._data
    wc = None if weight is None else ops.reshape(weight._data, cshape)
    bc = None if bias is None else ops.reshape(bias._data, cshape)
    if training:
        count = _numel(x.shape) // channels if channels else 0
        if count == 0:
            out = _wrap(be, ops.zeros(tuple(x.shape), xd.dtype))  # nothing to normalize
        else:
            mean, var, rstd = ops.norm_stats(xd, axes, eps)
            out = _wrap(be, ops.norm_affine(xd, mean, rstd, wc, bc))
            if running_mean is not None and running_var is not None:
                # the unbiased variance, as PyTorch keeps it (nan for a single value)
                unbias = count / (count - 1) if count > 1 else math.nan
                write(running_mean, ops.running_update(
                    running_mean._data, ops.reshape(mean, (channels,)), momentum))
                write(running_var, ops.running_update(
                    running_var._data, ops.mul(ops.reshape(var, (channels,)), unbias), momentum))
    else:
        assert running_mean is not None and running_var is not None
        mean = ops.reshape(running_mean._data, cshape)
        rstd = ops.div(1.0, ops.sqrt(ops.add(ops.reshape(running_var._data, cshape), eps)))
        out = _wrap(be, ops.norm_affine(xd, mean, rstd, wc, bc))
    if _needs_grad(x, weight, bias):
        wd = None if weight is None else weight._data
        if training:
            saved: tuple[Any, ...] = (xd, wd, None, None)
            sources: tuple[Any, ...] = (x, weight, None, None)
        else:
            saved = (xd, wd, running_mean._data, running_var._data)  # type: ignore[union-attr]
            sources = (x, weight, running_mean, running_var)
        record(BatchNormBackward, out, (x, weight, bias), saved, sources,
               (bool(training), float(eps), axes, cshape))
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None,  # noqa: A002 - PyTorch's name
               running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Batch normalization of ``input`` (N, C, *) per channel C: ``(x - mean) / sqrt(var +
    eps) * weight + bias`` (``torch.nn.functional.batch_norm``).

    ``training``: normalize with the batch's mean and biased variance over every axis but 1,
    and (where given) update ``running_mean``/``running_var`` in place:
    ``running = (1 - momentum) * running + momentum * batch`` with the batch's unbiased
    variance. Otherwise normalize with the running estimates (which must be given). One
    ``NativeBatchNormBackward0`` node."""
    if training:
        _check_input("batch_norm", input)
        _verify_batch_size(tuple(input.shape))
        if eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@op("batch_norm", method=False)
def _torch_batch_norm(input: Tensor, weight: Tensor | None,  # noqa: A002 - PyTorch's name
                      bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float, eps: float,
                      cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: batch normalization with weight and bias first and every argument
    required (``cudnn_enabled`` is accepted and ignored); see ``nn.functional.batch_norm``."""
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


# ---- layer_norm -------------------------------------------------------------------------------
def _shape_list(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _layer_norm(x: Tensor, normalized_shape: Any, weight: Tensor | None, bias: Tensor | None,
                eps: float) -> Tensor:
    _check_input("layer_norm", x)
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, Sequence) or \
            not all(isinstance(d, int) and not isinstance(d, bool) for d in normalized_shape):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(d) for d in normalized_shape)
    if not shape:
        raise RetrogradError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                             "containing at least one element, but got normalized_shape = []")
    for label, p in (("weight", weight), ("bias", bias)):
        if p is not None and isinstance(p, Tensor) and tuple(p.shape) != shape:
            raise RetrogradError(
                f"Expected {label} to be of same shape as normalized_shape, but got {label} of "
                f"shape {_shape_list(p.shape)} and normalized_shape = {_shape_list(shape)}")
    k = len(shape)
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise RetrogradError(
            f"Given normalized_shape={_shape_list(shape)}, expected input with shape "
            f"[*, {', '.join(str(d) for d in shape)}], but got input of size"
            f"{_shape_list(x.shape)}")
    _check_floating(x, "LayerNormKernelImpl")
    _check_params(x, weight, bias)
    nd = x.ndim
    axes = tuple(range(nd - k, nd))
    be = x.backend
    ops = be.ops
    xd = x._data
    wd = None if weight is None else weight._data
    bd = None if bias is None else bias._data
    mean = rstd = None
    if _numel(x.shape) == 0:
        out = _wrap(be, ops.zeros(tuple(x.shape), xd.dtype))
    else:
        mean, _, rstd = ops.norm_stats(xd, axes, eps)
        out = _wrap(be, ops.norm_affine(xd, mean, rstd, wd, bd))
    if _needs_grad(x, weight, bias):
        record(LayerNormBackward, out, (x, weight, bias), (xd, wd, mean, rstd),
               (x, weight, None, None), (axes, float(eps), shape))
    return out


def layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002 - PyTorch's name
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Layer normalization over the last ``len(normalized_shape)`` axes: ``(x - mean) /
    sqrt(var + eps) * weight + bias`` with the biased variance; ``weight`` and ``bias`` have
    the normalized shape (``NativeLayerNormBackward0``)."""
    return _layer_norm(input, normalized_shape, weight, bias, eps)


@op("layer_norm", method=False)
def _torch_layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
                      weight: Tensor | None = None, bias: Tensor | None = None,
                      eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """``torch.layer_norm``: ``nn.functional.layer_norm`` with PyTorch's trailing
    ``cudnn_enable`` flag (ignored)."""
    return _layer_norm(input, normalized_shape, weight, bias, eps)


# ---- group_norm -------------------------------------------------------------------------------
def _group_norm(x: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
                eps: float) -> Tensor:
    _check_input("group_norm", x)
    if x.ndim < 2:
        raise RetrogradError(f"Expected at least 2 dimensions for input tensor but received "
                             f"{x.ndim}")
    n, channels = x.shape[0], x.shape[1]
    groups = int(num_groups)
    if groups <= 0 or channels % groups:
        raise RetrogradError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {_shape_list(x.shape)} and num_groups={num_groups}")
    for label, p in (("weight", weight), ("bias", bias)):
        if p is not None and isinstance(p, Tensor) and (p.ndim != 1 or p.numel() != channels):
            raise RetrogradError(
                f"Expected {label} to be a vector of size equal to the number of channels in "
                f"input, but got {label} of shape {_shape_list(p.shape)} and input of shape "
                f"{_shape_list(x.shape)}")
    _check_floating(x, "GroupNormKernelImpl")
    _check_params(x, weight, bias)
    nd = x.ndim
    xshape = tuple(x.shape)
    gshape = (n, groups, _numel(xshape) // (n * groups) if n else 0)
    cshape = (1, channels) + (1,) * (nd - 2)
    waxes = (0,) + tuple(range(2, nd))
    be = x.backend
    ops = be.ops
    xd = x._data
    if _numel(xshape) == 0:
        out = _wrap(be, ops.zeros(xshape, xd.dtype))
    else:
        xg = ops.reshape(xd, gshape)
        mean, _, rstd = ops.norm_stats(xg, (2,), eps)
        y = ops.reshape(ops.norm_affine(xg, mean, rstd, None, None), xshape)
        if weight is not None:
            y = ops.mul(y, ops.reshape(weight._data, cshape))
        if bias is not None:
            y = ops.add(y, ops.reshape(bias._data, cshape))
        out = _wrap(be, y)
    if _needs_grad(x, weight, bias):
        wd = None if weight is None else weight._data
        record(GroupNormBackward, out, (x, weight, bias), (xd, wd), (x, weight),
               (float(eps), gshape, xshape, cshape, waxes))
    return out


def group_norm(input: Tensor, num_groups: int,  # noqa: A002 - PyTorch's name
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Group normalization of ``input`` (N, C, *): the C channels split into ``num_groups``
    groups, each sample's group normalized with its mean and biased variance, then the
    per-channel ``weight`` and ``bias`` applied (``NativeGroupNormBackward0``)."""
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    if input.ndim < 2:
        raise RetrogradError(f"Expected at least 2 dimensions for input tensor but received "
                             f"{input.ndim}")
    size = list(input.shape)
    _verify_batch_size([size[0] * size[1] // num_groups, num_groups] + size[2:])
    return _group_norm(input, num_groups, weight, bias, eps)


@op("group_norm", method=False)
def _torch_group_norm(input: Tensor, num_groups: int,  # noqa: A002 - PyTorch's name
                      weight: Tensor | None = None, bias: Tensor | None = None,
                      eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """``torch.group_norm``: group normalization without ``nn.functional``'s one-value check,
    with PyTorch's trailing ``cudnn_enabled`` flag (ignored)."""
    return _group_norm(input, num_groups, weight, bias, eps)
