"""The ``fusion`` and ``kernels`` groups (``cases/fusion.py``) as machinery: the cases are well
formed and hold on PyTorch; on retrograd each fusion case takes the path it is about (the fused
kernel for the caller's seed, the in-place variant for the walk's own gradient where the backend
has one) and is compared with the unfused walk, the reference kernels and torch; the runs leave
the fusion setting and the backend's kernels as they found them; a failure names the kernel at
fault, and a case that no longer reaches its kernel says it is the suite's fault."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from retrograd import autograd, backends
from retrograd.backends.numpy import NumpyBackend
from retrograd_conformance.cases import (
    FUSION_CASES,
    FUSION_FAMILY,
    KERNEL_CASES,
    SEMANTICS_CASES,
    FusionCase,
)
from retrograd_conformance.cases.fusion import ACTIVATIONS
from retrograd_conformance.runner import (
    FusionRuns,
    judge_semantics_case,
    run_fusion_case,
    run_semantics_case,
    semantics_results,
)
from retrograd_conformance.subjects import retrograd_subjects, torch_subjects

BY_ID = {c.id: c for c in FUSION_FAMILY}


def _judge(case: Any, subject: str, dtype: str = "float32"):
    ref = run_semantics_case(case, "torch", dtype)
    return judge_semantics_case(case, dtype, subject, run_semantics_case(case, subject, dtype),
                                ref)


@contextlib.contextmanager
def _registered(name: str, **kernels: Any) -> Iterator[str]:
    """The cpu backend with ``kernels`` replaced, registered as ``name`` for the duration."""
    backend = NumpyBackend()
    backend.name = name
    backend.override(**kernels)
    backends.register_backend(name, backend)
    try:
        yield f"retrograd:{name}"
    finally:
        backends.unregister_backend(name)


# ---- the cases --------------------------------------------------------------------------------


def test_every_activation_bias_and_path_has_a_case():
    seen = {(c.activation, c.bias, c.seed) for c in FUSION_CASES if c.layers == 1}
    assert seen == {(a, b, s) for a in ACTIVATIONS for b in (True, False)
                    for s in ("caller", "engine")}
    assert any(c.layers == 2 for c in FUSION_CASES)
    ids = [c.id for c in FUSION_FAMILY]
    assert len(set(ids)) == len(ids)
    assert not set(ids) & {c.id for c in SEMANTICS_CASES}, "ids clash with the semantics cases"
    for case in FUSION_FAMILY:
        assert case.group in ("fusion", "kernels", "models") and case.title and case.checks, case.id
        assert " " not in case.id and "[" not in case.id, case.id
        assert set(case.dtypes) <= {"float32", "float64"}, case.id


@pytest.mark.parametrize("case", FUSION_FAMILY, ids=lambda c: c.id)
def test_case_holds_on_the_oracle(case):
    for dtype in case.dtypes:
        out = run_semantics_case(case, "torch", dtype)
        assert isinstance(out, dict), f"{case.id}: torch stopped with {out}"
        result = judge_semantics_case(case, dtype, "torch", out, None)
        assert result.verdict == "pass", result.message


def test_family_passes_on_cpu_through_the_expected_kernels():
    results = semantics_results(retrograd_subjects(["cpu"]), torch_subjects(), FUSION_FAMILY)
    mine = [r for r in results if r.subject == "retrograd:cpu"]
    assert len(mine) == sum(len(c.dtypes) for c in FUSION_FAMILY)
    bad = [r.message for r in mine if r.failed]
    assert not bad, bad[0]
    for r in mine:
        case = BY_ID[r.details["case"]]
        if not isinstance(case, FusionCase):
            continue
        kernels = r.details["kernels"]
        assert all(kernels["fused"].get(k) for k in kernels["expected"]), (r.key, kernels)
        if case.seed == "engine" and case.layers == 1:  # cpu has every in-place variant
            assert kernels["expected"] == [case.in_place_kernel]
            assert case.fused_kernel not in kernels["fused"]
        if case.seed == "caller" and case.layers == 1:
            assert kernels["expected"] == [case.fused_kernel]
            assert case.in_place_kernel not in kernels["fused"]
        assert not any(k.startswith("linear_") and k != "linear_backward"
                       for k in kernels["unfused"]), kernels["unfused"]


def test_fusion_cases_pass_on_the_vendor_example_without_in_place_variants():
    results = semantics_results(retrograd_subjects(["array_api_strict"]), torch_subjects(),
                                FUSION_CASES)
    mine = [r for r in results if r.subject == "retrograd:array_api_strict"]
    assert mine and not [r.message for r in mine if r.failed]
    for r in mine:  # no in-place variant there: the walk's own gradient takes the fused kernel
        assert all(k.startswith("linear_") for k in r.details["kernels"]["expected"]), r.key


# ---- the runs leave things as they were ----------------------------------------------------------


@pytest.mark.parametrize("enabled", [True, False])
def test_the_fusion_setting_is_put_back(enabled):
    before = autograd.is_fusion_enabled()
    autograd.set_fusion(enabled)
    try:
        runs = run_fusion_case(BY_ID["fusion-linear-relu-bias-engine-seed"], "retrograd:cpu",
                               "float32")
        assert isinstance(runs, FusionRuns)
        assert autograd.is_fusion_enabled() is enabled
        broken = replace(BY_ID["fusion-linear-relu-bias-engine-seed"],
                         program=lambda lib: 1 / 0)
        runs = run_fusion_case(broken, "retrograd:cpu", "float32")
        assert runs.fused.type_name == "ZeroDivisionError"
        assert autograd.is_fusion_enabled() is enabled
    finally:
        autograd.set_fusion(before)


def test_the_backend_kernels_are_put_back_after_the_reference_run():
    be = backends.get_backend("cpu")
    kernels, ops = dict(be.kernels), dict(vars(be.ops))
    walk = dict(vars(be.walk_ops))
    for case in FUSION_CASES:
        run_fusion_case(case, "retrograd:cpu", "float64")
    assert all(be.kernels[k] is v for k, v in kernels.items())
    assert all(getattr(be.ops, k) is v for k, v in ops.items())
    assert all(getattr(be.walk_ops, k) is v for k, v in walk.items())


# ---- what a failure says ---------------------------------------------------------------------


def test_a_wrong_shared_kernel_is_blamed_on_the_shared_kernels():
    """linear_backward dropping the bias gradient breaks the fused and the unfused walk alike:
    the message points at the shared kernels, not at the fused one."""
    from retrograd.backends.reference import reference_kernels

    ref = reference_kernels(np)["linear_backward"]

    def no_bias(g, x, w, nx, nw, nb):
        gx, gw, gb = ref(g, x, w, nx, nw, nb)
        return gx, gw, None if gb is None else gb * 0

    with _registered("fusion_shared_bug", linear_backward=no_bias) as subject:
        r = _judge(BY_ID["fusion-linear-tanh-bias-caller-seed"], subject)
    assert r.verdict == "fail"
    assert "Kernel at fault: tanh_backward or linear_backward (the unfused walk differs from " \
           "torch as well, in b.grad)" in r.message, r.message
    assert "b.grad: differs from torch" in r.message


def test_a_case_that_misses_its_kernel_is_the_suites_fault():
    """A fusion case whose program never builds a fusable pair (here: the matmul written out)
    is reported as the suite's failure, not as the backend's."""

    def unfusable(lib):
        x = lib.tensor([[1.0, -2.0], [0.5, 0.25]], requires_grad=True)
        w = lib.tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
        y = lib.nn.functional.relu(x @ w.T)
        y.backward(lib.tensor([[1.0, 1.0], [1.0, 1.0]]))
        return {"x.grad": x.grad, "W.grad": w.grad}

    case = replace(BY_ID["fusion-linear-relu-nobias-caller-seed"], id="planted-unfusable",
                   program=unfusable)
    r = _judge(case, "retrograd:cpu")
    assert r.verdict == "fail"
    assert "the fused walk never called linear_relu_backward" in r.message
    assert "a fault of the suite or of retrograd's fusion pass, not of the backend" in r.message
    assert r.details["suite_problems"]


def test_a_fused_kernel_that_raises_is_named():
    def broken(g, y, x, w, nx, nw, nb):
        raise ValueError("fused kernel exploded")

    with _registered("fusion_raises", linear_sigmoid_backward=broken) as subject:
        r = _judge(BY_ID["fusion-linear-sigmoid-nobias-caller-seed"], subject)
    assert r.verdict == "fail"
    assert "the fused run stopped" in r.message and "fused kernel exploded" in r.message
    assert "Kernel at fault: linear_sigmoid_backward (the fused run raised" in r.message


def test_kernel_cases_reach_their_kernels_on_cpu():
    from retrograd_conformance.coverage import KernelCoverage

    be = backends.get_backend("cpu")
    with KernelCoverage({"cpu": be}) as coverage:
        for case in KERNEL_CASES:
            assert _judge(case, "retrograd:cpu").verdict == "pass", case.id
    calls = coverage.calls("cpu")
    for kernel in ("arange", "linspace", "full", "empty", "from_numpy", "any_nonfinite",
                   "isnan", "index_zero", "eye", "isin", "signbit", "unique_"):
        assert calls.get(kernel), f"no kernels case reached {kernel}"
