"""One test (at least) per engine rule E1-E15 of docs/semantics.md."""

import sys
import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import AccumulateGrad, Engine, Function
from retrograd.autograd.engine import topo_order


def test_E1_order_is_reverse_dfs_postorder():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    a, b = 2 * u, 3 * u
    loss = a + b
    order = topo_order([loss.grad_fn])
    names = [n.name() for n in order]
    assert names[0] == "AddBackward0"
    assert order.index(u.grad_fn) > order.index(a.grad_fn)
    assert order.index(u.grad_fn) > order.index(b.grad_fn)
    assert isinstance(order[-1], AccumulateGrad)


def test_E1_million_node_chain_no_recursion():
    limit = sys.getrecursionlimit()
    x = rg.tensor(1.0, dtype=rg.float64, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0
    sys.setrecursionlimit(200)  # the engine must not recurse
    try:
        y.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert x.grad.item() == 1.0


def test_E2_each_node_once_and_multiplicity():
    x = rg.tensor(3.0, requires_grad=True)
    u = x * x
    calls = []
    u.grad_fn.register_hook(lambda gi, go: calls.append(go[0].item()))
    (2 * u + 3 * u + u).backward()
    assert calls == [6.0]
    assert x.grad.item() == 36.0  # two edges to one AccumulateGrad, each 6*x


def test_E3_default_seed_and_errors():
    y = rg.tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(rg.RetrogradError, match="implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        y.backward(rg.ones(3))
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    g = rg.tensor([3.0, -1.0])
    (x * x).backward(g)
    a = x.grad.tolist()
    x.grad = None
    (x * x * g).sum().backward()
    assert a == x.grad.tolist()


def test_E4_leaf_root_and_no_grad_root():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    Engine.backward(x, rg.tensor([3.0, 4.0]))
    assert x.grad.tolist() == [3.0, 4.0]
    with pytest.raises(rg.RetrogradError, match="does not require grad"):
        Engine.backward(rg.tensor(1.0))


def test_E5_release_and_retain():
    x = rg.tensor(2.0, requires_grad=True)
    y = x + 1.0  # AddBackward saves nothing: still refused on a second traversal
    y.backward()
    assert y.grad_fn.released
    with pytest.raises(rg.GraphFreedError):
        y.backward()
    z = x * x
    z.backward(retain_graph=True)
    assert z.grad_fn.saved_arrays()
    z.backward()
    assert x.grad.item() == 1.0 + 4.0 + 4.0


def test_E6_create_graph_builds_history_and_unsupported_raises():
    x = rg.tensor(1.5, dtype=rg.float64, requires_grad=True)
    y = rg.tanh(x) * rg.exp(x)
    (g,) = rg.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn is not None
    (h,) = rg.autograd.grad(g, x)
    t, e = np.tanh(1.5), np.exp(1.5)
    # d2/dx2 (tanh e^x) = e^x (tanh + 2 sech^2 - 2 tanh sech^2)
    s2 = 1 - t * t
    assert h.item() == pytest.approx(e * (t + 2 * s2 - 2 * t * s2), rel=1e-12)

    class RawSquare(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return rg.tensor(2 * a.detach().numpy() * g.detach().numpy(), dtype=a.dtype)

    z = RawSquare.apply(x)
    with pytest.raises(rg.DoubleBackwardUnsupported, match="RawSquare"):
        rg.autograd.grad(z, x, create_graph=True)


def test_E7_version_check_names_node_shape_versions():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = rg.exp(x)
    with rg.no_grad():
        y.mul_(2)
    with pytest.raises(rg.VersionMismatch) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "ExpBackward0" in msg and "(3,)" in msg and "version 1" in msg and "version 0" in msg
    a = rg.tensor(1.0, requires_grad=True)
    b = a + 1  # AddBackward saves no input: modifying `a` afterwards is legal (as in PyTorch)
    with rg.no_grad():
        a.add_(1)
    b.backward()
    assert a.grad.item() == 1.0


def test_E8_accumulate_reduces_broadcast_and_never_clears():
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    (rg.ones(3, 2) * w).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    g_obj = w.grad
    (rg.ones(3, 2) * w).sum().backward()
    assert w.grad is g_obj and w.grad.tolist() == [6.0, 6.0]  # in place
    x = rg.tensor(2.0, dtype=rg.float64, requires_grad=True)
    (x * x).backward(create_graph=True)
    first = x.grad
    (x * x).backward(create_graph=True)
    assert x.grad is not first and x.grad.item() == 8.0  # out of place under create_graph


def test_E9_grad_reads_and_writes_no_grad_and_prunes():
    x = rg.tensor(2.0, requires_grad=True)
    w = rg.tensor(3.0, requires_grad=True)
    w.grad = rg.tensor(1.0)
    y = w * x
    side = rg.exp(w)  # a branch that does not reach x
    ran = []
    side.grad_fn.register_prehook(lambda g: ran.append(1))
    out = y + side
    [gx] = Engine.grad(out, [x])
    assert gx.item() == 3.0 and x.grad is None and w.grad.item() == 1.0
    assert ran == []
    with pytest.raises(rg.RetrogradError, match="None"):
        Engine.grad(out, [None])
    with pytest.raises(rg.RetrogradError, match="None"):
        Engine.grad(None, [x])


def test_E10_hooks_follow_pytorch():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    seen = []
    u.register_hook(lambda g: seen.append(g.item()))
    u.register_hook(lambda g: g * 10)
    post = []
    x.register_post_accumulate_grad_hook(lambda t: post.append(t.grad.item()))
    (2 * u + 3 * u).backward()
    assert seen == [5.0]
    assert x.grad.item() == 200.0 and post == [200.0]
    y = rg.tensor(1.0, requires_grad=True)
    y.register_hook(lambda g: g + 1)
    (y * 3).backward()
    assert y.grad.item() == 4.0
    z = rg.tensor(1.0, requires_grad=True)
    n = z * 2
    n.grad_fn.register_prehook(lambda go: (go[0] * 3,))
    n.grad_fn.register_hook(lambda gi, go: (gi[0] + 100, None))
    n.backward()
    assert z.grad.item() == 106.0


def test_E11_retain_grad_accumulates():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    u.retain_grad()
    y = 3 * u
    y.backward(retain_graph=True)
    y.backward()
    assert u.grad.item() == 6.0 and x.grad.item() == 24.0


def test_E12_fusion_setting_and_equality():
    rg.manual_seed(0)
    x = rg.randn(5, 4, dtype=rg.float64)
    w = rg.randn(3, 4, dtype=rg.float64, requires_grad=True)
    b = rg.randn(3, dtype=rg.float64, requires_grad=True)
    grads = []
    for fuse in (True, False):
        y = rg.nn.functional.linear(x, w, b).tanh().sum()
        Engine.backward(y, fuse=fuse)
        grads.append((w.grad.numpy().copy(), b.grad.numpy().copy()))
        w.grad = b.grad = None
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)
    rg.autograd.set_fusion(False)
    assert not rg.autograd.is_fusion_enabled()


def test_E13_failed_backward_leaves_every_grad_unchanged():
    a = rg.tensor(1.0, requires_grad=True)
    b = rg.tensor(2.0, requires_grad=True)
    a.grad = rg.tensor(10.0)

    class Boom(Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    # the walk reaches a's accumulator before Boom's node fails
    loss = a * 3 + Boom.apply(b * a)
    with pytest.raises(ValueError, match="boom") as info:
        loss.backward()
    assert any("BoomBackward" in n for n in getattr(info.value, "__notes__", []))
    assert a.grad.item() == 10.0 and b.grad is None


def _mlp_grads(seed):
    rng = np.random.default_rng(seed)
    x = rg.tensor(rng.standard_normal((8, 5)), dtype=rg.float64)
    w1 = rg.tensor(rng.standard_normal((6, 5)), dtype=rg.float64, requires_grad=True)
    w2 = rg.tensor(rng.standard_normal((1, 6)), dtype=rg.float64, requires_grad=True)
    h = rg.nn.functional.linear(x, w1).tanh()
    shared = h * h
    loss = (rg.nn.functional.linear(shared + h, w2)).sum()
    return loss, (w1, w2)


def test_E9_create_graph_records_no_derivative_for_an_input_not_asked_for(monkeypatch):
    """grad(y, [x], create_graph=True) with y = w * x: the rule gets w's edge masked, so
    only x's derivative (one mul) is recorded -- none for w, which nobody asked for."""
    from retrograd.ops.graph_namespace import GRAPH_F

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    w = rg.tensor([3.0, 4.0], requires_grad=True)
    y = (w * x).sum()
    calls = []
    real_mul = GRAPH_F.mul
    monkeypatch.setattr(GRAPH_F, "mul", lambda a, b: calls.append(1) or real_mul(a, b))
    [gx] = rg.autograd.grad(y, [x], create_graph=True)
    assert calls == [1]
    np.testing.assert_array_equal(gx.detach().numpy(), [3.0, 4.0])
    assert gx.requires_grad  # d(gx)/dw exists: gx = w * 1
    [gw] = rg.autograd.grad(gx.sum(), [w])
    np.testing.assert_array_equal(gw.numpy(), [1.0, 1.0])


def test_E14_eight_threads_eight_graphs_exact():
    expected = []
    for s in range(8):
        loss, ws = _mlp_grads(s)
        loss.backward()
        expected.append([w.grad.numpy().copy() for w in ws])
    results = [None] * 8
    errors = []

    def work(i):
        try:
            for _ in range(20):
                loss, ws = _mlp_grads(i)
                loss.backward()
                got = [w.grad.numpy() for w in ws]
                assert all(np.array_equal(g, e) for g, e in zip(got, expected[i]))
            results[i] = True
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(results)


def test_E14_two_threads_on_one_graph_refused():
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    loss = 3 * u
    inside = threading.Event()
    release = threading.Event()

    def block(grads):
        inside.set()
        release.wait(5)

    u.grad_fn.register_prehook(block)
    outcome = {}

    def first():
        try:
            loss.backward(retain_graph=True)
            outcome["first"] = "ok"
        except Exception as exc:  # pragma: no cover
            outcome["first"] = exc

    t = threading.Thread(target=first)
    t.start()
    assert inside.wait(5)
    with pytest.raises(rg.RetrogradError, match="concurrent backward"):
        loss.backward(retain_graph=True)
    release.set()
    t.join()
    assert outcome["first"] == "ok"
    assert x.grad.item() == 12.0  # exactly one backward's worth: never doubled silently
    loss.backward()  # after the first walk ended, the graph is usable again
    assert x.grad.item() == 24.0


def test_E15_several_roots():
    x = rg.tensor(2.0, requires_grad=True)
    y1, y2 = x * x, x * 3
    rg.autograd.backward([y1, y2], [rg.tensor(1.0), rg.tensor(2.0)])
    assert x.grad.item() == 4.0 + 6.0
    z = rg.tensor([1.0, 2.0], requires_grad=True)
    o1, o2 = (z * z).sum(), (z * 5).sum()
    (g,) = rg.autograd.grad([o1, o2], z)
    assert g.tolist() == [7.0, 9.0]


def test_backward_inputs_restricts_accumulation():
    a = rg.tensor(1.0, requires_grad=True)
    b = rg.tensor(2.0, requires_grad=True)
    u = a * b
    u.backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_walk_pauses_and_restores_the_cyclic_gc():
    import gc

    from retrograd.autograd.engine import _GC_PAUSE_MIN_NODES

    seen = []
    x = rg.tensor(1.0, requires_grad=True)
    y = x * 2
    for _ in range(_GC_PAUSE_MIN_NODES):
        y = y * 1.0
    y.register_hook(lambda g: seen.append(gc.isenabled()))
    assert gc.isenabled()
    y.backward()
    assert seen == [False] and gc.isenabled()
    small = x * 2  # a walk of a few nodes does not pause it (too small to matter)
    small.register_hook(lambda g: seen.append(gc.isenabled()))
    small.backward()
    assert seen == [False, True] and gc.isenabled()
    gc.disable()
    try:
        z = x * 3
        for _ in range(_GC_PAUSE_MIN_NODES):
            z = z * 1.0
        z.backward()
        assert not gc.isenabled()  # a user's choice to keep it off is respected
    finally:
        gc.enable()
    w = x * 4
    for _ in range(_GC_PAUSE_MIN_NODES):
        w = w * 1.0
    w.register_hook(lambda g: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        w.backward()
    assert gc.isenabled()


def test_e13_grad_with_an_unused_input_writes_no_retained_grad():
    """autograd.grad raising "appears to not have been used" leaves a retained .grad as it
    was (E13; PyTorch writes it first). Found by the probe machine."""
    t1 = rg.tensor([[0.0, 1.0]], requires_grad=True)
    t2 = rg.tensor([1.5, -1.0], requires_grad=True)
    t5 = t2[0]
    t5.retain_grad()
    with pytest.raises(rg.RetrogradError, match="appears to not have been used in the graph"):
        rg.autograd.grad(t5, [t1], retain_graph=False, allow_unused=False)
    assert t5.grad is None
    (g,) = rg.autograd.grad(t5, [t2], allow_unused=False)  # the graph is still whole
    assert g.tolist() == [1.0, 0.0] and t5.grad.item() == 1.0
