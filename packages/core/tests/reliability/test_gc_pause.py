"""The GC pause of a walk survives a KeyboardInterrupt at any bytecode.

A walk of 64 nodes or more pauses the cyclic collector and releases the pause when it ends.
Ctrl-C can land between any two bytecodes of the main thread; a KeyboardInterrupt raised
right after the pause was taken but before the walk recorded it used to leave the collector
disabled for the rest of the process (and the pause depth stuck at 1).

These tests trace the walk (``_walk_here``) and the pause and release code (``_pause_gc``,
``_resume_gc``) opcode by opcode (``sys.settrace`` with ``frame.f_trace_opcodes``) and raise
KeyboardInterrupt at the k-th opcode, for every k: afterwards the collector is on exactly
when it was before, and no walk holds the pause. NOPs are skipped: a NOP cannot raise (Python
checks for a pending signal only at calls, loops and function entries), and CPython 3.11's
exception table leaves the NOP of a nested ``try:`` line outside the enclosing ``try``, so an
exception forced there by a tracer skips every ``finally`` -- a case no Ctrl-C can produce.
"""

from __future__ import annotations

import dis
import gc
import sys
from collections.abc import Callable
from typing import Any

import pytest

import retrograd as rg
from retrograd.autograd import engine

from ._workloads import leaf

TRACED = {engine._walk_here.__code__, engine._pause_gc.__code__, engine._resume_gc.__code__}
NOP = dis.opmap["NOP"]


def depth() -> int:
    """How many walks hold the pause (a counter before the fix, the holders' set after)."""
    holders = getattr(engine, "_gc_holders", None)
    return len(holders) if holders is not None else int(engine._gc_state["depth"])


class InterruptAt:
    """Raise KeyboardInterrupt at the ``at``-th opcode executed in a traced frame (never, when
    ``at`` is None: count them). Raising from the trace function unsets it: one per run."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.count = 0
        self.where: tuple[str, int] | None = None

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code in TRACED:
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            return self.local
        return None

    def local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode" and frame.f_code.co_code[frame.f_lasti] != NOP:
            self.count += 1
            if self.count == self.at:
                self.where = (frame.f_code.co_name, frame.f_lasti)
                raise KeyboardInterrupt
        return self.local


def run_traced(fn: Callable[[], Any], at: int | None) -> tuple[InterruptAt, bool]:
    tracer = InterruptAt(at)
    interrupted = False
    sys.settrace(tracer)
    try:
        fn()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        sys.settrace(None)
    return tracer, interrupted


def chain(n: int = 80) -> rg.Tensor:
    x = leaf([0.5, -1.0])
    y = x * 1.0
    for _ in range(n):
        y = y * 1.0
    return y.sum()


def every_opcode(build: Callable[[], Callable[[], Any]], check: Callable[[str], None]) -> int:
    """Count the traced opcodes of one clean run, then interrupt at each in turn; ``check``
    after every run. Returns the number of runs."""
    tracer, interrupted = run_traced(build(), None)
    assert not interrupted and tracer.count > 50
    n = tracer.count
    for k in range(1, n + 1):
        tracer, interrupted = run_traced(build(), k)
        assert interrupted, f"no interrupt at opcode {k}/{n}"
        check(f"KeyboardInterrupt at opcode {k}/{n} ({tracer.where})")
    print(f"{n} opcodes, interrupted at each")
    return n


def _backward() -> Callable[[], Any]:
    loss = chain()
    return loss.backward


def test_interrupt_at_every_opcode_of_a_walk_with_the_collector_on():
    assert gc.isenabled()

    from retrograd.autograd.engine import current_graph_task_id

    def check(where: str) -> None:
        assert gc.isenabled(), f"{where}: the collector was left disabled"
        assert depth() == 0, f"{where}: pause depth {depth()}"
        # the walk's record as this thread's current backward (queue_callback, multi-grad
        # hooks) does not outlive it
        assert current_graph_task_id() == -1, f"{where}: a finished walk is still current"

    every_opcode(_backward, check)


def test_interrupt_at_every_opcode_of_a_walk_with_the_collector_off():
    """A user's choice to keep the collector off is kept whatever the interrupt."""
    gc.disable()
    try:
        def check(where: str) -> None:
            assert not gc.isenabled(), f"{where}: the collector was turned on"
            assert depth() == 0, f"{where}: pause depth {depth()}"

        every_opcode(_backward, check)
    finally:
        gc.enable()


def test_interrupt_at_every_opcode_while_another_walk_holds_the_pause():
    """Another walk (here a stand-in holder) keeps the pause: the interrupted walk releases
    only its own, and the collector stays off until the other lets go."""
    other = object()
    engine._pause_gc(other)
    try:
        def check(where: str) -> None:
            assert not gc.isenabled(), f"{where}: the collector was turned on under a holder"
            assert depth() == 1, f"{where}: pause depth {depth()}"

        every_opcode(_backward, check)
    finally:
        engine._resume_gc(other)
    assert gc.isenabled() and depth() == 0


def _nested() -> Callable[[], Any]:
    """An outer walk whose tensor hook runs an inner backward (both pause): the interrupt
    lands in either; the hook lets it through."""
    outer = chain()
    inner = chain()
    x = leaf([1.0, 2.0])
    mid = x * 1.0
    for _ in range(70):
        mid = mid * 1.0

    def hook(g: Any) -> None:
        inner.backward()

    mid.register_hook(hook)
    return (mid.sum() + outer).backward


def test_interrupt_at_every_opcode_of_nested_walks():
    def check(where: str) -> None:
        assert gc.isenabled(), f"{where}: the collector was left disabled"
        assert depth() == 0, f"{where}: pause depth {depth()}"

    every_opcode(_nested, check)


def test_an_inner_walk_interrupted_and_caught_releases_only_its_own_pause():
    """The hook catches the interrupt of the inner walk: inside the outer walk the pause is
    still held once (the outer's), and the collector still off."""
    seen: list[tuple[bool, int]] = []
    runs = 0
    k = 1
    while True:
        x = leaf([1.0, 2.0])
        mid = x * 1.0
        for _ in range(70):
            mid = mid * 1.0
        inner = chain()
        tracer = InterruptAt(k)
        fired: list[bool] = []

        def hook(g: Any, tracer: InterruptAt = tracer, inner: rg.Tensor = inner,
                 fired: list[bool] = fired) -> None:
            sys.settrace(tracer)
            try:
                inner.backward()
            except KeyboardInterrupt:
                fired.append(True)
            finally:
                sys.settrace(None)
            seen.append((gc.isenabled(), depth()))

        mid.register_hook(hook)
        mid.sum().backward()
        assert gc.isenabled() and depth() == 0
        runs += 1
        if not fired:
            break  # k passed the inner walk's last opcode
        assert seen[-1] == (False, 1), f"opcode {k}: {seen[-1]}"
        k += 1
    print(f"{k - 1} opcodes of the inner walk, interrupted at each")
    assert runs > 50


@pytest.mark.parametrize("n", [1, 63, 64, 200])
def test_the_pause_is_held_exactly_during_walks_of_64_nodes_or_more(n):
    seen: list[tuple[bool, int]] = []
    x = leaf([1.0])
    y = x * 1.0
    for _ in range(n - 2):
        y = y * 1.0
    y.register_hook(lambda g: seen.append((gc.isenabled(), depth())))
    (y * 1.0).backward()  # n + 1 nodes with the leaf's
    assert seen == ([(False, 1)] if n + 1 >= engine._GC_PAUSE_MIN_NODES else [(True, 0)])
    assert gc.isenabled() and depth() == 0
