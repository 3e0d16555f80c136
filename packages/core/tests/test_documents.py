"""One test per document case of the conformance suite, with the exact values worked out in
docs/conformance.md."""

import pytest

import retrograd as rg
from retrograd.autograd import AccumulateGrad, Engine


def shared_branch(x0):
    x = rg.tensor(x0, requires_grad=True)
    u = x * x
    u.retain_grad()
    a, b = 2 * u, 3 * u
    loss = a + b
    return x, u, a, b, loss


def test_shared_branch():
    x, u, a, b, loss = shared_branch(2.0)
    loss.backward()
    assert (u.item(), a.item(), b.item(), loss.item()) == (4.0, 8.0, 12.0, 20.0)
    assert u.grad.item() == 5.0
    assert x.grad.item() == 20.0


def test_shared_branch_x3():
    x, u, a, b, loss = shared_branch(3.0)
    runs = []
    u.grad_fn.register_prehook(lambda grads: runs.append(grads[0].item()))
    loss.backward()
    assert x.grad.item() == 30.0
    assert runs == [5.0]  # the square node runs once, with the summed contribution


def test_graph_structure():
    x, u, a, b, loss = shared_branch(2.0)
    assert a.grad_fn.next_functions[0][0] is u.grad_fn
    assert b.grad_fn.next_functions[0][0] is u.grad_fn
    edges = u.grad_fn.next_functions
    assert len(edges) == 2
    assert [(type(n).__name__, slot) for n, slot in edges] == [
        ("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    assert edges[0][0] is edges[1][0]
    assert isinstance(edges[0][0], AccumulateGrad) and edges[0][0].variable is x


def test_vjp():
    x = rg.tensor([2.0, 3.0], requires_grad=True)
    y = rg.stack((x[0] ** 2, x[0] * x[1]))
    (g,) = rg.autograd.grad(y, x, grad_outputs=rg.tensor([1.0, 4.0]))
    assert g.tolist() == [16.0, 8.0]
    assert x.grad is None


def test_accumulate():
    x = rg.tensor(2.0, requires_grad=True)
    seen = []
    for _ in range(2):
        u = x * x
        (2 * u + 3 * u).backward()
        seen.append(x.grad.item())
    x.grad = None
    u = x * x
    (2 * u + 3 * u).backward()
    seen.append(x.grad.item())
    assert seen == [20.0, 40.0, 20.0]


def test_reused_graph():
    x = rg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(rg.GraphFreedError, match="retain_graph=True"):
        y.backward()
    assert issubclass(rg.GraphFreedError, RuntimeError)


def test_modified_saved_input():
    x = rg.tensor(2.0, requires_grad=True)
    y = x * x
    with rg.no_grad():
        x.add_(1)
    with pytest.raises(rg.VersionMismatch, match="version 1; expected version 0"):
        y.backward()
    assert x.grad is None


def test_double_backward():
    x = rg.tensor(2.0, requires_grad=True)
    (g,) = rg.autograd.grad(5 * x * x, x, create_graph=True)
    (h,) = rg.autograd.grad(g, x)
    assert (g.item(), h.item()) == (20.0, 10.0)


def test_grad_leaves_untouched():
    x = rg.tensor(2.0, requires_grad=True)
    w = rg.tensor(3.0, requires_grad=True)
    x.grad = rg.tensor(100.0)
    w.grad = rg.tensor(7.0)
    before = (x.grad, w.grad, x.grad.item(), w.grad.item())
    loss = w * x * x
    (gx,) = rg.autograd.grad(loss, x, retain_graph=True)
    [gx2] = Engine.grad(loss, [x])
    assert gx.item() == gx2.item() == 12.0
    assert (x.grad, w.grad, x.grad.item(), w.grad.item()) == before


def test_grad_unreached():
    x = rg.tensor(2.0, requires_grad=True)
    z = rg.tensor(5.0, requires_grad=True)
    y = x * x
    assert Engine.grad(y, [x, z], retain_graph=True)[1] is None
    with pytest.raises(rg.RetrogradError, match="not have been used"):
        rg.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = rg.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.item() == 4.0 and gz is None


def test_interior_capture():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    loss = 2 * u + 3 * u
    gu, gx = rg.autograd.grad(loss, [u, x])
    assert gu.item() == 5.0 and gx.item() == 20.0


def test_broadcast_reduce():
    a = rg.randn(3, 4)
    w = rg.randn(4, requires_grad=True)
    (a * w).sum().backward()
    assert w.grad.shape == (4,)
    assert w.grad.tolist() == pytest.approx(a.sum(0).tolist(), rel=1e-6)


def test_nonscalar_seed():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    g = rg.tensor([0.5, -1.0, 2.0])
    (x * x).backward(g)
    first = x.grad.tolist()
    x.grad = None
    (x * x * g).sum().backward()
    assert first == x.grad.tolist() == [1.0, -4.0, 12.0]


def test_retain_graph():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    loss = 2 * u + 3 * u
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    assert x.grad.item() == 40.0


def test_leaf_root():
    x = rg.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_hook_replaces():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    u.retain_grad()
    u.register_hook(lambda g: 2 * g)
    (2 * u + 3 * u).backward()
    assert u.grad.item() == 10.0
    assert x.grad.item() == 40.0
