"""Losses: ``nll_loss``, ``binary_cross_entropy`` (``_with_logits``), ``l1_loss``,
``smooth_l1_loss``, ``huber_loss``, ``kl_div``.

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports.
``nll_loss``, the binary cross entropies, ``smooth_l1_loss`` and ``huber_loss`` record one
node each with PyTorch's name (``NllLossBackward0``/``NllLoss2DBackward0``,
``BinaryCrossEntropyBackward0``, ``BinaryCrossEntropyWithLogitsBackward0``,
``SmoothL1LossBackward0``, ``HuberLossBackward0``), whose rule is written against ``F`` so that
it differentiates again under ``create_graph``; ``l1_loss`` and ``kl_div`` are compositions,
as in PyTorch (``MeanBackward0`` over ``AbsBackward0`` over ``SubBackward0``; ``xlogy``)."""

from __future__ import annotations

import warnings
from typing import Any

from ..autograd.node import formula_node
from ..dtypes import int64
from ..errors import DTypeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record
from .declare import GRAPH_KERNELS, op
from .promotion import torch_name

__all__ = ["nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss",
           "smooth_l1_loss", "huber_loss", "kl_div"]

_REDUCTIONS = ("none", "mean", "sum")


# -- shared checks ------------------------------------------------------------------------------
def resolve_reduction(reduction: Any, size_average: Any = None, reduce: Any = None) -> str:
    """``reduction`` checked as PyTorch's ``_Reduction.get_enum`` checks it (ValueError "... is
    not a valid value for reduction"); the legacy ``size_average``/``reduce`` flags, when
    given, replace it (with PyTorch's deprecation UserWarning)."""
    if size_average is not None or reduce is not None:
        sa = True if size_average is None else size_average
        rd = True if reduce is None else reduce
        reduction = "mean" if sa and rd else "sum" if rd else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return str(reduction)


def _tensors(name: str, **args: Any) -> None:
    """PyTorch's TypeError for an argument that is not a Tensor."""
    for pos, (arg, v) in enumerate(args.items(), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


def _no_grad_for(fn: str, **args: Any) -> None:
    """PyTorch's refusal of a gradient for an argument its derivative formula lacks."""
    if not _grad.enabled:
        return
    for arg, v in args.items():
        if isinstance(v, Tensor) and v._requires_grad:
            raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                               f"argument '{arg}'. This input cannot have requires_grad True.")


def _floating(name: str, kernel: str, *xs: Tensor) -> None:
    """PyTorch's NotImplementedError for a loss kernel given integer or bool values."""
    for x in xs:
        if not x.dtype.is_floating_point:
            raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                      f"'{torch_name(x.dtype)}'")


def _size_warning(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _broadcast(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``torch.broadcast_tensors(input, target)``, then both in their promoted dtype (a
    recorded cast where one differs)."""
    from .elementwise import broadcast_mismatch, broadcast_shape
    from .promotion import operands_result_type
    from .shape import expand_to

    if input.shape != target.shape:
        err = broadcast_mismatch(name, input.shape, target.shape)
        if err is not None:
            raise err
        shape = broadcast_shape(input.shape, target.shape)
        if input.shape != shape:
            input = expand_to(input, shape)
        if target.shape != shape:
            target = expand_to(target, shape)
    r = operands_result_type(input, target)
    if input.dtype is not r:
        input = input.to(r)
    if target.dtype is not r:
        target = target.to(r)
    return input, target


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _reduce_data(be: Any, data: Any, reduction: str) -> Tensor:
    F = be.ops
    if reduction == "mean":
        data = F.mean(data, tuple(range(data.ndim)) if data.ndim else None, False)
    elif reduction == "sum":
        data = F.sum(data, None, False)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _scale(F: Any, g: Any, reduction: str, n: int) -> Any:
    """The incoming gradient of each element of the unreduced loss: ``g / n`` for the mean."""
    return F.div(g, float(n)) if reduction == "mean" else g


# -- PyTorch's scalar arithmetic nodes (C++ ``mul``/``div`` by a Scalar) -------------------------
MulScalarBackward = formula_node("MulBackward1", lambda F, g, s, a, n: (F.mul(g, a),), arity=1)
DivScalarBackward = formula_node("DivBackward1", lambda F, g, s, a, n: (F.div(g, a),), arity=1)


def scalar_op(x: Tensor, k: float, divide: bool) -> Tensor:
    """``x * k`` or ``x / k`` for a Python number ``k``, recorded as PyTorch records its C++
    losses' scalar arithmetic (``MulBackward1``/``DivBackward1``); ``x`` floating."""
    be = x.backend
    data = be.ops.div(x._data, float(k)) if divide else be.ops.mul(x._data, float(k))
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(DivScalarBackward if divide else MulScalarBackward, out, (x,), (), (),
               float(k))
    return out


# -- nll_loss -----------------------------------------------------------------------------------
def _nll_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``-weight[target] * g`` at each kept target's class (``/ total weight`` for the mean):
    linear in ``g``, so its own derivative is the same map (and zero for the input)."""
    x, target, weight, divisor = saved
    ignore_index, reduction = attrs
    coef = F.nll_loss_weights(target, weight, ignore_index, x)
    if reduction == "mean":
        s = F.div(g, divisor)
    elif reduction == "none" and x.ndim >= 2:
        s = F.unsqueeze(g, 1)
    else:
        s = g
    return (F.mul(coef, s),)


NllLossBackward = formula_node("NllLossBackward0", _nll_rule, arity=1)
NllLoss2DBackward = formula_node("NllLoss2DBackward0", _nll_rule, arity=1)


def _graph_nll_loss_weights(target: Any, weight: Any, ignore_index: int, like: Tensor) -> Tensor:
    """``nll_loss_weights`` on tensors, for the rule under ``create_graph``: a constant."""
    be = like.backend
    t = target._data if isinstance(target, Tensor) else target
    w = weight._data if isinstance(weight, Tensor) else weight
    return Tensor(be.ops.nll_loss_weights(t, w, ignore_index, like._data), be)


def _sizes(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _check_target_dtype(target: Tensor) -> None:
    if target.dtype is not int64:
        raise DTypeError("expected target dtype to be Long or Byte, but got "
                         f"{torch_name(target.dtype)}")


def _check_weight(x: Tensor, weight: Any, n_classes: int, prefix: str = "") -> None:
    if weight is None:
        return
    if not isinstance(weight, Tensor):
        raise TypeError(f"weight must be a Tensor or None, not {type(weight).__name__}")
    if weight.ndim != 1 or weight.shape[0] != n_classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n_classes} "
                           "classes or no classes but got weight tensor of shape: "
                           f"{_sizes(weight.shape)}")


def _nll(x: Tensor, target: Tensor, weight: Any, ignore_index: int, reduction: str,
         two_d: bool) -> Tensor:
    """PyTorch's ``nll_loss`` (``(N, C)`` or ``(C,)`` input) or ``nll_loss2d`` (``(N, C, H,
    W)``), checked in its order and with its words."""
    if two_d:
        if target.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        if x.shape[0] != target.shape[0] or x.shape[2:] != target.shape[1:]:
            raise RuntimeError(f"size mismatch (got input: {_sizes(x.shape)} , target: "
                               f"{_sizes(target.shape)}")
        n_classes = x.shape[1]
    else:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        no_batch = x.ndim == 1 and (target.ndim == 0 or target.shape == (1,))
        if not (no_batch or (target.ndim and x.shape[0] == target.shape[0])):
            raise RuntimeError(f"size mismatch (got input: {_sizes(x.shape)}, target: "
                               f"{_sizes(target.shape)})")
        n_classes = x.shape[-1]
    _check_weight(x, weight, n_classes)
    _floating("nll_loss", "nll_loss2d_forward_out_frame" if two_d else
              "nll_loss_out_frame", x)
    _check_target_dtype(target)
    check_device("nll_loss", x, target)
    fn = "nll_loss2d_forward" if two_d else "nll_loss_forward"
    _no_grad_for(fn, weight=weight)
    be = x.backend
    wd = None
    if weight is not None:
        if weight.dtype is not x.dtype:
            raise DTypeError(f"expected scalar type {torch_name(x.dtype)} but found "
                             f"{torch_name(weight.dtype)}")
        check_device("nll_loss", x, weight)
        wd = weight._data
    be.ops.nll_loss_check_targets(target._data, n_classes, ignore_index)
    loss, divisor = be.ops.nll_loss_forward(x._data, target._data, wd, ignore_index, reduction)
    if type(loss) is not be.array_type:
        loss = be.asarray(loss)
    out = Tensor(loss, be)
    if _grad.enabled and x._requires_grad:
        record(NllLoss2DBackward if two_d else NllLossBackward, out, (x,),
               (x._data, target._data, wd, divisor),
               (x, target, weight, None),
               (ignore_index, reduction))
    return out


def nll_loss_nd(x: Tensor, target: Tensor, weight: Any, ignore_index: int,
                reduction: str) -> Tensor:
    """PyTorch's ``nll_loss_nd``: ``(C,)``/``(N, C)`` inputs take ``nll_loss``, ``(N, C, H,
    W)`` ``nll_loss2d``, and other ``(N, C, d1, ...)`` inputs ``nll_loss2d`` on an ``(N, C,
    1, -1)`` view (the result viewed back for ``"none"``)."""
    from .shape import reshape

    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim != 1 and (target.ndim == 0 or x.shape[0] != target.shape[0]):
        got = target.shape[0] if target.ndim else 1
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({got}).")
    if x.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if x.ndim <= 2:
        return _nll(x, target, weight, ignore_index, reduction, False)
    if x.ndim == 4:
        return _nll(x, target, weight, ignore_index, reduction, True)
    n, c = x.shape[0], x.shape[1]
    out_size = (n, *x.shape[2:])
    if target.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {_sizes(out_size)}, got "
                           f"{_sizes(target.shape)}")
    empty = _numel(x.shape) == 0
    x4 = reshape(x, (n, c, 0, 0) if empty else (n, c, 1, -1))
    t3 = reshape(target, (n, 0, 0) if _numel(target.shape) == 0 else (n, 1, -1))
    out = _nll(x4, t3, weight, ignore_index, reduction, True)
    return out if reduction != "none" else reshape(out, out_size)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of class indices: ``-input[i, target[i]] *
    weight[target[i]]`` per sample, 0 where ``target`` is ``ignore_index``; the mean divides
    by the total weight of the kept targets. ``input`` is ``(N, C)``, ``(C,)`` with a 0-d
    target, or ``(N, C, d1, ...)`` with an ``(N, d1, ...)`` target. A target outside ``[0,
    C)`` raises ``IndexError("Target 5 is out of bounds.")``. ``size_average``/``reduce``:
    PyTorch's deprecated flags."""
    reduction = resolve_reduction(reduction, size_average, reduce)
    _tensors("nll_loss_nd", input=input, target=target)
    return nll_loss_nd(input, target, weight, ignore_index, reduction)


# -- binary_cross_entropy -----------------------------------------------------------------------
_EPS = 9.999999960041972e-13  # PyTorch's EPSILON, 1e-12 as a float32


def _bce_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: ``g * (x - t) / max((1 - x) * x, 1e-12)`` for the input, ``-g *
    logit(x)`` for the target, both times the weight (``/ numel`` for the mean)."""
    x, t, w = saved
    reduction, n = attrs
    s = _scale(F, g, reduction, n)
    if w is not None:
        s = F.mul(s, w)
    gx = gt = None
    if needs[0]:
        d = F.mul(F.sub(1.0, x), x)
        gx = F.mul(F.div(F.sub(x, t), F.where(F.lt(d, _EPS), _EPS, d)), s)
    if needs[1]:
        gt = F.mul(F.sub(F.log(F.sub(1.0, x)), F.log(x)), s)
    return gx, gt


BinaryCrossEntropyBackward = formula_node("BinaryCrossEntropyBackward0", _bce_rule, arity=2)


def _expand_weight(weight: Any, shape: tuple[int, ...]) -> Any:
    from .elementwise import broadcast_mismatch, broadcast_shape
    from .shape import expand_to

    if weight is None or weight.shape == shape:
        return weight
    err = broadcast_mismatch("binary_cross_entropy", shape, weight.shape)
    if err is not None:
        raise err
    if broadcast_shape(shape, weight.shape) != shape:
        raise RuntimeError(f"output with shape {_sizes(shape)} doesn't match the broadcast "
                           f"shape {_sizes(broadcast_shape(shape, weight.shape))}")
    return expand_to(weight, shape)


def _same_dtype(input: Tensor, *others: Any) -> None:  # noqa: A002
    for o in others:
        if o is not None and o.dtype is not input.dtype:
            raise RuntimeError(f"Found dtype {torch_name(o.dtype)} but expected "
                               f"{torch_name(input.dtype)}")


def binary_cross_entropy(input: Tensor, target: Tensor,  # noqa: A002
                         weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``-weight * (target * log(input) + (1 - target) * log(1 - input))``, each log clamped
    at -100 as PyTorch does, reduced (one ``BinaryCrossEntropyBackward0``). ``input`` holds
    probabilities in ``[0, 1]`` (RuntimeError otherwise); ``target`` has its shape;
    ``weight`` broadcasts to it."""
    reduction = resolve_reduction(reduction, size_average, reduce)
    _tensors("binary_cross_entropy", input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    _no_grad_for("binary_cross_entropy", weight=weight)
    weight = _expand_weight(weight, input.shape)
    _floating("binary_cross_entropy", "binary_cross_entropy", input)
    _same_dtype(input, target, weight)
    check_device("binary_cross_entropy", input, target)
    be = input.backend
    data = be.ops.binary_cross_entropy_forward(input._data, target._data)
    if weight is not None:
        data = be.ops.mul(data, weight._data)
    out = _reduce_data(be, data, reduction)
    if _grad.enabled and (input._requires_grad or target._requires_grad):
        record(BinaryCrossEntropyBackward, out, (input, target),
               (input._data, target._data, None if weight is None else weight._data),
               (input, target, weight), (reduction, _numel(input.shape)))
    return out


def _bce_logits_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's: ``((pw * t + 1 - t) * sigmoid(x) - pw * t) * g`` for the input
    (``sigmoid(x) - t`` without ``pos_weight``), ``(log_sigmoid(-x) - pw * log_sigmoid(x)) *
    g`` for the target (``-x``), both times the weight (``/ numel`` for the mean)."""
    x, t, w, pw = saved
    reduction, n = attrs
    s = _scale(F, g, reduction, n)
    if w is not None:
        s = F.mul(s, w)
    gx = gt = None
    if needs[0]:
        if pw is None:
            gx = F.mul(F.sub(F.sigmoid(x), t), s)
        else:
            pt = F.mul(pw, t)
            gx = F.mul(F.sub(F.mul(F.add(F.sub(pt, t), 1.0), F.sigmoid(x)), pt), s)
    if needs[1]:
        if pw is None:
            gt = F.mul(F.neg(x), s)
        else:
            gt = F.mul(F.sub(F.bce_log_sigmoid(F.neg(x)), F.mul(F.bce_log_sigmoid(x), pw)), s)
    return gx, gt


BinaryCrossEntropyWithLogitsBackward = formula_node(
    "BinaryCrossEntropyWithLogitsBackward0", _bce_logits_rule, arity=2)


def _bce_with_logits(input: Tensor, target: Tensor, weight: Any, pos_weight: Any,  # noqa: A002
                     reduction: str) -> Tensor:
    _no_grad_for("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    weight = _expand_weight(weight, input.shape)
    _floating("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits", input)
    check_device("binary_cross_entropy_with_logits", input, target)
    be = input.backend
    F = be.ops
    pwd = None
    if pos_weight is not None:
        from .elementwise import broadcast_mismatch

        err = broadcast_mismatch("binary_cross_entropy_with_logits", input.shape,
                                 pos_weight.shape)
        if err is not None:
            raise err
        pwd = pos_weight._data
    data = F.binary_cross_entropy_with_logits_forward(input._data, target._data, pwd)
    if weight is not None:
        data = F.mul(data, weight._data)
    if tuple(data.shape) != input.shape:
        raise RuntimeError(f"output with shape {_sizes(input.shape)} doesn't match the "
                           f"broadcast shape {_sizes(tuple(data.shape))}")
    out = _reduce_data(be, data, reduction)
    if _grad.enabled and (input._requires_grad or target._requires_grad):
        record(BinaryCrossEntropyWithLogitsBackward, out, (input, target),
               (input._data, target._data, None if weight is None else weight._data, pwd),
               (input, target, weight, pos_weight), (reduction, _numel(input.shape)))
    return out


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed from the logits without
    overflow: ``(1 - t) * x - (1 + (pos_weight - 1) * t) * log_sigmoid(x)``, times
    ``weight``, reduced (one ``BinaryCrossEntropyWithLogitsBackward0``). ``pos_weight``
    weighs the positive term, broadcast along the last (class) dimension."""
    reduction = resolve_reduction(reduction, size_average, reduce)
    _tensors("binary_cross_entropy_with_logits", input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return _bce_with_logits(input, target, weight, pos_weight, reduction)


_ENUM = {0: "none", 1: "mean", 2: "sum"}


def _enum(reduction: Any) -> str:
    if isinstance(reduction, bool) or reduction not in _ENUM:
        raise RuntimeError(f"{reduction} is not a valid value for reduction")
    return _ENUM[reduction]


@op("binary_cross_entropy_with_logits", method=False)
def _binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                      weight: Tensor | None = None,
                                      pos_weight: Tensor | None = None,
                                      reduction: int = 1) -> Tensor:
    """``torch.binary_cross_entropy_with_logits``: the functional form with PyTorch's
    top-level signature (``reduction`` as its enum: 0 none, 1 mean, 2 sum)."""
    _tensors("binary_cross_entropy_with_logits", input=input, target=target)
    return _bce_with_logits(input, target, weight, pos_weight, _enum(reduction))


# -- l1, smooth_l1, huber -----------------------------------------------------------------------
def _weighted(name: str, loss: Tensor, weight: Tensor, shape: tuple[int, ...],
              reduction: str, mean_by_weight: bool) -> Tensor:
    """``loss * weight`` reduced as PyTorch's weighted l1/huber (the l1 mean divides by the
    sum of the weights, huber's by the element count)."""
    from .elementwise import div, mul
    from .reduction import mean, sum

    if not isinstance(weight, Tensor):
        raise TypeError(f"{name}(): weight must be a Tensor, not {type(weight).__name__}")
    if weight.shape != shape:
        raise ValueError("Weights and input must have the same size.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         "'mean', 'sum'.")
    out = mul(loss, weight)
    if reduction == "none":
        return out
    if reduction == "sum":
        return sum(out)
    return div(sum(out), sum(weight)) if mean_by_weight else mean(out)


def _l1(input: Tensor, target: Tensor, reduction: str) -> Tensor:  # noqa: A002
    from .elementwise import abs, sub
    from .reduction import mean, sum

    out = abs(sub(input, target))
    if reduction == "mean":
        return mean(out)
    return sum(out) if reduction == "sum" else out


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """``|input - target|``, reduced: PyTorch's composition (``MeanBackward0`` over
    ``AbsBackward0`` over ``SubBackward0``). A target of another shape warns and broadcasts.
    ``weight`` (the input's shape) weighs each element; its mean divides by the weights'
    sum."""
    _tensors("l1_loss", input=input, target=target)
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = resolve_reduction(reduction, size_average, reduce)
    x, t = _broadcast("l1_loss", input, target)
    if weight is None:
        reduction = resolve_reduction(reduction)
    else:
        from .elementwise import abs, sub

        return _weighted("l1_loss", abs(sub(x, t)), weight, input.shape, reduction, True)
    return _l1(x, t, reduction)


def _piecewise_rule(huber: bool) -> Any:
    def rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
        x, t = saved
        reduction, n, k = attrs
        s = _scale(F, g, reduction, n)
        d = F.sub(x, t)
        inside = F.lt(F.abs(d), k)
        if huber:  # d inside, delta * sign(d) outside
            slope = F.where(inside, d, F.mul(F.sign(d), k))
        else:  # d / beta inside, sign(d) outside
            slope = F.where(inside, F.div(d, k), F.sign(d))
        gx = F.mul(slope, s) if needs[0] else None
        gt = F.mul(F.neg(slope), s) if needs[1] else None
        return gx, gt

    rule.__doc__ = ("PyTorch's " + ("huber" if huber else "smooth_l1") + "_loss_backward: the "
                    "loss's slope in ``d = x - t``, times ``g`` (``/ numel`` for the mean); "
                    "the target's is its negative.")
    return rule


SmoothL1LossBackward = formula_node("SmoothL1LossBackward0", _piecewise_rule(False), arity=2)
HuberLossBackward = formula_node("HuberLossBackward0", _piecewise_rule(True), arity=2)


def _piecewise(name: str, cls: Any, x: Tensor, t: Tensor, k: float, reduction: str) -> Tensor:
    _floating(name, name.replace("_loss", "_cpu"), x)
    check_device(name, x, t)
    be = x.backend
    data = getattr(be.ops, f"{name}_forward")(x._data, t._data, float(k))
    out = _reduce_data(be, data, reduction)
    if _grad.enabled and (x._requires_grad or t._requires_grad):
        record(cls, out, (x, t), (x._data, t._data), (x, t),
               (reduction, _numel(x.shape), float(k)))
    return out


def smooth_l1_loss(input: Tensor, target: Tensor,  # noqa: A002
                   size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input -
    target``), reduced (``SmoothL1LossBackward0``); ``beta`` 0 is ``l1_loss``, as in
    PyTorch. A target of another shape warns and broadcasts."""
    _tensors("smooth_l1_loss", input=input, target=target)
    _size_warning(input, target)
    reduction = resolve_reduction(reduction, size_average, reduce)
    x, t = _broadcast("smooth_l1_loss", input, target)
    if beta == 0.0:
        return _l1(x, t, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _piecewise("smooth_l1_loss", SmoothL1LossBackward, x, t, beta, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)`` (``d =
    input - target``), reduced (``HuberLossBackward0``). ``weight`` (the input's shape) weighs
    each element, as PyTorch's composition (its mean divides by the element count)."""
    _tensors("huber_loss", input=input, target=target)
    _size_warning(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t = _broadcast("huber_loss", input, target)
    if weight is not None:
        loss = _piecewise("huber_loss", HuberLossBackward, x, t, delta, "none")
        return _weighted("huber_loss", loss, weight, input.shape, reduction, False)
    reduction = resolve_reduction(reduction)
    return _piecewise("huber_loss", HuberLossBackward, x, t, delta, reduction)


# -- kl_div -------------------------------------------------------------------------------------
def _kl_div(input: Tensor, target: Tensor, reduction: str, log_target: bool) -> Tensor:  # noqa: A002
    """PyTorch's composition: ``exp(t) * (t - x)`` for log targets, else ``xlogy(t, t) - t *
    x``; then the mean or sum."""
    from .arithmetic import xlogy
    from .elementwise import exp, mul, sub
    from .reduction import mean, sum

    if log_target:
        out = mul(exp(target), sub(target, input))
    else:
        out = sub(xlogy(target, target), mul(target, input))
    if reduction == "mean":
        return mean(out)
    return sum(out) if reduction == "sum" else out


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence of ``target`` from the log-probabilities ``input``:
    ``target * (log(target) - input)`` (``target`` as log-probabilities when
    ``log_target``), reduced; ``"batchmean"`` divides the sum by the batch size, and
    ``"mean"`` warns as PyTorch does (it divides by every element)."""
    _tensors("kl_div", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction_enum = resolve_reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        reduction_enum = "sum" if reduction == "batchmean" else resolve_reduction(reduction)
    out = _kl_div(input, target, reduction_enum, log_target)
    if reduction == "batchmean" and input.ndim != 0:
        from .elementwise import div

        out = div(out, input.shape[0])
    return out


@op("kl_div", method=False)
def _kl_div_top(input: Tensor, target: Tensor, reduction: int = 1, *,  # noqa: A002
                log_target: bool = False) -> Tensor:
    """``torch.kl_div``: the pointwise divergence with ``reduction`` as PyTorch's enum (0 none,
    1 mean, 2 sum)."""
    _tensors("kl_div", input=input, target=target)
    return _kl_div(input, target, _enum(reduction), log_target)


def _graph_log_sigmoid(x: Tensor) -> Tensor:
    """``log_sigmoid`` on tensors (recorded), for the rule under ``create_graph``."""
    from .activations import logsigmoid

    return logsigmoid(x)


GRAPH_KERNELS.update({"nll_loss_weights": _graph_nll_loss_weights,
                      "bce_log_sigmoid": _graph_log_sigmoid})

# the differentiable functional forms without a torch.<name>: registry rows of their own
for _name in ("nll_loss", "binary_cross_entropy", "l1_loss", "smooth_l1_loss", "huber_loss"):
    op(_name, method=False, function=False)(globals()[_name])
