"""Floating-point exceptions as PyTorch treats them: silently.

``log(0)``, ``1 / 0``, ``sqrt(-1)``, ``exp(1000)``, ``inf - inf``, a float16 overflow ... are
IEEE results (inf, nan) in PyTorch, with no warning; NumPy reports each as a
``RuntimeWarning`` ("divide by zero encountered in log") -- or raises it, under the user's
``np.seterr(all="raise")``. Each case below runs on torch (the oracle) and on retrograd
under ``warnings.catch_warnings(record=True)`` + ``simplefilter("always")``, forward and
backward (and a double backward for some): the warnings must be the same (torch: none) and
so must the values -- nan and inf in the same places, the rest close. Then: the user's
NumPy error state (``np.geterr()``) is the same after any retrograd call, also one that
raised, and the user's own NumPy code still warns.

Rows that fail because of a file this test's author does not own are marked
``xfail(strict=True, reason="owner: <file>")``: they turn into failures once fixed, and the
mark is then removed.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import host
from retrograd.backends.numpy import backend as cpu

torch = pytest.importorskip("torch")

inf, nan = math.inf, math.nan


def _leaf(m: Any, values: Any, dtype: str = "float32") -> Any:
    return m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)


def _double(m: Any, f: Callable[[Any], Any], values: Any) -> tuple[Any, list[Any]]:
    """The gradient of ``f`` under create_graph, then its own backward (a second order)."""
    x = _leaf(m, values)
    (g,) = m.autograd.grad(f(x).sum(), x, create_graph=True)
    return g, [x]


def _unary(method: str, values: Any, dtype: str = "float32") -> Callable[[Any], Any]:
    def case(m: Any) -> tuple[Any, list[Any]]:
        x = _leaf(m, values, dtype)
        return getattr(x, method)(), [x]
    return case


def _binary(f: Callable[[Any, Any], Any], a: Any, b: Any,
            dtype: str = "float32") -> Callable[[Any], Any]:
    def case(m: Any) -> tuple[Any, list[Any]]:
        x, y = _leaf(m, a, dtype), _leaf(m, b, dtype)
        return f(x, y), [x, y]
    return case


def _with(f: Callable[[Any, Any], Any], values: Any,
          dtype: str = "float32") -> Callable[[Any], Any]:
    def case(m: Any) -> tuple[Any, list[Any]]:
        x = _leaf(m, values, dtype)
        return f(m, x), [x]
    return case


def _fan_in(m: Any) -> tuple[Any, list[Any]]:
    x = _leaf(m, [0.0, 1.0])
    return x.log() - x.log(), [x]  # two gradients of x meet: -inf + inf


def _two_backwards(m: Any) -> tuple[Any, list[Any]]:
    x = _leaf(m, [0.0])
    x.log().sum().backward()  # x.grad = inf, then the next one adds -inf into it
    return -x.log(), [x]


def _creation(m: Any) -> tuple[Any, list[Any]]:
    x = m.tensor([1e300, -1e300, 1.0], requires_grad=True)  # float32: +-inf
    return x * 2, [x]


def _ce(m: Any) -> tuple[Any, list[Any]]:
    x = _leaf(m, [[inf, 0.0], [-inf, -inf], [1e38, -1e38]])
    return m.nn.functional.cross_entropy(x, m.tensor([1, 0, 1])), [x]


def _linear(act: str) -> Callable[[Any], Any]:
    def case(m: Any) -> tuple[Any, list[Any]]:
        x = _leaf(m, [[1.0, -1.0], [3e38, 3e38]])
        w = _leaf(m, [[inf, 1.0], [10.0, 10.0]])
        b = _leaf(m, [0.0, -inf])
        y = m.nn.functional.linear(x, w, b)
        return (getattr(y, act)() if act else y), [x, w, b]
    return case


def _index(m: Any) -> tuple[Any, list[Any]]:
    x = _leaf(m, [3e38, 1.0])
    return x[m.tensor([0, 0, 1])] * 2, [x]


def _half(values: Any, f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return _with(lambda m, x: f(x), values, "float16")


def _owner(name: str) -> Any:
    return pytest.mark.xfail(strict=True, reason=f"owner: {name}")


def row(fn: Callable[[Any], Any], id: str,  # noqa: A002 - pytest's word
        owner: str | None = None) -> tuple[Any, ...]:
    """A case; ``owner``: the file that still makes retrograd differ from torch on it."""
    return fn, id, owner


def _params() -> list[Any]:
    return [pytest.param(fn, id=id_, marks=[_owner(owner)] if owner else [])
            for fn, id_, owner in CASES]


CASES: list[tuple[Any, ...]] = [
    row(_unary("log", [0.0, -1.0, 1.0, -0.0]), id="log"),
    row(_unary("sqrt", [0.0, -1.0, 4.0, inf]), id="sqrt"),
    row(_unary("exp", [1000.0, 1.0, -inf, inf]), id="exp"),
    row(_unary("sin", [inf, -inf, 1.0]), id="sin"),
    row(_unary("cos", [inf, nan, 1.0]), id="cos"),
    row(_unary("tanh", [inf, -inf, nan, 1e38]), id="tanh"),
    row(_unary("sigmoid", [-1e38, 1e38, inf, -inf, nan]), id="sigmoid"),
    row(_unary("relu", [nan, -1.0, 0.0, inf]), id="relu"),
    row(_unary("abs", [0.0, nan, -inf]), id="abs"),
    row(_with(lambda m, x: 1 / x, [0.0, -0.0, 2.0]), id="reciprocal"),
    row(_with(lambda m, x: x.pow(-1), [0.0, 2.0, -0.0]), id="pow-1"),
    row(_with(lambda m, x: x.pow(-2), [0.0, 2.0, -0.0]), id="pow-2"),
    row(_with(lambda m, x: x.pow(-0.5), [0.0, 2.0, -1.0]), id="pow-0.5"),
    row(_with(lambda m, x: x.pow(0.5), [0.0, 2.0, -1.0]), id="pow0.5"),
    row(_with(lambda m, x: x.pow(1.5), [0.0, -2.0, inf]), id="pow1.5"),
    row(_with(lambda m, x: x.pow(3), [1e38, -inf, 2.0]), id="pow3"),
    row(_binary(lambda a, b: a**b, [0.0, -2.0, 2.0, 0.0], [-1.0, 0.5, 3.0, 0.0]),
        id="pow-tensor"),
    row(_with(lambda m, x: 0.0**x, [-1.0, 0.5, 0.0]), id="rpow-zero-base"),
    row(_with(lambda m, x: (-2.0) ** x, [-1.0, 0.5]), id="rpow-negative-base"),
    row(_binary(lambda a, b: a / b, [1.0, 0.0, 2.0, inf], [0.0, 0.0, 2.0, inf]),
        id="div"),
    row(_binary(lambda a, b: a - b, [inf, 1.0], [inf, -inf]), id="sub-inf"),
    row(_binary(lambda a, b: a + b, [inf, 3e38], [-inf, 3e38]), id="add-overflow"),
    row(_with(lambda m, x: x * 0.0, [inf, nan, 1.0]), id="mul-inf-zero"),
    row(_with(lambda m, x: x * 10.0, [3e38, -3e38]), id="mul-overflow"),
    row(_binary(lambda a, b: a @ b, [[3e38, 3e38]], [[10.0], [10.0]]),
        id="matmul-overflow"),
    row(_with(lambda m, x: x.sum(), [3e38, 3e38]), id="sum-overflow"),
    row(_with(lambda m, x: x.mean(), [3e38, 3e38, inf]), id="mean-overflow"),
    row(_with(lambda m, x: x.mean(0), [[inf, -inf]]), id="mean-inf"),
    row(_with(lambda m, x: x.mean(), []), id="mean-empty"),
    row(_with(lambda m, x: x.mean(1), [[], [], []]), id="mean-empty-axis"),
    row(_with(lambda m, x: x.amax(1), [[nan, 1.0], [inf, inf]]), id="amax"),
    row(_with(lambda m, x: x.softmax(1), [[inf, 1.0], [-inf, -inf], [1e38, -1e38]]),
        id="softmax"),
    row(_with(lambda m, x: x.log_softmax(1), [[inf, 1.0], [-inf, -inf]]),
        id="log_softmax"),
    row(_with(lambda m, x: x.logsumexp(1), [[inf, 1.0], [-inf, -inf], [inf, inf]]),
        id="logsumexp"),
    row(_ce, id="cross_entropy"),
    row(_with(lambda m, x: m.nn.functional.mse_loss(x, m.tensor([-3e38, 0.0])),
              [3e38, inf]), id="mse_loss"),
    row(_linear(""), id="linear"),
    row(_linear("relu"), id="linear-relu"),
    row(_linear("tanh"), id="linear-tanh"),
    row(_linear("sigmoid"), id="linear-sigmoid"),
    row(_with(lambda m, x: x.log().neg().tanh(), [0.0, 1.0]), id="tanh-of-inf"),
    row(_with(lambda m, x: m.where(x > 0, x, 0.0).log(), [0.0, -1.0, 2.0]),
        id="where-log"),
    row(_with(lambda m, x: m.maximum(x, m.tensor([1.0, -1.0])).log(), [0.0, -2.0]),
        id="maximum-log"),
    row(_with(lambda m, x: m.maximum(x, m.tensor([1.0, nan])).log(), [nan, 0.0]),
        id="maximum-nan"),
    row(_with(lambda m, x: x.clamp(0.0, 1.0).log(), [nan, inf, -1.0]),
        id="clamp-log"),
    row(_index, id="index-backward"),
    row(_with(lambda m, x: x.double() * 1e300 * 1e300, [1.0]), id="to-float64"),
    row(_with(lambda m, x: x.float() * 2, [1e300, nan], "float64"), id="to-float32"),
    row(_with(lambda m, x: x.half(), [1e10, 1.0]), id="to-float16"),
    row(_with(lambda m, x: x * m.tensor([1e300], dtype=m.float64), [1.0]),
        id="promote-float64"),
    row(_half([0.0, 300.0], lambda x: x.pow(-2)), id="half-pow"),
    row(_half([20.0, 1.0], lambda x: x.exp()), id="half-exp"),
    row(_half([0.0, 1.0], lambda x: x.log()), id="half-log"),
    row(_half([1.0, 0.0], lambda x: x / 0.0), id="half-div"),
    row(_half([60000.0, 1.0], lambda x: x * 2.0), id="half-mul"),
    row(_half([1.0], lambda x: x + 1e10), id="half-add-big-number"),
    row(_half([60000.0] * 10, lambda x: x.sum()), id="half-sum"),
    row(_half([60000.0] * 10, lambda x: x.mean()), id="half-mean"),
    row(_half([[300.0] * 4], lambda x: x @ x.T), id="half-matmul"),
    row(lambda m: _double(m, lambda x: x.log(), [0.0, -1.0, 1.0]), id="double-log"),
    row(lambda m: _double(m, lambda x: x.sqrt(), [0.0, -1.0, 1.0]), id="double-sqrt"),
    row(lambda m: _double(m, lambda x: x.pow(-1.5), [0.0, -1.0, 1.0]),
        id="double-pow"),
    row(lambda m: _double(m, lambda x: 1 / x, [0.0, 1.0]), id="double-reciprocal"),
    row(lambda m: _double(m, lambda x: x.relu() * inf, [0.0, -1.0, nan, 1.0]),
        id="double-relu"),
    row(lambda m: _double(m, lambda x: (x * 3e38 * 3e38).tanh(), [1.0]),
        id="double-tanh"),
    row(_two_backwards, id="grad-accumulates-inf"),
    row(_fan_in, id="fan-in"),
    row(_creation, id="tensor-creation"),
]


def _arrays(values: list[Any]) -> list[np.ndarray]:
    out = []
    for v in values:
        out.append(None if v is None else np.array(v.detach().tolist(), dtype=np.float64))
    return out


def _run(m: Any, case: Callable[[Any], Any]) -> tuple[list[str], list[Any]]:
    """The warnings (messages) and values -- output, then each leaf's gradient -- of one
    case, forward and backward, on library ``m``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, leaves = case(m)
        if out.requires_grad:
            out.backward(m.ones_like(out))
        values = [out] + [leaf.grad for leaf in leaves]
    return [f"{w.category.__name__}: {w.message}" for w in caught], _arrays(values)


def _assert_same_values(want: list[Any], got: list[Any]) -> None:
    assert len(want) == len(got)
    for i, (a, b) in enumerate(zip(want, got)):
        if a is None or b is None:
            assert a is None and b is None, f"value {i}: torch {a}, retrograd {b}"
            continue
        assert a.shape == b.shape, f"value {i}: shape {a.shape} vs {b.shape}"
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"nan, value {i}")
        np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b), err_msg=f"+inf, value {i}")
        np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b), err_msg=f"-inf, value {i}")
        fin = np.isfinite(a)
        np.testing.assert_allclose(b[fin], a[fin], rtol=2e-3, atol=0, err_msg=f"value {i}")


@pytest.mark.parametrize("case", _params())
def test_no_warning_and_torch_values(case: Callable[[Any], Any]) -> None:
    want_warnings, want = _run(torch, case)
    got_warnings, got = _run(rg, case)
    assert got_warnings == want_warnings
    _assert_same_values(want, got)


@pytest.mark.parametrize("case", _params())
def test_silent_under_error_filter_and_raise_state(case: Callable[[Any], Any]) -> None:
    """``simplefilter("error")`` and ``np.seterr(all="raise")`` in force: nothing raises in
    retrograd, and the user's NumPy state is the same afterwards."""
    old = np.seterr(all="raise")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out, _ = case(rg)
            if out.requires_grad:
                out.backward(rg.ones_like(out))
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise",
                               "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))  # the user's own NumPy code: as the user set it
    finally:
        np.seterr(**old)


_ODD_STATE = {"divide": "raise", "over": "print", "under": "warn", "invalid": "ignore"}


def _odd_state() -> Any:
    return np.seterr(**_ODD_STATE)


def test_state_unchanged_after_calls() -> None:
    old = _odd_state()
    try:
        x = rg.tensor([0.0, -1.0, 1e38], requires_grad=True)
        y = (x.log() + x.sqrt() + (1 / x) + x.exp() + x * 1e38).sum()
        y.backward()
        assert np.geterr() == _ODD_STATE
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            np.array([1e308]) * 10  # noqa: B018 - "over": "print": no warning
            np.array([1e-308]) / 1e300  # noqa: B018 - "under": "warn"
        assert [str(w.message) for w in caught] == ["underflow encountered in divide"]
    finally:
        np.seterr(**old)


def test_state_unchanged_after_forward_error() -> None:
    old = _odd_state()
    try:
        with pytest.raises(Exception):  # noqa: B017 - a broadcast error inside a quiet kernel
            rg.ones(2) / rg.ones(3)
        assert np.geterr() == _ODD_STATE
        assert rg.tensor([0.0]).log().item() == -inf  # the next call still works, quietly
    finally:
        np.seterr(**old)


def test_state_unchanged_after_error_in_backward() -> None:
    old = _odd_state()
    try:
        x = rg.tensor([0.0, 1.0], requires_grad=True)
        y = x.log()

        def hook(g: Any) -> Any:
            raise ValueError("from the hook")

        y.register_hook(hook)
        with pytest.raises(ValueError, match="from the hook"):
            (y * 2).sum().backward()
        assert np.geterr() == _ODD_STATE

        class Boom(rg.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 1

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                raise KeyError("from backward")

        z = Boom.apply(rg.tensor([0.0], requires_grad=True).log())
        with pytest.raises(KeyError):
            z.sum().backward()
        assert np.geterr() == _ODD_STATE
    finally:
        np.seterr(**old)


def test_user_numpy_still_warns_after_retrograd() -> None:
    rg.tensor([0.0], requires_grad=True).log().sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.zeros(1))
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]


# -- the mechanism ----------------------------------------------------------------------------
def test_quiet_kernel_keeps_signature_and_restores_on_error() -> None:
    def kernel(x: Any, scale: float = 2.0) -> Any:
        if scale < 0:
            raise ValueError("negative scale")
        return np.log(x) * scale

    q = host.quiet(kernel)
    old = _odd_state()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert q(np.zeros(1))[0] == -inf
            assert q(np.zeros(1), 3.0)[0] == -inf
            assert q(x=np.ones(1), scale=1.0)[0] == 0.0
            with pytest.raises(ValueError, match="negative scale"):
                q(np.ones(1), -1.0)
            with pytest.raises(TypeError):
                q()
            with pytest.raises(RuntimeError, match="mine"):  # a kernel's own RuntimeError
                host.quiet(lambda: (_ for _ in ()).throw(RuntimeError("mine")))()
        assert np.geterr() == _ODD_STATE
        assert q.__wrapped__ is kernel
    finally:
        np.seterr(**old)


def test_nested_quiet_kernels() -> None:
    """A quiet kernel calling another finds the quiet context entered: the slow path."""
    inner = cpu.ops.log
    outer = host.quiet(lambda a: inner(a) + inner(a * 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert outer(np.zeros(2)).tolist() == [-inf, -inf]


def test_quiet_enter_exit_nest_and_restore() -> None:
    old = _odd_state()
    try:
        t1 = host.quiet_enter()
        t2 = host.quiet_enter()
        assert np.geterr() == dict.fromkeys(_ODD_STATE, "ignore")
        host.quiet_exit(t2)
        assert np.geterr() == dict.fromkeys(_ODD_STATE, "ignore")
        host.quiet_exit(t1)
        assert np.geterr() == _ODD_STATE
    finally:
        np.seterr(**old)


def test_threads_are_quiet_and_keep_their_state() -> None:
    """Threads running quiet kernels at once (NumPy releases the GIL on large arrays, so one
    finds the quiet context entered by another and takes the slow path): no warning, no
    error, right values, and each thread's own state as it set it."""
    big = np.zeros(400_000)
    errors: list[BaseException] = []
    states: list[Any] = []

    def work(i: int) -> None:
        try:
            np.seterr(over="raise" if i % 2 else "warn")
            want = np.geterr()
            x = rg.from_numpy(big)
            for _ in range(20):
                y = x.log() - (1 / x) * x.exp()  # -inf - inf * 1
                assert y.sum().item() == -inf
            states.append(np.geterr() == want)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert states == [True] * 4


def test_numpy_kernels_are_quiet() -> None:
    """Every kernel of the cpu backend that computes is wrapped (``__wrapped__``), and each
    that is left bare is one listed as raising no floating-point error."""
    from retrograd.backends import numpy as cpu_module

    for name, fn in cpu.kernels.items():
        if hasattr(fn, "__wrapped__"):
            continue
        assert name in cpu_module._NO_FP_ERRORS or cpu_module._is_bound_composite(name, fn), name
    for name in ("add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "matmul", "sum",
                 "mean", "astype", "accumulate_", "gt", "where"):
        assert hasattr(cpu.kernels[name], "__wrapped__"), name
