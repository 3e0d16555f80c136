"""Convolutions against PyTorch: ``conv1d``, ``conv2d``, ``conv_transpose1d``,
``conv_transpose2d`` -- values, gradients in input, weight and bias, double backward, node
names, dtypes, errors and warnings over a grid of strides, paddings (``"same"``/``"valid"``
too), dilations, groups, odd sizes, batched and unbatched inputs -- and the modules ``Conv1d``,
``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d`` (arguments, parameters, initialisation,
``repr``, padding modes, ``output_size``, training steps). Each program is written once against
a library handle ``lib`` (``torch`` or ``retrograd``); inputs come from NumPy, so both libraries
see the same values."""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from torch_parity import same

import retrograd as rg


def functional(lib: Any) -> Any:
    """``lib.nn.functional`` (imported where the package does not import it)."""
    return importlib.import_module(f"{lib.__name__}.nn.functional")


def arr(seed: int, shape: tuple[int, ...], scale: float = 1.0, shift: float = 0.0) -> Any:
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def leaf(lib: Any, a: Any, dtype: str, grad: bool = True) -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad)


def const(lib: Any, a: Any, dtype: str) -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype))


def derivatives(lib: Any, y: Any, leaves: list[Any], seed: int) -> dict[str, Any]:
    """First gradients (create_graph=True) of ``sum(y * g)`` for a random ``g``, and the
    gradients of a random combination of the first gradients' squares (a double backward)."""
    g = const(lib, arr(seed, tuple(y.shape)), str(y.dtype).rpartition(".")[2])
    first = lib.autograd.grad(y, leaves, g, create_graph=True)
    total = None
    for i, d in enumerate(first):
        c = const(lib, arr(seed + 1 + i, tuple(d.shape)), str(d.dtype).rpartition(".")[2])
        term = (d * d * c).sum()
        total = term if total is None else total + term
    second = lib.autograd.grad(total, leaves, allow_unused=True, materialize_grads=True)
    return {"first": first, "second": second}


def check(call: Callable[..., Any], shapes: dict[str, Any], dtype: str = "float64",
          tol: float = 1e-10, double: bool = True) -> None:
    """``call(lib, **tensors)``: the output (value, dtype, node name), the plain-walk gradients
    and, with ``double``, the first and second derivatives against torch."""
    names = sorted(k for k, v in shapes.items() if v is not None)

    def program(lib: Any) -> Any:
        def tensors() -> dict[str, Any]:
            return {k: (leaf(lib, arr(i, shapes[k], 0.8, 0.1 * i), dtype) if k in names
                        else None) for i, k in enumerate(sorted(shapes))}

        ts = tensors()
        y = call(lib, **ts)
        leaves = [ts[k] for k in names]
        g = const(lib, arr(99, tuple(y.shape)), dtype)
        fast = lib.autograd.grad(y, leaves, g)
        out: dict[str, Any] = {"y": y, "shape": list(y.shape), "name": y.grad_fn.name(),
                               "dtype": str(y.dtype).rpartition(".")[2], "fast": fast}
        if double:
            ts = tensors()
            out.update(derivatives(lib, call(lib, **ts), [ts[k] for k in names], 7))
        return out

    same(program, tol=tol)


def quiet(program: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``program`` with warnings silenced (torch's once-per-process ``padding="same"`` note)."""

    def run(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return program(lib)

    return run


# ---- conv2d ----------------------------------------------------------------------------------
# (input shape, weight shape, with bias, keyword arguments)
CONV2D = [
    ((2, 3, 5, 6), (4, 3, 3, 3), True, {}),
    ((1, 2, 7, 5), (3, 2, 3, 2), True, {"stride": 2}),
    ((2, 2, 6, 7), (2, 2, 2, 3), False, {"stride": (2, 3), "padding": (1, 2)}),
    ((1, 2, 7, 7), (3, 2, 3, 3), True, {"dilation": 2, "padding": 1}),
    ((1, 2, 8, 6), (2, 2, 2, 2), True, {"dilation": (3, 1), "stride": (1, 2)}),
    ((2, 4, 5, 5), (6, 2, 3, 3), True, {"groups": 2, "padding": 1}),
    ((1, 6, 5, 4), (6, 1, 3, 2), False, {"groups": 6}),  # depthwise
    ((1, 6, 7, 7), (3, 2, 3, 3), True, {"groups": 3, "stride": 2, "dilation": 2, "padding": 2}),
    ((2, 2, 5, 6), (3, 2, 3, 3), True, {"padding": "same"}),
    ((1, 2, 6, 5), (2, 2, 2, 4), True, {"padding": "same"}),  # odd total padding
    ((1, 2, 7, 6), (2, 2, 3, 2), False, {"padding": "same", "dilation": (2, 3)}),
    ((2, 2, 5, 6), (3, 2, 3, 3), True, {"padding": "valid"}),
    ((3, 5, 4), (2, 3, 2, 2), True, {"stride": 2, "padding": 1}),  # unbatched
    ((4, 5, 4), (4, 2, 3, 1), False, {"groups": 2, "padding": "same"}),  # unbatched
    ((1, 1, 3, 3), (1, 1, 3, 3), True, {}),  # kernel as large as the input
    ((2, 3, 1, 5), (2, 3, 1, 3), True, {"padding": (0, 1), "stride": (3, 1)}),
]


def _ids(cases: list[Any]) -> list[str]:
    return [f"{x}-{w}-{'b' if b else 'nob'}-{sorted(kw.items())}" for x, w, b, kw in cases]


@pytest.mark.parametrize("xs,ws,bias,kw", CONV2D, ids=_ids(CONV2D))
def test_conv2d_values_grads_double_backward(xs: Any, ws: Any, bias: bool, kw: Any) -> None:
    check(quiet(lambda lib, b, w, x: functional(lib).conv2d(x, w, b, **kw)),
          {"x": xs, "w": ws, "b": (ws[0],) if bias else None})


CONV1D = [
    ((2, 3, 7), (4, 3, 3), True, {}),
    ((1, 2, 9), (3, 2, 2), True, {"stride": 3, "padding": 2}),
    ((2, 4, 8), (4, 2, 3), False, {"groups": 2, "dilation": 2}),
    ((1, 2, 6), (2, 2, 4), True, {"padding": "same"}),
    ((1, 2, 9), (2, 2, 3), True, {"padding": "same", "dilation": 3}),
    ((2, 2, 5), (3, 2, 5), True, {"padding": "valid"}),
    ((3, 6), (2, 3, 2), True, {"stride": (2,), "padding": (1,)}),  # unbatched
]


@pytest.mark.parametrize("xs,ws,bias,kw", CONV1D, ids=_ids(CONV1D))
def test_conv1d_values_grads_double_backward(xs: Any, ws: Any, bias: bool, kw: Any) -> None:
    check(quiet(lambda lib, b, w, x: functional(lib).conv1d(x, w, b, **kw)),
          {"x": xs, "w": ws, "b": (ws[0],) if bias else None})


# weight (in_channels, out_channels / groups, *k); bias out_channels
TRANSPOSE2D = [
    ((2, 3, 4, 3), (3, 2, 3, 3), True, {}),
    ((1, 2, 3, 4), (2, 3, 3, 2), True, {"stride": 2, "padding": 1, "output_padding": 1}),
    ((1, 2, 4, 3), (2, 2, 2, 3), False, {"stride": (3, 2), "output_padding": (2, 0)}),
    ((2, 4, 3, 3), (4, 1, 2, 2), True, {"groups": 2, "dilation": (1, 2)}),
    ((1, 4, 3, 4), (4, 2, 3, 2), True, {"groups": 4, "stride": 2, "padding": (1, 0),
                                        "dilation": 2, "output_padding": 1}),
    ((2, 3, 2), (2, 1, 2, 3), True, {"stride": (1, 2)}),  # unbatched
    ((1, 1, 3, 3), (1, 1, 3, 3), False, {"padding": 1}),  # padding crops the output
]


@pytest.mark.parametrize("xs,ws,bias,kw", TRANSPOSE2D, ids=_ids(TRANSPOSE2D))
def test_conv_transpose2d_values_grads_double_backward(xs: Any, ws: Any, bias: bool,
                                                       kw: Any) -> None:
    groups = kw.get("groups", 1)
    check(lambda lib, b, w, x: functional(lib).conv_transpose2d(x, w, b, **kw),
          {"x": xs, "w": ws, "b": (ws[1] * groups,) if bias else None})


TRANSPOSE1D = [
    ((2, 2, 4), (2, 3, 3), True, {"stride": 2, "output_padding": 1}),
    ((1, 4, 5), (4, 1, 2), False, {"groups": 2, "dilation": 3, "padding": 1}),
    ((2, 3), (2, 2, 3), True, {"stride": 3, "output_padding": 2}),  # unbatched
]


@pytest.mark.parametrize("xs,ws,bias,kw", TRANSPOSE1D, ids=_ids(TRANSPOSE1D))
def test_conv_transpose1d_values_grads_double_backward(xs: Any, ws: Any, bias: bool,
                                                       kw: Any) -> None:
    groups = kw.get("groups", 1)
    check(lambda lib, b, w, x: functional(lib).conv_transpose1d(x, w, b, **kw),
          {"x": xs, "w": ws, "b": (ws[1] * groups,) if bias else None})


def test_conv2d_float32() -> None:
    check(lambda lib, b, w, x: functional(lib).conv2d(x, w, b, stride=2, padding=1, groups=2),
          {"x": (2, 4, 6, 5), "w": (4, 2, 3, 3), "b": (4,)}, dtype="float32", tol=2e-5,
          double=False)


def test_conv_transpose2d_float32() -> None:
    check(lambda lib, b, w, x: functional(lib).conv_transpose2d(x, w, b, stride=2),
          {"x": (2, 3, 3, 3), "w": (3, 2, 2, 3), "b": (2,)}, dtype="float32", tol=2e-5,
          double=False)


@pytest.mark.parametrize("which", ["x", "w", "b"])
def test_only_one_operand_needs_grad(which: str) -> None:
    """One leaf requires grad: the others are constants, the node keeps PyTorch's name and
    the gradient (and its own gradient) is PyTorch's."""

    def program(lib: Any) -> Any:
        ts = {k: leaf(lib, arr(i, s), "float64", grad=k == which)
              for i, (k, s) in enumerate((("x", (2, 2, 5, 4)), ("w", (3, 2, 2, 3)),
                                          ("b", (3,))))}
        y = functional(lib).conv2d(ts["x"], ts["w"], ts["b"], stride=(1, 2), padding=1)
        (g,) = lib.autograd.grad((y * y).sum(), [ts[which]], create_graph=True)
        if which == "b":
            return [y.grad_fn.name(), y, g]
        (gg,) = lib.autograd.grad((g * g).sum(), [ts[which]])
        return [y.grad_fn.name(), y, g, gg]

    same(program, tol=1e-10)


def test_integer_convolution() -> None:
    """Integer operands convolve exactly in their dtype, as PyTorch's."""

    def program(lib: Any) -> Any:
        x = lib.tensor(np.arange(2 * 2 * 4 * 5).reshape(2, 2, 4, 5) % 7 - 3)
        w = lib.tensor(np.arange(3 * 2 * 2 * 2).reshape(3, 2, 2, 2) % 5 - 2)
        return [functional(lib).conv2d(x, w, stride=(1, 2), padding=1),
                functional(lib).conv_transpose2d(x, w.transpose(0, 1)[:2], stride=2)]

    same(program, tol=0)


def test_empty_batch() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, np.zeros((0, 2, 5, 5)), "float64")
        w = leaf(lib, arr(1, (3, 2, 3, 3)), "float64")
        y = functional(lib).conv2d(x, w, padding=1)
        gx, gw = lib.autograd.grad(y.sum(), [x, w])
        return [list(y.shape), list(gx.shape), gw]

    same(program)


def test_conv_in_a_deeper_graph() -> None:
    """conv -> relu -> conv_transpose -> loss: the gradients of every leaf and a Hessian-vector
    product through both convolutions."""

    def program(lib: Any) -> Any:
        F = functional(lib)
        x = leaf(lib, arr(1, (2, 2, 6, 6)), "float64")
        w1 = leaf(lib, arr(2, (4, 2, 3, 3), 0.5), "float64")
        w2 = leaf(lib, arr(3, (4, 2, 2, 2), 0.5), "float64")
        h = F.relu(F.conv2d(x, w1, stride=2, padding=1))
        y = F.conv_transpose2d(h, w2, stride=2)
        loss = ((y - x) ** 2).mean()
        grads = lib.autograd.grad(loss, [x, w1, w2], create_graph=True)
        hvp = lib.autograd.grad(sum((g * g).sum() for g in grads), [x, w1, w2])
        return [loss, grads, hvp]

    same(program, tol=1e-9)


# ---- errors and warnings ---------------------------------------------------------------------
def _z(lib: Any, *shape: int) -> Any:
    return lib.zeros(*shape, dtype=lib.float64)


ERRORS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("wrong channel count", lambda lib: functional(lib).conv2d(_z(lib, 1, 3, 5, 5),
                                                               _z(lib, 2, 2, 3, 3)),
     "expected input[1, 3, 5, 5] to have 2 channels, but got 3 channels instead"),
    ("conv1d wrong channel count", lambda lib: functional(lib).conv1d(_z(lib, 1, 3, 5),
                                                                      _z(lib, 2, 2, 3)),
     "to have 2 channels, but got 3 channels instead"),
    ("groups do not divide out_channels",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 4, 5, 5), _z(lib, 3, 2, 3, 3), groups=2),
     "expected weight to be divisible by 2 at dimension 0"),
    ("groups do not divide in_channels",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 3, 5, 5), _z(lib, 4, 1, 3, 3), groups=2),
     "to have 2 channels, but got 3 channels instead"),
    ("kernel larger than input",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 2, 2), _z(lib, 2, 2, 3, 3)),
     "Kernel size can't be greater than actual input size"),
    ("kernel larger than padded input (1d)",
     lambda lib: functional(lib).conv1d(_z(lib, 1, 2, 2), _z(lib, 2, 2, 5), padding=1),
     "Calculated padded input size per channel: (4). Kernel size: (5)."),
    ("negative padding",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3), padding=-1),
     "negative padding is not supported"),
    ("same with stride",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3), stride=2,
                                        padding="same"),
     "padding='same' is not supported for strided convolutions"),
    ("unknown padding string",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                        padding="full"),
     "Invalid padding string: 'full'"),
    ("zero stride",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3), stride=0),
     "non-positive stride is not supported"),
    ("zero dilation",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                        dilation=(0, 1)),
     "dilation should be greater than zero, but got [0, 1]"),
    ("zero dilation (1d)",
     lambda lib: functional(lib).conv1d(_z(lib, 1, 2, 5), _z(lib, 2, 2, 3), dilation=0),
     "dilation should be greater than zero, but got [1, 0]"),
    ("zero groups",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3), groups=0),
     "non-positive groups is not supported"),
    ("5-d input", lambda lib: functional(lib).conv2d(_z(lib, 1, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
     "[1, 1, 2, 5, 5]"),
    ("bias of the wrong size",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3), _z(lib, 3)),
     "expected bias to be 1-dimensional with 2 elements, but got bias of size [3] instead"),
    ("mixed dtypes",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), lib.zeros(2, 2, 3, 3)),
     "expected scalar type Double but found Float"),
    ("stride of the wrong length",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                        stride=(1, 1, 1)),
     "expected stride to be a single integer value or a list of 2 values"),
    ("padding of the wrong length",
     lambda lib: functional(lib).conv2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                        padding=(1, 1, 1)),
     "expected padding to be a single integer value or a list of 2 values"),
    ("input not a tensor", lambda lib: functional(lib).conv2d([[1.0]], _z(lib, 2, 2, 3, 3)),
     "conv2d() received an invalid combination of arguments - got (list, Tensor)"),
    ("transposed: wrong channel count",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 3, 5, 5), _z(lib, 2, 2, 3, 3)),
     "Given transposed=1, weight of size [2, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 "
     "channels, but got 3 channels instead"),
    ("transposed: output padding too large",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                                  output_padding=1),
     "output padding must be smaller than either stride or dilation, but got "
     "output_padding_height: 1 output_padding_width: 1 stride_height: 1"),
    ("transposed 1d: output padding too large",
     lambda lib: functional(lib).conv_transpose1d(_z(lib, 1, 2, 5), _z(lib, 2, 2, 3),
                                                  output_padding=1),
     "but got output_padding_height: 0 output_padding_width: 1 stride_height: 1 stride_width: "
     "1 dilation_height: 1 dilation_width: 1"),
    ("transposed: negative output padding",
     lambda lib: functional(lib).conv_transpose1d(_z(lib, 1, 2, 5), _z(lib, 2, 2, 3),
                                                  output_padding=-1),
     "negative output_padding is not supported"),
    ("transposed: zero dilation",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                                  dilation=(0, 1)),
     "dilation should be greater than zero, but got dilation_height: 0, dilation_width: 1"),
    ("transposed: output too small",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 2, 1, 1), _z(lib, 2, 2, 1, 1),
                                                  padding=1),
     "Calculated output size per channel: (-1 x -1). Output size is too small"),
    ("transposed: groups do not divide",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 3, 5, 5), _z(lib, 3, 2, 3, 3),
                                                  groups=2),
     "expected weight to be divisible by 2 at dimension 0"),
    ("transposed: bias of the wrong size",
     lambda lib: functional(lib).conv_transpose2d(_z(lib, 1, 2, 5, 5), _z(lib, 2, 2, 3, 3),
                                                  _z(lib, 3)),
     "expected bias to be 1-dimensional with 2 elements"),
]


@pytest.mark.parametrize("program,phrase", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_as_torch(program: Callable[[Any], Any], phrase: str) -> None:
    same(program, phrase)


@pytest.mark.parametrize("kw,warns", [({"dilation": 3}, True), ({}, True),
                                      ({"dilation": 2}, False)])
def test_same_padding_warning(kw: Any, warns: bool) -> None:
    """PyTorch's note for ``padding="same"`` with an odd total padding (under
    ``set_warn_always``, given every time), none where the padding is even."""

    def caught(lib: Any) -> list[str]:
        before = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                functional(lib).conv1d(_z(lib, 1, 2, 9), _z(lib, 2, 2, 4), padding="same", **kw)
        finally:
            lib.set_warn_always(before)
        return [str(w.message) for w in seen]

    phrase = ("Using padding='same' with even kernel lengths and odd dilation may require a "
              "zero-padded copy of the input be created")
    want, got = caught(torch), caught(rg)
    assert [phrase in m for m in want] == ([True] if warns else [])
    assert [phrase in m for m in got] == ([True] if warns else [])


# ---- modules ---------------------------------------------------------------------------------
MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("Conv2d", (3, 4, 3), {}, (2, 3, 6, 5)),
    ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": 1, "groups": 2, "bias": False},
     (1, 4, 7, 6)),
    ("Conv2d", (2, 3, 3), {"padding": "same", "dilation": 2}, (1, 2, 7, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 2, 5, 6)),
    ("Conv2d", (2, 3, (3, 2)), {"padding": (1, 2), "padding_mode": "replicate"}, (2, 5, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "circular", "stride": 2},
     (1, 2, 5, 6)),
    ("Conv2d", (2, 2, 4), {"padding": "same", "padding_mode": "reflect"}, (1, 2, 6, 6)),
    ("Conv1d", (2, 4, 3), {}, (2, 2, 9)),
    ("Conv1d", (4, 2, 2), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2},
     (1, 4, 8)),
    ("Conv1d", (2, 3, 3), {"padding": 1, "padding_mode": "circular"}, (2, 7)),
    ("ConvTranspose2d", (3, 2, 3), {}, (2, 3, 4, 3)),
    ("ConvTranspose2d", (4, 6, (2, 3)), {"stride": 2, "padding": 1, "output_padding": 1,
                                         "groups": 2, "dilation": (2, 1)}, (1, 4, 3, 4)),
    ("ConvTranspose1d", (2, 3, 3), {"stride": 3, "output_padding": 1, "bias": False},
     (2, 2, 4)),
]


def _module_ids() -> list[str]:
    return [f"{name}{args}{sorted(kw.items())}" for name, args, kw, _ in MODULES]


@pytest.mark.parametrize("name,args,kw,xs", MODULES, ids=_module_ids())
def test_module_with_copied_weights(name: str, args: Any, kw: Any, xs: Any) -> None:
    """Attributes, parameter names and shapes, ``repr``, and the output and gradients with the
    same weights."""

    def program(lib: Any) -> Any:
        m = getattr(lib.nn, name)(*args, **kw, dtype=lib.float64)
        with lib.no_grad():
            for i, (_, p) in enumerate(m.named_parameters()):
                p.copy_(const(lib, arr(10 + i, tuple(p.shape)), "float64"))
        x = leaf(lib, arr(1, xs), "float64")
        y = m(x)
        y.backward(const(lib, arr(2, tuple(y.shape)), "float64"))
        attrs = {a: getattr(m, a) for a in ("in_channels", "out_channels", "kernel_size",
                                             "stride", "padding", "dilation", "groups",
                                             "output_padding", "transposed", "padding_mode",
                                             "_reversed_padding_repeated_twice")}
        return {"repr": repr(m), "attrs": attrs, "y": y, "gx": x.grad,
                "params": [(n, list(p.shape), p.grad) for n, p in m.named_parameters()],
                "state": list(m.state_dict())}

    same(quiet(program), tol=1e-10)


def test_conv_transpose_output_size() -> None:
    """``output_size`` (spatial, or with the leading dimensions) picks the output padding."""

    def program(lib: Any) -> Any:
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=(2, 3), padding=1, dtype=lib.float64)
        x = const(lib, arr(1, (1, 2, 4, 3)), "float64")
        return [list(m(x, output_size=s).shape) for s in ([7, 7], [8, 9], (1, 3, 8, 8))]

    same(program)


@pytest.mark.parametrize("size", [[6, 7], [9, 7], [1, 2, 7]])
def test_conv_transpose_output_size_errors(size: Any) -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.ConvTranspose2d(2, 3, 3, stride=(2, 3), padding=1, dtype=lib.float64)
        return m(const(lib, arr(1, (1, 2, 4, 3)), "float64"), output_size=size)

    same(program, "valid sizes range from" if len(size) == 2 else "output_size must have 2 or 4")


CONSTRUCTOR_ERRORS = [
    ("Conv2d", (3, 4, 3), {"groups": 2}, "in_channels must be divisible by groups"),
    ("Conv2d", (4, 3, 3), {"groups": 2}, "out_channels must be divisible by groups"),
    ("Conv2d", (4, 4, 3), {"groups": 0}, "groups must be a positive integer"),
    ("Conv2d", (2, 2, 3), {"padding": "same", "stride": 2},
     "padding='same' is not supported for strided convolutions"),
    ("Conv2d", (2, 2, 3), {"padding": "full"}, "Invalid padding string 'full'"),
    ("Conv2d", (2, 2, 3), {"padding_mode": "mirror"}, "padding_mode must be one of"),
    ("ConvTranspose2d", (2, 2, 3), {"padding_mode": "reflect"},
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
]


@pytest.mark.parametrize("name,args,kw,phrase", CONSTRUCTOR_ERRORS,
                         ids=[e[3] for e in CONSTRUCTOR_ERRORS])
def test_module_constructor_errors(name: str, args: Any, kw: Any, phrase: str) -> None:
    same(lambda lib: getattr(lib.nn, name)(*args, **kw), phrase)


@pytest.mark.parametrize("name,args,fan_in", [("Conv2d", (3, 4, (3, 2)), 18),
                                              ("Conv1d", (4, 6, 5, 1, 0, 1, 2), 10),
                                              ("ConvTranspose2d", (3, 4, 2), 16)])
def test_module_initialisation(name: str, args: Any, fan_in: int) -> None:
    """kaiming_uniform(a=sqrt(5)) for the weight and U(+-1/sqrt(fan_in)) for the bias (both
    bounds 1/sqrt(fan_in), PyTorch's fan of the weight), drawn from the default generator:
    ``manual_seed`` repeats them, another seed changes them."""
    bound = 1 / math.sqrt(fan_in)
    rg.manual_seed(5)
    a = getattr(rg.nn, name)(*args)
    rg.manual_seed(5)
    b = getattr(rg.nn, name)(*args)
    rg.manual_seed(6)
    c = getattr(rg.nn, name)(*args)
    for p, q, r in zip(a.parameters(), b.parameters(), c.parameters()):
        vals = np.asarray(p.tolist())
        assert p.tolist() == q.tolist() and p.tolist() != r.tolist()
        assert np.all(np.abs(vals) <= bound) and np.max(np.abs(vals)) > bound / 2
        assert p.requires_grad and p.dtype is rg.float32


def test_small_cnn_trains_as_torch() -> None:
    """Conv2d -> ReLU -> MaxPool2d -> Conv2d -> AdaptiveAvgPool2d -> Flatten -> Linear, five
    SGD steps with momentum from the same weights: the same losses and final weights."""

    def program(lib: Any) -> Any:
        nn = lib.nn
        model = nn.Sequential(
            nn.Conv2d(2, 4, 3, padding=1, dtype=lib.float64), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, stride=2, padding=1,
                                       groups=2, dtype=lib.float64),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3, dtype=lib.float64))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(const(lib, arr(20 + i, tuple(p.shape), 0.4), "float64"))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = const(lib, arr(1, (4, 2, 8, 8)), "float64")
        target = lib.tensor([0, 2, 1, 2])
        losses = []
        for _ in range(5):
            opt.zero_grad()
            loss = functional(lib).cross_entropy(model(x), target)
            loss.backward()
            opt.step()
            losses.append(loss)
        return [losses, list(model.parameters())]

    same(program, tol=1e-9)
