"""The rest of PyTorch's everyday ``nn.functional`` (normalize, cosine_similarity, ...).

Every function here is a composition of retrograd's differentiable ops, written after the
formula PyTorch itself evaluates (its Python definition or its ATen composite), so values,
gradients and double backward match PyTorch's; the recorded nodes are those of the parts
(``DivBackward0``, ``WhereBackward0`` ...), not PyTorch's single fused node. Kinks follow
PyTorch's derivative formulas (``threshold``: gradient only where ``x > threshold``;
``hardsigmoid``: only strictly inside ``(-3, 3)``; ``prelu``/``celu``: the negative branch
at 0).

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, cast

from ..autograd.node import formula_node
from ..backends.resample_indices import linear_weights, nearest_index, opmath
from ..dtypes import DType
from ..errors import RetrogradError
from ..grad_mode import no_grad
from ..tensor import Tensor
from .declare import op
from .promotion import torch_name

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "softmin", "softsign",
           "tanhshrink", "threshold", "hardsigmoid", "hardswish", "celu", "prelu", "glu",
           "rms_norm", "instance_norm", "dropout1d", "dropout2d", "interpolate",
           "pixel_shuffle", "pixel_unshuffle"]


# ---- helpers ----------------------------------------------------------------------------------
def _tensor(name: str, x: Any, arg: str = "input", position: int = 1) -> Any:
    """``x`` (typed ``Any``: Tensor methods are attached at import), refused unless a
    Tensor."""
    if not isinstance(x, Tensor):
        kind = "NoneType" if x is None else type(x).__name__
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {kind}")
    return cast(Any, x)


def _floating(name: str, kernel: str, x: Any) -> Any:
    """``x``, refused (as PyTorch's CPU kernels refuse) unless floating point."""
    x = _tensor(name, x)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{torch_name(x.dtype)}' ({name} takes a floating point "
                                  "tensor)")
    return x


def _scalar_like(value: float, x: Any) -> Tensor:
    """``value`` as a 0-d tensor of ``x``'s dtype and device (cast as PyTorch casts)."""
    from .creation import full

    return full((), value, dtype=x.dtype, device=x.device)


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``a`` and ``b`` broadcast to (PyTorch's words when they do not)."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q and p != 1 and q != 1:
            raise RetrogradError(f"The size of tensor a ({p}) must match the size of tensor b "
                                 f"({q}) at non-singleton dimension {i}")
        out.append(q if p == 1 else p)
    return tuple(out)


def _in_place(name: str, x: Any, fn: Any) -> Tensor:
    """``fn`` applied to ``x`` in place (recorded as PyTorch records an in-place op: version
    bump, history rebased onto the out-of-place result)."""
    from .inplace import _inplace

    be = x.backend

    def raw(a: Any) -> None:
        be.ops.assign_(a, fn(Tensor(a, be))._data)

    return _inplace(name, x, (), fn, raw, True)


# ---- normalize, cosine_similarity, pairwise_distance ------------------------------------------
@op("normalize", method=False, function=False)
def normalize(input: Tensor, p: float = 2.0, dim: int = 1,  # noqa: A002 - PyTorch's name
              eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim`` (an int or a
    tuple of ints). ``out``: written there (not differentiable, as in PyTorch)."""
    from .arithmetic import clamp_min
    from .elementwise import div

    x = _tensor("normalize", input)
    denom = clamp_min(x.norm(p, dim, keepdim=True), eps).expand_as(x)
    if out is not None:
        return cast(Tensor, div(x, denom, out=out))
    return cast(Tensor, div(x, denom))


def _clamped_norm(x: Any, dim: int, eps: float) -> Any:
    """PyTorch's ``cosine_similarity`` norm: ``||x||`` along ``dim`` (kept), cloned and then
    clamped to ``eps`` under ``no_grad``, so the gradient flows as if unclamped."""
    from .products import vector_norm

    n = cast(Any, vector_norm(x, 2, dim, True)).clone()
    with no_grad():
        n.clamp_min_(eps)
    return n


@op("cosine_similarity", method=False, function=False)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``:
    ``sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)), dim)``. Integer inputs are
    converted to a floating result type; a non-floating common type is refused."""
    from .promotion import result_type

    a = _tensor("cosine_similarity", x1, "x1", 1)
    b = _tensor("cosine_similarity", x2, "x2", 2)
    common = cast(DType, result_type(a, b))
    if not common.is_floating_point:
        raise RetrogradError("expected common dtype to be floating point, yet common dtype is "
                             f"{torch_name(common).capitalize()}")
    if not a.dtype.is_floating_point:
        a = a.to(common)
    if not b.dtype.is_floating_point:
        b = b.to(common)
    shape = _broadcast_shape(tuple(a.shape), tuple(b.shape))
    a = a.expand(shape)
    b = b.expand(shape)
    return cast(Tensor, ((a / _clamped_norm(a, dim, eps)) * (b / _clamped_norm(b, dim, eps)))
                .sum(dim))


@op("pairwise_distance", method=False, function=False)
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` (broadcast) along the last axis
    (``keepdim``: kept, size 1)."""
    a = _tensor("pairwise_distance", x1, "x1", 1)
    b = _tensor("pairwise_distance", x2, "x2", 2)
    innermost = max(a.ndim, b.ndim) - 1
    return cast(Tensor, (a - b + eps).norm(p, innermost, keepdim=keepdim))


# ---- pointwise activations --------------------------------------------------------------------
@op("softmin", method=False, function=False)
def softmin(input: Tensor, dim: int | None = None,  # noqa: A002 - PyTorch's name
            _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-input)`` along ``dim`` (None: PyTorch's deprecated implicit choice, with
    its warning); ``dtype``: the input is cast to it first."""
    from .nn import softmax

    x = _tensor("softmin", input)
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning,
                      stacklevel=_stacklevel)
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return softmax(-x, dim, dtype=dtype)


@op("softsign", method=False, function=False)
def softsign(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """``input / (1 + |input|)`` elementwise."""
    x = _tensor("softsign", input)
    return cast(Tensor, x / (x.abs() + 1))


@op("tanhshrink", method=False, function=False)
def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """``input - tanh(input)`` elementwise."""
    x = _tensor("tanhshrink", input)
    return cast(Tensor, x - x.tanh())


def _threshold_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``threshold_backward``: ``g`` where ``x > threshold``, else 0."""
    (x,) = saved
    return (F.where(F.gt(x, attrs), g, 0.0),)


def _hardsigmoid_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``hardsigmoid_backward``: ``g`` times 1/6 (as a float32 constant, as
    PyTorch's kernel has it) strictly inside ``(-3, 3)``, else 0; under ``create_graph`` the
    gradient's own derivative refuses, as PyTorch's does."""
    (x,) = saved
    inside = F.logical_and(F.gt(x, -3.0), F.lt(x, 3.0))
    gx = F.where(inside, F.mul(g, _ONE_SIXTH_F32), 0.0)
    if isinstance(gx, Tensor):  # under create_graph: PyTorch has no double backward here
        from .not_implemented import record_not_implemented

        refusing = Tensor(gx._data, gx.backend)
        record_not_implemented(refusing, (x, g), "hardsigmoid_backward")
        return (refusing,)
    return (gx,)


_ONE_SIXTH_F32 = 0.1666666716337204  # float(numpy.float32(1) / numpy.float32(6))
ThresholdBackward = formula_node("ThresholdBackward0", _threshold_rule, arity=1)
HardsigmoidBackward = formula_node("HardsigmoidBackward0", _hardsigmoid_rule, arity=1)


def _pointwise(x: Any, data: Any, node: Any, attrs: Any = None) -> Tensor:
    """``data`` (computed from ``x``'s array) as a tensor of ``x``'s dtype, recorded with
    ``node`` (saving ``x``) when ``x`` requires grad."""
    from ..grad_mode import _state as _grad
    from . import promotion
    from ._core import record

    be = x.backend
    data = promotion.fix_result(be, data, x.dtype)
    out = Tensor(data if type(data) is be.array_type else be.asarray(data), be)
    if _grad.enabled and x._requires_grad:
        record(node, out, (x,), (x._data,), (x,), attrs)
    return out


def _threshold(x: Any, threshold: float, value: float) -> Tensor:
    ops = x.backend.ops
    keep = ops.gt(x._data, threshold)
    return _pointwise(x, ops.where(keep, x._data, _scalar_like(value, x)._data),
                      ThresholdBackward, threshold)


@op("threshold", method=False, function=False)
def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002 - PyTorch's name
              inplace: bool = False) -> Tensor:
    """``input`` where ``input > threshold``, else ``value`` (cast to the input's dtype); the
    gradient flows only where ``input > threshold``. ``inplace``: written into ``input``."""
    x = _tensor("threshold", input)
    if inplace:
        return _in_place("threshold_", x, lambda t: _threshold(t, threshold, value))
    return _threshold(x, threshold, value)


def _hardsigmoid(x: Any) -> Tensor:
    ops = x.backend.ops
    return _pointwise(x, ops.div(ops.clip(ops.add(x._data, 3.0), 0.0, 6.0), 6.0),
                      HardsigmoidBackward)


@op("hardsigmoid", method=False, function=False)
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(input + 3, 0), 6) / 6`` elementwise; the gradient is ``1/6`` strictly
    inside ``(-3, 3)`` and 0 elsewhere. ``inplace``: written into ``input``."""
    x = _floating("hardsigmoid", "hardsigmoid_cpu", input)
    if inplace:
        return _in_place("hardsigmoid_", x, _hardsigmoid)
    return _hardsigmoid(x)


def _hardswish(x: Any) -> Tensor:
    from .elementwise import where

    # PyTorch's gradient: 0 up to -3 (inclusive), x / 3 + 1/2 below 3, then 1
    return cast(Tensor, where(x <= -3.0, x * 0.0, where(x < 3.0, x * (x + 3.0) / 6.0, x)))


@op("hardswish", method=False, function=False)
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``input * min(max(input + 3, 0), 6) / 6`` elementwise (gradient ``(2x + 3) / 6`` on
    ``[-3, 3]``, as PyTorch's). ``inplace``: written into ``input``."""
    x = _floating("hardswish", "hardswish_cpu", input)
    if inplace:
        return _in_place("hardswish_", x, _hardswish)
    return _hardswish(x)


def _celu(x: Any, alpha: float) -> Tensor:
    import struct

    from .elementwise import where

    # PyTorch's gradient divides by alpha rounded to float32 (``1.0 / alpha.toFloat()``):
    # the value is alpha * expm1(x / alpha), the derivative that of
    # alpha * expm1(x / float32(alpha))
    below = x.clamp_max(0.0)  # finite where x > 0
    inv = 1.0 / struct.unpack("f", struct.pack("f", alpha))[0]
    slope = below.mul(inv).expm1().mul(alpha)
    exact = below.div(alpha).expm1().mul(alpha)
    return cast(Tensor, where(x > 0, x, slope + (exact - slope).detach()))


@op("celu", method=False, function=False)
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` elementwise (``alpha`` must not
    be 0). ``inplace``: written into ``input``."""
    x = _floating("celu", "elu_cpu", input)
    if alpha == 0:
        raise RetrogradError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return _in_place("celu_", x, lambda t: _celu(t, alpha))
    return _celu(x, alpha)


@op("prelu", method=False, function=False)
def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """``input`` where positive, else ``weight * input``; ``weight`` holds one slope, or one
    per channel (axis 1 of the input)."""
    from .elementwise import where

    x = _tensor("prelu", input)
    w = _tensor("prelu", weight, "weight", 2)
    if w.ndim > 1:
        raise RetrogradError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                             f"ndim = {w.ndim}")
    n = w.numel()
    if n != 1:
        if x.ndim == 0:
            raise RetrogradError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim > 1 else 1
        if channels != n:
            raise RetrogradError(f"Mismatch of parameter numbers and input channel size. "
                                 f"Found parameter numbers = {n} and channel size = "
                                 f"{channels}.")
        w = w.reshape((n,) + (1,) * (x.ndim - 2))
    else:
        w = w.reshape(())
    return cast(Tensor, where(x > 0, x, w * x))


@op("glu", method=False, function=False)
def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002 - PyTorch's name
    """The gated linear unit: ``input`` split in halves ``a``, ``b`` along ``dim``, then
    ``a * sigmoid(b)``."""
    x = _tensor("glu", input)
    if x.ndim == 0:
        raise RetrogradError("glu does not support scalars because halving size must be even")
    from .shape import wrap_dim

    d = wrap_dim("glu", dim, x.ndim)
    if x.shape[d] % 2:
        raise RetrogradError(f"Halving dimension must be even, but dimension {d} is size "
                             f"{x.shape[d]}")
    a, b = x.chunk(2, d)
    return cast(Tensor, a * b.sigmoid())


# ---- rms_norm, instance_norm ------------------------------------------------------------------
def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _normalized_shape(name: str, x: Any, normalized_shape: Any, weight: Any) -> tuple[int, ...]:
    """``normalized_shape`` as a tuple, checked against the input and weight as PyTorch's
    ``layer_norm``/``rms_norm`` check it."""
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, Sequence) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in normalized_shape):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(d) for d in normalized_shape)
    if not shape:
        raise RetrogradError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                             "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RetrogradError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{_shape_text(weight.shape)} and normalized_shape = {_shape_text(shape)}")
    k = len(shape)
    if x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise RetrogradError(
            f"Given normalized_shape={_shape_text(shape)}, expected input with shape "
            f"[*, {', '.join(str(d) for d in shape)}], but got input of size"
            f"{_shape_text(x.shape)}")
    return shape


@op("rms_norm", method=False, function=False)
def rms_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002 - PyTorch's name
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """Root-mean-square normalization over the last ``len(normalized_shape)`` axes:
    ``input * rsqrt(mean(input^2) + eps) * weight``; ``eps`` None: the machine epsilon of
    the input's dtype."""
    x = _floating("rms_norm", "rms_norm", input)
    w = None if weight is None else _tensor("rms_norm", weight, "weight", 3)
    shape = _normalized_shape("rms_norm", x, normalized_shape, w)
    if eps is None:
        eps = float(_machine_epsilon(x.dtype))
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x * (x.pow(2).mean(axes, keepdim=True) + eps).rsqrt()
    return cast(Tensor, y if w is None else y * w)


def _machine_epsilon(dtype: DType) -> float:
    bits = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23}
    return bits.get(dtype.name, 2.0 ** -52)


def _repeat(t: Any, times: int) -> Any:
    return None if t is None else t.repeat(times)


@op("instance_norm", method=False, function=False)
def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance normalization of ``input`` (N, C, *): each sample's channel normalized with
    its own mean and biased variance (``use_input_stats``), then per-channel ``weight`` and
    ``bias``. Given running statistics are updated with the batch's average of the per
    instance statistics; ``use_input_stats=False`` normalizes with them instead. Computed as
    PyTorch does: a ``batch_norm`` of the input seen as ``(1, N * C, *)``."""
    from .normalization import _batch_norm

    x = _tensor("instance_norm", input)
    if use_input_stats:
        spatial = 1
        for d in x.shape[2:]:
            spatial *= d
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {list(x.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RetrogradError("Expected running_mean and running_var to be defined when "
                             "use_input_stats is false")
    if x.ndim < 2:
        raise RetrogradError(f"instance_norm: expected an input of at least 2 dimensions "
                             f"(N, C, ...), got {x.ndim}")
    n, c = x.shape[0], x.shape[1]
    rm = _repeat(running_mean, n)
    rv = _repeat(running_var, n)
    out = _batch_norm(x.reshape((1, n * c) + tuple(x.shape[2:])), _repeat(weight, n),
                      _repeat(bias, n), rm, rv, use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            cast(Any, running_mean).copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            cast(Any, running_var).copy_(rv.view(n, c).mean(0))
    return cast(Tensor, cast(Any, out).view(tuple(x.shape)))


# ---- channel-wise dropout ---------------------------------------------------------------------
def _feature_dropout(x: Any, p: float, training: bool, inplace: bool) -> Tensor:
    """PyTorch's ``feature_dropout``: one Bernoulli draw per (sample, channel), broadcast over
    the rest, scaled by ``1/(1-p)``."""
    from .creation import empty, zeros
    from .elementwise import mul
    from .inplace import div_, mul_
    from .random import bernoulli_

    if not training or p == 0.0 or x.numel() == 0:
        return cast(Tensor, x)
    if x.ndim < 2:
        raise RetrogradError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        noise = zeros((), dtype=x.dtype, device=x.device)
    else:
        noise = empty((x.shape[0], x.shape[1]) + (1,) * (x.ndim - 2), dtype=x.dtype,
                      device=x.device)
        bernoulli_(noise, 1.0 - p)
        div_(noise, 1.0 - p)
    return mul_(x, noise) if inplace else mul(x, noise)


@op("dropout1d", method=False, function=False)
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zeroes whole channels of a (N, C, L) or unbatched (C, L) input with probability ``p``
    (the rest scaled by ``1/(1-p)``) when ``training``. ``inplace``: written into
    ``input``."""
    from .dropout import check_p

    x = _tensor("dropout1d", input)
    q = check_p(p)
    if x.ndim not in (2, 3):
        raise RetrogradError(
            f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if x.ndim == 3:
        return _feature_dropout(x, q, training, inplace)
    if inplace:
        x.unsqueeze_(0)
        _feature_dropout(x, q, training, True)
        return cast(Tensor, x.squeeze_(0))
    return cast(Tensor, cast(Any, _feature_dropout(x.unsqueeze(0), q, training, False))
                .squeeze(0))


@op("dropout2d", method=False, function=False)
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zeroes whole channels of a (N, C, H, W) input with probability ``p`` (the rest scaled
    by ``1/(1-p)``) when ``training``; a 3-d input is taken as (N, C, L) (with PyTorch's
    warning), other ranks warn as deprecated. ``inplace``: written into ``input``."""
    from .dropout import check_p

    x = _tensor("dropout2d", input)
    q = check_p(p)
    if x.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {x.ndim}-D input to dropout2d, which is deprecated and "
            "will result in an error in a future release. To retain the behavior and silence "
            "this warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if x.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(x, q, training, inplace)


# ---- pixel_shuffle, pixel_unshuffle -----------------------------------------------------------
def _factor(name: str, kind: str, x: Any, factor: Any) -> int:
    if x.ndim < 3:
        raise RetrogradError(f"{name} expects input to have at least 3 dimensions, but got "
                             f"input with {x.ndim} dimension(s)")
    if isinstance(factor, bool) or not isinstance(factor, int):
        raise TypeError(f"{name}(): argument '{kind}' (position 2) must be int, not "
                        f"{type(factor).__name__}")
    if factor <= 0:
        raise RetrogradError(f"{name} expects a positive {kind}, but got {factor}")
    return factor


@op("pixel_shuffle", method=False, function=False)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """Rearranges ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)`` (``r`` the
    ``upscale_factor``)."""
    x = _tensor("pixel_shuffle", input)
    r = _factor("pixel_shuffle", "upscale_factor", x, upscale_factor)
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RetrogradError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                             f"divisible by the square of upscale_factor, but "
                             f"input.size(-3)={c} is not divisible by {r * r}")
    k = len(lead)
    y = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    y = y.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return cast(Tensor, y.reshape(tuple(lead) + (c // (r * r), h * r, w * r)))


@op("pixel_unshuffle", method=False, function=False)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)`` (``r`` the
    ``downscale_factor``), the inverse of ``pixel_shuffle``."""
    x = _tensor("pixel_unshuffle", input)
    r = _factor("pixel_unshuffle", "downscale_factor", x, downscale_factor)
    *lead, c, h, w = x.shape
    for label, axis, size in (("height", -2, h), ("width", -1, w)):
        if size % r:
            raise RetrogradError(f"pixel_unshuffle expects {label} to be divisible by "
                                 f"downscale_factor, but input.size({axis})={size} is not "
                                 f"divisible by {r}")
    k = len(lead)
    y = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    y = y.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return cast(Tensor, y.reshape(tuple(lead) + (c * r * r, h // r, w // r)))



# ---- interpolate ------------------------------------------------------------------------------
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _index(x: Any, values: Any) -> Tensor:
    from ..dtypes import int64
    from .creation import tensor

    return tensor(values.tolist(), dtype=int64, device=x.device)


def _along(x: Any, axis: int, values: Any) -> Any:
    """``values`` (one per position of ``axis``) as a tensor of ``x``'s dtype shaped to
    broadcast along ``axis``."""
    from .creation import tensor

    shape = [1] * x.ndim
    shape[axis] = len(values)
    return tensor(values.tolist(), dtype=x.dtype, device=x.device).reshape(tuple(shape))


def _resize_nearest(x: Any, sizes: list[int], scales: list[float | None] | None,
                    exact: bool) -> Any:
    for i, out_size in enumerate(sizes):
        axis = 2 + i
        scale = None if scales is None else scales[i]
        idx = nearest_index(x.shape[axis], out_size, scale, exact)
        x = x.index_select(axis, _index(x, idx))
    return x


def _resize_linear(x: Any, sizes: list[int], scales: list[float | None] | None,
                   align_corners: bool) -> Any:
    ftype = opmath(x)
    for i in reversed(range(len(sizes))):  # innermost axis first, as PyTorch sums
        axis = 2 + i
        scale = None if scales is None else scales[i]
        i0, i1, l0, l1 = linear_weights(x.shape[axis], sizes[i], scale, align_corners, ftype)
        x = x.index_select(axis, _index(x, i0)) * _along(x, axis, l0) + \
            x.index_select(axis, _index(x, i1)) * _along(x, axis, l1)
    return x


def _sizes(x: Any, size: Any, scale_factor: Any, recompute: bool | None,
           area: bool) -> tuple[list[int], list[float | None] | None]:
    """The output's spatial sizes and the scale factors the kernels use (PyTorch's
    ``interpolate`` argument handling)."""
    dim = x.ndim - 2
    spatial = list(x.shape[2:])
    scales: list[float | None] | None = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            sizes = [int(s) for s in size]
        else:
            sizes = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        sizes = [math.floor(float(spatial[i]) * cast(float, scales[i])) for i in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute or area:
        scales = None
    for s in sizes:
        if s <= 0:
            raise RetrogradError(f"Input and output sizes should be greater than 0, but got "
                                 f"input ({', '.join(map(str, spatial))}) and output "
                                 f"({', '.join(map(str, sizes))})")
    return sizes, scales


@op("interpolate", method=False, function=False)
def interpolate(input: Tensor, size: int | Sequence[int] | None = None,  # noqa: A002
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resizes the spatial axes of a (N, C, *spatial) input to ``size`` or by
    ``scale_factor``: ``mode`` ``'nearest'``/``'nearest-exact'`` (3-, 4- or 5-d),
    ``'linear'`` (3-d), ``'bilinear'`` (4-d), ``'trilinear'`` (5-d), with or without
    ``align_corners``, and ``'area'`` (3- or 4-d: adaptive average pooling). Source positions
    are computed as PyTorch's CPU kernels compute them. ``'bicubic'``, ``'lanczos'`` and
    ``antialias`` are not implemented here."""
    x = _tensor("interpolate", input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    known = ("nearest", "nearest-exact", "area", "linear", "bilinear", "trilinear")
    if x.ndim not in (3, 4, 5) or mode not in known + ("bicubic", "lanczos"):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {x.ndim}D) for the modes: {_MODES} (got {mode})")
    sizes, scales = _sizes(x, size, scale_factor, recompute_scale_factor, mode == "area")
    if antialias and not (mode in ("bilinear", "bicubic") and x.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and "
                         "requires a 4-D tensor as input")
    if mode in _LINEAR_RANK and x.ndim != _LINEAR_RANK[mode]:
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_RANK[mode]}D input")
    if mode in ("bicubic", "lanczos") or antialias:
        raise NotImplementedError(f"interpolate: mode {mode!r}"
                                  f"{' with antialias' if antialias else ''} is not "
                                  "implemented in retrograd (nearest, nearest-exact, linear, "
                                  "bilinear, trilinear and area are)")
    if mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

        if x.ndim == 5:
            raise NotImplementedError("interpolate: mode 'area' of a 5-D input (3-d adaptive "
                                      "average pooling) is not implemented in retrograd")
        pool = adaptive_avg_pool1d if x.ndim == 3 else adaptive_avg_pool2d
        return pool(x, sizes[0] if x.ndim == 3 else tuple(sizes))
    if mode in ("nearest", "nearest-exact"):
        return cast(Tensor, _resize_nearest(x, sizes, scales, mode == "nearest-exact"))
    return cast(Tensor, _resize_linear(x, sizes, scales, bool(align_corners)))
