"""E13 when the commit itself fails: a backward that raises leaves every ``.grad`` as it was,
even when the failure comes from the commit that writes them -- a check that refuses a
``.grad`` (read-only, an expanded view, a leaf whose ``.data`` was reshaped), a kernel that
raises (before or after it wrote), a MemoryError, a KeyboardInterrupt, a real Ctrl-C.

``.grad`` is compared bitwise, and as an object (an in-place addition keeps it, a first write
or an out-of-place one replaces it), with the version of every ``.grad`` and every tensor and
the tensors' values: after a failure everything is as before the call; after a Ctrl-C that
lands once the commit has finished, everything is exactly as after a clean call.
"""

from __future__ import annotations

import _signal
import _thread
import gc
import random
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import commit as commit_mod
from retrograd.autograd import engine
from retrograd.autograd.accumulate import accumulator_of

from ._workloads import leaf


class InjectedFault(Exception):
    """The exception the tests inject; nothing in retrograd raises it."""


# --------------------------------------------------------------------------------------------
# state: everything a failed call must leave alone, with identities
# --------------------------------------------------------------------------------------------
@dataclass
class Entry:
    grad_obj: Any  # the .grad object itself (None when unset)
    grad: np.ndarray | None
    grad_version: int | None
    version: int
    data: np.ndarray


def _copy(a: Any) -> np.ndarray:
    return np.array(np.asarray(a), copy=True)


def state_of(tensors: list[rg.Tensor]) -> list[Entry]:
    out = []
    for t in tensors:
        g = t._grad
        out.append(Entry(g, None if g is None else _copy(g._data),
                         None if g is None else g._version, t._version, _copy(t._data)))
    return out


def _same_values(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


class Diffs(list):
    """Up to five messages, and how many differences there were in all."""

    total = 0

    def add(self, fmt: str, *args: Any) -> None:
        self.total += 1
        if len(self) < 5:
            self.append(fmt.format(*args))


def diff_before(tensors: list[rg.Tensor], before: list[Entry]) -> Diffs:
    """What differs from the state before the call (empty: exactly as before)."""
    bad = Diffs()
    for i, (b, n) in enumerate(zip(before, state_of(tensors))):
        if n.grad_obj is not b.grad_obj:
            bad.add("#{}: .grad is another object", i)
        if not _same_values(n.grad, b.grad):
            bad.add("#{}: .grad {} -> {}", i, b.grad, n.grad)
        if n.grad_version != b.grad_version:
            bad.add("#{}: .grad version {} -> {}", i, b.grad_version, n.grad_version)
        if n.version != b.version or not _same_values(n.data, b.data):
            bad.add("#{}: the tensor changed", i)
    return bad


def diff_after(tensors: list[rg.Tensor], before: list[Entry], ref_before: list[Entry],
               ref_after: list[Entry]) -> Diffs:
    """What differs from 'every new value': the values and versions a clean call of the same
    program gives, and the same object as before exactly where the clean call kept it."""
    bad = Diffs()
    for i, (b, n, rb, ra) in enumerate(zip(before, state_of(tensors), ref_before, ref_after)):
        if (n.grad_obj is b.grad_obj) != (ra.grad_obj is rb.grad_obj):
            bad.add("#{}: .grad object kept/replaced unlike a clean call", i)
        if not _same_values(n.grad, ra.grad):
            bad.add("#{}: .grad {} where a clean call gives {}", i, n.grad, ra.grad)
        if n.grad_version != ra.grad_version:
            bad.add("#{}: .grad version {}, clean {}", i, n.grad_version, ra.grad_version)
        if n.version != ra.version or not _same_values(n.data, ra.data):
            bad.add("#{}: the tensor differs from a clean call", i)
    return bad


def gc_pause_depth() -> int:
    holders = getattr(engine, "_gc_holders", None)  # (a depth counter before the fix)
    return len(holders) if holders is not None else int(engine._gc_state["depth"])


def assert_process_state_restored() -> None:
    assert rg.is_grad_enabled(), "grad mode left off"
    assert gc.isenabled(), "the cyclic collector left disabled"
    assert gc_pause_depth() == 0, "a walk still holds the GC pause"
    assert not commit_mod._commit_lock.locked(), "the commit lock is still held"
    assert _signal.getsignal(2) is _signal.default_int_handler, "SIGINT handler not restored"


# --------------------------------------------------------------------------------------------
# programs: each builds fresh tensors, deterministically, and returns (tensors, call)
# --------------------------------------------------------------------------------------------
def _post_hook(t: rg.Tensor) -> None:
    t.grad.mul_(0.5)  # a hook that changes the new .grad in place: undone with the rest


def mixed(create_graph: bool = False) -> tuple[list[rg.Tensor], Callable[[], Any]]:
    """Every kind of write: a first .grad (stored, or copied where it may be shared), an
    in-place addition into an existing .grad, an out-of-place one (a .grad that requires
    grad), a broadcast leaf used twice, a retained interior gradient added in place, and a
    post-accumulate hook that changes its leaf's new .grad in place."""
    a = leaf([0.5, -1.0, 2.0])  # .grad None: first write
    b = leaf([1.5, 0.25, -0.5])  # .grad set: added in place
    c = leaf([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]])  # .grad requires grad: out of place
    d = leaf([0.1, 0.2, 0.3])  # broadcast into (2, 3), used twice
    h = leaf([0.3, 0.7, -0.2])  # post-accumulate hook
    b.grad = leaf([1.0, 2.0, 3.0], requires_grad=False)
    c.grad = leaf([[1.0] * 3] * 2)
    h.grad = leaf([4.0, 5.0, 6.0], requires_grad=False)
    h.register_post_accumulate_grad_hook(_post_hook)
    u = a * b
    u.retain_grad()
    u.grad = leaf([0.5, 0.5, 0.5], requires_grad=False)
    v = u.tanh() + d * h
    w = (c * v).exp() + d
    loss = w.sum() + (a * a).sum()
    tensors = [a, b, c, d, h, u]

    def call() -> None:
        loss.backward(retain_graph=True, create_graph=create_graph)

    return tensors, call


def with_inputs() -> tuple[list[rg.Tensor], Callable[[], Any]]:
    """``backward(inputs=...)`` with an interior tensor among the inputs: its gradient is
    committed to its ``.grad`` like a retained one."""
    a = leaf([0.5, -1.0, 2.0])
    b = leaf([1.5, 0.25, -0.5])
    a.grad = leaf([1.0, 1.0, 1.0], requires_grad=False)
    u = a * b
    u.grad = leaf([2.0, 2.0, 2.0], requires_grad=False)
    loss = (u.sin() * b).sum()
    tensors = [a, b, u]

    def call() -> None:
        loss.backward(inputs=[u, a, b], retain_graph=True)

    return tensors, call


def accumulate_directly() -> tuple[list[rg.Tensor], Callable[[], Any]]:
    """``AccumulateGrad.apply`` called by hand: one write, in place."""
    a = leaf([0.5, -1.0, 2.0])
    a.grad = leaf([1.0, 2.0, 3.0], requires_grad=False)
    node = accumulator_of(a)
    g = leaf([0.25, 0.5, 0.75], requires_grad=False)

    def call() -> None:
        node.apply([g])

    return [a], call


def many_leaves(n: int) -> Callable[[], tuple[list[rg.Tensor], Callable[[], Any]]]:
    """``n`` leaves, one in three with no .grad, one in three with a .grad added in place,
    one in three with a .grad replaced out of place."""

    def build() -> tuple[list[rg.Tensor], Callable[[], Any]]:
        rng = np.random.default_rng(n)
        ps = [leaf(rng.standard_normal(3)) for _ in range(n)]
        for i, p in enumerate(ps):
            if i % 3 == 1:
                p.grad = leaf(rng.standard_normal(3), requires_grad=False)
            elif i % 3 == 2:
                p.grad = leaf(rng.standard_normal(3))
        total = ps[0].sum()
        for p in ps[1:]:
            total = total + (p * p).sum()

        def call() -> None:
            total.backward(retain_graph=True)

        return ps, call

    return build


PROGRAMS: dict[str, Callable[[], tuple[list[rg.Tensor], Callable[[], Any]]]] = {
    "mixed": mixed,
    "mixed_create_graph": lambda: mixed(create_graph=True),
    "inputs": with_inputs,
    "accumulate_directly": accumulate_directly,
    "twelve_leaves": many_leaves(12),
}


def reference(build: Callable[[], tuple[list[rg.Tensor], Callable[[], Any]]]
              ) -> tuple[list[Entry], list[Entry]]:
    """The state before and after a clean call of a fresh build."""
    tensors, call = build()
    before = state_of(tensors)
    call()
    return before, state_of(tensors)


# --------------------------------------------------------------------------------------------
# kernel fault injection: every op of the cpu backend is wrapped while the commit runs
# --------------------------------------------------------------------------------------------
class Faults:
    """Counts the backend's kernel calls made inside the commit; raises ``exc`` at call
    ``at`` (``when`` = "before" the kernel runs, or "after" it ran, as NumPy raises a
    FloatingPointError after writing under ``np.seterr(all="raise")``)."""

    def __init__(self, at: int | None = None, exc: type[BaseException] = InjectedFault,
                 when: str = "before") -> None:
        self.at, self.exc, self.when = at, exc, when
        self.calls = 0
        self.names: list[str] = []
        self.armed = False

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not self.armed:
                return fn(*args, **kwargs)
            self.calls += 1
            self.names.append(name)
            if self.calls == self.at and self.when == "before":
                raise self.exc(f"injected before kernel call {self.calls} ({name})")
            out = fn(*args, **kwargs)
            if self.calls == self.at:
                raise self.exc(f"injected after kernel call {self.calls} ({name})")
            return out

        return wrapped


@contextmanager
def kernels_faulted(monkeypatch: pytest.MonkeyPatch, faults: Faults) -> Iterator[Faults]:
    be = rg.get_backend("cpu")
    with monkeypatch.context() as m:
        for name, fn in list(be.kernels.items()):
            if callable(fn):
                w = faults.wrap(name, fn)
                m.setitem(be.kernels, name, w)
                m.setattr(be.ops, name, w)
        real_commit, real_one = engine.commit, commit_mod.commit_leaf_grad

        def armed(real: Callable[..., Any]) -> Callable[..., Any]:
            def run(*args: Any, **kwargs: Any) -> Any:
                faults.armed = True
                try:
                    return real(*args, **kwargs)
                finally:
                    faults.armed = False
            return run

        m.setattr(engine, "commit", armed(real_commit))
        m.setattr(commit_mod, "commit_leaf_grad", armed(real_one))
        yield faults


def count_kernel_calls(monkeypatch: pytest.MonkeyPatch, build: Callable[..., Any]) -> Faults:
    tensors, call = build()
    with kernels_faulted(monkeypatch, Faults()) as f:
        call()
    return f


FAULT_KINDS = [(InjectedFault, "before"), (MemoryError, "before"), (KeyboardInterrupt, "before"),
               (InjectedFault, "after"), (KeyboardInterrupt, "after")]


def run_every_fault(monkeypatch: pytest.MonkeyPatch, name: str) -> int:
    """A fault at every kernel call of the commit of program ``name``, of every kind: the call
    raises that very exception, everything is as before, the process state is restored, and
    a clean retry gives exactly what a clean call gives. Returns the faults injected."""
    build = PROGRAMS[name]
    ref_before, ref_after = reference(build)
    n = count_kernel_calls(monkeypatch, build).calls
    assert n > 0
    injected = 0
    for exc, when in FAULT_KINDS:
        for k in range(1, n + 1):
            tensors, call = build()
            before = state_of(tensors)
            with kernels_faulted(monkeypatch, Faults(k, exc, when)) as f:
                with pytest.raises(BaseException) as info:
                    call()
            where = f"{name}: {exc.__name__} {when} kernel call {k}/{n} ({f.names[k - 1]})"
            assert type(info.value) is exc or isinstance(info.value.__cause__, exc), (
                f"{where}: got {type(info.value).__name__}: {info.value}")
            assert diff_before(tensors, before) == [], where
            assert_process_state_restored()
            if name != "accumulate_directly":
                call()  # the graph was retained: a clean retry writes exactly once
                assert diff_after(tensors, before, ref_before, ref_after) == [], where
            injected += 1
    print(f"{name}: {n} kernel calls x {len(FAULT_KINDS)} kinds of fault = {injected} faults")
    return injected


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_fault_at_every_kernel_call_of_the_commit(monkeypatch, name):
    run_every_fault(monkeypatch, name)


@pytest.mark.stress
def test_a_fault_at_every_kernel_call_of_a_commit_of_150_leaves(monkeypatch):
    PROGRAMS["150_leaves"] = many_leaves(150)
    try:
        run_every_fault(monkeypatch, "150_leaves")
    finally:
        del PROGRAMS["150_leaves"]


# --------------------------------------------------------------------------------------------
# the commit refuses a write before making any (the reproductions)
# --------------------------------------------------------------------------------------------
def test_an_expanded_grad_is_refused_before_anything_is_written():
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    b = rg.tensor([[1.0, 2.0, 3.0]] * 2, requires_grad=True)
    a.grad = rg.tensor([10.0, 10.0])
    b.grad = rg.zeros(1, 3).expand(2, 3)  # a read-only view
    loss = (b * b).sum() + (a * a).sum()
    before = state_of([a, b])
    with pytest.raises(rg.RetrogradError, match="single memory location"):
        loss.backward()
    assert diff_before([a, b], before) == []


def test_a_read_only_numpy_grad_is_refused_before_anything_is_written():
    frozen = np.zeros(2, dtype=np.float32)
    frozen.flags.writeable = False
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    c = rg.tensor([3.0, 4.0], requires_grad=True)
    a.grad = rg.from_numpy(frozen)
    c.grad = rg.tensor([5.0, 5.0])
    loss = (c * c).sum() + (a * a).sum() + (c * a).sum()
    before = state_of([a, c])
    with pytest.raises(rg.RetrogradError, match="read-only"):
        loss.backward()
    assert diff_before([a, c], before) == []


@pytest.mark.parametrize("when", ["before the forward", "after the forward"])
def test_a_leaf_whose_data_was_reshaped_is_refused_before_anything_is_written(when):
    """The .grad of x is (2, 3); its .data becomes (3, 2). Replaced before the forward, the
    gradient is (3, 2) and cannot be added into the .grad (PyTorch's message); replaced
    after, the (2, 3) gradient cannot be reduced to x's new shape."""
    x = leaf([[1.0, 2.0, 3.0]] * 2)
    y = leaf([1.0, 2.0])
    x.grad = rg.ones(2, 3, dtype=rg.float64)
    y.grad = leaf([5.0, 5.0], requires_grad=False)
    new = leaf([[1.0, 2.0]] * 3, requires_grad=False)
    if when == "before the forward":
        x.data = new
    loss = (y * y).sum() + (x * x).sum()
    if when == "after the forward":
        x.data = new
    before = state_of([x, y])
    message = ("The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
               "dimension 1" if when == "before the forward" else "cannot be reduced")
    with pytest.raises(rg.RetrogradError, match=re.escape(message)):
        loss.backward()
    assert diff_before([x, y], before) == []


@pytest.mark.parametrize("exc", [MemoryError, KeyboardInterrupt, FloatingPointError])
@pytest.mark.parametrize("when", ["before", "after"])
def test_the_accumulate_kernel_raising_on_the_second_leaf(monkeypatch, exc, when):
    """``accumulate_`` raises when adding into the second .grad: the first, already added
    to, is restored bitwise with its version."""
    a = leaf([1.0, 2.0])
    b = leaf([3.0, 4.0])
    a.grad = leaf([10.0, 10.0], requires_grad=False)
    b.grad = leaf([20.0, 20.0], requires_grad=False)
    loss = (a * a).sum() + (b * b).sum()
    before = state_of([a, b])
    be = rg.get_backend("cpu")
    real = be.ops.accumulate_
    calls = []

    def failing(dst: Any, src: Any) -> None:
        calls.append(1)
        if len(calls) == 2 and when == "before":
            raise exc("injected")
        real(dst, src)
        if len(calls) == 2:
            raise exc("injected")

    monkeypatch.setattr(be.ops, "accumulate_", failing)
    with pytest.raises(exc):
        loss.backward()
    assert len(calls) == 2
    assert diff_before([a, b], before) == []
    assert_process_state_restored()


def test_a_failing_post_accumulate_hook_restores_grad_versions_too():
    a = leaf([1.0, 2.0])
    b = leaf([3.0, 4.0])
    a.grad = leaf([10.0, 10.0], requires_grad=False)
    b.grad = leaf([20.0, 20.0], requires_grad=False)

    def boom(t: rg.Tensor) -> None:
        raise InjectedFault("post hook")

    b.register_post_accumulate_grad_hook(boom)
    loss = (a * a).sum() + (b * b).sum()
    before = state_of([a, b])
    with pytest.raises(InjectedFault):
        loss.backward()
    assert diff_before([a, b], before) == []


# --------------------------------------------------------------------------------------------
# Ctrl-C held back while the commit writes
# --------------------------------------------------------------------------------------------
def _interrupt_inside_accumulate(monkeypatch: pytest.MonkeyPatch, at: int) -> list[int]:
    be = rg.get_backend("cpu")
    real = be.ops.accumulate_
    calls: list[int] = []

    def signalling(dst: Any, src: Any) -> None:
        calls.append(1)
        if len(calls) == at:
            _thread.interrupt_main()  # SIGINT arrives while the commit writes
        real(dst, src)

    monkeypatch.setattr(be.ops, "accumulate_", signalling)
    return calls


def _three_leaves() -> tuple[list[rg.Tensor], rg.Tensor]:
    ps = [leaf([float(i), 1.0]) for i in range(3)]
    for p in ps:
        p.grad = leaf([1.0, 1.0], requires_grad=False)
    return ps, sum(((p * p).sum() for p in ps[1:]), (ps[0] * ps[0]).sum())


def test_a_ctrl_c_during_the_writes_is_delivered_after_them_and_undoes_them(monkeypatch):
    ps, loss = _three_leaves()
    before = state_of(ps)
    calls = _interrupt_inside_accumulate(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        loss.backward()
    assert len(calls) == 3  # the writes were not cut short: the signal waited
    assert diff_before(ps, before) == []
    assert_process_state_restored()


def test_a_ctrl_c_handler_that_does_not_raise_runs_once_and_the_commit_stands(monkeypatch):
    ref_ps, ref_loss = _three_leaves()
    ref_before = state_of(ref_ps)
    ref_loss.backward()
    ref_after = state_of(ref_ps)
    ps, loss = _three_leaves()
    before = state_of(ps)
    seen: list[int] = []
    old = _signal.signal(2, lambda signum, frame: seen.append(signum))
    try:
        _interrupt_inside_accumulate(monkeypatch, 1)
        loss.backward()
    finally:
        _signal.signal(2, old)
    assert seen == [2]
    assert diff_after(ps, before, ref_before, ref_after) == []


def test_a_second_ctrl_c_during_the_undo_does_not_cut_it_short(monkeypatch):
    """A kernel fault, then SIGINT while the undo restores the arrays: the undo finishes,
    then the Ctrl-C is delivered."""
    ps, loss = _three_leaves()
    before = state_of(ps)
    be = rg.get_backend("cpu")
    real_acc, real_assign = be.ops.accumulate_, be.ops.assign_
    calls: list[int] = []

    def failing(dst: Any, src: Any) -> None:
        calls.append(1)
        real_acc(dst, src)
        if len(calls) == 3:
            raise InjectedFault("third")

    restored: list[int] = []

    def signalling_assign(dst: Any, src: Any) -> None:
        restored.append(1)
        if len(restored) == 1:
            _thread.interrupt_main()
        real_assign(dst, src)

    monkeypatch.setattr(be.ops, "accumulate_", failing)
    monkeypatch.setattr(be.ops, "assign_", signalling_assign)
    with pytest.raises(KeyboardInterrupt) as info:
        loss.backward()
    assert isinstance(info.value.__context__, InjectedFault)
    assert len(restored) == 3
    assert diff_before(ps, before) == []
    assert_process_state_restored()


# --------------------------------------------------------------------------------------------
# real Ctrl-C at random moments of a large backward
# --------------------------------------------------------------------------------------------
def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    names = []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    for part in ("_prepare", "_publish", "_undo_held", "_run_hooks", "commit"):
        if part in names:
            return "commit:" + part
    if "timed" in names:  # the test's wrapper, just before or after the commit
        return "commit:entering or leaving"
    if "_run_plain" in names or "_run_order" in names:
        return "walk"
    return "around the walk"


def _fire(fired: threading.Event) -> None:
    _thread.interrupt_main()
    fired.set()


def interrupt_trials(n_leaves: int, trials: int, seed: int) -> dict[str, int]:
    """``trials`` backward calls of ``n_leaves`` leaves, each with ``_thread.interrupt_main()``
    fired from a timer after a random delay: every other one counted from the moment the
    commit starts (uniform over 1.2 times its length so far), the others from the start of
    the call (uniform over its whole length so far). Every trial ends with every .grad
    either exactly as before or exactly as after a clean call, and the process state
    restored. Returns how many trials ended where."""
    if _signal.getsignal(2) is not _signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    build = many_leaves(n_leaves)
    ref_before, ref_after = reference(build)
    marks: list[float] = []  # when the commit of the current call began and ended
    armed: list[threading.Timer] = []  # a timer to start as the commit begins
    real_commit = engine.commit

    def timed(*args: Any, **kwargs: Any) -> Any:
        marks.append(time.perf_counter())
        if armed:
            armed.pop().start()
        try:
            return real_commit(*args, **kwargs)
        finally:
            marks.append(time.perf_counter())

    commits: list[float] = []
    calls: list[float] = []
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    switch = sys.getswitchinterval()
    sys.setswitchinterval(5e-5)  # the timer thread gets the GIL within 50 us, not 5 ms
    engine.commit = timed
    try:
        for i in range(3 + trials):  # three clean calls first, to time the commit
            from_commit = i % 2 == 1
            if i < 3:
                delay = None
            elif from_commit:
                delay = rng.uniform(0.0, 1.2 * statistics.median(commits[-15:]))
            else:
                delay = rng.uniform(0.0, 1.05 * statistics.median(calls[-15:]))
            marks.clear()
            took = _trial(build, ref_before, ref_after, i, delay, armed if from_commit else None,
                          seen)
            if took is not None and len(marks) == 2:
                calls.append(took)
                commits.append(marks[1] - marks[0])
    finally:
        engine.commit = real_commit
        sys.setswitchinterval(switch)
    return seen


def _trial(build: Callable[[], tuple[list[rg.Tensor], Callable[[], Any]]],
           ref_before: list[Entry], ref_after: list[Entry], i: int, delay: float | None,
           armed: list[threading.Timer] | None, seen: dict[str, int]) -> float | None:
    """One call, Ctrl-C ``delay`` s after its start (or, with ``armed``, after its commit
    starts); none if ``delay`` is None. Returns how long the call took when it returned."""
    tensors, call = build()
    before = state_of(tensors)
    if delay is None:
        t0 = time.perf_counter()
        call()
        return time.perf_counter() - t0
    fired = threading.Event()
    timer = threading.Timer(delay, _fire, args=(fired,))
    outcome = "returned"
    took = None
    try:
        try:
            t0 = time.perf_counter()
            if armed is None:
                timer.start()
            else:
                armed.append(timer)
            call()
            took = time.perf_counter() - t0
        except KeyboardInterrupt as exc:
            outcome = _where(exc)
        if armed:  # the call never reached its commit
            armed.pop().start()
        timer.join()
        fired.wait()
        for _ in range(200):  # a signal still pending is delivered here
            time.sleep(0)
    except KeyboardInterrupt:
        outcome = "after the call returned"
    timer.join()
    assert fired.is_set()
    old = diff_before(tensors, before)
    new = diff_after(tensors, before, ref_before, ref_after)
    assert old == [] or new == [], (
        f"trial {i} (Ctrl-C at {delay * 1e3:.2f} ms, {outcome}): neither the old state "
        f"nor the new one: {old.total} differences from before ({old[:3]}), "
        f"{new.total} from after ({new[:3]})")
    if outcome == "after the call returned":
        assert new == []
    assert_process_state_restored()
    key = f"{outcome}: {'unchanged' if old == [] else 'all new'}"
    seen[key] = seen.get(key, 0) + 1
    return took


def test_ctrl_c_at_random_moments_of_a_300_leaf_backward():
    seen = interrupt_trials(300, 12, seed=0)
    print(seen)
    assert sum(seen.values()) == 12


@pytest.mark.stress
def test_ctrl_c_at_random_moments_of_a_1500_leaf_backward_many_trials():
    seen = interrupt_trials(1500, 400, seed=1)
    print(seen)
    assert sum(seen.values()) == 400
