"""``detect_anomaly()``: a NaN or an inf produced in backward raises an error that names the
node that produced it and shows where its forward op was called. Without it, the
same program runs silently (as in PyTorch), and a failed anomaly check changes no ``.grad``.
"""

from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import pytest

import retrograd as rg

from ._state import assert_unchanged, message_of, snapshot
from ._workloads import leaf, to_np

HERE = os.path.basename(__file__)


def _line_of(marker: str) -> int:
    """The line number in this file of the line that contains ``marker``."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    found = [i + 1 for i, text in enumerate(lines) if text.rstrip().endswith("# " + marker)]
    assert len(found) == 1, (marker, found)
    return found[0]


def nan_program(x):
    """sqrt'(0) = inf, times an upstream 0 -> 0 * inf = NaN produced by the sqrt node."""
    r = rg.sqrt(x)  # FORWARD-SITE-NAN
    return r, (r * 0.0).sum()


def inf_program(x):
    """sqrt'(0) = 1 / (2 * 0) = inf produced by the sqrt node."""
    r = rg.sqrt(x)  # FORWARD-SITE-INF
    return r, r.sum()


def log_program(x):
    r = rg.log(x)  # FORWARD-SITE-LOG
    return r, (r * 2.0).sum()


PROGRAMS = {
    "nan": (nan_program, "FORWARD-SITE-NAN", "nan"),
    "inf": (inf_program, "FORWARD-SITE-INF", "inf"),
    "log_inf": (log_program, "FORWARD-SITE-LOG", "inf"),
}


@pytest.mark.parametrize("kind", ["nan"])
def test_anomaly_names_node_value_and_forward_site(kind):
    program, marker, word = PROGRAMS[kind]
    w = leaf([1.0, 2.0])
    x = leaf([0.0, 4.0])
    (w * x).sum().backward()  # .grad already holds values
    snap = snapshot([w, x])
    with rg.autograd.detect_anomaly():
        r, loss = program(x * w)
        node_name = r.grad_fn.name()
        with pytest.raises(rg.RetrogradError) as info:
            loss.backward()
    msg = message_of(info.value)
    assert node_name in msg, f"node {node_name!r} not named: {msg}"
    assert word in msg.lower(), f"{word!r} not in: {msg}"
    line = _line_of(marker)
    assert HERE in msg and str(line) in msg, (
        f"the forward call site {HERE}:{line} is not shown: {msg}")
    assert program.__name__ in msg, f"the forward frame ({program.__name__}) is not shown"
    assert_unchanged(snap, f"anomaly {kind}")


@pytest.mark.parametrize("kind", list(PROGRAMS))
def test_without_anomaly_mode_no_error(kind):
    program, _, word = PROGRAMS[kind]
    x = leaf([0.0, 4.0])
    _, loss = program(x)
    loss.backward()
    g = to_np(x.grad)
    assert not np.isfinite(g[0])
    assert np.isfinite(g[1])


def test_anomaly_in_autograd_grad_and_double_backward():
    x = leaf([0.0, 1.0])
    with rg.autograd.detect_anomaly():
        r, loss = nan_program(x)
        with pytest.raises(rg.RetrogradError) as info:
            rg.autograd.grad(loss, [x], retain_graph=True)
        assert r.grad_fn.name() in message_of(info.value)
        with pytest.raises(rg.RetrogradError):
            rg.autograd.grad(loss, [x], create_graph=True)
    assert x.grad is None


def test_anomaly_mode_is_scoped_and_finite_graphs_pass():
    x = leaf([1.0, 4.0])
    with rg.autograd.detect_anomaly():
        _, loss = inf_program(x)
        loss.backward()
    np.testing.assert_allclose(to_np(x.grad), [0.5, 0.25])
    # after the block the mode is off again: a NaN passes silently
    z = leaf([0.0])
    _, loss = nan_program(z)
    loss.backward()
    assert np.isnan(to_np(z.grad)[0])
    assert rg.is_grad_enabled()


def test_backward_error_wins_over_the_anomaly_warning_under_an_error_filter():
    """With warnings turned into errors, the node's own error reaches the caller, as in
    PyTorch (whose anomaly warning then goes to stderr): not the anomaly warning."""
    from torch_parity import same

    def program(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled"
            mode = lib.autograd.detect_anomaly()
            mode.__enter__()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                lib.autograd.grad(d2.sum(), a)
        finally:
            mode.__exit__(None, None, None)

    same(program, "modified by an inplace operation")


@pytest.mark.parametrize("op", ["sqrt", "log"])
def test_anomaly_lets_an_infinite_gradient_through(op):
    """PyTorch's anomaly mode checks for NaN only: sqrt'(0) = inf and log'(0) = inf are
    values; the walk completes with them."""
    from torch_parity import same

    def program(lib):
        x = lib.tensor([0.0, 4.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                getattr(lib, op)(x).sum().backward()
        return x.grad

    same(program)


def test_a_node_made_outside_anomaly_mode_says_so_as_pytorch():
    """Anomaly mode on only for the backward: PyTorch's words for the missing forward trace,
    in the warning and in the NaN error."""
    from torch_parity import same

    def program(lib):
        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        y = MyFunc.apply(lib.ones(2, requires_grad=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                try:
                    y.sum().backward()
                except RuntimeError as exc:
                    error = str(exc).splitlines()[0]
        said = [str(w.message) for w in caught if "Error detected" in str(w.message)]
        return error, ["No forward pass information available" in m for m in said]

    same(program)
