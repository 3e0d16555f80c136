"""The backward walk holds NumPy's quiet state itself and runs derivative rules on the cpu
backend's unwrapped kernels (``NumpyBackend.walk_ops``, ``engine._walk_ops``).

Pinned here: everything of the user's that the walk calls -- tensor, leaf, node pre- and
post-hooks, a custom Function's backward, pack/unpack hooks -- sees the user's own NumPy
error state, in both walks (``backward()`` and ``autograd.grad``), and a state the user
sets inside a hook stays set; the walk's own arithmetic stays silent; the state comes back
whatever ends the walk; the walk's kernels follow every change made to ``ops`` (``override``,
``monkeypatch.setattr``), and a spy that ``functools.wraps`` a quiet kernel is called itself.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import engine
from retrograd.autograd.engine import Engine
from retrograd.backends import host
from retrograd.backends.numpy import backend as cpu

_ODD = {"divide": "raise", "over": "print", "under": "warn", "invalid": "ignore"}


@pytest.fixture(autouse=True, params=["every walk", "default"])
def quiet_min_nodes(request: Any, monkeypatch: Any) -> None:
    """Each test twice: with every walk taking the quiet state (the graphs here are small),
    and with the engine's own threshold (these walks then use the wrapped kernels)."""
    if request.param == "every walk":
        monkeypatch.setattr(engine, "_QUIET_MIN_NODES", 0)


@pytest.fixture
def odd_state() -> Any:
    old = np.seterr(**_ODD)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield
        assert np.geterr() == _ODD
    finally:
        np.seterr(**old)


def _seen() -> tuple[list[Any], Any]:
    states: list[Any] = []

    def look(*args: Any) -> None:
        states.append(np.geterr())

    return states, look


@pytest.mark.parametrize("walk", ["backward", "grad"])
def test_hooks_see_the_user_state(odd_state: Any, walk: str) -> None:
    states, look = _seen()
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    h = x.log()  # d/dx at 0: 1/0, silently
    h.register_hook(look)
    h.grad_fn.register_prehook(look)
    h.grad_fn.register_hook(look)
    x.register_hook(look)
    y = (h * h).sum()
    if walk == "backward":
        y.backward()
        g = x.grad
    else:
        (g,) = rg.autograd.grad(y, [x])
    assert len(states) == 4
    assert all(s == _ODD for s in states)
    assert g.numpy()[0] == -np.inf  # 2 log(0) / 0, no FloatingPointError from the walk


def test_custom_backward_and_unpack_hook_see_the_user_state(odd_state: Any) -> None:
    states, look = _seen()

    class Log(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a.log()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            look()
            (a,) = ctx.saved_tensors
            return g / a

    def unpack(t: Any) -> Any:
        look()
        return t

    x = rg.tensor([0.0, 2.0], requires_grad=True)
    with rg.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = (Log.apply(x) * x.exp()).sum()
    y.backward()
    assert len(states) >= 2
    assert all(s == _ODD for s in states)
    assert x.grad.numpy()[1] == pytest.approx(np.exp(2.0) / 2 + np.log(2.0) * np.exp(2.0))


def test_a_state_set_in_a_hook_stays_set() -> None:
    """As without the walk's quiet state: ``np.seterr`` in a hook is the user's call."""
    old = np.geterr()
    try:
        x = rg.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3.0
        h.register_hook(lambda g: np.seterr(over="raise") and None)
        (h.exp() * 2.0).sum().backward()
        assert np.geterr()["over"] == "raise"
    finally:
        np.seterr(**old)


def test_walk_is_quiet_under_raise(odd_state: Any) -> None:
    np.seterr(all="raise")
    try:
        x = rg.tensor([0.0, -1.0, 3e38], requires_grad=True)
        y = x.log() + x.sqrt() - (1 / x) + (x * 10.0).tanh()  # fan-in at x: inf - -inf ...
        y.sum().backward()
        assert np.isnan(x.grad.numpy()[1]) and x.grad.numpy()[0] == np.inf
        (g,) = rg.autograd.grad((x.log() * x.log()).sum(), [x])
        assert g.numpy()[0] == -np.inf
    finally:
        np.seterr(**_ODD)


@pytest.mark.parametrize("retain", [False, True])
def test_state_restored_when_a_rule_raises(odd_state: Any, monkeypatch: Any, retain: bool) -> None:
    def boom(*args: Any) -> Any:
        raise ValueError("from the kernel")

    x = rg.tensor([0.0, 1.0], requires_grad=True)
    y = (x.log() * 2.0).sum()
    monkeypatch.setattr(cpu.ops, "mul", boom)  # MulBackward0's rule: g * 2.0
    with pytest.raises(ValueError, match="from the kernel"):
        y.backward(retain_graph=retain)
    assert np.geterr() == _ODD


def test_nested_walk_in_a_custom_backward(odd_state: Any) -> None:
    states, look = _seen()

    class Inner(rg.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 1.0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            z = rg.tensor([0.0], requires_grad=True)
            with rg.enable_grad():
                z.log().sum().backward()  # a whole walk inside this one
            look()
            return g * z.grad

    x = rg.tensor([1.0], requires_grad=True)
    Inner.apply(x.log()).sum().backward()
    assert states == [_ODD]
    assert x.grad.numpy()[0] == np.inf


def test_walk_kernels_follow_ops(monkeypatch: Any) -> None:
    """``monkeypatch.setattr`` and ``override`` on ``ops`` reach the walk; undone, the walk
    gets the unwrapped kernel back."""
    calls: list[str] = []
    original = cpu.ops.mul

    @functools.wraps(original)  # carries ``__wrapped__``: must still be called itself
    def spy(a: Any, b: Any) -> Any:
        calls.append("spy")
        return original(a, b)

    x = rg.tensor([1.0, 2.0], requires_grad=True)
    monkeypatch.setattr(cpu.ops, "mul", spy)
    assert cpu.walk_ops.mul is spy
    (x * 3.0).sum().backward()  # MulBackward0: g * 3.0 in the walk
    assert len(calls) == 2  # the forward's and the rule's
    monkeypatch.undo()
    assert cpu.ops.mul is original
    assert cpu.walk_ops.mul is host.unquiet(original) is original.__wrapped__
    cpu.override(mul=spy)
    try:
        assert cpu.walk_ops.mul is spy
    finally:
        cpu.override(mul=original)
    assert cpu.walk_ops.mul is original.__wrapped__


def test_walk_namespace_mirrors_ops() -> None:
    """Same names; each kernel unwrapped where it is quiet; composites bound to the walk
    namespace, so that they reach the unwrapped kernels too."""
    ops, walk = vars(cpu.ops), vars(cpu.walk_ops)
    assert ops.keys() == walk.keys()
    for name, fn in ops.items():
        w = walk[name]
        if type(fn) is functools.partial and fn.args and fn.args[0] is cpu.ops:
            assert type(w) is functools.partial and w.func is fn.func
            assert w.args[0] is cpu.walk_ops, name
        else:
            assert w is host.unquiet(fn), name
            assert (w is fn) == (not hasattr(fn, "__wrapped__") or name in _BARE), name


_BARE = {name for name, fn in vars(cpu.ops).items() if host.unquiet(fn) is fn}


def test_unquiet() -> None:
    q = host.quiet(np.log)
    assert host.unquiet(q) is np.log
    assert host.unquiet(np.log) is np.log
    assert host.unquiet(functools.wraps(q)(lambda a: q(a))) is not np.log
    assert host.unquiet(1) == 1
    assert host.unquiet([]) == []  # unhashable


def test_fused_walk_with_hook_user_state(odd_state: Any) -> None:
    states, look = _seen()
    f = rg.nn.functional
    x = rg.tensor(np.ones((3, 4)))
    w = rg.tensor(np.full((2, 4), 0.5), requires_grad=True)
    b = rg.tensor(np.array([0.0, -1.0]), requires_grad=True)
    w.register_hook(look)
    Engine.backward(f.relu(f.linear(x, w, b)).log().sum(), fuse=True)
    assert states == [_ODD]
    assert w.grad is not None


@pytest.mark.parametrize("steps", [2, 40])
def test_long_walks_use_the_unwrapped_kernels(monkeypatch: Any, steps: int) -> None:
    """A walk of ``_QUIET_MIN_NODES`` nodes or more runs its rules on ``walk_ops`` in the
    quiet state; a shorter one on the quiet kernels of ``ops``, as before."""
    seen: list[Any] = []
    raw = cpu.walk_ops.mul

    def spy(a: Any, b: Any) -> Any:
        seen.append(np.geterr()["divide"])
        return raw(a, b)

    x = rg.tensor([0.0, 1.0], requires_grad=True)
    y = x.log()
    for _ in range(steps):
        y = y * 1.5
    monkeypatch.setattr(cpu.walk_ops, "mul", spy)  # the walk namespace only
    old = np.seterr(divide="raise")
    try:
        y.sum().backward()
    finally:
        np.seterr(**old)
    long = steps + 3 >= engine._QUIET_MIN_NODES
    assert seen == (["ignore"] * steps if long else [])
    assert x.grad.numpy()[0] == np.inf


_inf = float("inf")
_CASES = {
    "log": (lambda m, x: x.log(), [0.0, -1.0, 1.0, -0.0], "float32"),
    "sqrt": (lambda m, x: x.sqrt(), [0.0, -1.0, 4.0, _inf], "float32"),
    "exp": (lambda m, x: x.exp(), [1000.0, 1.0, -_inf, _inf], "float32"),
    "div": (lambda m, x: 1 / x, [0.0, -0.0, 2.0], "float32"),
    "pow-0.5": (lambda m, x: x.pow(-0.5), [0.0, 2.0, -1.0], "float32"),
    "pow3": (lambda m, x: x.pow(3), [1e38, -_inf, 2.0], "float32"),
    "fan-in": (lambda m, x: x.log() - x.log(), [0.0, 1.0], "float32"),
    "mul-overflow": (lambda m, x: (x * 10.0) * 10.0, [3e38, -3e38], "float32"),
    "tanh": (lambda m, x: (x * 3e38 * 3e38).tanh(), [1.0, -1.0], "float32"),
    "sigmoid": (lambda m, x: x.sigmoid(), [-1e38, 1e38, _inf, -_inf], "float32"),
    "mean-empty": (lambda m, x: x.mean(1), [[], [], []], "float32"),
    "softmax": (lambda m, x: x.softmax(1), [[_inf, 1.0], [-_inf, -_inf]], "float32"),
    "half-exp": (lambda m, x: x.exp(), [20.0, 1.0], "float16"),
    "half-div": (lambda m, x: x / 0.0, [1.0, 0.0], "float16"),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_quiet_walk_matches_torch_without_warnings(name: str) -> None:
    """The backward's IEEE results in the walk's own quiet state, as torch's, with no
    warning; under ``np.seterr(all="raise")`` nothing raises."""
    torch = pytest.importorskip("torch")
    f, values, dtype = _CASES[name]
    grads = []
    for m in (torch, rg):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        old = np.seterr(all="raise")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                out = f(m, x)
                out.backward(m.ones_like(out))
        finally:
            np.seterr(**old)
        grads.append(np.array(x.grad.detach().tolist(), dtype=np.float64))
    want, got = grads
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0))
    np.testing.assert_array_equal(np.isinf(got) & (got < 0), np.isinf(want) & (want < 0))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-3)


def test_hooks_of_a_captured_idle_node_see_the_user_state(odd_state: Any) -> None:
    """``grad(y, [h])``: h's node is a target that does not run (idle); its tensor's hook
    runs after the walk's own rules, in the user's state."""
    states, look = _seen()
    x = rg.tensor([0.0, 1.0], requires_grad=True)
    h = x.log()
    h.register_hook(look)
    y = h
    for _ in range(20):
        y = y * 1.5
    (g,) = rg.autograd.grad(y.sum(), [h])
    assert states == [_ODD]
    assert g.numpy()[0] == pytest.approx(1.5**20)
