"""The suite fails when the backend is wrong: planted faults, each reported as failed with a
message that says what is wrong and where.

Two kinds live here. The first tests below drive the backends of ``conftest.py`` (a wrong
``tanh_backward``, a dropping ``+``, ignored version counters) through particular checks. The
table :data:`PLANTED` holds one :class:`Plant` per planted bug class: a broken NumPy backend
(the cpu backend with some kernels replaced), the check that must catch it, the case ids that
must fail and those that must still pass (the fault is where it was planted), and phrases the
failure message must hold (the op, the kernel at fault, the quantity). A new bug class is a new
entry: its kernels, its check (any function ``subject -> [Result]``) and what it must say.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from retrograd import backends
from retrograd.backends.numpy import NumpyBackend
from retrograd_conformance.cases import DOCUMENT_CASES, FUSION_CASES
from retrograd_conformance.coverage import KernelCoverage
from retrograd_conformance.opdb import OPS_BY_NAME, check_op
from retrograd_conformance.programs.check import check_programs
from retrograd_conformance.runner import Result, judge_case, run_case, semantics_results
from retrograd_conformance.subjects import retrograd_subjects, torch_subjects

CASES = {c.id: c for c in DOCUMENT_CASES}


def _document(case_id: str, subject: str, dtype: str = "float64"):
    case = CASES[case_id]
    ref = run_case(case, "torch", "float64")
    return judge_case(case, dtype, subject, run_case(case, subject, dtype), ref)


def test_wrong_backward_formula_fails_the_op_database(plant):
    with plant("planted_tanh") as subject:
        result = check_op(OPS_BY_NAME["tanh"], subject, "float64")
        healthy = check_op(OPS_BY_NAME["exp"], subject, "float64", oracle="torch")
    assert not result.ok
    text = "\n".join(result.failures)
    assert "tanh[2-d] vs torch: vjp" in text  # names the op, the sample, the check
    assert "gradcheck" in text and "Jacobian mismatch" in text
    assert healthy.ok, healthy.failures  # the fault is where it was planted, nowhere else


def test_wrong_backward_formula_fails_generated_programs(plant):
    with plant("planted_tanh") as subject:
        report = check_programs(subject, count=60, seed_value=3)
    assert report.failure is not None, "60 programs never noticed a wrong tanh backward"
    program = report.failure.program.source
    assert "tanh" in program
    assert "def program(lib):" in report.failure.reproducer
    assert "run_program_source" in report.failure.reproducer


def test_dropped_contribution_at_a_shared_node_fails_the_documents(plant):
    with plant("planted_drop") as subject:
        shared = _document("shared-branch", subject)
        twice = _document("shared-branch-x3", subject)
        single = _document("leaf-root", subject)
    assert shared.verdict == "fail"
    assert "x.grad: document: expected 20" in shared.message
    assert "u.grad: document: expected 5" in shared.message
    assert "oracle:" in shared.message  # also disagrees with torch, and says so
    assert twice.verdict == "fail" and "x.grad" in twice.message
    assert single.verdict == "pass", single.message


def test_dropped_contribution_fails_generated_programs(plant):
    with plant("planted_drop") as subject:
        report = check_programs(subject, count=60, seed_value=5)
    assert report.failure is not None
    assert "expected" in report.failure.reason


def test_ignored_version_counters_fail_the_documents(without_version_checks):
    result = _document("modified-saved-input", "retrograd:cpu")
    assert result.verdict == "fail"
    assert "expected an error of kind runtime/version-mismatch" in result.message \
        or "expected raises" in result.message


def test_ignored_version_counters_fail_generated_programs(without_version_checks):
    report = check_programs("retrograd:cpu", count=150, seed_value=11,
                            modes=("inplace",))
    assert report.failure is not None
    assert "version-mismatch" in report.failure.reason
    assert "lib.no_grad()" in report.failure.program.source


@pytest.mark.parametrize("name", ["planted_tanh", "planted_drop"])
def test_planted_backends_are_unregistered_afterwards(plant, name):
    from retrograd import backends

    with plant(name):
        assert name in backends.available_backends()
    assert name not in backends.available_backends()


# ---- the table of planted bug classes -----------------------------------------------------------


@dataclass(frozen=True)
class Plant:
    """One planted bug: ``kernels`` (name -> broken function) replace the cpu backend's, the
    result registered as backend ``retrograd:planted_<name>``; ``check(subject)`` runs the part
    of the suite that must catch it. Every id in ``fails`` (a result id, or its start) must
    have failed, with every phrase of ``says`` in its message; every id in ``passes`` must have
    passed; and every planted kernel must have been called by the check."""

    name: str
    bug_class: str
    description: str
    kernels: dict[str, Callable[..., Any]]
    check: Callable[[str], list[Result]]
    fails: tuple[str, ...]
    says: tuple[str, ...]
    passes: tuple[str, ...] = ()


@contextlib.contextmanager
def planted_backend(plant: Plant) -> Iterator[str]:
    """Register ``plant``'s broken backend for the duration; yields its subject name."""
    name = f"planted_{plant.name}"
    backend = NumpyBackend()
    backend.name = name
    backend.override(**plant.kernels)
    backends.register_backend(name, backend)
    try:
        yield f"retrograd:{name}"
    finally:
        backends.unregister_backend(name)


def fusion_check(select: str) -> Callable[[str], list[Result]]:
    """The fusion cases whose id holds ``select``, run on the subject against torch."""

    def check(subject: str) -> list[Result]:
        cases = [c for c in FUSION_CASES if select in c.id]
        return semantics_results(retrograd_subjects([subject.partition(":")[2]]),
                                 torch_subjects(), cases)

    return check


# broken kernels: each right but for one thing


def _relu_mask(y: Any) -> Any:
    return y <= 0


def linear_relu_backward_unmasked_bias(g, y, x, w, nx, nw, nb):
    """Linear+ReLU backward whose bias gradient sums ``g`` itself, not the masked ``g``."""
    gz = np.where(_relu_mask(y), 0, g)
    return (gz @ w if nx else None, gz.T @ x if nw else None, g.sum(0) if nb else None)


def linear_tanh_backward_drops_last_row(g, y, x, w, nx, nw, nb):
    """Linear+Tanh backward that leaves the last row of the weight gradient at zero."""
    gz = g * (1 - y * y)
    gw = None
    if nw:
        gw = gz.T @ x
        gw[-1] = 0
    return (gz @ w if nx else None, gw, gz.sum(0) if nb else None)


def linear_sigmoid_backward_writes_the_seed(g, y, x, w, nx, nw, nb):
    """Linear+Sigmoid backward, right, but computed in the buffer of ``g`` -- the caller's
    seed, which the fused kernel must leave alone (only the in-place variant may write)."""
    np.multiply(g, y * (1 - y), out=g)
    return (g @ w if nx else None, g.T @ x if nw else None, g.sum(0) if nb else None)


def relu_backward_in_place_strict_mask(g, y):
    """In-place ReLU derivative masking ``y < 0`` instead of ``y <= 0``: a ReLU output is never
    negative, so it masks nothing and passes g where the unit is off (y == 0)."""
    np.putmask(g, y < 0, 0)
    return g


def sigmoid_backward_in_place_drops_g(g, y):
    """In-place sigmoid derivative that writes ``y (1 - y)`` and forgets to multiply by g."""
    g[...] = y * (1 - y)
    return g


PLANTED: list[Plant] = [
    Plant("fused_relu_bias", "fused kernel",
          "linear_relu_backward does not mask the bias gradient",
          {"linear_relu_backward": linear_relu_backward_unmasked_bias},
          fusion_check("relu"),
          fails=("fusion-linear-relu-bias-caller-seed[float32]",
                 "fusion-linear-relu-bias-caller-seed[float64]"),
          says=("relu(linear(x, W, b))", "Kernel at fault: linear_relu_backward", "b.grad",
                "the unfused walk agrees with torch"),
          passes=("fusion-linear-relu-bias-engine-seed", "fusion-linear-relu-nobias-caller-seed")),
    Plant("fused_tanh_row", "fused kernel",
          "linear_tanh_backward drops the last row of the weight gradient",
          {"linear_tanh_backward": linear_tanh_backward_drops_last_row},
          fusion_check("tanh"),
          fails=("fusion-linear-tanh-bias-caller-seed", "fusion-linear-tanh-nobias-caller-seed"),
          says=("Kernel at fault: linear_tanh_backward", "W.grad", "all in row 2 (the last)"),
          passes=("fusion-linear-tanh-bias-engine-seed", "fusion-mlp-relu-tanh-bias-engine-seed")),
    Plant("fused_sigmoid_seed", "fused kernel",
          "linear_sigmoid_backward computes in the caller's seed buffer",
          {"linear_sigmoid_backward": linear_sigmoid_backward_writes_the_seed},
          fusion_check("sigmoid"),
          fails=("fusion-linear-sigmoid-bias-caller-seed",
                 "fusion-mlp-relu-sigmoid-bias-caller-seed"),
          says=("Kernel at fault: linear_sigmoid_backward", "the seed, after backward"),
          passes=("fusion-linear-sigmoid-bias-engine-seed",)),
    Plant("in_place_relu_zero", "in-place variant",
          "relu_backward_ masks y < 0 instead of y <= 0 (so nothing at all)",
          {"relu_backward_": relu_backward_in_place_strict_mask},
          fusion_check("relu"),
          fails=("fusion-linear-relu-bias-engine-seed", "fusion-linear-relu-nobias-engine-seed",
                 "fusion-mlp-relu-tanh-bias-engine-seed"),
          says=("Kernel at fault: relu_backward_ (in place)", "x.grad"),
          passes=("fusion-linear-relu-bias-caller-seed", "fusion-linear-relu-nobias-caller-seed")),
    Plant("in_place_sigmoid_no_g", "in-place variant",
          "sigmoid_backward_ forgets the incoming gradient",
          {"sigmoid_backward_": sigmoid_backward_in_place_drops_g},
          fusion_check("sigmoid"),
          fails=("fusion-linear-sigmoid-bias-engine-seed",
                 "fusion-linear-sigmoid-nobias-engine-seed"),
          says=("sigmoid(linear(x, W", "Kernel at fault: sigmoid_backward_ (in place)",
                "W.grad"),
          passes=("fusion-linear-sigmoid-bias-caller-seed",)),
]


def test_the_table_covers_each_bug_class():
    classes = {p.bug_class for p in PLANTED}
    assert {"fused kernel", "in-place variant"} <= classes
    assert len({p.name for p in PLANTED}) == len(PLANTED)


@pytest.mark.parametrize("plant", PLANTED, ids=lambda p: p.name)
def test_planted_bug_is_caught(plant: Plant):
    with planted_backend(plant) as subject:
        with KernelCoverage({subject: backends.get_backend(subject.partition(":")[2])},
                            only=plant.kernels) as coverage:
            results = [r for r in plant.check(subject) if r.subject == subject]
    assert results, f"{plant.name}: the check produced no result for {subject}"
    calls = coverage.calls(subject)
    assert all(calls.get(k) for k in plant.kernels), (
        f"{plant.name}: the check never called {sorted(set(plant.kernels) - set(calls))}")
    for ident in plant.fails:
        hits = [r for r in results if r.id.startswith(ident)]
        assert hits, f"{plant.name}: no result {ident!r}"
        for r in hits:
            assert r.verdict == "fail", f"{plant.name} ({plant.description}) was not caught by " \
                                        f"{r.key}"
            for phrase in plant.says:
                assert phrase in r.message, f"{r.key}: {phrase!r} not in: {r.message}"
    for ident in plant.passes:
        hits = [r for r in results if r.id.startswith(ident)]
        assert hits, f"{plant.name}: no result {ident!r}"
        for r in hits:
            assert r.verdict == "pass", f"{plant.name}: {r.key} failed too: {r.message}"
    assert f"planted_{plant.name}" not in backends.available_backends()
