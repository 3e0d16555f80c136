"""Races on a fresh tensor's lazily created bookkeeping (issue "Reliability, round two", 4).

A leaf's ``AccumulateGrad`` (``accumulator_of``), a tensor's ``_extra`` object
(``Tensor._x``), the hook dicts of a tensor and of a node (``Node._hook_table`` and the dicts
inside) are made on first need. Many threads doing that first thing to the *same* new tensor
at once -- the first op on a leaf, ``register_hook``, ``retain_grad``, a post-accumulate-grad
hook, a node hook or prehook -- must all see one object: no hook lost, every op's graph
ending in the leaf's one accumulator, every gradient right.

The harness: a crew of N worker threads kept alive across rounds (so a round costs two
barrier crossings, not N thread starts). Each round builds fresh tensors, releases the N
workers at once through a ``threading.Barrier`` to do their first thing to the same tensor,
waits for them, and then judges, in the main thread, that nothing was lost: every hook runs
exactly once, every ``.grad`` and every ``autograd.grad`` result is exact (the values are
dyadic, so exact means bitwise).

Two ways of provoking thread switches:

- ``natural``: ``sys.setswitchinterval(1e-6)``; the interpreter asks the running thread to
  drop the GIL every microsecond. What a user's program would hit, rarely.
- ``amplified``: in addition, the workers trace the few functions that create bookkeeping
  (``sys.settrace``, only their code objects) and give the GIL away (``time.sleep``, a random few microseconds) at
  every line of them: each check-then-create window is then open for a whole switch. This
  makes a lost update nearly certain on code that has one, so the quick form catches it.

``race_rates`` measures the rate of bad rounds per scenario (used for docs/reliability.md).
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd.accumulate import AccumulateGrad, accumulator_of

from ._workloads import graph_nodes, leaf, to_np

N_THREADS = 4
X0 = [0.5, -1.0, 2.0]  # dyadic: every gradient below is exact
W = [0.25, -0.5, 1.5]

# the functions that create bookkeeping on first need: the amplifier yields inside them
CREATORS = frozenset({
    "_x", "accumulator_of", "_hook_table", "register_hook", "register_prehook",
    "_register_tensor_prehook", "register_post_accumulate_grad_hook", "retain_grad",
})
_PKG = os.sep + "retrograd" + os.sep


def _yield_every_line(frame: Any, event: str, arg: Any) -> Any:
    if event == "line":
        # give the GIL away for a random while: the others run into the window, and leave it
        # in another order than they came
        time.sleep(random.random() * 4e-5)
    return _yield_every_line


def _trace_creators(frame: Any, event: str, arg: Any) -> Any:
    code = frame.f_code
    if event == "call" and code.co_name in CREATORS and _PKG in code.co_filename:
        time.sleep(0)
        return _yield_every_line
    return None


class Crew:
    """``n`` worker threads, alive across rounds. ``round(task)`` releases them at once
    through a barrier to run ``task(i)``, waits until all have finished, and re-raises the
    first error a worker hit."""

    def __init__(self, n: int, amplify: bool, timeout: float = 60.0) -> None:
        self.n = n
        self.amplify = amplify
        self.timeout = timeout
        self.go = threading.Barrier(n + 1)
        self.done = threading.Barrier(n + 1)
        self.task: Callable[[int], None] | None = None
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True,
                                         name=f"race-worker-{i}") for i in range(n)]
        for t in self.threads:
            t.start()

    def _loop(self, i: int) -> None:
        if self.amplify:
            sys.settrace(_trace_creators)
        try:
            while True:
                self.go.wait(self.timeout)
                task = self.task
                if task is None:
                    return
                try:
                    task(i)
                except BaseException as e:  # noqa: BLE001 - re-raised by round()
                    self.errors.append(e)
                self.done.wait(self.timeout)
        except threading.BrokenBarrierError:
            return
        finally:
            sys.settrace(None)

    def round(self, task: Callable[[int], None]) -> None:
        self.task = task
        self.errors = []
        self.go.wait(self.timeout)
        self.done.wait(self.timeout)
        if self.errors:
            raise self.errors[0]

    def close(self) -> None:
        self.task = None
        try:
            self.go.wait(self.timeout)
        except threading.BrokenBarrierError:
            pass
        for t in self.threads:
            t.join(self.timeout)
            assert not t.is_alive(), "a race worker hung"


# --------------------------------------------------------------------------------------------
# scenarios: setup() -> (task(i) run by every worker at once, check() -> None or what was lost)
# --------------------------------------------------------------------------------------------

Scenario = Callable[[int], tuple[Callable[[int], None], Callable[[], str | None]]]


def _fresh_leaf() -> rg.Tensor:
    return leaf(X0)


def _accumulators(*roots: rg.Tensor) -> set[int]:
    return {id(n) for r in roots for n in graph_nodes(r) if isinstance(n, AccumulateGrad)}


# the first op each worker makes on the leaf, and d(op(x).sum())/dx
_FIRST_OPS: list[tuple[Callable[[rg.Tensor], rg.Tensor], Callable[[np.ndarray], np.ndarray]]] = [
    (lambda x: x * 2.0, lambda x: np.full_like(x, 2.0)),
    (lambda x: x + 1.0, lambda x: np.ones_like(x)),
    (lambda x: x * x, lambda x: 2.0 * x),
    (lambda x: x[1:], lambda x: np.array([0.0, 1.0, 1.0])),
    (lambda x: -x, lambda x: -np.ones_like(x)),
    (lambda x: x @ leaf(W, requires_grad=False), lambda x: np.array(W)),
]


def _grad_of(i: int) -> np.ndarray:
    return _FIRST_OPS[i % len(_FIRST_OPS)][1](np.array(X0))


def first_op(n: int):
    """Every worker makes its first op on the same fresh leaf. Afterwards each result's graph
    must end in the leaf's one accumulator, ``autograd.grad`` of each must find the leaf,
    and a backward of their sum must give the sum of the gradients."""
    x = _fresh_leaf()
    ys: list[rg.Tensor | None] = [None] * n

    def task(i: int) -> None:
        ys[i] = _FIRST_OPS[i % len(_FIRST_OPS)][0](x).sum()

    def check() -> str | None:
        outs = [y for y in ys if y is not None]
        if len(outs) != n:
            return "a worker made no result"
        accs = _accumulators(*outs)
        if accs != {id(accumulator_of(x))}:
            return f"{len(accs)} accumulators for one leaf"
        for i, y in enumerate(outs):
            try:
                (g,) = rg.autograd.grad(y, [x], retain_graph=True)
            except rg.RetrogradError as e:
                return f"autograd.grad: {e}"
            if not np.array_equal(to_np(g), _grad_of(i)):
                return f"autograd.grad of result {i}: {to_np(g)}"
        sum(outs[1:], outs[0]).backward()
        want = sum(_grad_of(i) for i in range(n))
        if not np.array_equal(to_np(x.grad), want):
            return f"x.grad {to_np(x.grad)}, expected {want}"
        return None

    return task, check


def _seen_once(seen: list[int], n: int, what: str) -> str | None:
    if sorted(seen) != list(range(n)):
        return f"{what}: ran {sorted(seen)}, expected each of 0..{n - 1} once"
    return None


def leaf_hooks(n: int):
    """Every worker registers a tensor hook on the same fresh leaf: all must run."""
    x = _fresh_leaf()
    seen: list[int] = []

    def task(i: int) -> None:
        x.register_hook(lambda g, i=i: seen.append(i))

    def check() -> str | None:
        (x * 2.0).sum().backward()
        return _seen_once(seen, n, "leaf hooks") or (
            None if np.array_equal(to_np(x.grad), np.full(3, 2.0)) else "x.grad")

    return task, check


def post_hooks(n: int):
    """Every worker registers a post-accumulate-grad hook on the same fresh leaf."""
    x = _fresh_leaf()
    seen: list[int] = []

    def task(i: int) -> None:
        x.register_post_accumulate_grad_hook(lambda t, i=i: seen.append(i))

    def check() -> str | None:
        (x * 2.0).sum().backward()
        return _seen_once(seen, n, "post-accumulate hooks")

    return task, check


def leaf_mixed(n: int):
    """Workers do different first things to one fresh leaf: a tensor hook, a
    post-accumulate hook, a first op, and setting its name (all four create ``_extra``)."""
    x = _fresh_leaf()
    seen: list[tuple[str, int]] = []
    ys: list[rg.Tensor] = []

    def task(i: int) -> None:
        k = i % 4
        if k == 0:
            x.register_hook(lambda g, i=i: seen.append(("hook", i)))
        elif k == 1:
            x.register_post_accumulate_grad_hook(lambda t, i=i: seen.append(("post", i)))
        elif k == 2:
            ys.append((x * 2.0).sum())
        else:
            x.register_hook(lambda g, i=i: seen.append(("hook", i)))
            ys.append((x * x).sum())

    def check() -> str | None:
        want_seen = sorted(("hook" if i % 4 in (0, 3) else "post", i)
                           for i in range(n) if i % 4 != 2)
        roots = ys + [(x + 0.0).sum()]
        if len(_accumulators(*roots)) != 1:
            return "several accumulators for one leaf"
        sum(roots[1:], roots[0]).backward()
        if sorted(seen) != want_seen:
            return f"hooks ran {sorted(seen)}, expected {want_seen}"
        want = np.ones(3)
        for i in range(n):
            if i % 4 == 2:
                want = want + 2.0
            elif i % 4 == 3:
                want = want + 2.0 * np.array(X0)
        if not np.array_equal(to_np(x.grad), want):
            return f"x.grad {to_np(x.grad)}, expected {want}"
        return None

    return task, check


def _interior(kinds: list[str]):
    """Workers hook the same fresh interior tensor ``y = x * 2`` and its node at once, worker
    i in the way ``kinds[i % len(kinds)]``: a tensor hook, a node hook, a node prehook or
    ``retain_grad`` (all of them create the node's hook table)."""

    def scenario(n: int):
        x = _fresh_leaf()
        y = x * 2.0
        seen: list[tuple[str, int]] = []

        def task(i: int) -> None:
            k = kinds[i % len(kinds)]
            if k == "tensor":
                y.register_hook(lambda g, i=i: seen.append(("tensor", i)))
            elif k == "node":
                y.grad_fn.register_hook(lambda gi, go, i=i: seen.append(("node", i)))
            elif k == "pre":
                y.grad_fn.register_prehook(lambda go, i=i: seen.append(("pre", i)))
            else:
                y.retain_grad()

        def check() -> str | None:
            (y * 4.0).sum().backward()
            want = sorted((kinds[i % len(kinds)], i) for i in range(n)
                          if kinds[i % len(kinds)] != "retain")
            if sorted(seen) != want:
                return f"hooks ran {sorted(seen)}, expected {want}"
            if any(kinds[i % len(kinds)] == "retain" for i in range(n)):
                if not y.retains_grad or y.grad is None:
                    return "retain_grad lost"
                if not np.array_equal(to_np(y.grad), np.full(3, 4.0)):
                    return f"y.grad {to_np(y.grad)}"
            if not np.array_equal(to_np(x.grad), np.full(3, 8.0)):
                return f"x.grad {to_np(x.grad)}"
            return None

        return task, check

    return scenario


class _Fan(rg.autograd.Function):
    """One node with several outputs: ``x * 1, x * 2, ...``."""

    @staticmethod
    def forward(ctx: Any, x: rg.Tensor, k: int) -> tuple[rg.Tensor, ...]:
        return tuple(x * float(j + 1) for j in range(k))

    @staticmethod
    def backward(ctx: Any, *grads: rg.Tensor) -> tuple[Any, ...]:
        total = grads[0]
        for j, g in enumerate(grads[1:], start=2):
            total = total + g * float(j)
        return total, None


def multi_output(n: int):
    """Each worker retains the gradient of its own output of one fresh node with n outputs:
    the per-slot entries share the node's one hook table."""
    x = _fresh_leaf()
    outs = _Fan.apply(x, n)

    def task(i: int) -> None:
        outs[i].retain_grad()

    def check() -> str | None:
        loss = outs[0].sum()
        for j in range(1, n):
            loss = loss + outs[j].sum() * float(j + 1)
        loss.backward()
        for i in range(n):
            g = outs[i].grad
            if g is None or not np.array_equal(to_np(g), np.full(3, float(i + 1))):
                return f"output {i}: retained grad {to_np(g)}"
        return None

    return task, check


SCENARIOS: dict[str, Scenario] = {
    "first_op": first_op, "leaf_hooks": leaf_hooks, "post_hooks": post_hooks,
    "leaf_mixed": leaf_mixed, "tensor_hooks": _interior(["tensor"]),
    "node_hooks": _interior(["node", "pre"]),
    "interior_mixed": _interior(["tensor", "node", "pre", "retain"]),
    "multi_output": multi_output,
}


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------

@dataclass
class Tally:
    rounds: int = 0
    bad: int = 0
    first: str | None = None


def run_scenario(crew: Crew, scenario: Scenario, rounds: int, budget_s: float) -> Tally:
    """Up to ``rounds`` rounds (fewer if ``budget_s`` runs out); counts the bad ones."""
    tally = Tally()
    end = time.perf_counter() + budget_s
    while tally.rounds < rounds and time.perf_counter() < end:
        task, check = scenario(crew.n)
        crew.round(task)
        lost = check()
        tally.rounds += 1
        if lost is not None:
            tally.bad += 1
            tally.first = tally.first or lost
    return tally


@pytest.fixture
def switch_often() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def race_rates(rounds: int, amplify: bool, n: int = N_THREADS,
               budget_s: float = 60.0) -> dict[str, Tally]:
    """The rate of bad rounds of each scenario (the figures in docs/reliability.md)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    crew = Crew(n, amplify)
    try:
        return {name: run_scenario(crew, sc, rounds, budget_s) for name, sc in SCENARIOS.items()}
    finally:
        crew.close()
        sys.setswitchinterval(old)


def _judge(crew: Crew, name: str, rounds: int, budget_s: float) -> None:
    tally = run_scenario(crew, SCENARIOS[name], rounds, budget_s)
    assert tally.rounds >= min(rounds, 20), f"only {tally.rounds} rounds ran"
    assert tally.bad == 0, (
        f"{name}: {tally.bad} of {tally.rounds} rounds lost something; first: {tally.first}")


@pytest.mark.parametrize("amplify", [True, False], ids=["amplified", "natural"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_first_touch_races_quick(name, amplify, switch_often):
    """4 workers; 50 rounds amplified, 100 natural, each scenario (bounded to 3 s)."""
    crew = Crew(N_THREADS, amplify)
    try:
        _judge(crew, name, 50 if amplify else 100, 3.0)
    finally:
        crew.close()


@pytest.mark.stress
@pytest.mark.parametrize("n", [2, 8])
@pytest.mark.parametrize("amplify", [True, False], ids=["amplified", "natural"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_first_touch_races_full(name, amplify, n, switch_often):
    """2 and 8 workers; 2,000 rounds each scenario (bounded to 60 s)."""
    crew = Crew(n, amplify)
    try:
        _judge(crew, name, 2000, 60.0)
    finally:
        crew.close()


def test_crew_runs_each_task_once_per_worker():
    """The harness itself: every worker runs every round, and errors come back."""
    crew = Crew(3, amplify=True)
    try:
        hits: list[int] = []
        for _ in range(5):
            crew.round(hits.append)
        assert sorted(hits) == sorted(list(range(3)) * 5)

        def boom(i: int) -> None:
            if i == 1:
                raise ValueError("boom")

        with pytest.raises(ValueError, match="boom"):
            crew.round(boom)
    finally:
        crew.close()


if __name__ == "__main__":  # from packages/core: python -m tests.reliability.test_races 1000 300
    for amp, arg in ((False, 1), (True, 2)):
        n_rounds = int(sys.argv[arg]) if len(sys.argv) > arg else 400
        for name, t in race_rates(n_rounds, amp).items():
            print(f"{'amplified' if amp else 'natural':9} {name:14} {t.bad:5} / {t.rounds}"
                  f"  {t.first or ''}")
