"""Probe: a fault at every kernel call of a random program.

Every array operation retrograd makes goes through its backend's kernel table
(``Backend.kernels`` / ``Backend.ops``, backends/base.py). The probe wraps every kernel of the
``cpu`` backend with a counter, runs a random small program (a forward with broadcasting,
matmul, ``linear`` + ``relu`` (fused), views, indexing, ``cat``, a custom Function, recorded
in-place ops on interior tensors, tensor hooks that compute, post-accumulate hooks,
``retain_grad``; then ``backward`` (``retain_graph`` on or off, or ``create_graph=True``) or
``autograd.grad``) once to count its kernel calls N, and then, for k = 1 .. N, runs it again
from the same starting state with the k-th kernel call raising (a ``RuntimeError``, or a
``MemoryError``). After each faulted run:

- the program either raised the injected error (itself, or as the cause of the error it
  raised), or finished with the clean run's values (a fault the library caught and recovered
  from);
- E13: every leaf's ``.grad`` is either exactly as before the run or exactly as after the
  clean run, and the leaves agree (all before, or all after); a retained ``.grad`` likewise;
- no version counter moved unless its tensor was really written: every tensor the run
  reached is at a (version, value) the clean run passed through (a bump without the write,
  or a write without the bump, is a failure);
- no global state is left changed: grad mode, inference mode, anomaly mode, the fusion
  switch, the cyclic garbage collector (paused during walks) and the engine's record of
  walks holding that pause, the saved-tensor hook stack, the re-entrant walk depth;
- the next clean run of the program on the same leaves gives torch's values: the gradients
  then are those left by the faulted run plus what torch adds for one run.
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.autograd import engine as _engine
from retrograd.autograd import graph as _graph
from retrograd.backends import get_backend


class InjectedRuntimeError(RuntimeError):
    """What the probe raises as a RuntimeError; nothing in retrograd raises it."""


class InjectedMemoryError(MemoryError):
    """What the probe raises as a MemoryError."""


FAULTS = {"RuntimeError": InjectedRuntimeError, "MemoryError": InjectedMemoryError}


def _phase() -> str:
    """Where the failing kernel was called from: the commit of a walk, the walk, or the
    forward (user code, hooks included, outside any walk)."""
    frame = sys._getframe(2)
    where = "forward"
    while frame is not None:
        path = frame.f_code.co_filename.replace(os.sep, "/")
        if path.endswith("autograd/commit.py"):
            return "commit"
        if path.endswith("autograd/engine.py"):
            where = "walk"
        frame = frame.f_back
    return where


class Injector:
    """Wraps every kernel of a backend: counts calls, and raises at call ``fail_at``."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.calls = 0
        self.fail_at: int | None = None
        self.fault: type[BaseException] = InjectedRuntimeError
        self.failed_in: str | None = None
        self.phase = ""
        self.original = dict(backend.kernels)

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.fail_at:
                self.failed_in = name
                self.phase = _phase()
                raise self.fault(f"injected fault at kernel call {self.calls} ({name})")
            return fn(*args, **kwargs)
        return kernel

    @contextmanager
    def armed(self, fail_at: int | None, fault: type[BaseException]) -> Iterator[Injector]:
        self.calls, self.fail_at, self.fault, self.failed_in = 0, fail_at, fault, None
        self.backend.override(**{k: self._wrap(k, f) for k, f in self.original.items()})
        try:
            yield self
        finally:
            self.backend.override(**self.original)
            self.fail_at = None


# --------------------------------------------------------------------------------------------
# random programs
# --------------------------------------------------------------------------------------------

LEAVES = {"a": (3,), "b": (3,), "c": (2, 3), "W": (4, 3), "bias": (4,)}
PRESET = ("a", "c", "W")  # leaves that hold a .grad before the program runs


def make_fn(lib: Any) -> Any:
    """A custom Function (saves its input) for ``lib``."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    return Cube


def program_lines(seed: int) -> tuple[list[str], str]:
    """A random program over the leaves: forward statements ending in a scalar ``loss``, and
    the walk. Values stay dyadic where the ops allow; interior tensors only are changed in
    place, so the leaves' values never change and a rerun is the same computation."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    vec = ["a", "b"]  # (3,) values
    mat = ["c"]  # (2, 3) values
    n = 0

    def new() -> str:
        nonlocal n
        n += 1
        return f"h{n}"

    for _ in range(int(rng.integers(5, 10))):
        kind = rng.choice(["mul", "add", "tanh", "sig", "mm", "linear", "index", "cat",
                           "cube", "inplace", "setitem", "hook", "retain", "exp", "where",
                           "transpose", "nograd", "chain"])
        x, y = rng.choice(vec), rng.choice(vec)
        m = rng.choice(mat)
        h = new()
        if kind == "mul":
            lines.append(f"{h} = {m} * {x}")
            mat.append(h)
        elif kind == "add":
            lines.append(f"{h} = {x} + {y} * 0.5")
            vec.append(h)
        elif kind == "tanh":
            lines.append(f"{h} = {m}.tanh()")
            mat.append(h)
        elif kind == "sig":
            lines.append(f"{h} = {x}.sigmoid() - 0.25")
            vec.append(h)
        elif kind == "exp":
            lines.append(f"{h} = ({x} * 0.25).exp()")
            vec.append(h)
        elif kind == "mm":
            lines.append(f"{h}m = {m} @ {x}")  # (2,)
            lines.append(f"{h} = lib.cat([{h}m, {h}m[:1]])")  # back to (3,)
            vec.append(h)
        elif kind == "linear":
            lines.append(f"{h}l = lib.nn.functional.linear({m}, W, bias).relu()")  # (2, 4)
            lines.append(f"{h} = {h}l[:, :3]")
            mat.append(h)
        elif kind == "index":
            lines.append(f"{h}i = {m}[lib.tensor([1, 0, 1])]")  # (3, 3)
            lines.append(f"{h} = {h}i.sum(0)")
            vec.append(h)
        elif kind == "cat":
            lines.append(f"{h} = lib.stack([{x}, {y}])")
            mat.append(h)
        elif kind == "cube":
            lines.append(f"{h} = Cube.apply({x} * 0.5)")
            vec.append(h)
        elif kind == "where":
            lines.append(f"{h} = lib.where({x} > 0, {x}, {y} * 2)")
            vec.append(h)
        elif kind == "transpose":
            lines.append(f"{h} = {m}.transpose(0, 1).reshape(-1)[:3]")
            vec.append(h)
        elif kind == "inplace":  # recorded in-place on a fresh interior tensor
            lines.append(f"{h} = {x} * 1.0")
            lines.append(f"{h}.mul_(2.0)")
            lines.append(f"{h}.add_({y})")
            vec.append(h)
        elif kind == "setitem":  # recorded in-place through a view of an interior tensor
            lines.append(f"{h} = {m} + 0.0")
            lines.append(f"{h}[0] = {x} * 3.0")
            mat.append(h)
        elif kind == "nograd":  # an unrecorded in-place on a constant copy
            lines.append(f"{h}c = {x}.detach().clone()")
            lines.append(f"with lib.no_grad():\n    {h}c.mul_(0.5)")
            lines.append(f"{h} = {y} * {h}c")
            vec.append(h)
        elif kind == "chain":  # a walk long enough to pause the cyclic collector
            lines.append(f"{h} = {x}\nfor _ in range(40):\n    {h} = {h} * 1.0 + 0.0")
            vec.append(h)
        elif kind == "hook":  # a tensor hook that computes (its kernels can fail too)
            t = rng.choice(vec[2:] + mat[1:] + ["a", "c"])
            lines.append(f"handles.append({t}.register_hook(lambda g: g * 0.5))")
        else:
            t = rng.choice(vec[2:] + mat[1:]) if len(vec) + len(mat) > 3 else None
            if t is not None:
                lines.append(f"{t}.retain_grad()")
                lines.append(f"retained.append({t})")
    lines.append("post_seen = []")
    lines.append("handles.append(a.register_post_accumulate_grad_hook(\n"
                 "    lambda t: post_seen.append(t.grad * 1.0)))")
    terms = [f"({t} * {t}).sum()" for t in vec[2:][-2:] + mat[1:][-2:]] + ["(a * b).sum()"]
    lines.append("loss = " + " + ".join(terms) + " + (c * c).mean() + (W * W).sum() * 0.125"
                 " + bias.sum()")
    walk = rng.choice(["backward", "backward_retain", "grad", "create_graph"])
    if walk == "backward":
        lines.append("loss.backward()")
    elif walk == "backward_retain":
        lines.append("loss.backward(retain_graph=True)")
    elif walk == "create_graph":
        lines.append("loss.backward(create_graph=True)")
    else:
        lines.append("grads = lib.autograd.grad(loss, [a, b, c, W, bias])")
    return lines, walk


def make_leaves(lib: Any) -> dict[str, Any]:
    rng = np.random.default_rng(99)
    env: dict[str, Any] = {}
    for name, shape in LEAVES.items():
        vals = (rng.integers(-6, 7, shape) / 4).tolist()
        env[name] = lib.tensor(vals, dtype=lib.float64, requires_grad=True)
    for name in PRESET:
        env[name].grad = lib.full(LEAVES[name], 0.25, dtype=lib.float64)
    return env


def np_of(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().copy()
    return np.array(t.backend.to_numpy(t._data), copy=True)


def grad_of(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return t.grad
    return t._grad


def run(lib: Any, lines: list[str], leaves: dict[str, Any],
        trace: dict[str, dict[int, np.ndarray]] | None = None) -> tuple[dict[str, Any], Any]:
    """Run the program on ``leaves`` statement by statement; stop at the first exception,
    which is returned. ``trace`` (name -> version -> value) records every state the clean
    run's tensors pass through."""
    env: dict[str, Any] = {"lib": lib, "Cube": make_fn(lib), "retained": [], "handles": [],
                           **leaves}
    exc = None
    for line in lines:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(line, env)  # noqa: S102 - the program is ours
        except BaseException as e:  # noqa: BLE001 - judged by the caller
            exc = e
            break
        finally:
            if trace is not None:
                for name, t in _tensors(env).items():
                    trace.setdefault(name, {}).setdefault(t._version, np_of(t))
    return env, exc


def _tensors(env: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in env.items() if isinstance(v, (rg.Tensor, torch.Tensor))}


def global_state() -> dict[str, Any]:
    return {
        "grad mode": rg.is_grad_enabled(),
        "inference mode": rg.is_inference_mode_enabled(),
        "anomaly mode": rg.autograd.is_anomaly_enabled(),
        "fusion": rg.autograd.is_fusion_enabled(),
        "gc enabled": gc.isenabled(),
        "walks pausing gc": _gc_pauses(),
        "saved-tensor hooks": (len(_graph._state.stack), _graph._state.disabled,
                               len(_graph._LIVE)),
        "re-entrant depth": _engine._reentry.depth,
        "tracer": _engine.get_tracer(),
    }


def _gc_pauses() -> int:
    holders = getattr(_engine, "_gc_holders", None)  # the walks holding the gc pause
    if holders is not None:
        return len(holders)
    return int(getattr(_engine, "_gc_state", {}).get("depth", 0))


def caused_by(exc: BaseException | None, kind: type[BaseException]) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def same(a: np.ndarray | None, b: np.ndarray | None, rtol: float = 0.0) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if rtol:
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=rtol))
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


# --------------------------------------------------------------------------------------------
# the probe
# --------------------------------------------------------------------------------------------

def probe(seed: int, faults: list[str], every: int = 1) -> dict[str, Any]:
    """Fault every ``every``-th kernel call of program ``seed`` with each fault class; returns
    what it did. Raises AssertionError naming the seed, the call, the kernel and the check.
    Odd seeds run with fusion off, every fourth under anomaly mode."""
    fusion = rg.autograd.is_fusion_enabled()
    rg.autograd.set_fusion(seed % 2 == 0)
    try:
        if seed % 4 == 3:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled"
                with rg.autograd.detect_anomaly():
                    return _probe(seed, faults, every)
        return _probe(seed, faults, every)
    finally:
        rg.autograd.set_fusion(fusion)


def _probe(seed: int, faults: list[str], every: int) -> dict[str, Any]:
    lines, walk = program_lines(seed)
    injector = Injector(get_backend("cpu"))
    state0 = global_state()

    # torch: the values a clean run must give
    t_leaves = make_leaves(torch)
    t_env, t_exc = run(torch, lines, t_leaves)
    assert t_exc is None, f"seed {seed}: torch raised {t_exc!r} on\n" + "\n".join(lines)
    t_delta = {k: np_of(grad_of(t_leaves[k])) - (0.25 if k in PRESET else 0.0)
               for k in LEAVES} if walk != "grad" else {}
    t_loss = float(t_env["loss"].detach())

    # the clean run: its kernel calls, and every (version, value) its tensors pass through
    leaves = make_leaves(rg)
    before = {k: np_of(grad_of(v)) for k, v in leaves.items()}
    trace: dict[str, dict[int, np.ndarray]] = {}
    with injector.armed(None, InjectedRuntimeError):
        env, exc = run(rg, lines, leaves, trace)
    assert exc is None, f"seed {seed}: the clean run raised {exc!r}"
    n_calls = injector.calls
    after = {k: np_of(grad_of(v)) for k, v in leaves.items()}
    clean_retained = [np_of(grad_of(t)) for t in env["retained"]]
    clean_loss = float(np_of(env["loss"]))
    assert abs(clean_loss - t_loss) <= 1e-9 * max(1.0, abs(t_loss)), (clean_loss, t_loss)
    stats: dict[str, Any] = {"seed": seed, "walk": str(walk), "fusion": state0["fusion"],
                             "anomaly": state0["anomaly mode"], "calls": n_calls, "runs": 0,
                             "raised": 0, "recovered": 0, "forward": 0, "walk phase": 0,
                             "commit": 0}

    for fault_name in faults:
        fault = FAULTS[fault_name]
        for k in range(1, n_calls + 1, every):
            leaves = make_leaves(rg)
            where = f"seed {seed} ({walk}), {fault_name} at kernel call {k}/{n_calls}"
            with injector.armed(k, fault):
                env, exc = run(rg, lines, leaves)
            where += f" ({injector.failed_in}, in the {injector.phase})"
            stats["runs"] += 1
            stats["walk phase" if injector.phase == "walk" else injector.phase] += 1
            ctx = where + "\nprogram:\n" + "\n".join(lines)
            # 1. the fault propagated, or the run recovered and is right
            if exc is not None:
                stats["raised"] += 1
                assert caused_by(exc, fault), (
                    f"{ctx}\nthe injected fault was lost: got {type(exc).__name__}: {exc}")
                if fault is InjectedMemoryError:
                    assert isinstance(exc, MemoryError), (
                        f"{ctx}\nMemoryError became {type(exc).__name__}")
            elif injector.failed_in is not None:
                stats["recovered"] += 1
                assert abs(float(np_of(env["loss"])) - clean_loss) == 0, f"{ctx}: wrong loss"
            # 2. E13: each .grad as before or as after, all alike: as before when the run
            # raised, as after when it recovered (E9: autograd.grad writes none)
            states = {}
            for name, t in leaves.items():
                g = np_of(grad_of(t))
                states[name] = ("before" if same(g, before[name]) else
                                "after" if same(g, after[name]) else "torn")
                assert states[name] != "torn", (
                    f"{ctx}\n{name}.grad is neither as before ({before[name]}) nor as after a "
                    f"clean run ({after[name]}): {g}")
            want_state = "before" if exc is not None or walk == "grad" else "after"
            assert set(states.values()) == {want_state}, (
                f"{ctx}\n.grad should all be as {want_state} the run (E13): {states}")
            for t, want in zip(env.get("retained", []), clean_retained):
                g = np_of(grad_of(t))
                assert same(g, None if want_state == "before" else want), (
                    f"{ctx}\na retained .grad is {g}, expected as {want_state} the run")
            # 3. versions move only with writes
            for name, t in _tensors(env).items():
                seen_states = trace.get(name, {})
                v = t._version
                assert v in seen_states, (
                    f"{ctx}\n{name}: _version {v}, which the clean run never had "
                    f"({sorted(seen_states)}): a bump without a write, or a write counted "
                    "twice")
                assert same(np_of(t), seen_states[v]), (
                    f"{ctx}\n{name}: at _version {v} it holds {np_of(t)}, the clean run held "
                    f"{seen_states[v]}: written without a bump, or half written")
            # 4. nothing global left changed
            assert global_state() == state0, f"{ctx}\nglobal state changed: {global_state()}"
            # 5. a clean rerun on the same leaves gives torch's values (the hooks the faulted
            # run put on the leaves removed first)
            for handle in env["handles"]:
                handle.remove()
            got = {n: np_of(grad_of(t)) for n, t in leaves.items()}
            env2, exc2 = run(rg, lines, leaves)
            assert exc2 is None, f"{ctx}\nthe clean rerun raised {exc2!r}"
            assert abs(float(np_of(env2["loss"])) - t_loss) <= 1e-9 * max(1.0, abs(t_loss))
            if walk != "grad":
                for name, t in leaves.items():
                    base = got[name] if got[name] is not None else 0.0
                    want = base + t_delta[name]
                    assert same(np_of(grad_of(t)), want, rtol=1e-9), (
                        f"{ctx}\nafter a clean rerun {name}.grad is {np_of(grad_of(t))}, "
                        f"torch's values give {want}")
            else:
                for got_g, t_g in zip(env2["grads"], t_env["grads"]):
                    assert same(np_of(got_g), np_of(t_g), rtol=1e-9), f"{ctx}\ngrad result"
    return stats


QUICK = {0: 1, 12: 1, 14: 1, 23: 5}  # seed -> every how many calls a RuntimeError
# 0: backward with retain_graph, 12: autograd.grad, 14: create_graph, 23: anomaly mode and
# fusion off (anomaly mode is slow: every fifth call)


@pytest.mark.parametrize("seed", sorted(QUICK))
def test_fault_at_every_kernel_call_quick(seed):
    """Four programs: a RuntimeError at every kernel call (every fifth under anomaly mode), a
    MemoryError at every third (fifteenth)."""
    probe(seed, ["RuntimeError"], every=QUICK[seed])
    probe(seed, ["MemoryError"], every=3 * QUICK[seed])


@pytest.mark.stress
@pytest.mark.parametrize("seed", [s for s in range(42) if s not in QUICK])
def test_fault_at_every_kernel_call_full(seed):
    """The 38 other programs of seeds 0-41, both faults at every kernel call."""
    probe(seed, ["RuntimeError", "MemoryError"])


def test_injector_counts_and_restores():
    """The harness itself: the counter sees the calls, the table is restored after."""
    be = get_backend("cpu")
    before = dict(be.kernels)
    inj = Injector(be)
    with inj.armed(None, InjectedRuntimeError):
        (rg.tensor([1.0, 2.0], requires_grad=True) * 2.0).sum().backward()
    assert inj.calls > 0
    assert be.kernels == before and all(getattr(be.ops, k) is f for k, f in before.items())
    with pytest.raises(InjectedRuntimeError), inj.armed(1, InjectedRuntimeError):
        rg.tensor([1.0]) * 2.0
    assert be.kernels == before
