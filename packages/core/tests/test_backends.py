"""The backend protocol (retrograd.backends.base), the registry and the layering rule that lets
a backend plug in without touching core."""

import ast
import pathlib
from importlib.metadata import entry_points

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import (
    COMPOSITES,
    Backend,
    get_backend,
    reference_kernels,
    register_backend,
    unregister_backend,
)

SRC = pathlib.Path(rg.__file__).parent


def test_cpu_is_registered_as_entry_point():
    eps = {ep.name: ep.value for ep in entry_points(group="retrograd.backends")}
    assert eps.get("cpu") == "retrograd.backends.numpy:backend"
    be = get_backend("cpu")
    assert be.name == "cpu" and be.xp is np and be.is_available()


def test_protocol_surface():
    be = get_backend("cpu")
    for attr in ("name", "xp", "kernels", "is_available", "asarray", "to_numpy"):
        assert hasattr(be, attr)
    for k in ("linear_relu_backward", "accumulate_", "tanh_backward", "cross_entropy_backward"):
        assert callable(be.kernels[k])
    assert set(COMPOSITES) <= set(be.kernels)


@pytest.mark.parametrize("layer", ["ops", "autograd"])
def test_ops_and_autograd_never_import_numpy_or_cupy(layer):
    for path in (SRC / layer).rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for n in names:
                root = n.split(".")[0]
                assert root not in ("numpy", "cupy", "retrograd_cuda",
                                    "retrograd_conformance"), f"{path.name} imports {n}"


@pytest.fixture
def strict_backend():
    xp = pytest.importorskip("array_api_strict")
    be = Backend("strict", xp)
    register_backend("strict", be)
    yield be
    unregister_backend("strict")


def test_a_new_backend_needs_no_change_to_core(strict_backend):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((4, 3))
    wa = rng.standard_normal((2, 3))
    results = []
    for device in ("cpu", "strict"):
        x = rg.tensor(xa, dtype=rg.float64, device=device)
        w = rg.tensor(wa, dtype=rg.float64, device=device, requires_grad=True)
        y = rg.nn.functional.linear(x, w).tanh()
        loss = rg.logsumexp(y * y, dim=1).mean()
        loss.backward()
        assert str(w.grad.device) == device
        results.append(np.asarray(w.grad.cpu().numpy()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    assert isinstance(w._data, strict_backend.array_type)


def test_kernel_override_is_used_by_the_walk(strict_backend):
    calls = []
    original = strict_backend.kernels["tanh_backward"]

    def counting(g, y):
        calls.append(1)
        return original(g, y)

    strict_backend.override(tanh_backward=counting)
    x = rg.tensor([0.1, 0.2], dtype=rg.float64, device="strict", requires_grad=True)
    rg.tanh(x).sum().backward()
    assert calls == [1]


def test_second_backward_accumulates_into_a_grad_that_was_a_broadcast_view(strict_backend):
    """The first gradient reaching a leaf is a read-only broadcast (sum's backward); an array
    type with no ``base`` cannot say so, so the commit copies it and a second backward can add
    into ``.grad`` in place (found by the conformance fuzzer on array-api-strict)."""
    for device in ("cpu", "strict"):
        x = rg.tensor([0.5, -1.0, 2.0], dtype=rg.float64, device=device, requires_grad=True)
        s = x.sum(dim=0)
        y = rg.exp(rg.tanh(s))
        y.backward(rg.tensor(0.5, dtype=rg.float64, device=device), retain_graph=True)
        y.backward(rg.tensor(1.5, dtype=rg.float64, device=device))
        d = np.exp(np.tanh(0.5 + -1.0 + 2.0)) * (1 - np.tanh(1.5) ** 2)
        np.testing.assert_allclose(np.asarray(x.grad.cpu().numpy()), np.full(3, 2.0 * d),
                                   rtol=1e-12)


def test_reference_kernels_are_written_against_xp():
    table = reference_kernels(np)
    g = np.ones((2, 3))
    np.testing.assert_allclose(table["reduce_to"](g, (1, 3)), np.full((1, 3), 2.0))
    gx, gw, gb = table["linear_relu_backward"](g, np.ones((2, 3)), np.ones((2, 4)),
                                                np.ones((3, 4)), True, True, True)
    assert gx.shape == (2, 4) and gw.shape == (3, 4) and gb.tolist() == [2.0, 2.0, 2.0]


def test_registering_bad_names():
    with pytest.raises(ValueError, match="without ':'"):
        register_backend("a:b", get_backend("cpu"))


def test_devices_compare_to_strings():
    t = rg.ones(2)
    assert t.device == "cpu" and str(t.device) == "cpu" and t.device == rg.device("cpu")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_cross_entropy_kernels_equal_the_reference_composite(dtype, reduction):
    """The CPU backend's cross-entropy kernels (index instead of a one-hot matrix, buffers
    reused) must give exactly the reference composite's values, forward and backward."""
    ref = reference_kernels(np)
    ops = get_backend("cpu").ops
    assert ops.cross_entropy_forward is not ref["cross_entropy_forward"]
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((7, 5)) * 4).astype(dtype)
    x[2] = [-1e4, 3, 3, -np.inf, 0]  # a row with a -inf logit and a tie
    target = rng.integers(0, 5, 7)
    loss, logp = ops.cross_entropy_forward(x, target, reduction)
    loss_ref, logp_ref = ref["cross_entropy_forward"](x, target, reduction)
    np.testing.assert_array_equal(logp, logp_ref)
    np.testing.assert_array_equal(loss, loss_ref)
    assert np.asarray(loss).dtype == np.asarray(loss_ref).dtype == dtype
    g = np.asarray(rng.standard_normal(np.shape(loss)) + 1.5, dtype=dtype)
    grad = ops.cross_entropy_backward(g, x, logp, target, reduction)
    grad_ref = COMPOSITES["cross_entropy_backward"](ops, g, x, logp_ref, target, reduction)
    np.testing.assert_array_equal(grad, grad_ref)
    assert grad.dtype == dtype
