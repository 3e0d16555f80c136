"""Convolutions (``conv1d``, ``conv2d``, ``conv_transpose1d``, ``conv_transpose2d``) as strided
windows and one GEMM per group (kernels ``conv_nd``/``conv_transpose_nd``/``conv_weight_nd``,
``backends/kernels_conv.py``).

Every convolution records one ``ConvolutionBackward0`` node (edges: input, weight, bias), as
PyTorch's. Its rule is written against ``F``: the input's gradient is the transposed
convolution of the output's gradient, the weight's is ``conv_weight_nd`` of the input and the
output's gradient. Under ``create_graph`` those are recorded ops themselves
(``ConvolutionBackwardBackward0``, PyTorch's name) whose rules are convolutions again, so
gradients of any order work.

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports."""

from __future__ import annotations

import warnings
from typing import Any

from ..autograd.node import formula_node
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ..warn_always import _state as _warn_always
from ._core import check_device, record
from .declare import GRAPH_KERNELS, op
from .promotion import torch_name

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]


# -- derivative rules ------------------------------------------------------------------------
def _conv_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Gradients of ``y = conv(x, w) + b`` (or of the transposed convolution)."""
    x, w = saved
    stride, padding, dilation, groups, transposed, has_bias, xsp, k = attrs
    gx = gw = gb = None
    if needs[0]:
        if transposed:
            gx = F.conv_nd(g, w, stride, padding, dilation, groups)
        else:
            gx = F.conv_transpose_nd(g, w, stride, padding, dilation, groups, xsp)
    if needs[1]:
        if transposed:
            gw = F.conv_weight_nd(g, x, k, stride, padding, dilation, groups)
        else:
            gw = F.conv_weight_nd(x, g, k, stride, padding, dilation, groups)
    if not has_bias:
        return gx, gw
    if len(needs) > 2 and needs[2]:
        gb = F.sum(g, (0,) + tuple(range(2, 2 + len(k))))
    return gx, gw, gb


def _weight_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """Gradients of ``gw = conv_weight_nd(x, go)`` (bilinear): in ``x`` the transposed
    convolution of ``go`` with ``g``, in ``go`` the convolution of ``x`` with ``g``."""
    x, go = saved
    k, stride, padding, dilation, groups, xsp = attrs
    dx = dgo = None
    if needs[0]:
        dx = F.conv_transpose_nd(go, g, stride, padding, dilation, groups, xsp)
    if len(needs) > 1 and needs[1]:
        dgo = F.conv_nd(x, g, stride, padding, dilation, groups)
    return dx, dgo


ConvolutionBackward0 = formula_node("ConvolutionBackward0", _conv_rule)
# the backward's own ops under create_graph (PyTorch names their outputs' node so)
_ConvBackwardBackward = formula_node("ConvolutionBackwardBackward0", _conv_rule)
_WeightBackwardBackward = formula_node("ConvolutionBackwardBackward0", _weight_rule, arity=2)


def _new(be: Any, data: Any) -> Tensor:
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _tracks(*ts: Any) -> bool:
    return _grad.enabled and any(t is not None and t._requires_grad for t in ts)


def _convolution(x: Tensor, w: Tensor, b: Tensor | None, stride: tuple[int, ...],
                 padding: tuple[int, ...], dilation: tuple[int, ...], groups: int,
                 transposed: bool, out: tuple[int, ...] | None, cls: Any) -> Tensor:
    """The (transposed) convolution of checked, batched operands, recorded as ``cls``."""
    be = x.backend
    ops = be.ops
    if transposed:
        assert out is not None
        data = ops.conv_transpose_nd(x._data, w._data, stride, padding, dilation, groups, out)
    else:
        data = ops.conv_nd(x._data, w._data, stride, padding, dilation, groups)
    if b is not None:  # in place: the kernel's result is a new array of the same dtype
        data += be.xp.reshape(b._data, (1, -1) + (1,) * (data.ndim - 2))
    y = _new(be, data)
    if _tracks(x, w, b):
        rx, rw = x._requires_grad, w._requires_grad
        inputs = (x, w) if b is None else (x, w, b)
        k = tuple(w.shape[2:])
        record(cls, y, inputs, (x._data if rw else None, w._data if rx else None),
               (x if rw else None, w if rx else None),
               (stride, padding, dilation, groups, transposed, b is not None,
                tuple(x.shape[2:]), k))
    return y


# -- the recorded versions of the kernels (GRAPH_F's extras) ---------------------------------
def _graph_conv(x: Tensor, w: Tensor, stride: Any, padding: Any, dilation: Any,
                groups: int) -> Tensor:
    return _convolution(x, w, None, stride, padding, dilation, groups, False, None,
                        _ConvBackwardBackward)


def _graph_conv_transpose(x: Tensor, w: Tensor, stride: Any, padding: Any, dilation: Any,
                          groups: int, out: Any) -> Tensor:
    return _convolution(x, w, None, stride, padding, dilation, groups, True, tuple(out),
                        _ConvBackwardBackward)


def _graph_conv_weight(x: Tensor, go: Tensor, k: Any, stride: Any, padding: Any,
                       dilation: Any, groups: int) -> Tensor:
    be = go.backend
    y = _new(be, be.ops.conv_weight_nd(x._data, go._data, k, stride, padding, dilation, groups))
    if _tracks(x, go):
        rx, rg = x._requires_grad, go._requires_grad
        record(_WeightBackwardBackward, y, (x, go),
               (x._data if rg else None, go._data if rx else None),
               (x if rg else None, go if rx else None),
               (tuple(k), stride, padding, dilation, groups, tuple(x.shape[2:])))
    return y


GRAPH_KERNELS.update({"conv_nd": _graph_conv, "conv_transpose_nd": _graph_conv_transpose,
                      "conv_weight_nd": _graph_conv_weight})


# -- argument checks -------------------------------------------------------------------------
def _expand(name: str, v: Any, n: int) -> tuple[int, ...]:
    """An int or a sequence of ``n`` ints, as a tuple of ``n`` ints (PyTorch's message)."""
    if isinstance(v, (list, tuple)):
        vals = tuple(int(i) for i in v)
        if len(vals) == 1:
            vals = vals * n
    else:
        vals = (int(v),) * n
    if len(vals) != n:
        raise RetrogradError(
            f"expected {name} to be a single integer value or a list of {n} values to match "
            f"the convolution dimensions, but got {name}={list(vals)}")
    return vals


def _check_tensors(fname: str, x: Any, w: Any, b: Any) -> None:
    """Tensor operands (PyTorch's message: the argument types it got and what it expects)."""
    given = (x, w) if b is None else (x, w, b)
    if not all(isinstance(t, Tensor) for t in given):
        got = ", ".join("Tensor" if isinstance(t, Tensor) else type(t).__name__ for t in given)
        raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                        "but expected (Tensor input, Tensor weight, Tensor bias = None, ...)")
    check_device(fname, x, w)
    if b is not None:
        check_device(fname, x, b)


def _batched(fname: str, x: Tensor, nsp: int) -> bool:
    """Whether ``x`` has a batch dimension; PyTorch's error when it has neither form."""
    if x.ndim == nsp + 2:
        return True
    if x.ndim == nsp + 1:
        return False
    raise ShapeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                     f"{fname}, but got input of size: {list(x.shape)}")


def _dilation_message(dilation: tuple[int, ...], transposed: bool) -> str:
    """PyTorch's message for a non-positive dilation (a 1-d convolution runs as a 2-d one of
    unit height there, so its dilation is named with a leading 1)."""
    full = (1,) * (2 - len(dilation)) + tuple(dilation)
    if transposed:
        return ("dilation should be greater than zero, but got "
                f"dilation_height: {full[0]}, dilation_width: {full[1]}")
    return f"dilation should be greater than zero, but got {list(full)}"


def _check_common(x: Tensor, w: Tensor, b: Tensor | None, nsp: int, stride: tuple[int, ...],
                  padding: tuple[int, ...], dilation: tuple[int, ...], groups: int,
                  transposed: bool = False) -> None:
    if w.ndim != nsp + 2:
        raise ShapeError(f"Expected {nsp + 2}-dimensional weight for {nsp + 2}-dimensional "
                         f"input {list(x.shape)}, but got {w.ndim}-dimensional weight of size "
                         f"{list(w.shape)} instead")
    if any(s <= 0 for s in stride):
        raise RetrogradError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RetrogradError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RetrogradError(_dilation_message(dilation, transposed))
    if groups <= 0:
        raise RetrogradError("non-positive groups is not supported")
    if x.dtype is not w.dtype:
        raise DTypeError(f"expected scalar type {torch_name(x.dtype)} but found "
                         f"{torch_name(w.dtype)}")
    if b is not None and b.dtype is not x.dtype:
        raise DTypeError(f"Input type ({torch_name(x.dtype).lower()}) and bias type "
                         f"({torch_name(b.dtype).lower()}) should be the same")


_same_warned = {"done": False}


def _warn_asymmetric_same() -> None:
    """PyTorch's once-per-process warning for ``padding="same"`` with an odd total padding
    (every time under ``set_warn_always(True)``)."""
    if _same_warned["done"] and not _warn_always["always"]:
        return
    _same_warned["done"] = True
    warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                  "zero-padded copy of the input be created", UserWarning, stacklevel=4)


def _conv_nd(fname: str, nsp: int, input: Tensor, weight: Tensor,  # noqa: A002
             bias: Tensor | None, stride: Any, padding: Any, dilation: Any,
             groups: int) -> Tensor:
    from .layout import pad as _pad
    from .shape import squeeze, unsqueeze

    _check_tensors(fname, input, weight, bias)
    batched = _batched(fname, input, nsp)
    x = input if batched else unsqueeze(input, 0)
    stride_t = _expand("stride", stride, nsp)
    dilation_t = _expand("dilation", dilation, nsp)
    groups = int(groups)
    extra: tuple[int, ...] = ()
    if isinstance(padding, str):
        if padding == "valid":
            pad_t = (0,) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride_t):
                raise RetrogradError("padding='same' is not supported for strided convolutions")
            if weight.ndim != nsp + 2:
                pad_t = (0,) * nsp
            else:
                total = tuple(d * (k - 1) for d, k in zip(dilation_t, weight.shape[2:]))
                pad_t = tuple(t // 2 for t in total)
                extra = tuple(t - t // 2 * 2 for t in total)
                if any(extra):
                    _warn_asymmetric_same()
        else:
            raise RetrogradError(f"Invalid padding string: '{padding}'")
    else:
        pad_t = _expand("padding", padding, nsp)
    _check_common(x, weight, bias, nsp, stride_t, pad_t, dilation_t, groups)
    c = x.shape[1]
    o = weight.shape[0]
    if o == 0 or o % groups:
        what = "at least 1" if o == 0 else f"divisible by {groups}"
        raise ShapeError(f"Given groups={groups}, expected weight to be {what} at dimension 0, "
                         f"but got weight of size [{list(weight.shape)}] instead")
    if weight.shape[1] * groups != c:
        raise ShapeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                         f"input{list(x.shape)} to have {weight.shape[1] * groups} channels, but "
                         f"got {c} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise ShapeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                         f"1-dimensional with {o} elements, but got bias of size "
                         f"{list(bias.shape)} instead")
    if any(extra):  # "same" with an odd total padding: the extra cell after, as PyTorch
        pads: list[int] = []
        for e in reversed(extra):
            pads += [0, e]
        x = _pad(x, pads)
    sp = x.shape[2:]
    padded = tuple(n + 2 * p for n, p in zip(sp, pad_t))
    eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation_t, weight.shape[2:]))
    if any(e > n for e, n in zip(eff, padded)):
        sizes = " x ".join(map(str, padded))
        raise ShapeError(f"Calculated padded input size per channel: ({sizes}). Kernel size: "
                         f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                         "actual input size")
    y = _convolution(x, weight, bias, stride_t, pad_t, dilation_t, groups, False, None,
                     ConvolutionBackward0)
    return y if batched else squeeze(y, 0)


def _conv_transpose_nd(fname: str, nsp: int, input: Tensor, weight: Tensor,  # noqa: A002
                       bias: Tensor | None, stride: Any, padding: Any, output_padding: Any,
                       groups: int, dilation: Any) -> Tensor:
    from .shape import squeeze, unsqueeze

    _check_tensors(fname, input, weight, bias)
    batched = _batched(fname, input, nsp)
    x = input if batched else unsqueeze(input, 0)
    stride_t = _expand("stride", stride, nsp)
    pad_t = _expand("padding", padding, nsp)
    dilation_t = _expand("dilation", dilation, nsp)
    opad = _expand("output_padding", output_padding, nsp)
    groups = int(groups)
    _check_common(x, weight, bias, nsp, stride_t, pad_t, dilation_t, groups, transposed=True)
    if any(p < 0 for p in opad):
        raise RetrogradError("negative output_padding is not supported")
    if any(p >= s and p >= d for p, s, d in zip(opad, stride_t, dilation_t)):
        # a 1-d transposed convolution runs as a 2-d one of unit height in PyTorch
        lead = 2 - nsp
        words = []
        for what, vals in (("output_padding", (0,) * lead + opad),
                           ("stride", (1,) * lead + stride_t),
                           ("dilation", (1,) * lead + dilation_t)):
            words += [f"{what}_{n}: {v}" for n, v in zip(("height", "width"), vals)]
        raise RetrogradError("output padding must be smaller than either stride or dilation, "
                             f"but got {' '.join(words)}")
    c = x.shape[1]
    if weight.shape[0] != c:
        raise ShapeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                         f"input{list(x.shape)} to have {weight.shape[0]} channels, but got {c} "
                         "channels instead")
    if c % groups:
        raise ShapeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                         f"dimension 0, but got weight of size [{list(weight.shape)}] instead")
    o = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != o):
        raise ShapeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                         f"bias to be 1-dimensional with {o} elements, but got bias of size "
                         f"{list(bias.shape)} instead")
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op
                in zip(x.shape[2:], stride_t, pad_t, dilation_t, weight.shape[2:], opad))
    if any(n <= 0 for n in out):
        raise ShapeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})."
                         f" Calculated output size per channel: ({' x '.join(map(str, out))}). "
                         "Output size is too small")
    y = _convolution(x, weight, bias, stride_t, pad_t, dilation_t, groups, True, out,
                     ConvolutionBackward0)
    return y if batched else squeeze(y, 0)


# -- the ops ---------------------------------------------------------------------------------
@op("conv1d", method=False)
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The 1-D convolution (cross-correlation) of ``input`` ``(N, C, L)`` or ``(C, L)`` with
    ``weight`` ``(O, C / groups, k)``, plus ``bias`` ``(O,)``. ``padding``: an int, a 1-tuple,
    ``"valid"`` or ``"same"`` (stride 1 only)."""
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@op("conv2d", method=False)
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The 2-D convolution (cross-correlation) of ``input`` ``(N, C, H, W)`` or ``(C, H, W)``
    with ``weight`` ``(O, C / groups, kH, kW)``, plus ``bias`` ``(O,)``. ``stride``,
    ``padding``, ``dilation``: an int or a pair; ``padding`` also ``"valid"`` or ``"same"``
    (stride 1 only; an odd total padding puts the extra cell after, as PyTorch)."""
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@op("conv_transpose1d", method=False)
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The 1-D transposed convolution of ``input`` ``(N, C, L)`` or ``(C, L)`` with ``weight``
    ``(C, O / groups, k)``: the adjoint of ``conv1d`` in its input, plus ``bias`` ``(O,)``;
    ``output_padding`` cells are added after the output."""
    return _conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


@op("conv_transpose2d", method=False)
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The 2-D transposed convolution of ``input`` ``(N, C, H, W)`` or ``(C, H, W)`` with
    ``weight`` ``(C, O / groups, kH, kW)``: the adjoint of ``conv2d`` in its input, plus
    ``bias`` ``(O,)``. Output size ``(n - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1`` per dimension."""
    return _conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)
