"""The document cases: complete, captioned by topic, explained in docs/conformance.md, and
green on torch and cpu."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from retrograd_conformance.cases import DOCUMENT_CASES
from retrograd_conformance.cases.base import CASES_DOC, TOPICS
from retrograd_conformance.compare import Tolerance, compare
from retrograd_conformance.errors import Raised, Raises, kinds_agree, retrograd_kind, torch_kind
from retrograd_conformance.runner import judge_case, run_case

CASE_IDS = (
    "shared-branch", "shared-branch-x3", "graph-structure", "vjp", "accumulate", "reused-graph",
    "modified-saved-input", "double-backward", "grad-leaves-untouched", "grad-unreached",
    "interior-capture", "broadcast-reduce", "nonscalar-seed", "retain-graph", "leaf-root",
    "hook-replaces",
)

REPO = pathlib.Path(__file__).resolve().parents[3]
DOC = REPO / CASES_DOC
needs_repo = pytest.mark.skipif(not DOC.is_file(), reason="not run from the repository")


def test_every_case_is_there_with_its_topic():
    ids = [c.id for c in DOCUMENT_CASES]
    assert sorted(ids) == sorted(CASE_IDS)
    for case in DOCUMENT_CASES:
        assert case.sources, case.id
        for source in case.sources:
            assert source.topic in TOPICS
            assert source.section.strip()
        assert case.expected, f"{case.id} has no expectation of its own"
        assert case.explained_at == f"docs/conformance.md#{case.id}"


def test_captions_name_no_file_a_user_does_not_have():
    for case in DOCUMENT_CASES:
        text = " ".join([case.title, case.note, *map(str, case.sources)])
        assert not re.search(r"\.txt|design 0|seed 0|SPEC", text), (case.id, text)


@needs_repo
def test_docs_explain_every_case_with_its_numbers():
    text = DOC.read_text(encoding="utf-8")
    for case in DOCUMENT_CASES:
        anchor = "{#" + case.id + "}"
        assert anchor in text, f"{CASES_DOC} has no section {anchor}"
        section = text.split(anchor, 1)[1].split("{#", 1)[0]  # up to the next case
        assert "Expected:" in section and "Why:" in section, case.id
        for value in case.expected.values():
            if type(value) is int:
                assert str(value) in section, (case.id, value)


@needs_repo
def test_the_repository_points_at_nothing_outside_it():
    """No file names the design sources the project was started from, which are not part of
    the repository: docs/semantics.md is the contract, docs/conformance.md the examples."""
    patterns = re.compile("|".join([re.escape("../" + "shared"), re.escape("SPEC" + ".md"),
                                    re.escape("seeds" + "/"), r"_[0-9a-f]{16}\.txt"]))
    skip_dirs = {".git", ".nox", "site", "__pycache__", ".mypy_cache", ".ruff_cache",
                 ".hypothesis", ".import_linter_cache", "node_modules", "out"}
    found = []
    for path in REPO.rglob("*"):
        rel = path.relative_to(REPO)
        if (any(part in skip_dirs or part.endswith(".egg-info") for part in rel.parts)
                or not path.is_file() or path.suffix not in {".py", ".md", ".toml", ".yml",
                                                              ".yaml", ".txt", ".cfg", ".sh",
                                                              ".html", ".ini"}):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                 .splitlines(), 1):
            if patterns.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("case", DOCUMENT_CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("subject", ["torch", "retrograd:cpu"])
def test_document_case(case, subject):
    ref = run_case(case, "torch", "float64")
    for dtype in case.dtypes:
        result = judge_case(case, dtype, subject, run_case(case, subject, dtype), ref)
        assert result.verdict == "pass", result.message


def test_torch_errors_are_classified_by_message():
    import torch

    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert torch_kind(info.value) == "runtime/graph-freed"
    assert torch_kind(RuntimeError("something else")) == "runtime"
    assert torch_kind(ValueError("bad")) == "value"


def test_retrograd_errors_are_classified_by_class():
    import retrograd as rg

    assert retrograd_kind(rg.VersionMismatch("x")) == "runtime/version-mismatch"
    assert retrograd_kind(rg.GraphFreedError("x")) == "runtime/graph-freed"
    assert retrograd_kind(rg.DoubleBackwardUnsupported("x")) == \
        "runtime/double-backward-unsupported"
    assert retrograd_kind(rg.RetrogradError("x")) == "runtime"
    assert retrograd_kind(TypeError("x")) == "type"


def test_kinds_agree_by_refinement_only():
    assert kinds_agree("runtime", "runtime/graph-freed")
    assert kinds_agree("runtime/graph-freed", "runtime/graph-freed")
    assert not kinds_agree("runtime/graph-freed", "runtime/version-mismatch")
    assert not kinds_agree("value", "runtime")


def test_compare_reports_readable_mismatches():
    tol = Tolerance(1e-6, 1e-9)
    assert compare(np.asarray([1.0, 2.0]), np.asarray([1.0, 2.0]), tol) is None
    assert compare([[3, 10], [21, 36]], np.asarray([[3.0, 10.0], [21.0, 36.0]]), tol) is None
    msg = compare(np.asarray([1.0, 2.0]), np.asarray([1.0, 2.5]), tol)
    assert msg and "expected" in msg and "max abs err 0.5" in msg
    assert "shape" in compare(np.zeros(2), np.zeros(3), tol)
    assert compare(None, np.zeros(1), tol)
    assert compare([4, None], [np.asarray(4.0), None], tol) is None
    raised = Raised("runtime/graph-freed", "GraphFreedError", "again")
    assert compare(Raises("runtime/graph-freed"), raised, tol) is None
    assert "expected an error" in compare(Raises("runtime/version-mismatch"), raised, tol)
    assert "no error" in compare(Raises("runtime"), np.asarray(1.0), tol)
