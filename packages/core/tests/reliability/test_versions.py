"""Version checks are exact, with PyTorch as the oracle: an op whose gradient does not need a
value must not refuse a later in-place change of it (``x / 2.0`` then ``x.add_(1)`` is legal:
DESIGN's Lucid lesson), and an op whose gradient needs it must refuse (VersionMismatch) or
have saved its own copy: never a silently wrong gradient.

Each op is run on a fresh leaf x; under ``no_grad`` x is then changed in place; then backward.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def _ops():
    """name -> fn(lib, x); lib is torch or retrograd (same spelling for both)."""
    c3 = lambda L: L.ones(3, dtype=L.float64) * 2.0  # noqa: E731 - a constant operand
    return {
        "x+c": lambda L, x: x + 1.0,
        "c-x": lambda L, x: 1.0 - x,
        "x*c": lambda L, x: x * 0.5,
        "c*x": lambda L, x: 0.5 * x,
        "x/c": lambda L, x: x / 2.0,
        "c/x": lambda L, x: 2.0 / x,
        "neg": lambda L, x: -x,
        "x+const": lambda L, x: x + c3(L),
        "x*const": lambda L, x: x * c3(L),
        "x/const": lambda L, x: x / c3(L),
        "x@const": lambda L, x: x @ c3(L),
        "const@xT": lambda L, x: c3(L) @ x.T,
        "linear(x,W)": lambda L, x: L.nn.functional.linear(x, L.ones(4, 3, dtype=L.float64)),
        "x*x": lambda L, x: x * x,
        "x**2": lambda L, x: x ** 2,
        "exp": lambda L, x: x.exp(),
        "tanh": lambda L, x: x.tanh(),
        "sigmoid": lambda L, x: L.sigmoid(x),
        "relu": lambda L, x: L.relu(x),
        "sqrt": lambda L, x: x.sqrt(),
        "log": lambda L, x: x.log(),
        "sin": lambda L, x: x.sin(),
        "abs": lambda L, x: x.abs(),
        "clamp": lambda L, x: L.clamp(x, 0.6, 1.2),
        "sum": lambda L, x: x.sum(0),
        "mean": lambda L, x: x.mean(),
        "amax": lambda L, x: x.amax(dim=1),
        "logsumexp": lambda L, x: L.logsumexp(x, dim=1),
        "softmax": lambda L, x: L.nn.functional.softmax(x, dim=1),
        "reshape": lambda L, x: x.reshape(-1),
        "T": lambda L, x: x.T,
        "getitem": lambda L, x: x[0],
        "cat": lambda L, x: L.cat([x, x]),
        "stack": lambda L, x: L.stack([x, x]),
        "where": lambda L, x: L.where(x > 1.0, x, x * 2.0),
        "mse(x,0)": lambda L, x: L.nn.functional.mse_loss(x, L.zeros(2, 3, dtype=L.float64)),
    }


OPS = _ops()
X0 = np.array([[0.6, 0.9, 1.3], [1.1, 0.7, 1.4]])


def _run(lib, name: str, modify: bool):
    x = lib.tensor(X0.tolist(), dtype=lib.float64, requires_grad=True)
    y = OPS[name](lib, x)
    if modify:
        with lib.no_grad():
            x.add_(0.5)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return e
    return np.array(x.grad.detach().numpy(), copy=True)


@pytest.mark.parametrize("name", list(OPS))
def test_inplace_after_use_like_pytorch(name):
    reference = _run(torch, name, modify=False)  # the gradient at forward-time values
    torch_out = _run(torch, name, modify=True)
    ours = _run(rg, name, modify=True)
    if isinstance(ours, BaseException):
        assert isinstance(ours, rg.VersionMismatch), f"{name}: {type(ours).__name__}: {ours}"
        assert not isinstance(torch_out, np.ndarray), (
            f"{name}: refused a legal in-place change (PyTorch does not need the old value): "
            f"{ours}")
    else:
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name}: silently wrong gradient after in-place")


CONST_OPS = {
    "x*c": lambda L, x, c: x * c,
    "x/c": lambda L, x, c: x / c,
    "c/x": lambda L, x, c: c / x,
    "x@c": lambda L, x, c: x @ c,
    "c@xT": lambda L, x, c: c @ x.T,
    "x+c": lambda L, x, c: x + c,
    "maximum(x,c)": lambda L, x, c: L.maximum(x, c),
    "where(c>1,x,0)": lambda L, x, c: L.where(c > 1.0, x, x * 0.0),
}
C0 = np.array([0.5, 1.5, 2.5])


def _run_const(lib, name: str, modify: bool):
    x = lib.tensor(X0.tolist(), dtype=lib.float64, requires_grad=True)
    c = lib.tensor(C0.tolist(), dtype=lib.float64)
    y = CONST_OPS[name](lib, x, c)
    if modify:
        c.mul_(3.0)  # c does not require grad: legal with grad mode on
    try:
        y.sum().backward()
    except RuntimeError as e:
        return e
    return np.array(x.grad.detach().numpy(), copy=True)


@pytest.mark.parametrize("name", list(CONST_OPS))
def test_constant_operand_changed_after_use(name):
    """The other side: the op's gradient needs the constant; changing it must be refused
    (or the op kept its own copy), never silently used."""
    reference = _run_const(torch, name, modify=False)
    torch_out = _run_const(torch, name, modify=True)
    ours = _run_const(rg, name, modify=True)
    if isinstance(ours, BaseException):
        assert isinstance(ours, rg.VersionMismatch), f"{name}: {type(ours).__name__}: {ours}"
        assert not isinstance(torch_out, np.ndarray), f"{name}: refused a legal change: {ours}"
    else:
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name}: silently wrong gradient")


# An op's output is stamped lazily (ops._core._stamp): it gets a version counter only when
# something first needs one -- an in-place op, a view, detach(), a later op that saves it, a
# double backward that re-wraps it. Each of those routes must leave the node that saved the
# output watching the same counter.
OUT_OPS = {
    "exp": lambda L, x: x.exp(),
    "tanh": lambda L, x: x.tanh(),
    "sigmoid": lambda L, x: L.sigmoid(x),
    "relu": lambda L, x: L.relu(x - 0.8),
    "sqrt": lambda L, x: x.sqrt(),
    "c/x": lambda L, x: 2.0 / x,
    "softmax": lambda L, x: L.nn.functional.softmax(x, dim=1),
    "x*c": lambda L, x: x * 0.5,
    "x**3": lambda L, x: x ** 3,
}


def _no_grad_mul(L, y):
    with L.no_grad():
        y.mul_(2.0)


def _detach_mul(L, y):
    y.detach().mul_(2.0)


def _view_mul(L, y):
    with L.no_grad():
        y[0].mul_(2.0)


def _recorded_mul(L, y):
    y.mul_(2.0)


def _saved_then_mul(L, y):
    _ = y * y  # saves y: its counter is made here, by the later op
    with L.no_grad():
        y.mul_(2.0)


def _detach_in_place_then_mul(L, y):
    y.detach_()  # y leaves the graph; the node that saved it stays in the loss's graph
    y.mul_(2.0)


MODIFY = {"no_grad": _no_grad_mul, "detach": _detach_mul, "view": _view_mul,
          "recorded": _recorded_mul, "saved_by_later_op": _saved_then_mul,
          "detach_": _detach_in_place_then_mul}


def _run_out(lib, name: str, route: str | None):
    x = lib.tensor(X0.tolist(), dtype=lib.float64, requires_grad=True)
    y = OUT_OPS[name](lib, x)
    loss = (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum()
    if route is not None:
        MODIFY[route](lib, y)
    try:
        loss.backward()
    except RuntimeError as e:
        return e
    return np.array(x.grad.detach().numpy(), copy=True)


def _check_against_torch(name: str, reference, torch_out, ours) -> None:
    if isinstance(ours, BaseException):
        assert isinstance(ours, rg.VersionMismatch), f"{name}: {type(ours).__name__}: {ours}"
        assert not isinstance(torch_out, np.ndarray), f"{name}: refused a legal change: {ours}"
    else:
        assert isinstance(torch_out, np.ndarray), (
            f"{name}: PyTorch refuses this in-place change ({torch_out}); retrograd ran")
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name}: silently wrong gradient")


@pytest.mark.parametrize("route", list(MODIFY))
@pytest.mark.parametrize("name", list(OUT_OPS))
def test_output_changed_in_place_after_use(name, route):
    reference = _run_out(torch, name, None)
    torch_out = _run_out(torch, name, route)
    ours = _run_out(rg, name, route)
    _check_against_torch(f"{name} via {route}", reference, torch_out, ours)


def _run_out_double(lib, name: str, modify: bool):
    """The output re-wrapped by a double backward (``unpack_saved``) before it had a counter,
    then changed through the original tensor."""
    x = lib.tensor(X0.tolist(), dtype=lib.float64, requires_grad=True)
    y = OUT_OPS[name](lib, x)
    (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
    if modify:
        with lib.no_grad():
            y.mul_(2.0)
    try:
        (g * g).sum().backward()
    except RuntimeError as e:
        return e
    return np.array(x.grad.detach().numpy(), copy=True)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "sqrt", "c/x"])
def test_output_rewrapped_by_double_backward_then_changed(name):
    reference = _run_out_double(torch, name, False)
    torch_out = _run_out_double(torch, name, True)
    ours = _run_out_double(rg, name, True)
    _check_against_torch(name, reference, torch_out, ours)
