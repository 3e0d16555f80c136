"""The fusion pass (E12): fused and unfused walks agree to rtol 1e-12 in float64; the pass
never fuses across a pre-activation with hooks or retain_grad, or a node with hooks."""

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import Engine
from retrograd.autograd.engine import topo_order
from retrograd.autograd.fusion import FusedLinearActivation, fuse_order

F = rg.nn.functional
ACTS = {"relu": F.relu, "tanh": F.tanh, "sigmoid": F.sigmoid}


def _mlp(act, seed=0, hook=None, retain=False, bias=True):
    rng = np.random.default_rng(seed)
    x = rg.tensor(rng.standard_normal((16, 8)), dtype=rg.float64, requires_grad=True)
    params = []
    h = x
    pre_acts = []
    for fan_in, fan_out in ((8, 12), (12, 12), (12, 3)):
        w = rg.tensor(rng.standard_normal((fan_out, fan_in)) / 3, dtype=rg.float64,
                      requires_grad=True)
        b = rg.tensor(rng.standard_normal(fan_out), dtype=rg.float64, requires_grad=True) \
            if bias else None
        params += [w] + ([b] if b is not None else [])
        z = F.linear(h, w, b)
        pre_acts.append(z)
        h = ACTS[act](z)
    if hook is not None:
        pre_acts[1].register_hook(hook)
    if retain:
        pre_acts[1].retain_grad()
    loss = (h * h).sum()
    return loss, [x] + params, pre_acts


def _grads(act, fuse, **kw):
    loss, leaves, pre = _mlp(act, **kw)
    Engine.backward(loss, fuse=fuse)
    return [t.grad.numpy().copy() for t in leaves], pre


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("act", sorted(ACTS))
def test_fused_equals_unfused(act, bias):
    fused, _ = _grads(act, True, bias=bias)
    plain, _ = _grads(act, False, bias=bias)
    for a, b in zip(fused, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


@pytest.mark.parametrize("act", sorted(ACTS))
def test_pass_fuses_each_pattern(act):
    loss, _, _ = _mlp(act)
    order = fuse_order(topo_order([loss.grad_fn]), None)
    fused = [n for n in order if isinstance(n, FusedLinearActivation)]
    assert len(fused) == 3
    assert all(n.fused and n.kernel == f"linear_{act}_backward" for n in fused)


def test_hook_on_pre_activation_blocks_fusion():
    seen = []
    loss, _, pre = _mlp("tanh", hook=lambda g: seen.append(g.shape))
    order = fuse_order(topo_order([loss.grad_fn]), None)
    fused = [n for n in order if isinstance(n, FusedLinearActivation)]
    assert len(fused) == 2 and all(n.linear is not pre[1].grad_fn for n in fused)
    Engine.backward(loss, fuse=True)
    assert seen == [(16, 12)]


def test_retain_grad_on_pre_activation_blocks_fusion():
    fused, pre = _grads("relu", True, retain=True)
    plain, pre2 = _grads("relu", False, retain=True)
    np.testing.assert_allclose(pre[1].grad.numpy(), pre2[1].grad.numpy(), rtol=1e-12)
    loss, _, pre = _mlp("relu", retain=True)
    order = fuse_order(topo_order([loss.grad_fn]), None)
    assert all(n.linear is not pre[1].grad_fn for n in order if n.fused)


def test_node_hook_blocks_fusion():
    loss, _, pre = _mlp("sigmoid")
    act_node = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    act_node.register_hook(lambda gi, go: None)
    order = fuse_order(topo_order([loss.grad_fn]), None)
    assert act_node in [n for n in order if not n.fused]


def test_shared_pre_activation_is_not_fused():
    rng = np.random.default_rng(1)
    x = rg.tensor(rng.standard_normal((4, 3)), dtype=rg.float64)
    w = rg.tensor(rng.standard_normal((2, 3)), dtype=rg.float64, requires_grad=True)
    z = F.linear(x, w)
    loss = (F.relu(z) + z * 2).sum()  # z has a second consumer
    order = fuse_order(topo_order([loss.grad_fn]), None)
    assert not any(n.fused for n in order)


def test_retained_graph_walks_again_fused_and_unfused():
    loss, leaves, _ = _mlp("tanh")
    Engine.backward(loss, retain_graph=True, fuse=True)
    first = [t.grad.numpy().copy() for t in leaves]
    Engine.backward(loss, retain_graph=True, fuse=False)
    for t, g in zip(leaves, first):
        np.testing.assert_allclose(t.grad.numpy(), 2 * g, rtol=1e-12)
    assert not any(getattr(n, "fused", False) for n in topo_order([loss.grad_fn]))


def test_fused_node_checks_versions_and_releases():
    loss, leaves, _ = _mlp("relu")
    with rg.no_grad():
        leaves[1].add_(1.0)  # first weight, saved by the first LinearBackward
    with pytest.raises(rg.VersionMismatch, match="LinearBackward0"):
        Engine.backward(loss, fuse=True)
    loss, _, _ = _mlp("relu")
    Engine.backward(loss, fuse=True)
    with pytest.raises(rg.GraphFreedError):
        Engine.backward(loss, fuse=True)


def test_in_place_activation_gradient_only_when_the_walk_owns_it():
    """Two fused nodes receive the *same* gradient array from an add: the first must not
    overwrite it in place (the second still needs it); results equal the unfused walk."""
    be = rg.get_backend("cpu")
    calls = []
    original = be.kernels["relu_backward_"]

    def counting(g, y):
        calls.append(1)
        return original(g, y)

    be.override(relu_backward_=counting)
    try:
        rng = np.random.default_rng(5)
        x = rg.tensor(rng.standard_normal((6, 4)), dtype=rg.float64)
        ws = [rg.tensor(rng.standard_normal((3, 4)), dtype=rg.float64, requires_grad=True)
              for _ in range(2)]
        grads = []
        for fuse in (True, False):
            h1 = F.relu(F.linear(x, ws[0]))
            h2 = F.relu(F.linear(x, ws[1]))
            Engine.backward((h1 + h2).sum(), fuse=fuse)
            grads.append([w.grad.numpy().copy() for w in ws])
            for w in ws:
                w.grad = None
        for a, b in zip(*grads):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        assert calls == [1]  # only the second fused node owned the shared array
    finally:
        be.override(relu_backward_=original)


@pytest.mark.parametrize("retain", [False, True])
def test_fused_walk_drops_the_activation_before_the_matmuls(monkeypatch, retain):
    """Without retain_graph the activation's saved output is freed once its derivative has
    been applied in place, before the matmuls run (as the unfused walk frees it when
    ReluBackward finishes); with retain_graph it is kept, and a second walk agrees."""
    import weakref

    rng = np.random.default_rng(5)
    x = rg.tensor(rng.standard_normal((6, 4)))
    w = rg.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    b = rg.tensor(rng.standard_normal(5), requires_grad=True)
    h = F.relu(F.linear(x, w, b))
    alive = weakref.ref(h._data)
    loss = (h * 2.0).sum()
    del h
    ops = w.backend.ops
    original = ops.linear_backward
    seen = []

    def spy(*args, **kwargs):
        seen.append(alive() is not None)
        return original(*args, **kwargs)

    monkeypatch.setattr(ops, "linear_backward", spy)
    loss.backward(retain_graph=retain)
    assert seen == [retain]
    first = w.grad.numpy().copy()
    monkeypatch.setattr(ops, "linear_backward", original)
    if retain:
        w.grad = None
        loss.backward()
        np.testing.assert_array_equal(w.grad.numpy(), first)
    z = x.numpy() @ w.detach().numpy().T + b.detach().numpy()
    np.testing.assert_allclose(first, ((z > 0) * 2.0).T @ x.numpy(), rtol=1e-12)
