"""Threads: independent graphs in parallel are exact; grad mode is thread-local; two walks of
one graph at once are refused (E14), never silently doubled.

The GIL serialises bytecode, not walks: with a tiny switch interval two walks interleave node by
node, which is exactly the interleaving E14 is about.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import retrograd as rg

from ._workloads import leaf, make_mlp_case, mlp_grads, mlp_reference_grads, to_np


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Make the interpreter switch threads every few microseconds."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def run_threads(n: int, target: Callable[[int], None], timeout: float = 300.0) -> None:
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a worker thread hung"
    if errors:
        raise errors[0]
    assert gc.isenabled(), "concurrent walks left the cyclic garbage collector disabled"


# --------------------------------------------------------------------------------------------
# independent graphs
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "n_threads,n_graphs",
    [(4, 25), pytest.param(16, 200, marks=pytest.mark.stress)],
)
def test_independent_graphs_in_threads_are_exact(n_threads, n_graphs, fast_switching):
    """Each thread builds and differentiates its own MLPs (shared intermediates). Every gradient
    is bitwise equal to the same computation done alone, and close to the NumPy reference.
    Odd graphs go through ``autograd.grad``, even ones through ``backward``; every third graph
    also does a forward under ``no_grad`` to churn the thread-local grad mode."""
    seeds = [[t * 10_000 + g for g in range(n_graphs)] for t in range(n_threads)]
    sys.setswitchinterval(5e-3)  # the serial reference needs no interleaving
    serial = {s: mlp_grads(make_mlp_case(s), functional=bool(s % 2)) for row in seeds for s in row}
    sys.setswitchinterval(1e-5)
    results: dict[int, dict[str, np.ndarray]] = {}

    def work(t: int) -> None:
        for s in seeds[t]:
            if s % 3 == 0:
                with rg.no_grad():
                    y = leaf([1.0, 2.0]) * 3.0
                assert y.grad_fn is None and not y.requires_grad
            assert rg.is_grad_enabled()
            results[s] = mlp_grads(make_mlp_case(s), functional=bool(s % 2))

    run_threads(n_threads, work)
    assert len(results) == n_threads * n_graphs
    for s, grads in results.items():
        ref = mlp_reference_grads(make_mlp_case(s))
        for name, g in grads.items():
            assert np.array_equal(g, serial[s][name]), f"graph {s} {name}: differs from serial run"
            np.testing.assert_allclose(g, ref[name], rtol=1e-12, atol=1e-12,
                                       err_msg=f"graph {s} {name} vs NumPy")


# --------------------------------------------------------------------------------------------
# grad mode is thread-local
# --------------------------------------------------------------------------------------------

def test_grad_mode_does_not_leak_between_threads():
    """A holds ``no_grad`` while B checks, then B disables grad while A checks: each thread
    sees only its own setting; the main thread never changes."""
    a_in, b_off, a_checked = threading.Event(), threading.Event(), threading.Event()
    x = leaf([1.0, 2.0])
    seen: dict[str, object] = {}

    def thread_a(_: int) -> None:
        with rg.no_grad():
            a_in.set()
            assert b_off.wait(10)
            seen["a_enabled_while_b_off"] = rg.is_grad_enabled()
            seen["a_tracks"] = (x * 2.0).requires_grad
        seen["a_after"] = rg.is_grad_enabled()
        a_checked.set()

    def thread_b(_: int) -> None:
        assert a_in.wait(10)
        seen["b_enabled_while_a_off"] = rg.is_grad_enabled()
        seen["b_tracks"] = (x * 2.0).requires_grad
        rg.set_grad_enabled(False)
        b_off.set()
        assert a_checked.wait(10)
        seen["b_still_off"] = not rg.is_grad_enabled()
        seen["b_tracks_after"] = (x * 2.0).requires_grad

    errors: list[BaseException] = []

    def guard(fn: Callable[[int], None], arg: int) -> None:
        try:
            fn(arg)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            for ev in (a_in, b_off, a_checked):
                ev.set()

    ts = [threading.Thread(target=guard, args=(thread_a, 0)),
          threading.Thread(target=guard, args=(thread_b, 1))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert not errors, errors
    assert seen == {
        "b_enabled_while_a_off": True, "b_tracks": True,
        "a_enabled_while_b_off": False, "a_tracks": False, "a_after": True,
        "b_still_off": True, "b_tracks_after": False,
    }
    assert rg.is_grad_enabled()


def test_new_thread_starts_with_grad_enabled():
    """As in PyTorch, grad mode is per thread and a new thread starts enabled, whatever the
    thread that spawned it was doing."""
    seen = []
    with rg.no_grad():
        t = threading.Thread(target=lambda: seen.append(rg.is_grad_enabled()))
        t.start()
        t.join(10)
        assert not rg.is_grad_enabled()
    assert seen == [True]


@pytest.mark.parametrize("n_threads,iters", [(4, 300), pytest.param(16, 5000, marks=pytest.mark.stress)])
def test_grad_mode_churn(n_threads, iters, fast_switching):
    """Every thread flips its mode at random, through all four APIs, and checks after each
    flip that it sees its own setting and that ops follow it."""
    x = leaf([1.0])

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        for _ in range(iters):
            want = bool(rng.integers(0, 2))
            how = int(rng.integers(0, 3))
            if how == 0:
                rg.set_grad_enabled(want)
                ok = rg.is_grad_enabled() == want and (x + 1.0).requires_grad == want
                rg.set_grad_enabled(True)
            elif how == 1:
                with rg.no_grad():
                    ok = not rg.is_grad_enabled() and (x + 1.0).grad_fn is None
                    with rg.enable_grad():
                        ok = ok and rg.is_grad_enabled() and (x + 1.0).grad_fn is not None
                    ok = ok and not rg.is_grad_enabled()
            else:
                with rg.set_grad_enabled(want):
                    ok = rg.is_grad_enabled() == want
            assert ok, f"thread {t} saw another thread's grad mode"
            assert rg.is_grad_enabled()

    run_threads(n_threads, work)


def test_no_grad_decorator_in_threads():
    @rg.no_grad()
    def f(t):
        return t * 2.0, rg.is_grad_enabled()

    x = leaf([1.0])
    out = []

    def work(_: int) -> None:
        y, mode = f(x)
        out.append((y.requires_grad, mode, rg.is_grad_enabled()))

    run_threads(4, work)
    assert out == [(False, False, True)] * 4


# --------------------------------------------------------------------------------------------
# E14: one graph, two walks
# --------------------------------------------------------------------------------------------

def _dyadic_graph() -> tuple[rg.Tensor, rg.Tensor, rg.Tensor, rg.Tensor, rg.Tensor]:
    """A small graph whose gradients are exact binary fractions, so k walks give exactly k
    times one walk's gradient."""
    x = leaf([0.5, -1.25, 2.0])
    w = leaf([0.25, 0.75, -0.5])
    h = x * w
    m = h * 2.0
    loss = (m * m).sum() + (h * x).sum()
    return x, w, h, m, loss


def _one_walk_grads() -> tuple[np.ndarray, np.ndarray]:
    x, w, *_, loss = _dyadic_graph()
    loss.backward()
    return to_np(x.grad), to_np(w.grad)


@pytest.mark.parametrize("retain", [True, False], ids=["retain", "no-retain"])
@pytest.mark.parametrize("second", ["backward", "grad"])
def test_second_walk_on_a_busy_graph_is_refused(retain, second):
    """Walk A stops inside a node hook (mid-walk, deterministic) until walk B, on the same
    graph in another thread, has been attempted. B must raise RetrogradError at once (no
    lock, no wait); A must then finish with exactly one walk's gradient."""
    gx, gw = _one_walk_grads()
    x, w, h, m, loss = _dyadic_graph()
    entered, release = threading.Event(), threading.Event()
    a_thread: list[threading.Thread] = []

    def blocking_hook(grad_inputs, grad_outputs):
        if threading.current_thread() is a_thread[0]:
            entered.set()
            release.wait(30)

    m.grad_fn.register_hook(blocking_hook)
    outcome: dict[str, object] = {}

    def walk_a() -> None:
        try:
            loss.backward(retain_graph=retain)
            outcome["a"] = "ok"
        except BaseException as e:  # noqa: BLE001
            outcome["a"] = e
            entered.set()

    def walk_b() -> None:
        try:
            if second == "backward":
                loss.backward(retain_graph=True)
            else:
                rg.autograd.grad(loss, [x, w], retain_graph=True)
            outcome["b"] = "ok"
        except BaseException as e:  # noqa: BLE001
            outcome["b"] = e

    a_thread.append(threading.Thread(target=walk_a, daemon=True))
    a_thread[0].start()
    assert entered.wait(30), "walk A never reached the hook"
    b = threading.Thread(target=walk_b, daemon=True)
    b.start()
    b.join(10)
    b_blocked = b.is_alive()
    release.set()
    a_thread[0].join(30)
    b.join(30)
    assert not b_blocked, "walk B waited for walk A instead of raising RetrogradError (E14)"
    assert isinstance(outcome.get("b"), rg.RetrogradError), (
        f"second walk on a graph in use: expected RetrogradError, got {outcome.get('b')!r}")
    assert outcome.get("a") == "ok", f"walk A was disturbed by B's refused attempt: {outcome['a']!r}"
    np.testing.assert_array_equal(to_np(x.grad), gx)
    np.testing.assert_array_equal(to_np(w.grad), gw)
    assert gc.isenabled(), "the cyclic garbage collector was left disabled"
    if retain:  # the graph is free again: a later walk works and accumulates once more
        loss.backward()
        np.testing.assert_array_equal(to_np(x.grad), 2 * gx)
        np.testing.assert_array_equal(to_np(w.grad), 2 * gw)


def _hammer(loss: rg.Tensor, calls: int) -> int:
    """Two threads call ``loss.backward(retain_graph=True)`` ``calls`` times each; returns how
    many calls succeeded (the others must raise RetrogradError)."""
    wins = [0, 0]

    def work(t: int) -> None:
        for _ in range(calls):
            try:
                loss.backward(retain_graph=True)
                wins[t] += 1
            except rg.RetrogradError:
                pass

    run_threads(2, work)
    return sum(wins)


@pytest.mark.parametrize("rounds,calls", [(5, 40), pytest.param(50, 200, marks=pytest.mark.stress)])
def test_racing_walks_never_give_a_wrong_gradient(rounds, calls, fast_switching):
    """Two threads hammer one retained graph. Each call either succeeds or raises
    RetrogradError; the accumulated gradient is exactly (successes) x (one walk's gradient).
    Whatever the interleaving, nothing is lost and nothing counted twice."""
    gx, gw = _one_walk_grads()
    for _ in range(rounds):
        x, w, h, m, loss = _dyadic_graph()
        k = _hammer(loss, calls)
        assert k >= 1
        np.testing.assert_array_equal(to_np(x.grad), k * gx)
        np.testing.assert_array_equal(to_np(w.grad), k * gw)


def test_shared_subgraph_two_roots_never_wrong(fast_switching):
    """Two roots sharing a subgraph, walked from two threads at once: either walk may be
    refused, but the final gradient is exactly the sum of the walks that succeeded."""
    x = leaf([0.5, 0.25])
    h = x * x
    r1 = (h * 2.0).sum()
    r2 = (h * 4.0).sum()
    g1 = 2.0 * 2 * np.array([0.5, 0.25])
    g2 = 4.0 * 2 * np.array([0.5, 0.25])
    wins = [0, 0]

    def work(t: int) -> None:
        for _ in range(50):
            try:
                (r1 if t == 0 else r2).backward(retain_graph=True)
                wins[t] += 1
            except rg.RetrogradError:
                pass

    run_threads(2, work)
    np.testing.assert_array_equal(to_np(x.grad), wins[0] * g1 + wins[1] * g2)
