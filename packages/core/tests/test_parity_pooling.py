"""Pooling against PyTorch: ``max_pool2d`` (indices, ``ceil_mode``, dilation, padding),
``avg_pool2d`` (``ceil_mode``, ``count_include_pad``, ``divisor_override``),
``adaptive_avg_pool2d`` and their 1-d forms -- values, indices, gradients, double backward,
node names, dtypes, errors -- and the modules ``MaxPool1d/2d``, ``AvgPool1d/2d``,
``AdaptiveAvgPool1d/2d``. Each program is written once against a library handle ``lib``
(``torch`` or ``retrograd``); inputs come from NumPy, so both libraries see the same values
(distinct ones: a max-pooling window has no tie unless a test makes one)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from torch_parity import close, same


def functional(lib: Any) -> Any:
    """``lib.nn.functional`` (imported where the package does not import it)."""
    return importlib.import_module(f"{lib.__name__}.nn.functional")


def arr(seed: int, shape: tuple[int, ...]) -> Any:
    return np.random.default_rng(seed).standard_normal(shape)


def const(lib: Any, a: Any, dtype: str = "float64") -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype))


def check(call: Callable[[Any, Any], Any], shape: tuple[int, ...], dtype: str = "float64",
          tol: float = 1e-12, double: bool = True) -> None:
    """``call(lib, x)``: the output (values, shape, dtype, node name), the gradient in ``x``
    and, with ``double``, the first gradient under ``create_graph`` and the gradients of a
    random combination of its square in ``x`` and in the output's gradient (a double
    backward)."""

    def program(lib: Any) -> Any:
        x = lib.tensor(arr(1, shape), dtype=getattr(lib, dtype), requires_grad=True)
        out = call(lib, x)
        y = out[0] if isinstance(out, tuple) else out
        g = const(lib, arr(2, tuple(y.shape)), dtype).requires_grad_()
        (gx,) = lib.autograd.grad(y, [x], g, create_graph=double)
        res: dict[str, Any] = {"out": out, "shape": list(y.shape), "name": y.grad_fn.name(),
                               "dtype": str(y.dtype).rpartition(".")[2], "gx": gx}
        if double:
            c = const(lib, arr(3, tuple(gx.shape)), dtype)
            res["second"] = lib.autograd.grad((gx * gx * c).sum() + (gx * c).sum(), [x, g],
                                              allow_unused=True, materialize_grads=True)
        return res

    same(program, tol=tol)


# ---- max pooling -----------------------------------------------------------------------------
MAX2D: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((1, 2, 7, 5), {"kernel_size": 3, "stride": 2}),
    ((1, 2, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((2, 2, 7, 6), {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}),
    ((1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 1, 5, 5), {"kernel_size": 2, "stride": 2, "ceil_mode": True}),  # partial last window
    ((1, 2, 8, 7), {"kernel_size": (2, 3), "stride": 1, "dilation": (2, 1)}),
    ((1, 2, 9, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                    "ceil_mode": True}),
    ((3, 5, 6), {"kernel_size": 2, "stride": (1, 2)}),  # unbatched
    ((2, 7, 7), {"kernel_size": 3, "padding": 1, "ceil_mode": True}),  # unbatched
    ((1, 1, 3, 3), {"kernel_size": 3}),  # one window: the whole plane
]


def _kw_ids(cases: list[Any]) -> list[str]:
    return [f"{s}-{sorted(kw.items())}" for s, kw in cases]


@pytest.mark.parametrize("shape,kw", MAX2D, ids=_kw_ids(MAX2D))
def test_max_pool2d(shape: Any, kw: Any) -> None:
    check(lambda lib, x: functional(lib).max_pool2d(x, **kw), shape)


@pytest.mark.parametrize("shape,kw", MAX2D, ids=_kw_ids(MAX2D))
def test_max_pool2d_return_indices(shape: Any, kw: Any) -> None:
    """The int64 flat positions of the maxima in each input plane, as PyTorch's."""
    check(lambda lib, x: functional(lib).max_pool2d(x, return_indices=True, **kw), shape,
          double=False)


MAX1D: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 9), {"kernel_size": 2}),
    ((1, 2, 10), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 11), {"kernel_size": 2, "stride": 1, "dilation": 3}),
    ((3, 8), {"kernel_size": (3,), "stride": (2,)}),  # unbatched
]


@pytest.mark.parametrize("shape,kw", MAX1D, ids=_kw_ids(MAX1D))
@pytest.mark.parametrize("indices", [False, True])
def test_max_pool1d(shape: Any, kw: Any, indices: bool) -> None:
    check(lambda lib, x: functional(lib).max_pool1d(x, return_indices=indices, **kw), shape,
          double=not indices)


def test_max_pool1d_with_indices_function() -> None:
    check(lambda lib, x: lib.max_pool1d_with_indices(x, 3, 2, 1, 1, True), (2, 2, 8),
          double=False)


def test_max_pool_integer_input() -> None:
    def program(lib: Any) -> Any:
        F = functional(lib)
        x = lib.tensor(np.random.default_rng(1).integers(-50, 50, (2, 2, 5, 6)))
        return [F.max_pool2d(x, 2, padding=1, return_indices=True),
                F.max_pool2d(x.to(lib.int32), 3, 2, ceil_mode=True)]

    same(program, tol=0)


def test_max_pool_ties_and_nan() -> None:
    """A constant plane (every window ties) and a plane with a NaN: the same maxima, indices
    and gradients as PyTorch."""

    def program(lib: Any) -> Any:
        F = functional(lib)
        tie = lib.ones(1, 1, 4, 5, dtype=lib.float64, requires_grad=True)
        y, i = F.max_pool2d(tie, 2, 1, return_indices=True)
        (g,) = lib.autograd.grad(y.sum(), [tie])
        a = arr(4, (1, 1, 4, 4))
        a[0, 0, 1, 2] = np.nan
        x = lib.tensor(a, requires_grad=True)
        z, j = F.max_pool2d(x, 2, return_indices=True)
        (gz,) = lib.autograd.grad(z.sum(), [x])
        return [y, i, g, z, j, gz]

    same(program)


# ---- average pooling -------------------------------------------------------------------------
AVG2D: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((1, 2, 7, 5), {"kernel_size": 3, "stride": 2}),
    ((1, 2, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 7, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ((2, 2, 7, 6), {"kernel_size": (3, 2), "stride": (2, 1), "ceil_mode": True}),
    ((1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                    "count_include_pad": False}),
    ((1, 1, 5, 5), {"kernel_size": 2, "ceil_mode": True}),  # partial last window
    ((1, 2, 5, 6), {"kernel_size": 2, "stride": 1, "divisor_override": 3}),
    ((1, 2, 5, 6), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                    "divisor_override": 2}),
    ((3, 5, 6), {"kernel_size": 2, "stride": (1, 2), "padding": (1, 0)}),  # unbatched
]


@pytest.mark.parametrize("shape,kw", AVG2D, ids=_kw_ids(AVG2D))
def test_avg_pool2d(shape: Any, kw: Any) -> None:
    check(lambda lib, x: functional(lib).avg_pool2d(x, **kw), shape)


AVG1D: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 9), {"kernel_size": 2}),
    ((1, 2, 10), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 10), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ((3, 8), {"kernel_size": 3, "stride": 1}),  # unbatched
]


@pytest.mark.parametrize("shape,kw", AVG1D, ids=_kw_ids(AVG1D))
def test_avg_pool1d(shape: Any, kw: Any) -> None:
    check(lambda lib, x: functional(lib).avg_pool1d(x, **kw), shape)


def test_avg_pool_integer_input_divides_toward_zero() -> None:
    def program(lib: Any) -> Any:
        F = functional(lib)
        x = lib.tensor(np.random.default_rng(1).integers(-50, 50, (2, 2, 5, 6)))
        return [F.avg_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                F.avg_pool2d(x, 2, 1, divisor_override=3)]

    same(program, tol=0)


def test_float32() -> None:
    check(lambda lib, x: [functional(lib).avg_pool2d(x, 3, 2, 1),
                          functional(lib).max_pool2d(x, 3, 2, 1)][0] * 1.5
          + functional(lib).max_pool2d(x, 3, 2, 1),
          (2, 3, 7, 7), dtype="float32", tol=1e-6, double=False)


# ---- adaptive average pooling ----------------------------------------------------------------
ADAPTIVE2D: list[tuple[tuple[int, ...], Any]] = [
    ((2, 3, 6, 6), 3),
    ((1, 2, 7, 5), (3, 2)),  # uneven, overlapping windows
    ((1, 2, 5, 7), (4, 6)),
    ((1, 2, 3, 2), 5),  # larger than the input
    ((2, 2, 5, 6), (None, 4)),
    ((2, 2, 5, 6), (2, None)),
    ((3, 5, 6), (2, 3)),  # unbatched
    ((2, 3, 5, 4), 1),  # PyTorch's shortcut: a mean
    ((2, 3, 5, 4), (1, 1)),
]


@pytest.mark.parametrize("shape,size", ADAPTIVE2D,
                         ids=[f"{s}-{o}" for s, o in ADAPTIVE2D])
def test_adaptive_avg_pool2d(shape: Any, size: Any) -> None:
    check(lambda lib, x: functional(lib).adaptive_avg_pool2d(x, size), shape)


@pytest.mark.parametrize("shape,size", [((2, 3, 7), 3), ((1, 2, 4), 6), ((3, 7), 2),
                                        ((2, 2, 5), 1)])
def test_adaptive_avg_pool1d(shape: Any, size: Any) -> None:
    check(lambda lib, x: functional(lib).adaptive_avg_pool1d(x, size), shape)


def test_empty_batches() -> None:
    def program(lib: Any) -> Any:
        F = functional(lib)
        x = lib.zeros(0, 2, 5, 5, dtype=lib.float64, requires_grad=True)
        ys = [F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 2)]
        (g,) = lib.autograd.grad(sum(y.sum() for y in ys), [x])
        return [[list(y.shape) for y in ys], list(g.shape),
                list(F.adaptive_avg_pool2d(lib.zeros(1, 0, 4, 4), 2).shape),
                list(F.adaptive_avg_pool2d(lib.zeros(1, 2, 4, 4), 0).shape)]

    same(program)


# ---- errors ----------------------------------------------------------------------------------
def _z(lib: Any, *shape: int) -> Any:
    return lib.zeros(*shape, dtype=lib.float64)


ERRORS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("max: zero kernel", lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 0, 1),
     "kernel size should be greater than zero, but got kH: 0 kW: 0"),
    ("max: zero kernel, default stride",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 0), "stride should not be zero"),
    ("max: negative stride", lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 2, -1),
     "stride should be greater than zero, but got dH: -1 dW: -1"),
    ("max: zero dilation",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 2, 1, dilation=0),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
    ("max: padding over half the kernel",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 2, padding=2),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    ("max: padding over half the undilated kernel",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 9, 9), 3, padding=(2, 1), dilation=2),
     "pad should be smaller than or equal to half of kernel size, but got padW = 1, padH = 2, "
     "kW = 3, kH = 3"),
    ("max: negative padding",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), 2, padding=-1),
     "pad must be non-negative, but got pad: -1"),
    ("max: 2-d input", lambda lib: functional(lib).max_pool2d(_z(lib, 5, 5), 2),
     "non-empty 3D or 4D (batch mode) tensor expected for input"),
    ("max: empty plane", lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 0, 5), 2),
     "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
     "got:[1, 2, 0, 5]"),
    ("max: kernel larger than input",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 2, 2), 3),
     "Given input size: (2x2x2). Calculated output size: (2x0x0). Output size is too small"),
    ("max: kernel of three sizes",
     lambda lib: functional(lib).max_pool2d(_z(lib, 1, 2, 5, 5), (2, 2, 2)),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    ("max: bool input",
     lambda lib: functional(lib).max_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.bool), 2),
     "\"max_pool2d\" not implemented for 'Bool'"),
    ("max1d: zero kernel", lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 5), 0),
     "max_pool1d() kernel_size must be greater than zero, but got 0"),
    ("max1d: zero stride", lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 5), 2, 0),
     "max_pool1d() stride must be greater than zero, but got 0"),
    ("max1d: padding over half",
     lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 5), 2, 1, 2),
     "max_pool1d() padding should be at most half of kernel size, but got padding=2 and "
     "kernel_size=2"),
    ("max1d: zero dilation",
     lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 5), 2, 1, 0, 0),
     "max_pool1d() dilation must be greater than zero, but got 0"),
    ("max1d: kernel larger than input", lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 2), 3),
     "max_pool1d() Invalid computed output size: 0"),
    ("max1d: two kernel sizes", lambda lib: functional(lib).max_pool1d(_z(lib, 1, 2, 5), (2, 2)),
     "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
     "size 2"),
    ("max1d: 4-d input", lambda lib: functional(lib).max_pool1d(_z(lib, 1, 1, 5, 5), 2),
     "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
     "input, but got:[1, 1, 5, 5]"),
    ("avg: padding over half the kernel",
     lambda lib: functional(lib).avg_pool2d(_z(lib, 1, 2, 5, 5), 2, padding=2),
     "pad should be at most half of effective kernel size"),
    ("avg: zero divisor",
     lambda lib: functional(lib).avg_pool2d(_z(lib, 1, 2, 5, 5), 2, divisor_override=0),
     "divisor must be not zero"),
    ("avg: 2-d input", lambda lib: functional(lib).avg_pool2d(_z(lib, 5, 5), 2),
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    ("avg: kernel larger than input",
     lambda lib: functional(lib).avg_pool2d(_z(lib, 1, 2, 2, 2), 3), "Output size is too small"),
    ("avg: int32 input",
     lambda lib: functional(lib).avg_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.int32), 2),
     "\"avg_pool2d\" not implemented for 'Int'"),
    ("avg1d: 4-d input", lambda lib: functional(lib).avg_pool1d(_z(lib, 1, 1, 5, 5), 2),
     "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self'"),
    ("adaptive: 2-d input", lambda lib: functional(lib).adaptive_avg_pool2d(_z(lib, 5, 5), 2),
     "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]"),
    ("adaptive: negative size",
     lambda lib: functional(lib).adaptive_avg_pool2d(_z(lib, 1, 5, 5), -1),
     "elements of output_size must be greater than or equal to 0 but received {-1, -1}"),
    ("adaptive: three sizes, 4-d input",
     lambda lib: functional(lib).adaptive_avg_pool2d(_z(lib, 1, 1, 5, 5), (1, 2, 3)),
     "adaptive_avg_pool2d: output_size must be 2"),
    ("adaptive: three sizes, 3-d input",
     lambda lib: functional(lib).adaptive_avg_pool2d(_z(lib, 1, 5, 5), (1, 2, 3)),
     "Input dimension should be at least 4"),
    ("adaptive: empty plane",
     lambda lib: functional(lib).adaptive_avg_pool2d(_z(lib, 1, 2, 0, 5), 2),
     "Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     "[1, 2, 0, 5] with dimension 2 being empty"),
    ("adaptive: integer input",
     lambda lib: functional(lib).adaptive_avg_pool2d(lib.zeros(1, 2, 4, 4, dtype=lib.int64), 2),
     "\"adaptive_avg_pool2d\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("program,phrase", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_as_torch(program: Callable[[Any], Any], phrase: str) -> None:
    same(program, phrase)


# ---- modules ---------------------------------------------------------------------------------
MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("MaxPool2d", (2,), {}, (2, 3, 6, 5)),
    ("MaxPool2d", (3, 2, 1), {"dilation": 1, "ceil_mode": True}, (1, 2, 7, 6)),
    ("MaxPool2d", ((2, 3),), {"stride": 1, "dilation": (2, 1)}, (2, 7, 6)),
    ("MaxPool2d", (2,), {"return_indices": True}, (1, 2, 4, 5)),
    ("MaxPool1d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 8)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (1, 2, 7, 6)),
    ("AvgPool2d", (2,), {"ceil_mode": True, "divisor_override": 3}, (2, 5, 5)),
    ("AvgPool1d", (3, 2, 1), {}, (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 7, 5)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
]


@pytest.mark.parametrize("name,args,kw,xs", MODULES,
                         ids=[f"{n}{a}{sorted(k.items())}" for n, a, k, _ in MODULES])
def test_module(name: str, args: Any, kw: Any, xs: Any) -> None:
    """``repr``, attributes, output and gradient of each pooling module."""

    def program(lib: Any) -> Any:
        m = getattr(lib.nn, name)(*args, **kw)
        x = lib.tensor(arr(1, xs), requires_grad=True)
        out = m(x)
        y = out[0] if isinstance(out, tuple) else out
        (g,) = lib.autograd.grad(y, [x], const(lib, arr(2, tuple(y.shape))))
        attrs = {a: getattr(m, a, None) for a in ("kernel_size", "stride", "padding",
                                                  "dilation", "ceil_mode", "return_indices",
                                                  "count_include_pad", "divisor_override",
                                                  "output_size")}
        return {"repr": repr(m), "attrs": attrs, "out": out, "g": g,
                "params": len(list(m.parameters()))}

    same(program)


# ---- every backend ---------------------------------------------------------------------------
def _pooled_everywhere(device: str) -> Any:
    """Integer and float poolings and their gradients on ``device``, as nested lists."""
    import retrograd as rg

    F = rg.nn.functional
    ints = rg.tensor(np.random.default_rng(1).integers(-50, 50, (2, 2, 5, 6)), device=device)
    x = rg.tensor(arr(2, (2, 2, 7, 6)), device=device, requires_grad=True)
    ys = [F.max_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
          F.adaptive_avg_pool2d(x, (3, 4))]
    (g,) = rg.autograd.grad(sum((y * y).sum() for y in ys), [x])
    return [F.avg_pool2d(ints, 3, 2, 1, count_include_pad=False).tolist(),
            F.max_pool2d(ints, 2, return_indices=True)[1].tolist(),
            [y.tolist() for y in ys], g.tolist()]


def test_every_backend_pools_as_cpu() -> None:
    """The kernels are written against the Array API: each registered backend gives the CPU
    backend's results (which match PyTorch's above)."""
    import retrograd as rg

    want = _pooled_everywhere("cpu")
    checked = []
    for device in rg.backends.available_backends():
        try:
            rg.zeros(1, device=device)
        except rg.RetrogradError as exc:  # installed but unusable here (a GPU backend)
            if "not available" not in str(exc):
                raise
            continue
        assert close(_pooled_everywhere(device), want), device
        checked.append(device)
    assert "cpu" in checked
