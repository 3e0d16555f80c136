"""The fast elementwise kernels of the transformer step, against PyTorch: ``erf`` (Cody's
rational approximations: ulps against ``math.erf`` and ``torch.erf`` on dense grids, the
special values), ``gelu_backward`` (both forms, float32 and float64, double backward) and the
LayerNorm rule that reuses the forward's statistics (gradients and double backward)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.backends import reference_kernels
from retrograd.backends.numpy import backend as cpu

_GRID = np.concatenate([
    np.linspace(-7.0, 7.0, 140001),
    np.linspace(-0.5, 0.5, 20001),
    np.linspace(0.45, 0.5, 5001),  # the series' edge
    np.linspace(3.99, 4.01, 2001),  # the two erfc ranges' edge
    np.linspace(5.9, 6.1, 2001),  # where erf rounds to 1
    np.geomspace(1e-300, 1e-3, 3001),
    -np.geomspace(5e-324, 1e-307, 301),  # subnormals
])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    want = want.astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(want.dtype))


def test_erf_float64_within_two_ulps_of_math_and_torch_on_a_dense_grid():
    got = cpu.ops.erf(_GRID)
    exact = np.array([math.erf(v) for v in _GRID])
    assert _ulps(got, exact).max() <= 2.0
    assert (_ulps(got, exact) > 1.0).mean() < 1e-3  # nearly all within one ulp
    assert _ulps(got, torch.erf(torch.from_numpy(_GRID)).numpy()).max() <= 2.0


def test_erf_special_values_as_torch():
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 5e-324, -5e-324, 2.2e-308, 6.0, -26.0])
    got = cpu.ops.erf(x)
    want = torch.erf(torch.from_numpy(x)).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_erf_float32_is_the_float64_value_rounded_once():
    x = _GRID.astype(np.float32)
    got = cpu.ops.erf(x)
    assert got.dtype == np.float32
    rounded = np.array([math.erf(float(v)) for v in x]).astype(np.float32)
    assert np.array_equal(got, rounded)
    torch_f32 = torch.erf(torch.from_numpy(x)).numpy()
    assert np.abs(got - torch_f32).max() <= np.spacing(np.float32(1.0))


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (7,), (2, 40000)])
def test_erf_any_shape_through_the_op(shape):
    a = np.random.default_rng(0).standard_normal(shape) * 3
    got = rg.erf(rg.tensor(a)).numpy()
    want = torch.erf(torch.tensor(a)).numpy()
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=5e-16, atol=0)  # two ulps


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_gradient_as_torch(approximate, dtype):
    a = np.random.default_rng(1).standard_normal((5, 70000)) * 2.5
    g = np.random.default_rng(2).standard_normal(a.shape)
    # the tanh form cancels near -5 (1 + t against 0.5 x (1 - t^2) b ...): NumPy's and
    # torch's tanh, an ulp apart there, leave a few ulps of 1 between the two
    tol = 1e-5 if dtype == "float32" else 1e-14
    grads = []
    for lib in (torch, rg):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.gelu(x, approximate=approximate)
        (gx,) = lib.autograd.grad(y, x, lib.tensor(g, dtype=getattr(lib, dtype)))
        assert str(gx.dtype).endswith(dtype)
        grads.append(gx.detach().numpy().astype(np.float64))
    assert np.allclose(grads[1], grads[0], rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradient_of_a_broadcast_upstream_gradient(approximate):
    a = np.linspace(-5, 5, 301)
    results = []
    for lib in (torch, rg):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        lib.nn.functional.gelu(x, approximate=approximate).sum().backward()
        results.append(x.grad.numpy())
    assert np.allclose(results[1], results[0], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_double_backward_as_torch(approximate):
    a = np.linspace(-4, 4, 41)
    results = []
    for lib in (torch, rg):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.gelu(x, approximate=approximate)
        (gx,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
        results.append((gx.detach().numpy(), ggx.numpy()))
    for mine, theirs in zip(results[1], results[0]):
        assert np.allclose(mine, theirs, rtol=1e-12, atol=1e-14)


def test_gelu_backward_kernel_on_the_strict_array_namespace():
    strict = pytest.importorskip("array_api_strict")
    kernels = reference_kernels(strict)
    a = np.linspace(-7, 7, 1001)
    g = np.cos(a)
    assert np.allclose(np.asarray(kernels["erf"](strict.asarray(a))), cpu.ops.erf(a),
                       rtol=0, atol=0)
    for approximate in ("none", "tanh"):
        got = kernels["gelu_backward"](strict.asarray(g), strict.asarray(a), approximate)
        want = cpu.ops.gelu_backward(g, a, approximate)
        assert np.array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forward_kernel_rounds_as_the_formula_and_as_torch(approximate, dtype):
    """The blockwise forward kernel gives the formula's bits (each step rounded in x's dtype,
    erf rounded once from float64), across blocks, on NumPy and on the strict namespace; and
    PyTorch's values to its tolerance."""
    from retrograd.ops.pointwise import _K_BETA, _K_KAPPA, _SQRT1_2

    rng = np.random.default_rng(5)
    x = (rng.standard_normal(70_001) * 3).astype(dtype)
    x[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    F = cpu.ops
    if approximate == "none":
        want = F.mul(F.mul(x, 0.5), F.add(F.erf(F.mul(x, _SQRT1_2)), 1.0))
    else:
        inner = F.mul(F.add(x, F.mul(F.mul(F.mul(x, x), x), _K_KAPPA)), _K_BETA)
        want = F.mul(F.mul(x, 0.5), F.add(F.tanh(inner), 1.0))
    got = rg.nn.functional.gelu(rg.tensor(x), approximate=approximate).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    strict = pytest.importorskip("array_api_strict")
    on_strict = reference_kernels(strict)["gelu"](strict.asarray(x), approximate)
    assert np.array_equal(np.asarray(on_strict), want, equal_nan=True)
    oracle = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    tol = 1e-6 if dtype == np.float32 else 1e-13  # near -3, 1 + erf cancels: absolute
    finite = np.isfinite(oracle)
    scale = float(np.max(np.abs(oracle[finite])))
    assert np.allclose(got[finite], oracle[finite], rtol=tol, atol=tol * scale)


def _layer_norm_program(lib, create_graph):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((4, 6, 8)) * 3 + 1, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(rng.standard_normal((6, 8)), dtype=lib.float64, requires_grad=True)
    b = lib.tensor(rng.standard_normal((6, 8)), dtype=lib.float64, requires_grad=True)
    g = lib.tensor(rng.standard_normal((4, 6, 8)), dtype=lib.float64)
    y = lib.nn.functional.layer_norm(x, (6, 8), w, b, 1e-5)
    grads = lib.autograd.grad(y, (x, w, b), g, create_graph=create_graph)
    if not create_graph:
        return [t.numpy() for t in grads]
    second = lib.autograd.grad(sum((t * t).sum() for t in grads), (x, w))
    return [t.detach().numpy() for t in grads] + [t.numpy() for t in second]


@pytest.mark.parametrize("create_graph", [False, True])
def test_layer_norm_gradients_as_torch(create_graph):
    mine = _layer_norm_program(rg, create_graph)
    theirs = _layer_norm_program(torch, create_graph)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert np.allclose(a, b, rtol=1e-10, atol=1e-12)


def test_layer_norm_without_affine_and_float32_as_torch():
    a = np.random.default_rng(4).standard_normal((3, 5, 64)).astype(np.float32)
    results = []
    for lib in (torch, rg):
        x = lib.tensor(a, requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (64,))
        (y * y * y).sum().backward()
        results.append(x.grad.numpy())
    assert np.allclose(results[1], results[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_gradient_by_bit_mask_as_torch(dtype):
    """The CPU backend's ReLU backward selects by a bit mask: the kept gradient keeps its
    -0.0, inf and NaN, a dropped one is +0.0, a NaN result passes the gradient -- PyTorch's
    threshold_backward, bit for bit, out of place and in place."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((64, 33))
    x[0, :4] = [np.nan, 0.0, -0.0, 2.0]
    g = rng.standard_normal((64, 33))
    g[0, 4:8] = [np.inf, np.nan, -0.0, -np.inf]
    g[1, :3] = -0.0

    def grads(lib):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        gt = lib.tensor(g, dtype=getattr(lib, dtype))
        (a,) = lib.autograd.grad(lib.relu(xt), xt, gt)
        (b,) = lib.autograd.grad(lib.relu(xt * 1.0), xt, gt)  # the walk may reuse its buffer
        return [t.detach().numpy() for t in (a, b)]

    for got, want in zip(grads(rg), grads(torch)):
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))
