"""The ``semantics`` family as machinery: cases are discovered and well formed, they hold on the
oracle itself, and a wrong behaviour (a value, a dtype, an error, a missing feature, a program
that stops) is reported naming the case and what differed. These tests do not require today's
core to pass every case: the cases that fail on retrograd are the family's findings."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from retrograd_conformance.cases import FUSION_FAMILY, SEMANTICS_CASES, SemanticsCase
from retrograd_conformance.cases.semantics import SEMANTICS_BY_ID
from retrograd_conformance.cli import SUITES, main
from retrograd_conformance.compare import Tolerance, Typed, compare
from retrograd_conformance.errors import Raised
from retrograd_conformance.runner import (
    judge_semantics_case,
    run_semantics_case,
    semantics_results,
)
from retrograd_conformance.subjects import retrograd_subjects, torch_subjects

GROUPS = {"hooks", "grad-mode", "function", "inplace", "seeds", "promotion", "warnings",
          "engine"}


def _judge(case: SemanticsCase, subject: str, dtype: str = "float64"):
    ref = run_semantics_case(case, "torch", dtype)
    return judge_semantics_case(case, dtype, subject, run_semantics_case(case, subject, dtype),
                                ref)


# ---- discovery -------------------------------------------------------------------------------


def test_cases_are_discovered_and_well_formed():
    ids = [c.id for c in SEMANTICS_CASES]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids), "duplicate case ids"
    assert SEMANTICS_BY_ID.keys() == set(ids)
    assert {c.group for c in SEMANTICS_CASES} == GROUPS
    for case in SEMANTICS_CASES:
        assert case.title.strip() and case.checks.strip() and callable(case.program), case.id
        assert case.dtypes and set(case.dtypes) <= {"float32", "float64"}, case.id
        assert " " not in case.id and "[" not in case.id, case.id
    assert "semantics" in SUITES


@pytest.mark.parametrize("case", SEMANTICS_CASES, ids=lambda c: c.id)
def test_case_holds_on_the_oracle(case):
    """Each program runs to the end on PyTorch and gives the values written in the case."""
    for dtype in case.dtypes:
        out = run_semantics_case(case, "torch", dtype)
        assert isinstance(out, dict), f"{case.id}: torch stopped with {out}"
        result = judge_semantics_case(case, dtype, "torch", out, None)
        assert result.verdict == "pass", result.message


def test_the_family_runs_on_every_available_backend():
    subjects = [s for s in retrograd_subjects() if s.available]
    names = {s.name for s in subjects}
    assert {"retrograd:cpu", "retrograd:array_api_strict"} <= names
    case = SEMANTICS_BY_ID["hook-remove"]
    results = semantics_results(subjects, torch_subjects(), [case])
    ran = {r.subject for r in results}
    assert ran == names | {"torch"}
    assert all(r.suite == "semantics" and r.id.startswith("hook-remove[") for r in results)
    assert all(r.verdict in ("pass", "fail") for r in results)


# ---- comparison ------------------------------------------------------------------------------


def test_compare_checks_dtypes_and_strings():
    tol = Tolerance(1e-6, 1e-9)
    a = np.asarray([0.5, 1.0])
    assert compare(Typed("float32", a), Typed("float32", a.copy()), tol) is None
    msg = compare(Typed("float32", a), Typed("float64", a.copy()), tol)
    assert msg and msg.startswith("dtype: expected float32, got float64")
    assert "values" in msg
    # a plain expected value (a known number) compares the values of a typed result
    assert compare([0.5, 1.0], Typed("float64", a), tol) is None
    assert compare([0.5, 2.0], Typed("float64", a), tol).startswith(
        "values (float64): expected [0.5, 2. ], got [0.5, 1. ]")
    assert compare(["tensor hook", "prehook"], ["tensor hook", "prehook"], tol) is None
    assert "[1]" in compare(["tensor hook", "prehook"], ["tensor hook", "post hook"], tol)
    assert compare("float32", "float64", tol) == "expected 'float32', got 'float64'"


# ---- planted faults --------------------------------------------------------------------------


def test_fabricated_value_difference_names_case_and_quantity():
    case = SEMANTICS_BY_ID["hook-accumulate-grad-prehook"]
    ref = run_semantics_case(case, "torch", "float64")
    bad = dict(ref)
    bad["a.grad"] = Typed("float64", np.asarray(11.0))
    bad["order"] = ["AccumulateGrad prehook saw 1", "tensor hook saw 10"]
    r = judge_semantics_case(case, "float64", "retrograd:planted", bad, ref)
    assert r.verdict == "fail"
    assert r.key == "retrograd:planted::semantics/hook-accumulate-grad-prehook[float64]"
    assert r.message.startswith("hook-accumulate-grad-prehook [float64] on retrograd:planted:")
    assert "a.grad: vs torch: values (float64): expected 20, got 11" in r.message
    assert "order: vs torch: [0]: expected 'tensor hook saw 1'" in r.message


def test_fabricated_error_class_difference():
    case = SEMANTICS_BY_ID["inplace-leaf"]
    ref = run_semantics_case(case, "torch", "float64")
    bad = dict(ref)
    bad["x.add_(1) on a leaf that requires grad"] = Raised("type", "TypeError", "nope")
    r = judge_semantics_case(case, "float64", "retrograd:planted", bad, ref)
    assert r.verdict == "fail"
    assert "oracle raises RuntimeError (runtime)" in r.message
    assert "subject raises TypeError (type): nope" in r.message
    bad["x.add_(1) on a leaf that requires grad"] = Typed("float64", np.asarray([2.0, 3.0]))
    r = judge_semantics_case(case, "float64", "retrograd:planted", bad, ref)
    assert "oracle raises RuntimeError" in r.message and "subject returned [2., 3.]" in r.message


def test_planted_grad_mode_bug_is_reported(monkeypatch):
    import retrograd

    monkeypatch.setattr(retrograd, "no_grad", retrograd.enable_grad)  # no_grad records
    r = _judge(SEMANTICS_BY_ID["mode-nested"], "retrograd:cpu")
    assert r.verdict == "fail"
    assert r.message.startswith("mode-nested [float64] on retrograd:cpu:")
    assert "a.requires_grad: vs torch: expected False, got True" in r.message


def test_planted_dtype_bug_is_reported(monkeypatch):
    import retrograd

    mul = retrograd.Tensor.__mul__
    monkeypatch.setattr(retrograd.Tensor, "__mul__", lambda a, b: mul(a, b).to(retrograd.float64))

    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float32)
        return {"x * 2": x * 2}

    case = SemanticsCase("planted-dtype", "promotion", "float32 * 2 stays float32", "dtype",
                         program, dtypes=("float32",))
    r = _judge(case, "retrograd:cpu", "float32")
    assert r.verdict == "fail"
    assert "x * 2: vs torch: dtype: expected float32, got float64" in r.message


def test_planted_backend_fault_fails_a_hook_case(plant):
    case = SEMANTICS_BY_ID["hook-fires-once"]
    with plant("planted_drop") as subject:
        r = _judge(case, subject)
    assert r.verdict == "fail"
    assert r.key == f"{subject}::semantics/hook-fires-once[float64]"
    assert "vs torch" in r.message


def test_a_program_that_stops_says_where_and_with_what():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        if lib.kind == "retrograd":
            raise KeyError("planted stop")
        return {"x": x}

    case = SemanticsCase("planted-stop", "hooks", "stops on retrograd", "nothing", program)
    r = _judge(case, "retrograd:cpu")
    assert r.verdict == "fail"
    assert "the program stopped at" in r.message and "in program" in r.message
    assert "raises KeyError (other/KeyError)" in r.message and "planted stop" in r.message
    assert "torch ran it to the end" in r.message


def test_a_missing_feature_fails_and_says_which():
    case = replace(SEMANTICS_BY_ID["hook-remove"], id="planted-missing",
                   requires=("autograd.no_such_feature",))
    out = run_semantics_case(case, "retrograd:cpu", "float64")
    assert isinstance(out, Raised) and out.kind == "missing-feature"
    ref = run_semantics_case(SEMANTICS_BY_ID["hook-remove"], "torch", "float64")
    r = judge_semantics_case(case, "float64", "retrograd:cpu", out, ref)
    assert r.verdict == "fail"
    assert "needs retrograd.autograd.no_such_feature, which retrograd:cpu does not have" \
        in r.message


def test_a_broken_case_is_blamed_on_the_case():
    def program(lib):
        raise RuntimeError("the case itself is wrong")

    case = SemanticsCase("planted-broken", "hooks", "broken", "nothing", program)
    r = _judge(case, "retrograd:cpu")
    assert r.verdict == "fail" and "the oracle (torch) itself stopped" in r.message


# ---- CLI and pytest items --------------------------------------------------------------------


def test_cli_runs_the_family_alone_and_exit_code_follows_failures(tmp_path, capsys):
    js = tmp_path / "r.json"
    code = main(["--backend", "cpu", "--suite", "semantics", "-k", "semantics/hook-remove",
                 "--json", str(js)])
    out = capsys.readouterr().out
    report = json.loads(js.read_text())
    results = report["results"]
    assert {r["suite"] for r in results} == {"semantics"}
    assert {r["subject"] for r in results} == {"torch", "retrograd:cpu"}
    assert {r["id"] for r in results} == {"hook-remove[float32]", "hook-remove[float64]"}
    assert code == (1 if any(r["verdict"] == "fail" for r in results) else 0)
    assert "Semantics" in out


def test_cli_planted_failure_exits_1_and_reads_like_a_bug_report(monkeypatch, capsys):
    import retrograd

    monkeypatch.setattr(retrograd, "no_grad", retrograd.enable_grad)
    code = main(["--backend", "cpu", "--suite", "semantics", "-k", "semantics/mode-nested"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL retrograd:cpu::semantics/mode-nested[float32]" in out
    assert "a.requires_grad: vs torch: expected False, got True" in " ".join(out.split())


def test_pytest_items_exist_per_case_and_dtype(tmp_path):
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "retrograd_conformance",
           "--backend", "cpu", "-k", "test_semantics", "--collect-only", "-q",
           "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    items = [line for line in out.splitlines() if "test_semantics[" in line]
    assert len(items) == sum(len(c.dtypes) for c in (*SEMANTICS_CASES, *FUSION_FAMILY))
    assert any(line.endswith("test_semantics[cpu-hook-chain-float32]") for line in items), \
        items[:3]
