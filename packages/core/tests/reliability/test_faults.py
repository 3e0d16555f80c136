"""Faults: an exception raised inside a custom Function's backward, a node hook, a node
prehook or a tensor hook, at every position of a graph, propagates with the node named and
leaves every ``.grad`` exactly as it was (E13). A KeyboardInterrupt mid-walk gives the same
guarantee and stays a KeyboardInterrupt. After a failed walk of a retained graph, the graph
still works: a clean retry accumulates exactly one more gradient.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np
import pytest

import retrograd as rg

from ._state import assert_unchanged, message_of, snapshot
from ._workloads import graph_nodes, leaf, to_np


class InjectedFault(Exception):
    """The exception the tests inject; nothing in retrograd raises it."""


class Switch:
    """What the injected code raises: None (behave), or an exception instance."""

    fault: BaseException | None = None


class Probe(rg.autograd.Function):
    """Identity op whose backward raises ``Switch.fault`` when set: a custom Function that can
    be placed at any position of the graph."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        if Switch.fault is not None:
            raise Switch.fault
        return g * 1.0


N_POSITIONS = 8


def build(probe_at: int | None = None):
    """Four leaves, eight interior values (one retains its grad), broadcasting, a matmul, a
    leaf used twice; ``probe_at`` wraps the k-th interior value in ``Probe``."""
    a = leaf([0.5, -1.0, 2.0])
    b = leaf([1.5, 0.25, -0.5])
    c = leaf([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]])
    d = leaf([0.1, 0.2, 0.3])
    count = [0]

    def mark(t: rg.Tensor) -> rg.Tensor:
        k = count[0]
        count[0] += 1
        return Probe.apply(t) if k == probe_at else t

    u = mark(a * b)
    u.retain_grad()
    v = mark(u.tanh())
    w = mark(c @ v)
    e = mark(w.exp())
    s1 = mark((v * d).sum())
    z = mark(e + s1)
    q = mark((a * a).sum())
    loss = mark(z.sum() + q)
    assert count[0] == N_POSITIONS
    return [a, b, c, d, u], [v, w, e, s1, z, q], loss


def prepare(probe_at: int | None = None):
    """Build, run one good retained backward so ``.grad`` holds values, then clear one leaf's
    ``.grad`` so both 'set' and 'None' states are covered."""
    Switch.fault = None
    with_grad, interior, loss = build(probe_at)
    loss.backward(retain_graph=True)
    one_walk = [to_np(t.grad) for t in with_grad]
    with_grad[3].grad = None
    return with_grad, interior, loss, one_walk


def expect_failure(call: Callable[[], object], fault: BaseException) -> BaseException:
    Switch.fault = fault
    try:
        with pytest.raises(BaseException) as info:
            call()
    finally:
        Switch.fault = None
    return info.value


def assert_propagated(exc: BaseException, node_name: str | None) -> None:
    """The injected error comes out as itself or as the cause of a RetrogradError, and the
    message (or a note added on the way) names the node that failed."""
    assert isinstance(exc, InjectedFault) or (
        isinstance(exc, rg.RetrogradError) and isinstance(exc.__cause__, InjectedFault)
    ), f"the injected fault was lost: got {type(exc).__name__}: {exc}"
    if node_name is not None:
        assert node_name in message_of(exc), f"the error does not name the node {node_name!r}: {message_of(exc)!r}"


def assert_thread_state_restored() -> None:
    """A failed walk restores what it changed for its duration: grad mode (it runs with grad
    mode off unless create_graph) and the cyclic collector (paused during walks)."""
    assert rg.is_grad_enabled(), "grad mode left off by a failed walk"
    assert gc.isenabled(), "the cyclic garbage collector left disabled by a failed walk"


def assert_retry_accumulates_once(loss, tensors, before, one_walk) -> None:
    """A clean walk of the retained graph after the failure adds exactly one gradient."""
    loss.backward(retain_graph=True)
    for i, (t, b, g) in enumerate(zip(tensors, before, one_walk)):
        want = g if b is None else b + g
        np.testing.assert_array_equal(to_np(t.grad), want, err_msg=f"tensor {i} after retry")


def _probe_node(loss):
    found = [n for n in graph_nodes(loss) if "Probe" in n.name()]
    assert len(found) == 1, [n.name() for n in graph_nodes(loss)]
    return found[0]


@pytest.mark.parametrize("retain", [True, False], ids=["retain", "free"])
@pytest.mark.parametrize("pos", range(N_POSITIONS))
def test_function_backward_raises_at_every_position(pos, retain):
    with_grad, interior, loss, one_walk = prepare(pos)
    node_name = _probe_node(loss).name()
    snap = snapshot(with_grad + interior)
    before = [to_np(t.grad) for t in with_grad]
    exc = expect_failure(lambda: loss.backward(retain_graph=retain), InjectedFault("boom"))
    assert_propagated(exc, node_name)
    assert_unchanged(snap, f"Function at position {pos}")
    assert_thread_state_restored()
    if retain:
        assert_retry_accumulates_once(loss, with_grad, before, one_walk)


@pytest.mark.parametrize("pos", range(N_POSITIONS))
def test_function_raises_in_autograd_grad_and_create_graph(pos):
    with_grad, interior, loss, _ = prepare(pos)
    snap = snapshot(with_grad + interior)
    node_name = _probe_node(loss).name()
    exc = expect_failure(lambda: rg.autograd.grad(loss, with_grad[:4], retain_graph=True),
                         InjectedFault("boom"))
    assert_propagated(exc, node_name)
    exc = expect_failure(lambda: loss.backward(create_graph=True), InjectedFault("boom"))
    assert_propagated(exc, node_name)
    assert_unchanged(snap, f"grad/create_graph, Function at position {pos}")
    assert_thread_state_restored()


def _node_count() -> int:
    *_, loss, _ = prepare()
    return len(graph_nodes(loss))


NODE_COUNT = 15  # checked by test_node_count: interior nodes + one AccumulateGrad per leaf


def test_node_count():
    assert _node_count() == NODE_COUNT


@pytest.mark.parametrize("kind", ["node_hook", "prehook"])
@pytest.mark.parametrize("k", range(NODE_COUNT))
def test_node_hook_raises_at_every_node(k, kind):
    with_grad, interior, loss, one_walk = prepare()
    node = graph_nodes(loss)[k]

    def node_hook(grad_inputs, grad_outputs):
        if Switch.fault is not None:
            raise Switch.fault

    def prehook(grad_outputs):
        if Switch.fault is not None:
            raise Switch.fault

    if kind == "node_hook":
        node.register_hook(node_hook)
    else:
        node.register_prehook(prehook)
    snap = snapshot(with_grad + interior)
    before = [to_np(t.grad) for t in with_grad]
    exc = expect_failure(lambda: loss.backward(retain_graph=True), InjectedFault(kind))
    assert_propagated(exc, node.name())
    assert_unchanged(snap, f"{kind} on node {k} ({node.name()})")
    assert_thread_state_restored()
    assert_retry_accumulates_once(loss, with_grad, before, one_walk)


@pytest.mark.parametrize("k", range(11))
def test_tensor_hook_raises_on_every_tensor(k):
    """A tensor hook on each leaf (a, b, c, d), on the retained u and on each interior value
    (v, w, e, s1, z, q)."""
    with_grad, interior, loss, one_walk = prepare()
    target = (with_grad + interior)[k]

    def hook(g):
        if Switch.fault is not None:
            raise Switch.fault
        return None

    target.register_hook(hook)
    snap = snapshot(with_grad + interior)
    before = [to_np(t.grad) for t in with_grad]
    exc = expect_failure(lambda: loss.backward(retain_graph=True), InjectedFault("tensor hook"))
    assert_propagated(exc, None)
    assert_unchanged(snap, f"tensor hook on tensor {k}")
    assert_thread_state_restored()
    assert_retry_accumulates_once(loss, with_grad, before, one_walk)


@pytest.mark.parametrize("k", range(NODE_COUNT))
def test_keyboard_interrupt_mid_walk(k):
    """Ctrl-C inside the walk (simulated by a node hook raising KeyboardInterrupt): it is not
    swallowed or converted, and nothing is half-written."""
    with_grad, interior, loss, one_walk = prepare()
    node = graph_nodes(loss)[k]

    def hook(grad_inputs, grad_outputs):
        if Switch.fault is not None:
            raise Switch.fault

    node.register_hook(hook)
    snap = snapshot(with_grad + interior)
    before = [to_np(t.grad) for t in with_grad]
    exc = expect_failure(lambda: loss.backward(retain_graph=True), KeyboardInterrupt())
    assert type(exc) is KeyboardInterrupt, f"KeyboardInterrupt became {type(exc).__name__}"
    assert_unchanged(snap, f"KeyboardInterrupt at node {k} ({node.name()})")
    assert_thread_state_restored()
    assert_retry_accumulates_once(loss, with_grad, before, one_walk)


@pytest.mark.parametrize("k", range(4))
def test_post_accumulate_grad_hook_raises(k):
    """A post-accumulate-grad hook on leaf k raises. E13 read strictly: every ``.grad``,
    including the ones already committed before that hook ran, is as before the call."""
    with_grad, interior, loss, one_walk = prepare()

    def post(t):
        if Switch.fault is not None:
            raise Switch.fault

    with_grad[k].register_post_accumulate_grad_hook(post)
    snap = snapshot(with_grad + interior)
    exc = expect_failure(lambda: loss.backward(retain_graph=True), InjectedFault("post"))
    assert_propagated(exc, None)
    assert_unchanged(snap, f"post-accumulate hook on leaf {k}")
    assert_thread_state_restored()


def test_faults_leave_no_walk_state_behind():
    """Many failed walks in a row on one retained graph, then a good one: exactly one gradient
    is added (no leaked pending state, no stale 'walk in progress' mark (E14))."""
    with_grad, interior, loss, one_walk = prepare(3)
    before = [to_np(t.grad) for t in with_grad]
    for fault in [InjectedFault("1"), KeyboardInterrupt(), InjectedFault("2"), ValueError("3")]:
        expect_failure(lambda: loss.backward(retain_graph=True), fault)
    assert_retry_accumulates_once(loss, with_grad, before, one_walk)
