"""Pooling: ``max_pool2d`` (indices, ``ceil_mode``, dilation), ``avg_pool2d``,
``adaptive_avg_pool2d`` and their 1-d forms (kernels in ``backends/kernels_conv.py``).

Each 2-d op records one node with PyTorch's name (``MaxPool2DWithIndicesBackward0``,
``AvgPool2DBackward0``, ``AdaptiveAvgPool2DBackward0``) whose rule is written against ``F``;
under ``create_graph`` the backward kernels are recorded ops themselves (PyTorch's
``...BackwardBackward0`` names), whose rules are the forward maps again, so gradients of any
order work. The 1-d forms run the 2-d ones on a unit height, as PyTorch does
(``SqueezeBackward1``).

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..backends.kernels_conv import out_size
from ..dtypes import int32, int64
from ..errors import RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .declare import GRAPH_KERNELS, op
from .promotion import torch_name

__all__ = ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d"]


def _new(be: Any, data: Any) -> Tensor:
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _raw(t: Any) -> Any:
    return t._data if isinstance(t, Tensor) else t


def _tracks(x: Tensor) -> bool:
    return _grad.enabled and x._requires_grad


# -- derivative rules and nodes --------------------------------------------------------------
def _max_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    arg, x = saved
    sp, k, s, p, d = attrs
    return (F.max_pool_nd_backward(g, arg, sp, k, s, p, d, x),)


def _max_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    (arg,) = saved
    sp, k, s, p, d = attrs
    return (F.max_pool_nd_select(g, arg, k, s, p, d), None)


def _avg_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    sp, k, s, p, o, cip, div = attrs
    return (F.avg_pool_nd_backward(g, sp, k, s, p, cip, div, saved[0] if saved else None),)


def _avg_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    sp, k, s, p, o, cip, div = attrs
    return (F.avg_pool_nd(g, k, s, p, o, cip, div), None)


def _adaptive_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    sp, o = attrs
    return (F.adaptive_avg_pool_nd_backward(g, sp, saved[0] if saved else None),)


def _adaptive_adjoint_rule(F: Any, g: Any, saved: Any, attrs: Any,
                           needs: Any) -> tuple[Any, ...]:
    sp, o = attrs
    return (F.adaptive_avg_pool_nd(g, o), None)


MaxPool2DWithIndicesBackward0 = formula_node("MaxPool2DWithIndicesBackward0", _max_rule, arity=1)
AvgPool2DBackward0 = formula_node("AvgPool2DBackward0", _avg_rule, arity=1)
AdaptiveAvgPool2DBackward0 = formula_node("AdaptiveAvgPool2DBackward0", _adaptive_rule, arity=1)
# the backward kernels' nodes under create_graph: edges grad_output and self (whose gradient
# is zero), as PyTorch's
_MaxBackwardBackward = formula_node("MaxPool2DWithIndicesBackwardBackward0", _max_adjoint_rule,
                                    arity=2)
_AvgBackwardBackward = formula_node("AvgPool2DBackwardBackward0", _avg_adjoint_rule, arity=2)
_AdaptiveBackwardBackward = formula_node("AdaptiveAvgPool2DBackwardBackward0",
                                         _adaptive_adjoint_rule, arity=2)


def _with_self(g: Tensor, like: Any) -> tuple[Tensor, ...]:
    return (g, like) if isinstance(like, Tensor) else (g,)


# -- the recorded versions of the kernels (GRAPH_F's extras) ---------------------------------
def _graph_max_backward(g: Tensor, arg: Any, sp: Any, k: Any, s: Any, p: Any, d: Any,
                        like: Any = None) -> Tensor:
    be = g.backend
    a = _raw(arg)
    y = _new(be, be.ops.max_pool_nd_backward(g._data, a, sp, k, s, p, d))
    inputs = _with_self(g, like)
    if _grad.enabled and any(t._requires_grad for t in inputs):
        record(_MaxBackwardBackward, y, inputs, (a,), (None,), (sp, k, s, p, d))
    return y


def _graph_max_select(h: Tensor, arg: Any, k: Any, s: Any, p: Any, d: Any) -> Tensor:
    be = h.backend
    a = _raw(arg)
    y = _new(be, be.ops.max_pool_nd_select(h._data, a, k, s, p, d))
    if _tracks(h):
        sp = tuple(h.shape[h.ndim - len(k):])
        record(MaxPool2DWithIndicesBackward0, y, (h,), (a, None), (None, None),
               (sp, k, s, p, d))
    return y


def _graph_avg(x: Tensor, k: Any, s: Any, p: Any, o: Any, cip: bool, div: Any) -> Tensor:
    be = x.backend
    y = _new(be, be.ops.avg_pool_nd(x._data, k, s, p, o, cip, div))
    if _tracks(x):
        sp = tuple(x.shape[x.ndim - len(k):])
        record(AvgPool2DBackward0, y, (x,), (), (), (sp, k, s, p, tuple(o), cip, div))
    return y


def _graph_avg_backward(g: Tensor, sp: Any, k: Any, s: Any, p: Any, cip: bool,
                        div: Any, like: Any = None) -> Tensor:
    be = g.backend
    y = _new(be, be.ops.avg_pool_nd_backward(g._data, sp, k, s, p, cip, div))
    inputs = _with_self(g, like)
    if _grad.enabled and any(t._requires_grad for t in inputs):
        o = tuple(g.shape[g.ndim - len(k):])
        record(_AvgBackwardBackward, y, inputs, (), (), (tuple(sp), k, s, p, o, cip, div))
    return y


def _graph_adaptive(x: Tensor, o: Any) -> Tensor:
    be = x.backend
    y = _new(be, be.ops.adaptive_avg_pool_nd(x._data, o))
    if _tracks(x):
        sp = tuple(x.shape[x.ndim - len(o):])
        record(AdaptiveAvgPool2DBackward0, y, (x,), (), (), (sp, tuple(o)))
    return y


def _graph_adaptive_backward(g: Tensor, sp: Any, like: Any = None) -> Tensor:
    be = g.backend
    y = _new(be, be.ops.adaptive_avg_pool_nd_backward(g._data, sp))
    inputs = _with_self(g, like)
    if _grad.enabled and any(t._requires_grad for t in inputs):
        o = tuple(g.shape[g.ndim - len(sp):])
        record(_AdaptiveBackwardBackward, y, inputs, (), (), (tuple(sp), o))
    return y


GRAPH_KERNELS.update({
    "max_pool_nd_backward": _graph_max_backward, "max_pool_nd_select": _graph_max_select,
    "avg_pool_nd": _graph_avg, "avg_pool_nd_backward": _graph_avg_backward,
    "adaptive_avg_pool_nd": _graph_adaptive,
    "adaptive_avg_pool_nd_backward": _graph_adaptive_backward,
})


# -- argument checks -------------------------------------------------------------------------
def _pair(name: str, what: str, v: Any, n: int, default: Any = None) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``n`` ints as ``n`` ints; None or ``[]``: ``default``."""
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        if default is None:
            raise RetrogradError(f"{name}: {what} must either be a single int, or a tuple of "
                                 f"{'two' if n == 2 else n} ints")
        return tuple(default)
    if isinstance(v, (list, tuple)):
        vals = tuple(int(i) for i in v)
        if len(vals) == 1:
            vals = vals * n
    else:
        vals = (int(v),) * n
    if len(vals) != n:
        many = "two" if n == 2 else str(n)
        raise RetrogradError(f"{name}: {what} must either be a single int, or a tuple of "
                             f"{many} ints")
    return vals


def _check_input(x: Any, fname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _check_planes(x: Tensor) -> None:
    """A 3-d or 4-d input whose dimensions (but a batch's) are non-empty (PyTorch's errors)."""
    if x.ndim not in (3, 4):
        raise ShapeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(n == 0 for n in x.shape[x.ndim - 3:]):
        raise ShapeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                         f"for input, but got:{list(x.shape)}")


def _check_dtype(fname: str, x: Tensor, integers: tuple[Any, ...]) -> None:
    """PyTorch's error for a dtype the pooling has no kernel for (floats and ``integers``)."""
    if not (x.dtype.is_floating_point or x.dtype in integers):
        raise NotImplementedError(f'"{fname}" not implemented for \'{torch_name(x.dtype)}\'')


def _window_args(fname: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, ceil_mode: bool) -> tuple[Any, ...]:
    """Checked ``(k, s, p, d, o)`` of a 2-d pooling of ``x`` (3-d or 4-d), PyTorch's errors."""
    k = _pair(fname, "kernel_size", kernel_size, 2)
    s = _pair(fname, "stride", stride, 2, default=k)
    p = _pair(fname, "padding", padding, 2)
    d = _pair(fname, "dilation", dilation, 2)
    if any(v == 0 for v in s):
        raise RetrogradError("stride should not be zero")
    if any(v <= 0 for v in k):
        raise RetrogradError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                             f"kW: {k[1]}")
    if any(v < 0 for v in s):
        raise RetrogradError(f"stride should be greater than zero, but got dH: {s[0]} "
                             f"dW: {s[1]}")
    if any(v <= 0 for v in d):
        raise RetrogradError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                             f"dilationW: {d[1]}")
    _check_planes(x)
    for pp in p:
        if pp < 0:
            raise RetrogradError(f"pad must be non-negative, but got pad: {pp}")
    for pp, kk, dd in zip(p, k, d):
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RetrogradError(f"pad should be at most half of effective kernel size, but got "
                                 f"pad={pp}, kernel_size={kk} and dilation={dd}")
    if any(pp > kk // 2 for pp, kk in zip(p, k)):
        raise RetrogradError(f"pad should be smaller than or equal to half of kernel size, but "
                             f"got padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    sp = tuple(x.shape[-2:])
    o = tuple(out_size(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd
              in zip(sp, k, s, p, d))
    if any(v < 1 for v in o):
        c = x.shape[-3]
        raise ShapeError(f"Given input size: ({c}x{sp[0]}x{sp[1]}). Calculated output size: "
                         f"({c}x{o[0]}x{o[1]}). Output size is too small")
    return k, s, p, d, o


# -- max pooling -----------------------------------------------------------------------------
def _max_pool2d(x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, fname: str, indices: bool = True) -> tuple[Tensor, Any]:
    """The maxima and (``indices``; else None) their flat positions."""
    _check_input(x, fname)
    k, s, p, d, o = _window_args(fname, x, kernel_size, stride, padding, dilation, ceil_mode)
    _check_dtype("max_pool2d", x, (int32, int64))
    be = x.backend
    vals, arg = be.ops.max_pool_nd(x._data, k, s, p, d, o)
    out = _new(be, vals)
    sp = tuple(x.shape[-2:])
    if _tracks(x):
        # self is saved (as PyTorch's): the double backward's node has an edge to it
        record(MaxPool2DWithIndicesBackward0, out, (x,), (arg, x._data), (None, x),
               (sp, k, s, p, d))
    if not indices:
        return out, None
    return out, _new(be, be.ops.max_pool_nd_indices(arg, sp, k, s, p, d))


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` with ``return_indices=True``: the maxima and their int64 flat positions
    in each input plane."""
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")


@op("max_pool2d", method=False)
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum over each ``kernel_size`` window of ``input`` ``(N, C, H, W)`` or
    ``(C, H, W)``, windows ``stride`` apart (default: ``kernel_size``), ``padding`` of -inf
    (at most half the dilated kernel), ``dilation`` between a window's elements.
    ``ceil_mode``: a last partial window that starts inside the input or its left padding
    counts. ``return_indices``: also the int64 flat positions (``h * W + w``) of the maxima,
    the first in window order where several tie."""
    out, indices = _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,
                               "max_pool2d", bool(return_indices))
    return (out, indices) if return_indices else out


def _one_d(fname: str, x: Any, expect: str) -> None:
    _check_input(x, fname)
    if x.ndim not in (2, 3):
        raise ShapeError(expect)


def _int1(name: str, what: str, v: Any, default: Any = None) -> tuple[int, int]:
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        if default is None:
            raise RetrogradError(f"{name}: {what} must be a single int")
        return default
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise RetrogradError(f"{name}: {what} must be a single int")
        v = v[0]
    return (1, int(v))


def _one_int(what: str, v: Any, default: Any = None) -> int:
    """A 1-d pooling's argument as one int (PyTorch's ``max_pool1d()`` messages)."""
    if default is not None and (v is None or (isinstance(v, (list, tuple)) and len(v) == 0)):
        return int(default)
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            kinds = {"kernel_size": "an int, list of ints or tuple of ints",
                     "stride": "None, an int, list of ints, or tuple of ints",
                     "padding": "an int, list of ints, or tuple of ints",
                     "dilation": "an int, list of ints or tuple of ints"}
            raise RetrogradError(f"max_pool1d() {what} must be {kinds[what]} of size 1 but got "
                                 f"size {len(v)}")
        v = v[0]
    return int(v)


def _max_pool1d_args(x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                     ceil_mode: bool) -> tuple[int, int, int, int]:
    """Checked ``(k, s, p, d)`` of a 1-d max pooling (PyTorch's ``max_pool1d()`` checks)."""
    _check_input(x, "max_pool1d")
    if x.ndim not in (2, 3) or any(n == 0 for n in x.shape[x.ndim - 2:]):
        raise ShapeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                         f"batch size for input, but got:{list(x.shape)}")
    k = _one_int("kernel_size", kernel_size)
    s = _one_int("stride", stride, default=k)
    p = _one_int("padding", padding)
    d = _one_int("dilation", dilation)
    if k <= 0:
        raise RetrogradError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RetrogradError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RetrogradError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RetrogradError(f"max_pool1d() padding should be at most half of kernel size, but "
                             f"got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RetrogradError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    o = out_size(x.shape[-1], k, s, p, d, ceil_mode)
    if o < 1:
        raise ShapeError(f"max_pool1d() Invalid computed output size: {o}")
    return k, s, p, d


def _max_pool1d(x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, indices: bool) -> tuple[Tensor, Any]:
    from .shape import squeeze, unsqueeze

    k, s, p, d = _max_pool1d_args(x, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = _max_pool2d(unsqueeze(x, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                           "max_pool1d", indices)
    return squeeze(out, -2), (None if idx is None else squeeze(idx, -2))


@op("max_pool1d_with_indices", method=False)
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` with ``return_indices=True``: the maxima and their int64 positions."""
    return _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@op("max_pool1d", method=False)
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum over each window of ``input`` ``(N, C, L)`` or ``(C, L)``: ``max_pool2d``
    on a unit height (arguments as there, each a single int)."""
    out, idx = _max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode,
                           bool(return_indices))
    return (out, idx) if return_indices else out


# -- average pooling -------------------------------------------------------------------------
def _avg_pool2d(x: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                count_include_pad: bool, divisor_override: Any, fname: str) -> Tensor:
    _check_input(x, fname)
    if x.ndim < 3:  # PyTorch reads the channel count at dimension -3 first
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got -3)")
    if divisor_override is not None and int(divisor_override) == 0:
        raise RetrogradError("divisor must be not zero")
    k, s, p, d, o = _window_args(fname, x, kernel_size, stride, padding, 1, ceil_mode)
    _check_dtype("avg_pool2d", x, (int64,))
    div = None if divisor_override is None else int(divisor_override)
    cip = bool(count_include_pad)
    be = x.backend
    out = _new(be, be.ops.avg_pool_nd(x._data, k, s, p, o, cip, div))
    if _tracks(x):
        record(AvgPool2DBackward0, out, (x,), (x._data,), (x,),
               (tuple(x.shape[-2:]), k, s, p, o, cip, div))
    return out


@op("avg_pool2d", function=False, method=False)
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean over each ``kernel_size`` window of ``input`` ``(N, C, H, W)`` or
    ``(C, H, W)``, windows ``stride`` apart (default: ``kernel_size``), zero ``padding``.
    The divisor is ``divisor_override`` if given, else the window's size within the padded
    input (``count_include_pad``) or within the input alone."""
    return _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, "avg_pool2d")


@op("avg_pool1d", method=False)
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean over each window of ``input`` ``(N, C, L)`` or ``(C, L)``: ``avg_pool2d`` on a
    unit height (arguments as there, each a single int)."""
    from .shape import squeeze, unsqueeze

    _one_d("avg_pool1d", input, f"Expected 2 to 3 dimensions, but got {getattr(input, 'ndim', 0)}"
           "-dimensional tensor for argument #1 'self' (while checking arguments for avg_pool1d)")
    k = _int1("avg_pool1d", "kernel_size", kernel_size)
    s = _int1("avg_pool1d", "stride", stride, default=k)
    p = (0, _int1("avg_pool1d", "padding", padding)[1])
    out = _avg_pool2d(unsqueeze(input, -2), k, s, p, ceil_mode, count_include_pad, None,
                      "avg_pool1d")
    return squeeze(out, -2)


# -- adaptive average pooling ----------------------------------------------------------------
def _adaptive(fname: str, x: Tensor, output_size: Any, n: int) -> Tensor:
    from .reduction import mean

    sp = tuple(x.shape[x.ndim - n:])
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RetrogradError(f"{fname}: output_size must be {n}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"{fname}" not implemented for \'{torch_name(x.dtype)}\'')
    for i in range(x.ndim - n, x.ndim):
        if x.shape[i] == 0:
            raise ShapeError(f"{fname}(): Expected input to have non-zero size for non-batch "
                             f"dimensions, but input has sizes {list(x.shape)} with dimension "
                             f"{i} being empty")
    if isinstance(output_size, (list, tuple)):
        o = tuple(m if v is None else int(v) for v, m in zip(output_size, sp))
    else:
        o = (int(output_size),) * n
    if any(v < 0 for v in o):
        raise RetrogradError(f"{fname}: elements of output_size must be greater than or equal "
                             f"to 0 but received {{{', '.join(map(str, o))}}}")
    if all(v == 1 for v in o):  # PyTorch's shortcut: a mean over the spatial dims
        return mean(x, tuple(range(-n, 0)), keepdim=True)
    be = x.backend
    out = _new(be, be.ops.adaptive_avg_pool_nd(x._data, o))
    if _tracks(x):
        record(AdaptiveAvgPool2DBackward0, out, (x,), (x._data,), (x,), (sp, o))
    return out


@op("adaptive_avg_pool2d", function=False, method=False)
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """The mean over ``output_size`` (an int or a pair; None keeps that dimension's size)
    windows per spatial dimension of ``input`` ``(N, C, H, W)`` or ``(C, H, W)``: window
    ``i`` of ``o`` over ``n`` covers ``[floor(i n / o), ceil((i + 1) n / o))``."""
    _check_input(input, "adaptive_avg_pool2d")
    if isinstance(output_size, (list, tuple)) and input.ndim <= len(output_size):
        # PyTorch's Python layer fills None from the input's trailing sizes first
        raise ShapeError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (3, 4):
        raise ShapeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                         f"{list(input.shape)}")
    return _adaptive("adaptive_avg_pool2d", input, output_size, 2)


@op("adaptive_avg_pool1d", method=False)
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """``adaptive_avg_pool2d`` of ``input`` ``(N, C, L)`` or ``(C, L)`` on a unit height."""
    from .shape import squeeze, unsqueeze

    _check_input(input, "adaptive_avg_pool1d")
    if input.ndim not in (2, 3):
        raise ShapeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got "
                         f"{list(input.shape)}")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RetrogradError("adaptive_avg_pool1d: output_size must be 1")
        output_size = output_size[0]
    o = (1, input.shape[-1] if output_size is None else int(output_size))
    return squeeze(_adaptive("adaptive_avg_pool2d", unsqueeze(input, -2), o, 2), -2)
