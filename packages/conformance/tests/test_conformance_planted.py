"""The suite fails when the backend is wrong: three planted faults, each reported as failed with
a message that says what is wrong and where."""

from __future__ import annotations

import pytest

from retrograd_conformance.cases import DOCUMENT_CASES
from retrograd_conformance.opdb import OPS_BY_NAME, check_op
from retrograd_conformance.programs.check import check_programs
from retrograd_conformance.runner import judge_case, run_case

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
