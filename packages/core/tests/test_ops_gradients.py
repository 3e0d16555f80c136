"""Every differentiable op: gradcheck and gradgradcheck in float64, and the same program on
PyTorch (values, gradients, second derivatives)."""

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import gradcheck, gradgradcheck

ANY, POS = "any", "pos"

COND = np.array([[True, False, True, False], [False, True, True, False], [True, True, False,
                                                                        True]])
IDX = np.array([0, 2, 2, 1])
MASK = np.array([True, False, True])
TARGET = np.array([1, 0, 3, 3, 2])


def F(m):
    return m.nn.functional


# (id, program, input shapes, domain)
CASES = [
    ("add", lambda m, a, b: a + b, [(3, 4), (3, 4)], ANY),
    ("add_broadcast", lambda m, a, b: a + b, [(2, 1, 4), (3, 1)], ANY),
    ("add_0d", lambda m, a, b: a + b, [(), (3,)], ANY),
    ("add_scalar", lambda m, a: 2.5 + a, [(3,)], ANY),
    ("sub", lambda m, a, b: a - b, [(3, 4), (4,)], ANY),
    ("rsub_scalar", lambda m, a: 1.5 - a, [(2, 3)], ANY),
    ("mul", lambda m, a, b: a * b, [(3, 4), (3, 1)], ANY),
    ("mul_0d", lambda m, a, b: a * b, [(), ()], ANY),
    ("mul_same", lambda m, a: a * a, [(4,)], ANY),
    ("div", lambda m, a, b: a / b, [(3, 4), (4,)], POS),
    ("rdiv_scalar", lambda m, a: 3.0 / a, [(3,)], POS),
    ("pow_scalar", lambda m, a: a ** 3, [(3, 2)], ANY),
    ("pow_frac", lambda m, a: a ** 2.5, [(3,)], POS),
    ("pow_cube_0d", lambda m, a: a ** 3, [()], ANY),
    ("pow_tensor", lambda m, a, b: a ** b, [(2, 3), (3,)], POS),
    ("rpow", lambda m, a: 2.0 ** a, [(3,)], ANY),
    ("neg", lambda m, a: -a, [(2, 2)], ANY),
    ("abs", lambda m, a: m.abs(a), [(5,)], ANY),
    ("exp", lambda m, a: m.exp(a), [(2, 3)], ANY),
    ("log", lambda m, a: m.log(a), [(2, 3)], POS),
    ("sqrt", lambda m, a: m.sqrt(a), [(4,)], POS),
    ("sin", lambda m, a: m.sin(a), [(4,)], ANY),
    ("cos", lambda m, a: m.cos(a), [()], ANY),
    ("tanh", lambda m, a: m.tanh(a), [(3, 3)], ANY),
    ("sigmoid", lambda m, a: m.sigmoid(a), [(3, 3)], ANY),
    ("relu", lambda m, a: m.relu(a), [(3, 4)], ANY),
    ("clamp", lambda m, a: m.clamp(a, min=-0.5, max=0.7), [(6,)], ANY),
    ("clamp_min", lambda m, a: m.clamp(a, min=0.1), [(6,)], ANY),
    ("where", lambda m, a, b: m.where(m.tensor(COND), a, b), [(3, 4), (4,)], ANY),
    ("where_scalar", lambda m, a: m.where(m.tensor(COND), a, 0.0), [(3, 4)], ANY),
    ("maximum", lambda m, a, b: m.maximum(a, b), [(3, 4), (4,)], ANY),
    ("minimum", lambda m, a, b: m.minimum(a, b), [(3, 4), (3, 4)], ANY),
    ("matmul_dot", lambda m, a, b: m.matmul(a, b), [(3,), (3,)], ANY),
    ("matmul_vec_mat", lambda m, a, b: a @ b, [(3,), (3, 4)], ANY),
    ("matmul_mat_vec", lambda m, a, b: a @ b, [(2, 3), (3,)], ANY),
    ("matmul_mm", lambda m, a, b: a @ b, [(2, 3), (3, 4)], ANY),
    ("matmul_batched", lambda m, a, b: a @ b, [(5, 2, 3), (5, 3, 4)], ANY),
    ("matmul_batched_broadcast", lambda m, a, b: a @ b, [(5, 1, 2, 3), (4, 3, 2)], ANY),
    ("matmul_vec_batched", lambda m, a, b: a @ b, [(3,), (2, 3, 4)], ANY),
    ("matmul_batched_vec", lambda m, a, b: a @ b, [(2, 2, 3), (3,)], ANY),
    ("sum_all", lambda m, a: a.sum(), [(3, 4)], ANY),
    ("sum_dim", lambda m, a: a.sum(dim=1), [(3, 4, 2)], ANY),
    ("sum_dims_keepdim", lambda m, a: a.sum(dim=(0, 2), keepdim=True), [(3, 4, 2)], ANY),
    ("sum_0d", lambda m, a: a.sum(), [()], ANY),
    ("mean", lambda m, a: a.mean(dim=-1), [(3, 4)], ANY),
    ("mean_keepdim", lambda m, a: a.mean(dim=0, keepdim=True), [(3, 4)], ANY),
    ("amax", lambda m, a: m.amax(a, dim=1), [(3, 4)], ANY),
    ("amax_keepdim", lambda m, a: m.amax(a, dim=(0, 1), keepdim=True), [(3, 4, 2)], ANY),
    ("logsumexp", lambda m, a: m.logsumexp(a, dim=1), [(3, 4)], ANY),
    ("logsumexp_keepdim", lambda m, a: m.logsumexp(a, dim=0, keepdim=True), [(3, 4)], ANY),
    ("reshape", lambda m, a: a.reshape(4, 3) * m.arange(12.0).reshape(4, 3).double(),
     [(3, 4)], ANY),
    ("view", lambda m, a: a.view(-1) * m.arange(12.0).double(), [(3, 4)], ANY),
    ("permute", lambda m, a: a.permute(2, 0, 1) * 1.5, [(2, 3, 4)], ANY),
    ("transpose", lambda m, a: a.transpose(0, 2), [(2, 3, 4)], ANY),
    ("T", lambda m, a: a.T @ a, [(3, 2)], ANY),
    ("squeeze", lambda m, a: a.squeeze(1) * 2.0, [(3, 1, 2)], ANY),
    ("squeeze_all", lambda m, a: a.squeeze(), [(1, 3, 1)], ANY),
    ("unsqueeze", lambda m, a: a.unsqueeze(0) * m.ones(2, 1, 3).double(), [(3,)], ANY),
    ("expand", lambda m, a: a.expand(2, 3, 4) * 0.5, [(3, 1)], ANY),
    ("flatten", lambda m, a: a.flatten(1), [(2, 3, 2)], ANY),
    ("getitem_int", lambda m, a: a[1], [(3, 4)], ANY),
    ("getitem_slice", lambda m, a: a[:, 1:3], [(3, 4)], ANY),
    ("getitem_none_ellipsis", lambda m, a: a[None, ..., 0], [(2, 3, 4)], ANY),
    ("getitem_intarray", lambda m, a: a[m.tensor(IDX)], [(3, 2)], ANY),
    ("getitem_boolmask", lambda m, a: a[m.tensor(MASK)], [(3, 2)], ANY),
    ("getitem_negative_step_free", lambda m, a: a[-1, :2], [(3, 4)], ANY),
    ("cat", lambda m, a, b: m.cat([a, b, a], dim=1), [(2, 3), (2, 1)], ANY),
    ("stack", lambda m, a, b: m.stack([a, b], dim=1), [(2, 3), (2, 3)], ANY),
    ("linear", lambda m, x, w, b: F(m).linear(x, w, b), [(4, 3), (2, 3), (2,)], ANY),
    ("linear_nobias", lambda m, x, w: F(m).linear(x, w), [(4, 3), (2, 3)], ANY),
    ("linear_3d", lambda m, x, w, b: F(m).linear(x, w, b), [(2, 4, 3), (2, 3), (2,)], ANY),
    ("linear_relu", lambda m, x, w, b: F(m).relu(F(m).linear(x, w, b)),
     [(4, 3), (2, 3), (2,)], ANY),
    ("softmax", lambda m, a: F(m).softmax(a, dim=1), [(3, 4)], ANY),
    ("log_softmax", lambda m, a: F(m).log_softmax(a, dim=0), [(3, 4)], ANY),
    ("cross_entropy", lambda m, a: F(m).cross_entropy(a, m.tensor(TARGET)), [(5, 4)], ANY),
    ("cross_entropy_sum", lambda m, a: F(m).cross_entropy(a, m.tensor(TARGET),
                                                          reduction="sum"), [(5, 4)], ANY),
    ("cross_entropy_none", lambda m, a: F(m).cross_entropy(a, m.tensor(TARGET),
                                                           reduction="none"), [(5, 4)], ANY),
    ("mse_loss", lambda m, a, b: F(m).mse_loss(a, b), [(3, 2), (3, 2)], ANY),
    ("clone", lambda m, a: a.clone() * a, [(3,)], ANY),
]


def make_inputs(shapes, domain, seed):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        mag = rng.uniform(0.3, 1.7, size=s)
        if domain == POS:
            out.append(mag)
        else:
            out.append(mag * rng.choice([-1.0, 1.0], size=s))
    return out


torch = pytest.importorskip("torch", reason="torch is the oracle for these tests")

IDS = [c[0] for c in CASES]


def _rg_inputs(arrays):
    return [rg.tensor(a, dtype=rg.float64, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradcheck(case):
    _, prog, shapes, domain = case
    inputs = _rg_inputs(make_inputs(shapes, domain, 0))
    assert gradcheck(lambda *xs: prog(rg, *xs), inputs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradgradcheck(case):
    _, prog, shapes, domain = case
    inputs = _rg_inputs(make_inputs(shapes, domain, 1))
    assert gradgradcheck(lambda *xs: prog(rg, *xs), inputs)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_torch(case):
    _, prog, shapes, domain = case
    arrays = make_inputs(shapes, domain, 2)
    xs = _rg_inputs(arrays)
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y = prog(rg, *xs)
    ty = prog(torch, *ts)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    seed = np.random.default_rng(3).standard_normal(ty.shape)
    gs = rg.autograd.grad(y, xs, rg.tensor(seed, dtype=rg.float64), create_graph=True,
                          allow_unused=True)
    tgs = torch.autograd.grad(ty, ts, torch.tensor(seed), create_graph=True, allow_unused=True)
    for g, tg in zip(gs, tgs):
        if tg is None:
            assert g is None or not np.any(g.detach().numpy())
            continue
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    # second derivatives: d/dx sum(g * w) for a fixed weight w
    pairs = [(g, tg) for g, tg in zip(gs, tgs) if tg is not None and tg.requires_grad]
    if not pairs:
        return
    w = [np.random.default_rng(4).standard_normal(tg.shape) for _, tg in pairs]
    s = sum(((g * rg.tensor(wi, dtype=rg.float64)).sum() for (g, _), wi in zip(pairs, w)),
            rg.tensor(0.0, dtype=rg.float64))
    ts_ = sum(((tg * torch.tensor(wi)).sum() for (_, tg), wi in zip(pairs, w)),
              torch.tensor(0.0, dtype=torch.float64))
    hs = rg.autograd.grad(s, xs, allow_unused=True, materialize_grads=True)
    ths = torch.autograd.grad(ts_, ts, allow_unused=True, materialize_grads=True)
    for h, th in zip(hs, ths):
        np.testing.assert_allclose(h.numpy(), th.numpy(force=True), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtype_preserved_through_backward(dtype):
    x = rg.randn(3, 4, dtype=getattr(rg, dtype), requires_grad=True)
    y = (rg.tanh(x * 2.0) @ rg.ones(4, 2, dtype=getattr(rg, dtype))).sum()
    y.backward()
    assert x.grad.dtype is getattr(rg, dtype)


@pytest.mark.parametrize("b", [3, 2, 1, 0, 0.5, -1.5])
def test_pow_backward_op_is_differentiable_in_both_inputs(b):
    """``pow_backward(g, a, b)`` -- the single node ``a ** b``'s gradient records under
    create_graph -- against finite differences in g and a, to the second order."""
    from retrograd.ops.elementwise import pow_backward

    rng = np.random.default_rng(7)
    g = rg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    a = rg.tensor(rng.random((2, 3)) + 0.5, requires_grad=True)
    expect = g.detach().numpy() * b * a.detach().numpy() ** (b - 1) if b else np.zeros((2, 3))
    np.testing.assert_allclose(pow_backward(g, a, b).detach().numpy(), expect, rtol=1e-13)
    assert gradcheck(lambda g, a: pow_backward(g, a, b), [g, a])
    assert gradgradcheck(lambda g, a: pow_backward(g, a, b), [g, a])


@pytest.mark.parametrize("p", [4, 3, 2.5])
def test_third_derivative_of_pow_matches_torch(p):
    """Three nested grads of ``(x ** p).sum()`` (through PowBackwardBackward's own rule
    under create_graph) against PyTorch, which differentiates its three-op composite."""
    xn = np.random.default_rng(8).random(5) + 0.5

    def third(m, x):
        (g,) = m.autograd.grad((x ** p).sum(), [x], create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), [x], create_graph=True)
        (k,) = m.autograd.grad((h * x).sum(), [x])
        return g, h, k

    x = rg.tensor(xn, requires_grad=True)
    assert type(third(rg, x)[0].grad_fn).__name__ == "PowBackwardBackward0"
    tx = torch.tensor(xn, requires_grad=True)
    for ours, theirs in zip(third(rg, x), third(torch, tx)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
