"""Saved-tensor hooks (``autograd.graph``) against PyTorch: when pack and unpack are called and
with what, what the derivative uses, errors, nesting, threads, ``save_on_cpu`` and
``disable_saved_tensors_hooks``. Each program is written once against a library handle ``lib``
(``torch`` or ``retrograd``) and run on both."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.autograd import graph as rg_graph

A = [[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]]
B = [[1.1, 0.4, -0.9], [-0.2, 2.2, 0.8]]


def f64(lib):
    return lib.float64


def leaves(lib):
    x = lib.tensor(A, dtype=f64(lib), requires_grad=True)
    y = lib.tensor(B, dtype=f64(lib), requires_grad=True)
    return x, y


def plain(v):
    if isinstance(v, (torch.Tensor, rg.Tensor)):
        return np.asarray(v.detach().tolist())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def assert_same(a, b):
    a, b = plain(a), plain(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    else:
        assert a == b


def node_name(fn):
    return None if fn is None else fn.name()


def run_both(program):
    return program(torch), program(rg)


def raised(program, lib):
    try:
        program(lib)
    except Exception as exc:  # noqa: BLE001 - compared with torch's
        return exc
    raise AssertionError(f"{lib.__name__} did not raise")


def same_error(program, phrase=None):
    want, got = raised(program, torch), raised(program, rg)
    assert isinstance(got, type(want)) or (
        isinstance(want, RuntimeError) and isinstance(got, RuntimeError)), (want, got)
    if phrase is not None:
        assert phrase in str(want), want
        assert phrase in str(got), got
    return want, got


# -- when pack / unpack are called ---------------------------------------------------------
OPS = {
    "mul": lambda lib, x, y: x * y,
    "mul_scalar": lambda lib, x, y: x * 2.0,
    "add": lambda lib, x, y: x + y,
    "sum": lambda lib, x, y: x.sum(),
    "mean": lambda lib, x, y: x.mean(),
    "exp": lambda lib, x, y: x.exp(),
    "tanh": lambda lib, x, y: x.tanh(),
    "sigmoid": lambda lib, x, y: x.sigmoid(),
    "relu": lambda lib, x, y: x.relu(),
    "sin": lambda lib, x, y: x.sin(),
    "pow_scalar": lambda lib, x, y: x ** 2,
    "div": lambda lib, x, y: x / y,
    "mul_detached": lambda lib, x, y: x * y.detach(),
    "matmul": lambda lib, x, y: x @ y.T,
    "reshape": lambda lib, x, y: x.reshape(6),
}


@pytest.mark.parametrize("op", OPS, ids=list(OPS))
def test_pack_and_unpack_calls_match_torch(op):
    """Which tensors pack receives (shape, requires_grad, grad_fn for a saved output), and how
    many unpacks the backward makes; ops that save nothing call no hook."""

    def program(lib):
        log = []

        def pack(t):
            log.append(("pack", tuple(t.shape), t.requires_grad, node_name(t.grad_fn)))
            return t

        def unpack(t):
            log.append(("unpack", tuple(t.shape)))
            return t

        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = OPS[op](lib, x, y)
        log.append("backward")
        out.sum().backward()
        return log, x.grad, y.grad

    (tlog, tx, ty), (rlog, rx, ry) = run_both(program)
    assert sorted(map(str, rlog)) == sorted(map(str, tlog))  # the order within one op may differ
    assert rlog.index("backward") == tlog.index("backward")
    assert_same([tx, ty], [rx, ry])


def test_pack_receives_the_output_itself():
    def program(lib):
        seen = []
        x, _ = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            e = x.exp()
        return len(seen), seen[0] is e

    assert run_both(program)[1] == run_both(program)[0] == (1, True)


def test_grad_fn_names_are_unchanged_by_packing():
    def names(lib, hooks):
        x, y = leaves(lib)
        if hooks:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: ("box", t), lambda p: p[1]):
                z = (x * y).tanh()
        else:
            z = (x * y).tanh()
        inner = z.grad_fn.next_functions[0][0]
        return [z.grad_fn.name(), inner.name(), len(inner.next_functions)]

    assert names(rg, True) == names(rg, False) == names(torch, True) == names(torch, False) \
        == ["TanhBackward0", "MulBackward0", 2]


def test_the_derivative_uses_what_unpack_returns():
    def program(lib):
        x, y = leaves(lib)
        # every saved tensor comes back as ones: d(x*y)/dx = unpacked y = 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.shape,
                                                    lambda s: lib.ones(s, dtype=lib.float64)):
            z = (x * y).sum() + x.exp().sum()
        z.backward()
        return x.grad, y.grad

    t, r = run_both(program)
    assert_same(t, r)


def test_pack_may_return_any_object():
    def program(lib):
        store = {}

        def pack(t):
            key = f"k{len(store)}"
            store[key] = t.detach().clone()
            return key

        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda key: store[key]):
            z = (x * y).tanh().sum()
        z.backward()
        return sorted(store), x.grad, y.grad

    t, r = run_both(program)
    assert t[0] == r[0]
    assert_same(t[1:], r[1:])


def test_unpack_runs_on_every_backward_of_a_retained_graph():
    def program(lib):
        log = []
        x, _ = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                    lambda t: log.append("unpack") or t):
            z = x.exp().sum()
        z.backward(retain_graph=True)
        z.backward()
        return log, x.grad

    t, r = run_both(program)
    assert t[0] == r[0] == ["pack", "unpack", "unpack"]
    assert_same(t[1], r[1])


def test_create_graph_unpacks_and_reaches_the_original_inputs():
    """Pack keeps a detached copy: under create_graph the second derivative must still flow to
    the original leaves (PyTorch re-attaches the saved tensor's gradient edge)."""

    def program(lib):
        log = []

        def pack(t):
            log.append("pack")
            return t.detach().clone()

        def unpack(t):
            log.append(("unpack", lib.is_grad_enabled()))
            return t

        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            z = (x * x * y).sum() + y.exp().sum()
        gx, gy = lib.autograd.grad(z, (x, y), create_graph=True)
        hx, hy = lib.autograd.grad((gx * gy).sum(), (x, y))
        return log, gx, gy, hx, hy

    t, r = run_both(program)
    assert r[0] == t[0]
    assert_same(t[1:], r[1:])


def test_create_graph_with_identity_hooks():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = (x.tanh() * y).sum()
        (gx,) = lib.autograd.grad(z, x, create_graph=True)
        gx.sum().backward()
        return gx, x.grad, y.grad

    assert_same(*run_both(program))


def test_nested_hooks_innermost_wins():
    def program(lib):
        log = []
        hooks = lib.autograd.graph.saved_tensors_hooks
        x, _ = leaves(lib)
        with hooks(lambda t: log.append("outer") or t, lambda t: t):
            with hooks(lambda t: log.append("inner") or t, lambda t: t):
                x.exp()
            x.exp()
        x.exp()
        return log

    t, r = run_both(program)
    assert r == t == ["inner", "outer"]


def test_hooks_are_thread_local():
    def program(lib):
        log = []
        x, _ = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("p") or t, lambda t: t):
            th = threading.Thread(target=lambda: x.exp())
            th.start()
            th.join()
            x.exp()
        return log

    t, r = run_both(program)
    assert r == t == ["p"]


def test_pack_runs_under_no_grad():
    def program(lib):
        modes = []

        def pack(t):
            modes.append(lib.is_grad_enabled())
            return (t * 1.0).requires_grad  # ops inside pack record nothing

        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda p: None):
            x * y
        return modes

    t, r = run_both(program)
    assert r == t == [False, False]


def test_unpack_hook_returning_a_non_tensor():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
            z = (x * y).sum()
        z.backward()

    want, got = same_error(program, "unpack_hook expected to be a Tensor")
    assert isinstance(got, TypeError)


def test_unpack_hook_returning_another_shape():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t,
                                                    lambda t: lib.ones(5, dtype=lib.float64)):
            z = (x * y).sum()
        z.backward()

    same_error(program, "must match the size")


def test_unpack_hook_returning_another_dtype():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.to(lib.float32)):
            z = (x * y).sum()
        z.backward()
        return str(x.grad.dtype).rsplit(".", 1)[-1], x.grad

    t, r = run_both(program)
    assert t[0] == r[0] == "float64"
    np.testing.assert_allclose(plain(r[1]), plain(t[1]), rtol=1e-6)


def test_pack_hook_modifying_its_input_in_place():
    def program(lib):
        x, _ = leaves(lib)
        a = (x * 1).detach()
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            x * a

    same_error(program, "pack hook is modifying its input in place")


def test_hooks_that_are_not_callable():
    def program(lib):
        with lib.autograd.graph.saved_tensors_hooks(1, 2):
            pass

    want, got = same_error(program)
    assert isinstance(got, TypeError)


def test_backward_twice_through_a_packed_graph():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = (x * y).sum()
        z.backward()
        z.backward()

    same_error(program, "Trying to backward through the graph a second time")


# -- disable_saved_tensors_hooks -------------------------------------------------------------
def test_disable_saved_tensors_hooks_refuses_new_hooks():
    def program(lib):
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("hooks are off here"):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    same_error(program, "hooks are off here")


def test_disable_saved_tensors_hooks_inside_hooks():
    def program(lib):
        g = lib.autograd.graph
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with g.disable_saved_tensors_hooks("no hooks inside"):
                pass

    same_error(program, "no hooks inside")


def test_disable_saved_tensors_hooks_restores_on_exit():
    def program(lib):
        g = lib.autograd.graph
        log = []
        with g.disable_saved_tensors_hooks("outer message"):
            with g.disable_saved_tensors_hooks("inner message"):
                pass
            try:
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as exc:
                log.append(str(exc))
        x, _ = leaves(lib)
        with g.saved_tensors_hooks(lambda t: log.append("pack") or t, lambda t: t):
            x.exp()
        return log

    t, r = run_both(program)
    assert r == t == ["outer message", "pack"]


# -- save_on_cpu ---------------------------------------------------------------------------------
def test_save_on_cpu_on_the_cpu_backend():
    def program(lib):
        x, y = leaves(lib)
        with lib.autograd.graph.save_on_cpu():
            h = (x @ y.T).tanh()
            z = (h * h).sum() + (x / y).sum()
        (gx,) = lib.autograd.grad(z, x, create_graph=True)
        gx.sum().backward()
        return z, gx, x.grad, y.grad

    assert_same(*run_both(program))


def test_save_on_cpu_still_goes_through_the_hooks_on_cpu():
    x, y = leaves(rg)
    with rg_graph.save_on_cpu():
        z = x * y
    node = z.grad_fn
    assert node.name() == "MulBackward0" and isinstance(node, rg.autograd.FormulaNode)
    assert not type(node)._formula  # a packed node: its saved values are unpacked on use
    held = node.saved_arrays()
    assert len(held) == 2 and held[0] is x._data  # no copy on the cpu backend


@pytest.fixture
def second_backend():
    xp = pytest.importorskip("array_api_strict")
    from retrograd.backends import Backend, register_backend, unregister_backend

    register_backend("savedev", Backend("savedev", xp))
    yield "savedev"
    unregister_backend("savedev")


def test_save_on_cpu_moves_saved_tensors_and_back(second_backend):
    """On another backend the saved values live on the cpu backend between forward and
    backward, and come back to the tensor's own device for the backward; results equal
    torch's (computed on cpu)."""
    x = rg.tensor(A, dtype=rg.float64, device=second_backend, requires_grad=True)
    y = rg.tensor(B, dtype=rg.float64, device=second_backend, requires_grad=True)
    with rg_graph.save_on_cpu(pin_memory=False):
        e = (x * y).exp()
        z = e.sum()
    for node in (e.grad_fn, e.grad_fn.next_functions[0][0]):
        for p in node._saved:
            device, held = p.packed
            assert str(device) == second_backend and held.device.type == "cpu"
    (gx,) = rg.autograd.grad(z, x, create_graph=True)
    assert gx.device.type == second_backend
    (hy,) = rg.autograd.grad(gx.sum(), y)

    tx, ty = leaves(torch)
    with torch.autograd.graph.save_on_cpu():
        tz = (tx * ty).exp().sum()
    (tgx,) = torch.autograd.grad(tz, tx, create_graph=True)
    (thy,) = torch.autograd.grad(tgx.sum(), ty)
    np.testing.assert_allclose(np.asarray(gx.detach().tolist()), tgx.detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(hy.tolist()), thy.numpy(), rtol=1e-12)


# -- version checks still apply (E7) -------------------------------------------------------------
def test_packed_input_modified_in_place_is_refused():
    """PyTorch skips the version check for tensors saved through hooks; retrograd keeps it
    (a refused backward rather than a possibly wrong gradient): the error is PyTorch's own
    for the same program without hooks."""

    def program(lib, hooks):
        x, _ = leaves(lib)
        a = x * 1
        if hooks:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                b = a * a
        else:
            b = a * a
        a.add_(1)
        b.sum().backward()

    want = raised(lambda lib: program(lib, False), torch)
    got = raised(lambda lib: program(lib, True), rg)
    assert isinstance(got, rg.VersionMismatch) and isinstance(got, type(want))
    for msg in (str(want), str(got)):
        assert "modified by an inplace operation" in msg


def test_packed_output_modified_in_place_is_refused():
    x, _ = leaves(rg)
    with rg_graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        e = x.exp()
    with rg.no_grad():
        e.mul_(2)
    with pytest.raises(rg.VersionMismatch, match="ExpBackward0"):
        e.sum().backward()


# -- no hooks, no cost ----------------------------------------------------------------------------
def test_nodes_recorded_without_hooks_stay_plain():
    x, y = leaves(rg)
    with rg_graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    assert not rg_graph._LIVE
    z = x * y
    assert type(z.grad_fn)._formula and type(z.grad_fn).__name__ == "MulBackward0"


def test_fused_linear_activation_under_hooks():
    def program(lib):
        x, w = leaves(lib)
        b = lib.tensor([0.1, -0.3], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            h = lib.nn.functional.linear(x, w, b).relu()
        (h * h).sum().backward()
        return x.grad, w.grad, b.grad

    assert_same(*run_both(program))


# -- custom Functions -----------------------------------------------------------------------------
def square_function(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return 2 * x * g + 0 * y

    return Square


def test_function_save_for_backward_goes_through_the_hooks():
    def program(lib):
        log = []
        x, _ = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                    lambda t: log.append("unpack") or t):
            y = square_function(lib).apply(x)
        log.append("backward")
        y.sum().backward()
        return log, x.grad

    t, r = run_both(program)
    assert r[0] == t[0]
    assert_same(t[1], r[1])


def test_function_saved_tensors_under_create_graph():
    def program(lib):
        x, _ = leaves(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(),
                                                    lambda t: t):
            y = square_function(lib).apply(x.tanh())
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad

    assert_same(*run_both(program))


def test_pack_helpers_for_custom_functions():
    """The recipe for ``FunctionCtx``: pack what ``save_for_backward`` kept once the outputs
    have the ctx as grad_fn; unpack on each access -- plain tensors in a plain backward, tensors
    with history (an output of the ctx, an input reaching its leaf) under create_graph."""

    class Square(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    log = []
    x, _ = leaves(rg)
    y = Square.apply(x)
    ctx = y.grad_fn
    assert rg_graph.pack_saved_tensors(ctx, (x, y, None)) is None  # no hooks: keep as is
    with rg_graph.saved_tensors_hooks(lambda t: log.append("pack") or t.detach().clone(),
                                      lambda t: log.append("unpack") or t):
        packed = rg_graph.pack_saved_tensors(ctx, (x, y, None))
    assert log == ["pack", "pack"] and packed[2] is None
    with rg.no_grad():
        px, py, none = rg_graph.unpack_saved_tensors(ctx, packed)
    assert none is None and not px.requires_grad and not py.requires_grad
    assert_same([px, py], [x, y])
    gx, gy, _ = rg_graph.unpack_saved_tensors(ctx, packed)  # grad mode on: with history
    assert log == ["pack", "pack", "unpack", "unpack", "unpack", "unpack"]
    assert gy.grad_fn is ctx and gy.requires_grad
    (gx * 3).sum().backward()
    assert_same(x.grad, [[3.0] * 3] * 2)
