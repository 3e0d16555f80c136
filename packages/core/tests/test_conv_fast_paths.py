"""NumPy's forms of the convolution and max-pooling kernels (``kernels_conv_numpy.py``)
against the Array-API forms they replace on the CPU backend (``kernels_conv.kernels(np,
fast=False)``), and against PyTorch where the two could agree with each other but not with
it: the max-pooling rule for ties and NaN, the layout of a convolution's result.

Configurations are drawn at random (seeded): one and two spatial dimensions, strides,
paddings, dilations, groups, odd sizes, empty batches, ``ceil_mode``, overlapping windows,
ties, several NaN in one window, infinities, integer inputs; a small chunk size makes the
batch run in several chunks with a remainder."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.backends import kernels_conv, kernels_conv_numpy
from retrograd.backends.kernels_conv import out_size

GENERIC = kernels_conv.kernels(np, fast=False)
FAST = kernels_conv.kernels(np)


def test_numpy_namespace_gets_the_numpy_forms_and_others_keep_the_generic_ones() -> None:
    for name, fn in kernels_conv_numpy.kernels().items():
        assert FAST[name] is fn
        assert GENERIC[name] is not fn
    strict = pytest.importorskip("array_api_strict")
    table = kernels_conv.kernels(strict)
    assert all(table[name] is not fn for name, fn in kernels_conv_numpy.kernels().items())


@pytest.fixture(params=[(False, 0), (True, 0), (False, 10**6), (True, 10**6)],
                ids=["batch-first", "batch-first-chunks", "batch-last", "batch-last-chunks"])
def layouts(request: Any, monkeypatch: Any) -> None:
    """Every layout the gradient kernels choose between (batch-first or batch-last rows),
    with the default chunk size or one that cuts every batch into several chunks."""
    small, short_rows = request.param
    monkeypatch.setattr(kernels_conv_numpy, "SHORT_ROWS", short_rows)
    if small:
        monkeypatch.setattr(kernels_conv_numpy, "CHUNK_BYTES", 700)
        monkeypatch.setattr(kernels_conv_numpy, "WEIGHT_CHUNK_BYTES", 500)


def _conv_configs(n: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(11)
    out = []
    while len(out) < n:
        nd = int(rng.integers(1, 3))
        groups = int(rng.choice([1, 1, 2, 3]))
        c = groups * int(rng.integers(1, 4))
        o = groups * int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 5, nd))
        s = tuple(int(v) for v in rng.integers(1, 4, nd))
        p = tuple(int(v) for v in rng.integers(0, 3, nd))
        d = tuple(int(v) for v in rng.integers(1, 3, nd))
        sp = tuple(int(v) for v in rng.integers(3, 11, nd))
        osz = tuple(out_size(m, kk, ss, pp, dd) for m, kk, ss, pp, dd in zip(sp, k, s, p, d))
        if min(osz) < 1:
            continue
        batch = int(rng.choice([0, 1, 3, 5]))
        out.append({"x": (batch, c) + sp, "w": (o, c // groups) + k, "s": s, "p": p, "d": d,
                    "groups": groups, "o": osz})
    return out


CONVS = _conv_configs(40)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cfg", CONVS, ids=[str(i) for i in range(len(CONVS))])
def test_convolution_kernels_equal_the_generic_forms(cfg: dict[str, Any], dtype: Any,
                                                     layouts: None) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(cfg["x"]).astype(dtype)
    w = rng.standard_normal(cfg["w"]).astype(dtype)
    g = rng.standard_normal(cfg["x"][:1] + (cfg["w"][0],) + cfg["o"]).astype(dtype)
    args = (cfg["s"], cfg["p"], cfg["d"], cfg["groups"])
    tol = 1e-12 if dtype == np.float64 else 1e-5
    k = cfg["w"][2:]
    sp = cfg["x"][2:]
    wt = np.ascontiguousarray(np.swapaxes(w.reshape((cfg["groups"], -1) + w.shape[1:]), 1, 2)
                              .reshape((-1, w.shape[0] // cfg["groups"]) + k))
    for name, call in (("conv_nd", (x, w) + args),
                       ("conv_weight_nd", (x, g, k) + args),
                       ("conv_transpose_nd", (g, w) + args + (sp,)),
                       ("conv_transpose_nd", (x, wt) + args + (tuple(
                           (m - 1) * s - 2 * p + d * (kk - 1) + 1
                           for m, s, p, d, kk in zip(sp, *args[:3], k)),))):
        want = GENERIC[name](*call)
        got = FAST[name](*call)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max(
            initial=0.0)), err_msg=name)


def _pool_configs(n: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(5)
    out = []
    while len(out) < n:
        k = tuple(int(v) for v in rng.integers(1, 4, 2))
        s = tuple(int(v) for v in rng.integers(1, 4, 2))
        d = tuple(int(v) for v in rng.integers(1, 3, 2))
        p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
        ceil = bool(rng.integers(0, 2))
        sp = tuple(int(v) for v in rng.integers(2, 10, 2))
        if any(pp > ((kk - 1) * dd + 1) // 2 for pp, kk, dd in zip(p, k, d)):
            continue
        o = tuple(out_size(m, kk, ss, pp, dd, ceil) for m, kk, ss, pp, dd in zip(sp, k, s, p, d))
        if min(o) < 1:
            continue
        out.append({"shape": (int(rng.integers(0, 3)), 2) + sp, "k": k, "s": s, "p": p,
                    "d": d, "o": o})
    out.append({"shape": (2, 3, 8, 6), "k": (2, 2), "s": (2, 2), "p": (0, 0), "d": (1, 1),
                "o": (4, 3)})  # the CNN's pooling: disjoint windows
    return out


POOLS = _pool_configs(30)


def _pool_input(kind: str, shape: tuple[int, ...], rng: Any) -> Any:
    if kind == "distinct":
        return rng.standard_normal(shape)
    if kind == "ties":  # few values: windows tie, -0.0 and 0.0 among them
        return rng.choice(np.array([-1.0, -0.0, 0.0, 2.0]), shape)
    if kind == "nan":  # several NaN in a window, infinities
        a = rng.choice(np.array([np.nan, np.inf, -np.inf, 1.0, -3.0, 0.5]), shape)
        return a
    return rng.integers(-3, 4, shape)  # integers


@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "int64", "int32"])
@pytest.mark.parametrize("cfg", POOLS, ids=[str(i) for i in range(len(POOLS))])
def test_max_pooling_kernels_equal_the_generic_forms(cfg: dict[str, Any], kind: str) -> None:
    rng = np.random.default_rng(8)
    a = _pool_input(kind, cfg["shape"], rng)
    dtypes = [np.dtype(kind)] if kind.startswith("int") else [np.float64, np.float32]
    win = (cfg["k"], cfg["s"], cfg["p"], cfg["d"])
    sp = cfg["shape"][2:]
    for dtype in dtypes:
        x = a.astype(dtype)
        want, want_arg = GENERIC["max_pool_nd"](x, *win, cfg["o"])
        got, got_arg = FAST["max_pool_nd"](x, *win, cfg["o"])
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))  # -0.0 / 0.0 as the first
        np.testing.assert_array_equal(got_arg, want_arg)
        np.testing.assert_array_equal(FAST["max_pool_nd_indices"](got_arg, sp, *win),
                                      GENERIC["max_pool_nd_indices"](want_arg, sp, *win))
        if kind.startswith("int"):
            continue
        for g in (rng.standard_normal(want.shape),
                  rng.choice(np.array([np.inf, np.nan, 1.0, -2.0]), want.shape)):
            g = g.astype(dtype)
            got_g = FAST["max_pool_nd_backward"](g, got_arg, sp, *win)
            want_g = GENERIC["max_pool_nd_backward"](g, want_arg, sp, *win)
            np.testing.assert_array_equal(got_g, want_g)
            assert np.array_equal(np.signbit(got_g), np.signbit(want_g))  # +0.0 off the maxima
        h = rng.standard_normal(x.shape).astype(dtype)
        np.testing.assert_array_equal(FAST["max_pool_nd_select"](h, got_arg, *win),
                                      GENERIC["max_pool_nd_select"](h, want_arg, *win))


def test_max_pool_nan_and_tie_rule_is_pytorchs() -> None:
    """PyTorch's rule: the first of equal maxima, the *last* NaN of a window; the generic
    form, NumPy's and PyTorch agree on values, indices and gradients."""
    nan = math.nan
    a = np.array([[[[nan, 1.0, nan, 2.0], [3.0, 3.0, -0.0, 0.0]],
                   [[1.0, nan, 5.0, 5.0], [nan, 4.0, 5.0, 5.0]]]])
    kw = {"kernel_size": 2, "return_indices": True}
    want_y, want_i = tF.max_pool2d(torch.tensor(a), **kw)
    x = rg.tensor(a, requires_grad=True)
    y, i = F.max_pool2d(x, **kw)
    np.testing.assert_array_equal(y.detach().numpy(), want_y.numpy())
    np.testing.assert_array_equal(i.numpy(), want_i.numpy())
    _, generic_arg = GENERIC["max_pool_nd"](a, (2, 2), (2, 2), (0, 0), (1, 1), (1, 2))
    np.testing.assert_array_equal(
        GENERIC["max_pool_nd_indices"](generic_arg, (2, 4), (2, 2), (2, 2), (0, 0), (1, 1)),
        want_i.numpy())
    tx = torch.tensor(a, requires_grad=True)
    (-tF.max_pool2d(tx, 2)).sum().backward()  # negative gradients: +0.0 off the maxima
    (-y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert np.array_equal(np.signbit(x.grad.numpy()), np.signbit(tx.grad.numpy()))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cnn_layers_match_pytorch_with_its_layout(dtype: str) -> None:
    """conv2d + relu + max_pool2d (the CNN step's layers): values, gradients and the result's
    strides, as PyTorch's (a C-contiguous ``(N, O, H, W)``)."""
    rng = np.random.default_rng(2)
    arrays = {"x": rng.standard_normal((5, 3, 13, 12)), "w": rng.standard_normal((4, 3, 3, 3)),
              "b": rng.standard_normal(4)}
    results = {}
    for lib, fn in ((torch, tF), (rg, F)):
        t = {k: lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True)
             for k, v in arrays.items()}
        conv = fn.conv2d(t["x"], t["w"], t["b"])
        out = fn.max_pool2d(fn.relu(conv), 2)
        out.sum().backward()
        results[lib.__name__] = (conv.stride(), out, t)
    (tstride, tout, tt), (rstride, rout, rt) = results["torch"], results["retrograd"]
    assert rstride == tstride
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(rout.detach().numpy(), tout.detach().numpy(), rtol=tol, atol=tol)
    for k in arrays:
        np.testing.assert_allclose(rt[k].grad.numpy(), tt[k].grad.numpy(), rtol=tol * 10,
                                   atol=tol * 10)


def test_max_pool_positions_are_small_where_the_window_is() -> None:
    """The saved window positions take one byte each where a window has at most 255
    elements (PyTorch saves int64 indices): part of the CNN step's smaller peak memory."""
    x = np.random.default_rng(0).standard_normal((2, 2, 20, 20))
    _, arg = FAST["max_pool_nd"](x, (2, 2), (2, 2), (0, 0), (1, 1), (10, 10))
    assert arg.dtype == np.uint8
    _, arg = FAST["max_pool_nd"](x, (16, 16), (4, 4), (0, 0), (1, 1), (2, 2))
    assert arg.dtype == np.int64
    idx = FAST["max_pool_nd_indices"](arg, (20, 20), (16, 16), (4, 4), (0, 0), (1, 1))
    _, want = tF.max_pool2d(torch.tensor(x), 16, 4, return_indices=True)
    np.testing.assert_array_equal(idx, want.numpy())


def test_generic_forms_run_on_a_strict_array_api_namespace() -> None:
    """The Array-API forms (what CuPy and other namespaces run) on ``array_api_strict``, which
    refuses anything outside the standard: the NumPy forms' results."""
    xp = pytest.importorskip("array_api_strict")
    table = kernels_conv.kernels(xp)
    rng = np.random.default_rng(4)

    def run(name: str, *args: Any) -> None:
        conv = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        got = table[name](*conv)
        want = FAST[name](*args)
        for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12, err_msg=name)

    for cfg in CONVS[:8]:
        x = rng.standard_normal(cfg["x"])
        w = rng.standard_normal(cfg["w"])
        g = rng.standard_normal(cfg["x"][:1] + (cfg["w"][0],) + cfg["o"])
        args = (cfg["s"], cfg["p"], cfg["d"], cfg["groups"])
        run("conv_nd", x, w, *args)
        run("conv_weight_nd", x, g, cfg["w"][2:], *args)
        run("conv_transpose_nd", g, w, *args, cfg["x"][2:])
    for cfg in POOLS[:8]:
        x = _pool_input("nan", cfg["shape"], rng)
        win = (cfg["k"], cfg["s"], cfg["p"], cfg["d"])
        run("max_pool_nd", x, *win, cfg["o"])
        _, arg = FAST["max_pool_nd"](x, *win, cfg["o"])
        arg = arg.astype(np.int64)
        g = rng.standard_normal(arg.shape)
        run("max_pool_nd_backward", g, arg, cfg["shape"][2:], *win)
        if cfg["d"] == (1, 1):
            avg = (cfg["k"], cfg["s"], cfg["p"], cfg["o"], True, None)
            y = table["avg_pool_nd"](xp.asarray(np.nan_to_num(x)), *avg)
            np.testing.assert_allclose(np.asarray(y), GENERIC["avg_pool_nd"](
                np.nan_to_num(x), *avg), rtol=1e-12)


def _strided(a: Any) -> Any:
    """``a``'s values in a non-contiguous array (its last two axes swapped in memory)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


@pytest.mark.parametrize("cfg", CONVS[:10], ids=[str(i) for i in range(10)])
def test_kernels_take_non_contiguous_operands(cfg: dict[str, Any]) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal(cfg["x"])
    w = rng.standard_normal(cfg["w"])
    g = rng.standard_normal(cfg["x"][:1] + (cfg["w"][0],) + cfg["o"])
    args = (cfg["s"], cfg["p"], cfg["d"], cfg["groups"])
    for name, plain, strided in (
            ("conv_nd", (x, w) + args, (_strided(x), _strided(w)) + args),
            ("conv_weight_nd", (x, g, cfg["w"][2:]) + args,
             (_strided(x), _strided(g), cfg["w"][2:]) + args),
            ("conv_transpose_nd", (g, w) + args + (cfg["x"][2:],),
             (_strided(g), _strided(w)) + args + (cfg["x"][2:],))):
        np.testing.assert_allclose(FAST[name](*strided), GENERIC[name](*plain), rtol=1e-12,
                                   atol=1e-12, err_msg=name)
    pooled = _strided(rng.standard_normal((2, 3, 7, 9)))
    vals, arg = FAST["max_pool_nd"](pooled, (2, 3), (2, 2), (1, 1), (1, 1), (4, 4))
    want, want_arg = GENERIC["max_pool_nd"](np.ascontiguousarray(pooled), (2, 3), (2, 2),
                                            (1, 1), (1, 1), (4, 4))
    np.testing.assert_array_equal(vals, want)
    np.testing.assert_array_equal(arg, want_arg)
