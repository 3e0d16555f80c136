"""Memory: saved arrays are freed node by node during the walk (E5), the engine keeps no graph
alive after the call, nothing of ours is left in reference cycles, and a long training loop
has flat memory.

Cycle checks run with the cyclic collector disabled: whatever is not freed by reference
counting alone is either still referenced or part of a cycle, and both are failures here.
"""

from __future__ import annotations

import gc
import os
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

import retrograd as rg

from ._workloads import (
    graph_nodes,
    is_retrograd_instance,
    leaf,
    live_retrograd_objects,
    make_mlp_case,
    mlp_loss,
    rss_bytes,
    training_loop,
)

RG_DIR = os.path.dirname(rg.__file__)


# --------------------------------------------------------------------------------------------
# freed during the walk
# --------------------------------------------------------------------------------------------

def test_saved_arrays_are_freed_as_the_walk_goes():
    """A chain of tanh nodes (each saves its output array). A hook on the middle node looks at
    the others while the walk is still going: those that already ran hold no saved arrays
    (``saved_arrays() == []``, ``released``) and their arrays are dead (weak references);
    those still to run have theirs."""
    n, mid = 40, 20
    y = leaf(np.linspace(-1, 1, 8))
    nodes = []
    for _ in range(n):
        y = y.tanh()
        nodes.append(y.grad_fn)
    loss = y.sum()
    del y
    refs = []
    for i, node in enumerate(nodes):
        arrays = node.saved_arrays()
        assert arrays, f"tanh node {i} saved nothing"
        refs.append([weakref.ref(a) for a in arrays])
        del arrays
    seen: dict[str, list[bool]] = {}

    def midway(grad_inputs, grad_outputs):
        done = range(mid + 1, n)  # nodes[n-1] runs first
        todo = range(0, mid)
        seen["done_dead"] = [all(r() is None for r in refs[i]) for i in done]
        seen["done_empty"] = [nodes[i].saved_arrays() == [] for i in done]
        seen["done_released"] = [bool(nodes[i].released) for i in done]
        seen["todo_alive"] = [all(r() is not None for r in refs[i]) for i in todo]
        seen["todo_held"] = [len(nodes[i].saved_arrays()) > 0 for i in todo]
        seen["todo_not_released"] = [not nodes[i].released for i in todo]

    nodes[mid].register_hook(midway)
    loss.backward()
    assert seen, "the node hook never ran"
    for key, flags in seen.items():
        assert all(flags), f"{key}: {flags}"
    assert all(r() is None for rs in refs for r in rs), "saved arrays alive after the walk"
    assert all(node.released and node.saved_arrays() == [] for node in nodes)


def test_retain_graph_keeps_saved_arrays():
    """With ``retain_graph=True`` nothing is released."""
    x = leaf([0.3, -0.2])
    loss = (x.tanh() * x.exp()).sum()
    before = [len(n.saved_arrays()) for n in graph_nodes(loss)]
    loss.backward(retain_graph=True)
    after = [len(n.saved_arrays()) for n in graph_nodes(loss)]
    assert before == after and sum(after) > 0
    assert not any(n.released for n in graph_nodes(loss)
                   if not isinstance(n, rg.autograd.AccumulateGrad))


# --------------------------------------------------------------------------------------------
# nothing kept alive, no cycles
# --------------------------------------------------------------------------------------------

def _census() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects() if is_retrograd_instance(o))


def _is_ours(o: object) -> bool:
    if is_retrograd_instance(o):
        return True
    if isinstance(o, types.FrameType):
        return o.f_code.co_filename.startswith(RG_DIR)
    if isinstance(o, types.FunctionType | types.MethodType):
        mod = getattr(o, "__module__", None)
        return isinstance(mod, str) and mod.startswith("retrograd")
    return False


@contextmanager
def gc_disabled() -> Iterator[None]:
    was = gc.isenabled()
    for _ in range(10):  # to a fixed point: a weakref callback run by one collection (a
        if not gc.collect():  # WeakKeyDictionary dropping an entry) may free a new cycle
            break
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _collect_ours() -> tuple[int, list[tuple[str, str]]]:
    """One collection: how many objects it found, and (type, module.qualname) of each of
    ours among them. The garbage is kept only long enough to be named."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        found = gc.collect()
        ours = [(type(o).__qualname__,
                 f"{getattr(o, '__module__', '?')}.{getattr(o, '__qualname__', '?')}")
                for o in gc.garbage if _is_ours(o)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found, ours


def _no_cycles_left_by(scenario: Callable[[], object]) -> None:
    """Run ``scenario`` once to warm caches, then again with the collector off. Afterwards no
    retrograd object may be left (freed by reference counting alone, so neither kept alive
    by the engine nor in a cycle), and a collection may find nothing of ours."""
    scenario()
    with gc_disabled():
        base = _census()
        out = scenario()
        del out
        extra = _census() - base
        found, ours = _collect_ours()
        kinds = Counter(kind for kind, _name in ours)
        names = [name for _kind, name in ours]
    assert not extra, f"retrograd objects still alive after the call: {dict(extra)}"
    assert not kinds, (f"gc.collect() found {found} objects, ours in cycles: {dict(kinds)}: "
                       f"{sorted(set(names))}")


def _tensor_hook(g):
    return g * 2.0


def _node_hook(grad_inputs, grad_outputs):
    return None


def _prehook(grad_outputs):
    return None


def _post_hook(t):
    return None


class Square(rg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2.0 * x


def _mlp_backward():
    case = make_mlp_case(1)
    p = {k: leaf(v) for k, v in case.params.items()}
    mlp_loss(p, leaf(case.x, requires_grad=False)).backward()
    return p


def _mlp_retain_twice():
    case = make_mlp_case(2)
    p = {k: leaf(v) for k, v in case.params.items()}
    loss = mlp_loss(p, leaf(case.x, requires_grad=False))
    loss.backward(retain_graph=True)
    loss.backward()
    return p


def _mlp_grad():
    case = make_mlp_case(3)
    p = {k: leaf(v) for k, v in case.params.items()}
    return rg.autograd.grad(mlp_loss(p, leaf(case.x, requires_grad=False)), list(p.values()))


def _double_backward():
    x = leaf([0.5, 1.5])
    (g,) = rg.autograd.grad((x.tanh() * x * x).sum(), [x], create_graph=True)
    (h,) = rg.autograd.grad(g.sum(), [x])
    return h


def _create_graph_backward():
    x = leaf([0.5, 1.5])
    (x.sin() * x).sum().backward(create_graph=True)
    x.grad.sum().backward()
    return x


def _hooks_everywhere():
    x = leaf([0.5, 1.5])
    h = x * x
    h.register_hook(_tensor_hook)
    h.retain_grad()
    h.grad_fn.register_hook(_node_hook)
    h.grad_fn.register_prehook(_prehook)
    x.register_post_accumulate_grad_hook(_post_hook)
    (h.tanh() * 3.0).sum().backward()
    return x, h


def _custom_function():
    x = leaf([0.5, 1.5])
    Square.apply(x).sum().backward()
    return x


def _fused_relu_linear():
    F = rg.nn.functional
    x = leaf(np.ones((4, 3)), requires_grad=False)
    w = leaf(np.full((5, 3), 0.1))
    b = leaf(np.zeros(5))
    F.relu(F.linear(x, w, b)).sum().backward()
    F.sigmoid(F.linear(x, w, b)).sum().backward()
    return w


def _inplace_recorded():
    x = leaf([0.5, 1.5])
    h = x * 2.0
    h.mul_(3.0)
    h.sum().backward()
    return x


def _version_mismatch_caught():
    x = leaf([0.5, 1.5])
    y = (x * x).sum()
    with rg.no_grad():
        x.add_(1.0)
    try:
        y.backward()
    except rg.VersionMismatch:
        pass
    return x


def _graph_freed_caught():
    x = leaf([0.5, 1.5])
    y = (x * x).sum()
    y.backward()
    try:
        y.backward()
    except rg.GraphFreedError:
        pass
    return x


class _Boom(Exception):
    pass


def _raising_hook(g):
    raise _Boom("injected")


def _hook_fault_caught():
    x = leaf([0.5, 1.5])
    h = x.exp()
    h.register_hook(_raising_hook)
    try:
        (h * x).sum().backward()
    except (_Boom, rg.RetrogradError):
        pass
    return x


def _anomaly_caught():
    x = leaf([0.0, 1.0])
    try:
        with rg.autograd.detect_anomaly():
            (rg.sqrt(x) * 0.0).sum().backward()
    except rg.RetrogradError:
        pass
    return x


SCENARIOS = {
    "backward": _mlp_backward,
    "retain_graph_twice": _mlp_retain_twice,
    "autograd_grad": _mlp_grad,
    "double_backward": _double_backward,
    "create_graph_backward": _create_graph_backward,
    "hooks_and_retain_grad": _hooks_everywhere,
    "custom_function": _custom_function,
    "fused_linear_relu": _fused_relu_linear,
    "inplace_recorded": _inplace_recorded,
    "version_mismatch": _version_mismatch_caught,
    "graph_freed": _graph_freed_caught,
    "hook_fault": _hook_fault_caught,
    "anomaly_error": _anomaly_caught,
}


def test_a_dropped_backend_is_garbage_before_the_scenario_starts():
    """A backend built and dropped earlier in the process (the api table tool builds its own)
    holds quiet kernels whose wrapped functions a weak-keyed registry keeps: its first
    collection frees more cycles. None of that may be counted against the scenario."""
    from retrograd.backends.numpy import NumpyBackend

    backend = NumpyBackend()
    backend.kernels  # noqa: B018 - builds the table, quiet wrappers and all
    del backend
    with gc_disabled():
        _found, ours = _collect_ours()
    assert not ours, f"left for the scenario's collection: {sorted({n for _k, n in ours})}"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_no_graph_kept_and_no_cycles(name):
    _no_cycles_left_by(SCENARIOS[name])


def test_create_graph_backward_keeping_grad_is_a_cycle_that_gc_collects():
    """``backward(create_graph=True)`` with ``.grad`` kept: leaf -> .grad -> its graph ->
    AccumulateGrad -> leaf, a reference cycle, as in PyTorch (both warn). Reference counting
    alone cannot free it; ``gc.collect()`` does, and setting ``.grad = None`` breaks it."""
    import warnings

    for breaks in (False, True):
        with gc_disabled(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from retrograd.autograd import engine

            engine._cycle_warned = False
            x = leaf([0.5, 1.5])
            (x.sin() * x).sum().backward(create_graph=True)
            assert any("reference cycle" in str(w.message) for w in caught)
            assert x.grad.grad_fn is not None
            if breaks:
                x.grad = None
            ref = weakref.ref(x)
            del x
            assert (ref() is None) is breaks  # the cycle keeps it alive until collected
            gc.collect()
            assert ref() is None


def test_graph_dies_with_its_root_while_leaves_live():
    """The user keeps the leaves and drops the loss: every node of the graph (weak
    references where nodes support them, else the census) is gone, gc disabled."""
    case = make_mlp_case(4)
    p = {k: leaf(v) for k, v in case.params.items()}
    for _ in range(2):  # warm-up; the second accumulation gives each .grad its counter
        mlp_loss(p, leaf(case.x, requires_grad=False)).backward()
    with gc_disabled():
        base = _census()
        loss = mlp_loss(p, leaf(case.x, requires_grad=False))
        interior = [n for n in graph_nodes(loss)
                    if not isinstance(n, rg.autograd.AccumulateGrad)]
        try:
            refs = [weakref.ref(n) for n in interior]
        except TypeError:
            refs = []
        del interior
        loss.backward()
        del loss
        left = _census() - base
    assert all(r() is None for r in refs)
    assert not left, f"alive after the call: {dict(left)}"
    assert all(t.grad is not None for t in p.values())


# --------------------------------------------------------------------------------------------
# long training loop
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("steps", [1_500, pytest.param(10_000, marks=pytest.mark.stress)])
def test_training_loop_memory_is_flat(steps):
    """RSS and the number of live retrograd objects at step 100 and at the last step. The
    object count must not grow at all; RSS may move by allocator noise only (bound: 32 MiB)."""
    marks: dict[int, tuple[int, int]] = {}

    def record(step: int) -> None:
        marks[step] = (rss_bytes(), live_retrograd_objects())

    loss = training_loop(steps, record_at=(100, steps), on_record=record)
    (rss0, obj0), (rss1, obj1) = marks[100], marks[steps]
    print(f"training loop: RSS step 100 = {rss0 / 2**20:.1f} MiB, step {steps} = "
          f"{rss1 / 2**20:.1f} MiB; retrograd objects {obj0} -> {obj1}; final loss {loss:.4f}")
    assert np.isfinite(loss)
    assert obj1 <= obj0, f"live retrograd objects grew from {obj0} to {obj1}"
    assert rss1 - rss0 < 32 * 2**20, f"RSS grew by {(rss1 - rss0) / 2**20:.1f} MiB"
