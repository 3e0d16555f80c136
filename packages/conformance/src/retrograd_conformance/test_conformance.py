"""The suite as pytest items: ``pytest --pyargs retrograd_conformance --backend NAME``.

One item per document case and dtype, per semantics case and dtype, per op-database entry and
dtype, and one for the generated programs, each parametrized by backend (the plugin's
``conformance_backend``). Item ids read ``test_document[cpu-shared-branch-float32]`` and
``test_semantics[cpu-hook-chain-float32]``, the strings an xfails file lists.
"""

from __future__ import annotations

import pytest

from retrograd_conformance.cases import DOCUMENT_CASES, FUSION_FAMILY, SEMANTICS_CASES
from retrograd_conformance.opdb import OPS
from retrograd_conformance.programs.check import check_programs
from retrograd_conformance.runner import (
    judge_case,
    judge_semantics_case,
    run_case,
    run_semantics_case,
)

DTYPES = ("float32", "float64")
pytestmark = pytest.mark.conformance

_reference: dict[tuple[str, str], object] = {}


def _oracle_outcome(case, oracle):
    key = (case.id, oracle)
    if key not in _reference:
        _reference[key] = run_case(case, oracle, "float64")
    return _reference[key]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", DOCUMENT_CASES, ids=[c.id for c in DOCUMENT_CASES])
def test_document(conformance_subject, conformance_oracle, case, dtype):
    """A document case: the values worked out in docs/conformance.md and the oracle's, on this
    backend."""
    ref = _oracle_outcome(case, conformance_oracle) if conformance_oracle else None
    out = run_case(case, conformance_subject.name, dtype)
    result = judge_case(case, dtype, conformance_subject.name, out, ref)
    assert result.verdict == "pass", f"{case.id} ({'; '.join(result.details['sources'])}): " \
                                     f"{result.message}"


_SEMANTICS = [(c, d) for c in (*SEMANTICS_CASES, *FUSION_FAMILY) for d in c.dtypes]
_semantics_reference: dict[tuple[str, str, str], object] = {}


@pytest.mark.parametrize(("case", "dtype"), _SEMANTICS,
                         ids=[f"{c.id}-{d}" for c, d in _SEMANTICS])
def test_semantics(conformance_subject, conformance_oracle, case, dtype):
    """An autograd-semantics case: every quantity (dtypes included) vs the oracle, same dtype."""
    ref = None
    if conformance_oracle:
        key = (case.id, dtype, conformance_oracle)
        if key not in _semantics_reference:
            _semantics_reference[key] = run_semantics_case(case, conformance_oracle, dtype)
        ref = _semantics_reference[key]
    out = run_semantics_case(case, conformance_subject.name, dtype)
    result = judge_semantics_case(case, dtype, conformance_subject.name, out, ref,
                                  conformance_oracle or "torch")
    assert result.verdict == "pass", result.message


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_op(conformance_subject, conformance_oracle, op, dtype):
    """An op-database entry: vs the oracle, and gradcheck / gradgradcheck in float64."""
    from retrograd_conformance.opdb import check_op

    result = check_op(op, conformance_subject.name, dtype, conformance_oracle)
    assert result.ok, "\n".join(result.failures)


def test_generated_programs(conformance_subject, conformance_oracle, conformance_fuzz):
    """Hypothesis-generated DAG programs agree with the oracle; a failure shows the shrunk
    program as runnable Python."""
    count, seed = conformance_fuzz
    report = check_programs(conformance_subject.name, count=count, seed_value=seed,
                            oracle=conformance_oracle)
    if report.crash:
        pytest.fail(f"the program runner crashed:\n{report.crash}")
    if report.failure:
        pytest.fail(f"mismatch after {report.run} programs: {report.failure.reason}\n\n"
                    f"Shrunk program (runnable):\n{report.failure.reproducer}")
    if report.unseen_kinds:
        pytest.fail(report.coverage_failure)
    assert report.run >= min(count, 1)
