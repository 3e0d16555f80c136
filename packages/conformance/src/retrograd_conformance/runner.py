"""Running the suites (documents, semantics, op database, generated programs) on the subjects.

Everything a report or a pytest item needs is a :class:`Result`: suite, id, subject, verdict
(``pass``, ``fail``, ``unavailable``, ``xfail``, ``xpass``, ``skip``) and a readable message.
The CLI and the pytest plugin share these functions, so they cannot disagree.

Two more pieces live here. A :class:`~retrograd_conformance.cases.fusion.FusionCase` (a
semantics case about the fused Linear+activation backward) is run three times on a retrograd
subject -- fused, unfused, fused on the reference kernels -- by :func:`run_fusion_case`, and
judged four ways by :func:`judge_fusion_case`; :func:`run_semantics_case` and
:func:`judge_semantics_case` hand such cases over by themselves. And :func:`coverage_results`
turns a :class:`~retrograd_conformance.coverage.KernelCoverage` kept around a run into one
``coverage`` result per backend: an overridden kernel the run never called fails it (the
suite's gap, not the backend's bug). :func:`run_default` is a whole default run with its
coverage, in one call.
"""

from __future__ import annotations

import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .adapter import make_lib, normalize
from .cases import DOCUMENT_CASES, FUSION_FAMILY, SEMANTICS_CASES, Case, SemanticsCase
from .cases.fusion import FusionCase
from .compare import DOCUMENT_TOL, ORACLE_TOL, Tolerance, Typed, compare, fmt
from .coverage import KernelCoverage, replaced_kernels
from .errors import Raised
from .opdb import OPS, OpInfo, check_op
from .programs.check import DEFAULT_COUNT, DEFAULT_SEED, check_programs
from .subjects import Subject

MISSING = object()
DTYPES = ("float32", "float64")


@dataclass
class Result:
    suite: str
    id: str
    subject: str
    verdict: str
    message: str = ""
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What ``--xfails-file`` / ``--skips-file`` lines are matched against."""
        return f"{self.subject}::{self.suite}/{self.id}"

    @property
    def failed(self) -> bool:
        return self.verdict in ("fail", "xpass")


# ---- documents --------------------------------------------------------------------------------


def run_case(case: Case, subject: str, dtype: str) -> dict[str, Any] | Raised:
    """Run a case's program on one subject; normalized results, or the error it raised."""
    lib = make_lib(subject, dtype)
    try:
        out = case.program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is an outcome to compare
        return Raised(lib.error_kind(exc), type(exc).__name__, str(exc))
    return {k: normalize(lib, v) for k, v in out.items()}


def _get(outcome: dict[str, Any] | Raised | None, key: str) -> Any:
    if outcome is None:
        return MISSING
    if isinstance(outcome, Raised):
        return outcome
    return outcome.get(key, MISSING)


def judge_case(case: Case, dtype: str, subject: str, outcome: dict[str, Any] | Raised,
               oracle: dict[str, Any] | Raised | None) -> Result:
    """Compare one subject's outcome with the document and with the oracle's outcome."""
    keys = list(case.expected)
    for source in (outcome, oracle):
        if isinstance(source, dict):
            keys += [k for k in source if k not in keys]
    rows, problems = [], []
    for key in keys:
        doc, ora, got = case.expected.get(key, MISSING), _get(oracle, key), _get(outcome, key)
        notes = []
        if got is MISSING:
            notes.append("missing")
        else:
            if doc is not MISSING:
                reason = compare(doc, got, DOCUMENT_TOL[dtype])
                if reason:
                    notes.append(f"document: {reason}")
            if ora is not MISSING:
                reason = compare(ora, got, ORACLE_TOL[dtype])
                if reason:
                    notes.append(f"oracle: {reason}")
        rows.append({"quantity": key, "document": None if doc is MISSING else fmt(doc),
                     "oracle": None if ora is MISSING else fmt(ora),
                     "subject": None if got is MISSING else fmt(got),
                     "ok": not notes, "problems": notes})
        problems += [f"{key}: {n}" for n in notes]
    verdict = "fail" if problems else "pass"
    return Result("documents", f"{case.id}[{dtype}]", subject, verdict, "; ".join(problems),
                  details={"case": case.id, "dtype": dtype, "title": case.title,
                           "sources": [str(s) for s in case.sources], "rows": rows,
                           "summary": case.summary, "note": case.note})


def document_results(subjects: list[Subject], oracles: list[Subject],
                     cases: Iterable[Case] = DOCUMENT_CASES) -> list[Result]:
    """Every case x dtype on every subject; the first available oracle is the reference."""
    results: list[Result] = []
    reference = next((o for o in oracles if o.available), None)
    for case in cases:
        for dtype in case.dtypes:
            ref = run_case(case, reference.name, "float64") if reference else None
            for oracle in oracles:
                if not oracle.available:
                    continue
                t0 = time.perf_counter()
                out = ref if oracle is reference and ref is not None \
                    else run_case(case, oracle.name, dtype)
                r = judge_case(case, dtype, oracle.name, out, None)
                r.seconds = time.perf_counter() - t0
                results.append(r)
            for subject in subjects:
                if not subject.available:
                    continue
                t0 = time.perf_counter()
                out = run_case(case, subject.name, dtype)
                r = judge_case(case, dtype, subject.name, out, ref)
                r.seconds = time.perf_counter() - t0
                results.append(r)
    return results


# ---- semantics ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stopped(Raised):
    """The error that stopped a whole program, and where: ``semantics.py:123 in f: <line>``."""

    where: str = ""


def _where(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame of the case program (else the last)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    ours = [f for f in frames if os.path.basename(f.filename) in ("semantics.py", "fusion.py")]
    f = (ours or frames)[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}: {(f.line or '').strip()}"


def run_semantics_case(case: SemanticsCase, subject: str, dtype: str
                       ) -> dict[str, Any] | Raised | FusionRuns:
    """Run a semantics program on one subject: typed results (dtypes kept), or the error that
    stopped it (a :class:`Stopped`, which says where). A library handle lacking one of
    ``case.requires`` is an error of kind ``missing-feature``, never a skip. A
    :class:`FusionCase` on a retrograd subject is run by :func:`run_fusion_case`."""
    lib = make_lib(subject, dtype)
    missing = [name for name in case.requires if not lib.has(name)]
    if missing:
        module = getattr(lib.module, "__name__", subject)
        return Raised("missing-feature", "MissingFeature",
                      f"the case needs {', '.join(f'{module}.{m}' for m in missing)}, which "
                      f"{subject} does not have")
    if isinstance(case, FusionCase) and lib.kind == "retrograd":
        return run_fusion_case(case, subject, dtype)
    return _run_program(case, lib)


def _run_program(case: SemanticsCase, lib: Any) -> dict[str, Any] | Raised:
    with warnings.catch_warnings():  # the warning cases capture their own; keep runs quiet
        warnings.simplefilter("ignore")
        try:
            out = case.program(lib)
            return {k: normalize(lib, v, typed=True) for k, v in out.items()}
        except Exception as exc:  # noqa: BLE001 - the error is an outcome to compare
            return Stopped(lib.error_kind(exc), type(exc).__name__, str(exc), _where(exc))


def judge_semantics_case(case: SemanticsCase, dtype: str, subject: str,
                         outcome: dict[str, Any] | Raised | FusionRuns,
                         oracle: dict[str, Any] | Raised | None,
                         oracle_name: str = "torch") -> Result:
    """Compare a subject's outcome with PyTorch's (same dtype) and with ``case.expected``.

    The message reads as a bug report: the case, what it checks, then each quantity that
    differs with both values (dtype included) or both errors. The three runs of a
    :class:`FusionCase` (:class:`FusionRuns`) go to :func:`judge_fusion_case`."""
    if isinstance(outcome, FusionRuns) and isinstance(case, FusionCase):
        return judge_fusion_case(case, dtype, subject, outcome, oracle, oracle_name)
    problems: list[str] = []
    rows: list[dict[str, Any]] = []
    if isinstance(oracle, Raised):
        problems.append(f"the oracle ({oracle_name}) itself stopped with {oracle}: the case "
                        "program is wrong, not the subject")
    if isinstance(outcome, Raised):
        if outcome.kind == "missing-feature":
            problems.append(f"{outcome.message}; {oracle_name} runs it")
        else:
            where = getattr(outcome, "where", "")
            problems.append(f"the program stopped{f' at {where}' if where else ''} with "
                            f"{outcome}; {oracle_name} ran it to the end")
    keys = list(case.expected)
    for source in (outcome, oracle):
        if isinstance(source, dict):
            keys += [k for k in source if k not in keys]
    for key in keys:
        known = case.expected.get(key, MISSING)
        ora = oracle.get(key, MISSING) if isinstance(oracle, dict) else MISSING
        got = outcome.get(key, MISSING) if isinstance(outcome, dict) else MISSING
        notes = []
        if isinstance(outcome, dict):
            if got is MISSING:
                notes.append("not returned by the subject")
            else:
                if ora is not MISSING:
                    reason = compare(ora, got, ORACLE_TOL[dtype])
                    if reason:
                        notes.append(f"vs {oracle_name}: {reason}")
                elif isinstance(oracle, dict):
                    notes.append(f"{oracle_name} returned no such quantity")
                if known is not MISSING and oracle is None:
                    # the oracle's own row, or --oracle none: the values PyTorch is known to give
                    reason = compare(known, got, DOCUMENT_TOL[dtype])
                    if reason:
                        notes.append(f"vs the known {oracle_name} value: {reason}")
        rows.append({"quantity": key, "expected": None if known is MISSING else fmt(known),
                     "oracle": None if ora is MISSING else fmt(ora),
                     "subject": None if got is MISSING else fmt(got),
                     "ok": not notes, "problems": notes})
        problems += [f"{key}: {n}" for n in notes]
    verdict = "fail" if problems else "pass"
    message = ""
    if problems:
        message = (f"{case.id} [{dtype}] on {subject}: {case.title} ({case.checks}). "
                   + "; ".join(problems))
    return Result("semantics", f"{case.id}[{dtype}]", subject, verdict, message,
                  details={"case": case.id, "dtype": dtype, "group": case.group,
                           "title": case.title, "checks": case.checks, "rows": rows,
                           "requires": list(case.requires)})


def semantics_results(subjects: list[Subject], oracles: list[Subject],
                      cases: Iterable[SemanticsCase] = SEMANTICS_CASES) -> list[Result]:
    """Every case x dtype on every subject, judged against the first available oracle run in
    the same dtype (the oracle is judged against the known values too)."""
    results: list[Result] = []
    reference = next((o for o in oracles if o.available), None)
    for case in cases:
        for dtype in case.dtypes:
            t0 = time.perf_counter()
            ref = run_semantics_case(case, reference.name, dtype) if reference else None
            if isinstance(ref, FusionRuns):  # a retrograd oracle: its fused run is the reference
                ref = ref.fused
            if reference is not None and ref is not None:
                r = judge_semantics_case(case, dtype, reference.name, ref, None, reference.name)
                r.seconds = time.perf_counter() - t0
                results.append(r)
            name = reference.name if reference else "torch"
            for subject in subjects:
                if not subject.available:
                    continue
                t0 = time.perf_counter()
                out = run_semantics_case(case, subject.name, dtype)
                r = judge_semantics_case(case, dtype, subject.name, out, ref, name)
                r.seconds = time.perf_counter() - t0
                results.append(r)
        _trim_caches(subjects)
    return results


def _trim_caches(subjects: list[Subject]) -> None:
    """Each tested backend's ``trim_caches()`` (JAX keeps a compiled program per primitive
    and shape: the suite's thousands of shapes would exhaust memory)."""
    from retrograd import backends

    for subject in subjects:
        if subject.available and subject.family == "retrograd":
            trim = getattr(backends.get_backend(subject.device), "trim_caches", None)
            if trim is not None:
                trim()


# ---- fusion: the fused Linear+activation backward, three runs and four comparisons ----------


@dataclass
class FusionRuns:
    """A :class:`FusionCase` on a retrograd subject: the program's typed results with the
    fusion pass on (``fused``, what the oracle is compared with), off (``unfused``), and on
    with the backend's fused, activation and linear backward kernels replaced by the reference
    ones (``reference``); and, per run, the kernels of the case's paths that it called."""

    fused: dict[str, Any] | Raised
    unfused: dict[str, Any] | Raised
    reference: dict[str, Any] | Raised
    calls: dict[str, dict[str, int]]
    expected: list[str]  # the kernels the fused run must call, on this backend
    in_place: dict[str, bool]  # activation -> whether the backend has its in-place variant


def _fusion_kernels(case: FusionCase) -> tuple[list[str], list[str]]:
    """The activations of the case's layers (innermost first), and every kernel name their
    fused and unfused backward paths may call."""
    acts = [case.activation] if case.layers == 1 else ["relu", case.activation]
    names = ["linear_backward"]
    for act in acts:
        names += [f"linear_{act}_backward", f"{act}_backward_", f"{act}_backward"]
    return acts, names


def expected_fusion_path(case: FusionCase, in_place: dict[str, bool]) -> list[str]:
    """The kernel each fused pair of ``case`` must call, outermost first: the outer pair gets
    the case's seed; an inner pair's gradient is always the walk's own (the outer
    ``linear_backward``'s output), so it goes in place where the backend can."""
    acts, _ = _fusion_kernels(case)
    out = []
    for depth, act in enumerate(reversed(acts)):
        owned = case.seed == "engine" or depth > 0
        out.append(f"{act}_backward_" if owned and in_place[act] else f"linear_{act}_backward")
    return out


def run_fusion_case(case: FusionCase, subject: str, dtype: str) -> FusionRuns:
    """Run ``case`` on a retrograd subject three times: fused (``set_fusion(True)``), unfused
    (``set_fusion(False)``), and fused with the reference kernels (``reference_kernels(xp)``'s
    ``linear_<act>_backward``, ``<act>_backward`` and ``linear_backward``, no in-place
    variant) in place of the backend's; the fusion setting is put back afterwards."""
    from retrograd import autograd
    from retrograd.backends import get_backend, reference_kernels

    lib = make_lib(subject, dtype)
    backend = get_backend(lib.device)
    acts, names = _fusion_kernels(case)
    in_place = {act: callable(getattr(backend.ops, f"{act}_backward_", None)) for act in acts}
    ref = reference_kernels(backend.xp)
    swap: dict[str, Any] = {"linear_backward": ref["linear_backward"]}
    for act in acts:
        swap |= {f"linear_{act}_backward": ref[f"linear_{act}_backward"],
                 f"{act}_backward": ref[f"{act}_backward"], f"{act}_backward_": None}
    before = autograd.is_fusion_enabled()
    calls: dict[str, dict[str, int]] = {}
    try:
        autograd.set_fusion(True)
        with KernelCoverage({subject: backend}, only=names) as spy:
            fused = _run_program(case, lib)
        calls["fused"] = spy.calls(subject)
        autograd.set_fusion(False)
        with KernelCoverage({subject: backend}, only=names) as spy:
            unfused = _run_program(case, lib)
        calls["unfused"] = spy.calls(subject)
        autograd.set_fusion(True)
        with replaced_kernels(backend, swap):
            reference = _run_program(case, lib)
    finally:
        autograd.set_fusion(before)
    return FusionRuns(fused, unfused, reference, calls, expected_fusion_path(case, in_place),
                      in_place)


def _wrong_entries(expected: Any, got: Any, tol: Tolerance) -> str:
    """Where two same-shaped arrays differ beyond ``tol``: `` at [2, 0], [2, 1] (row 2)``."""
    e = expected.array if isinstance(expected, Typed) else expected
    g = got.array if isinstance(got, Typed) else got
    if not isinstance(e, np.ndarray) or not isinstance(g, np.ndarray) or e.shape != g.shape \
            or e.ndim == 0 or e.dtype == np.bool_ or g.dtype == np.bool_:
        return ""
    e, g = e.astype(np.float64), g.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(g - e) <= tol.atol * scale + tol.rtol * np.abs(e))
    bad &= ~(np.isnan(e) & np.isnan(g)) & ~(np.isinf(e) & (e == g))
    idx = [tuple(int(i) for i in ix) for ix in np.argwhere(bad)]
    if not idx:
        return ""
    shown = ", ".join(str(list(ix)) for ix in idx[:4]) + (", ..." if len(idx) > 4 else "")
    text = f" at {shown} ({len(idx)} of {e.size} entries)"
    if e.ndim == 2 and len({ix[0] for ix in idx}) == 1:
        row = idx[0][0]
        last = " (the last)" if row == e.shape[0] - 1 else ""
        text += f", all in row {row}{last}"
    elif e.ndim == 2 and len({ix[1] for ix in idx}) == 1:
        text += f", all in column {idx[0][1]}"
    return text


def _check(expected: Any, got: Any, tol: Tolerance) -> str | None:
    """``compare`` with the wrong entries located."""
    reason = compare(expected, got, tol)
    return reason + _wrong_entries(expected, got, tol) if reason else None


def judge_fusion_case(case: FusionCase, dtype: str, subject: str, runs: FusionRuns,
                      oracle: dict[str, Any] | Raised | None, oracle_name: str = "torch"
                      ) -> Result:
    """Judge the three runs of a fusion case: the fused results against the oracle, the
    unfused walk and the reference kernels; that the fused run called the kernel the case is
    about (and the unfused one no fused kernel). The message names the op, the path and the
    kernel at fault: the fused path's own kernel when only the fused run is wrong, the shared
    ``<act>_backward`` / ``linear_backward`` when the unfused walk is wrong as well, the
    forward kernels when ``y`` itself is."""
    tol = ORACLE_TOL[dtype]
    acts, _ = _fusion_kernels(case)
    unfused_names = ", ".join(f"{a}_backward" for a in reversed(acts)) + ", linear_backward"
    labels = {"unfused": f"the unfused walk ({unfused_names})",
              "reference": "the reference kernels"}
    problems: list[str] = []
    suite_problems: list[str] = []
    if isinstance(oracle, Raised):
        suite_problems.append(f"the oracle ({oracle_name}) itself stopped with {oracle}: the "
                              "case program is wrong, not the subject")
    fused_calls, unfused_calls = runs.calls.get("fused", {}), runs.calls.get("unfused", {})
    missing = [k for k in runs.expected if not fused_calls.get(k)]
    if missing and isinstance(runs.fused, dict):
        called = ", ".join(sorted(fused_calls)) or "none of them"
        suite_problems.append(
            f"the fused walk never called {', '.join(missing)} (kernels of this path it called: "
            f"{called}): the case no longer reaches the kernel it is about -- a fault of the "
            "suite or of retrograd's fusion pass, not of the backend")
    if case.seed == "caller" and case.layers == 1 and fused_calls.get(case.in_place_kernel):
        problems.append(f"{case.in_place_kernel} ran on a gradient the caller holds (the seed)")
    stray = [k for k in unfused_calls if k.startswith("linear_") and k != "linear_backward"]
    if stray:
        suite_problems.append(f"set_fusion(False) still ran {', '.join(stray)}")
    for label, run in (("fused", runs.fused), ("unfused", runs.unfused),
                       ("reference", runs.reference)):
        if isinstance(run, Raised):
            where = getattr(run, "where", "")
            problems.append(f"the {label} run stopped{f' at {where}' if where else ''} with "
                            f"{run}")
    keys: list[str] = list(oracle) if isinstance(oracle, dict) else []
    for source in (runs.fused, runs.unfused):
        if isinstance(source, dict):
            keys += [k for k in source if k not in keys]
    rows: list[dict[str, Any]] = []
    wrong_vs_torch: set[str] = set()
    wrong_unfused_vs_torch: set[str] = set()
    fused_only: set[str] = set()
    for key in keys:
        ora = oracle.get(key, MISSING) if isinstance(oracle, dict) else MISSING
        got = runs.fused.get(key, MISSING) if isinstance(runs.fused, dict) else MISSING
        notes = []
        if isinstance(runs.fused, dict) and got is MISSING:
            notes.append("not returned by the subject")
        elif got is not MISSING:
            # one reason, the first comparison that fails; the others named (rows hold all)
            against = [(oracle_name, ora)] + [
                (labels[lb], getattr(runs, lb).get(key, MISSING))
                for lb in ("unfused", "reference") if isinstance(getattr(runs, lb), dict)]
            failed = [(name, reason) for name, value in against if value is not MISSING
                      for reason in [_check(value, got, tol)] if reason]
            if failed:
                names = [name for name, _ in failed]
                notes.append(f"differs from {_and(names)}: {failed[0][1]}")
                if oracle_name in names:
                    wrong_vs_torch.add(key)
                if labels["unfused"] in names:
                    fused_only.add(key)
        if isinstance(runs.unfused, dict) and key in runs.unfused and ora is not MISSING \
                and _check(ora, runs.unfused[key], tol):
            wrong_unfused_vs_torch.add(key)
        un = runs.unfused.get(key, MISSING) if isinstance(runs.unfused, dict) else MISSING
        re = runs.reference.get(key, MISSING) if isinstance(runs.reference, dict) else MISSING
        rows.append({"quantity": key, "expected": None,
                     "oracle": None if ora is MISSING else fmt(ora),
                     "subject": None if got is MISSING else fmt(got),
                     "unfused": None if un is MISSING else fmt(un),
                     "reference": None if re is MISSING else fmt(re),
                     "ok": not notes, "problems": notes})
        problems += [f"{key}: {n}" for n in notes]
    fault = _fault(case, runs, wrong_vs_torch, wrong_unfused_vs_torch, fused_only, problems)
    all_problems = suite_problems + problems
    message = ""
    if all_problems:
        message = (f"{case.id} [{dtype}] on {subject}: {case.title} ({case.checks}). "
                   + (f"Kernel at fault: {fault}. " if fault else "") + "; ".join(all_problems))
    return Result("semantics", f"{case.id}[{dtype}]", subject,
                  "fail" if all_problems else "pass", message,
                  details={"case": case.id, "dtype": dtype, "group": case.group,
                           "title": case.title, "checks": case.checks, "rows": rows,
                           "requires": list(case.requires), "fault": fault,
                           "kernels": {"expected": runs.expected, **runs.calls},
                           "suite_problems": suite_problems})


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _fault(case: FusionCase, runs: FusionRuns, wrong_vs_torch: set[str],
           wrong_unfused_vs_torch: set[str], fused_only: set[str], problems: list[str]) -> str:
    """Which kernel the evidence points at (empty when nothing is wrong)."""
    if not problems:
        return ""
    acts, _ = _fusion_kernels(case)
    if "y" in wrong_vs_torch:
        return (f"the forward kernels (linear_forward, {', '.join(acts)}): y itself differs "
                "from torch")
    path = ", ".join(f"{k} (in place)" if k.endswith("_") else k for k in runs.expected)
    if isinstance(runs.fused, Raised) and not isinstance(runs.unfused, Raised):
        return f"{path} (the fused run raised, the unfused walk did not)"
    if wrong_unfused_vs_torch:
        return (f"{', '.join(f'{a}_backward' for a in acts)} or linear_backward (the unfused "
                f"walk differs from torch as well, in {', '.join(sorted(wrong_unfused_vs_torch))})")
    if fused_only or wrong_vs_torch:
        wrong = fused_only | wrong_vs_torch
        kernels = runs.expected
        if case.layers == 2 and len(kernels) == 2:
            # the outer pair's own gradients are W2.grad and b2.grad: right there and wrong
            # further in points at the inner pair's kernel
            outer = {"W2.grad", "b2.grad", "the seed, after backward"}
            kernels = [kernels[0]] if wrong & outer else [kernels[1]]
        named = ", ".join(f"{k} (in place)" if k.endswith("_") else k for k in kernels)
        return (f"{named} (only the fused path is wrong, in {', '.join(sorted(wrong))}; the "
                "unfused walk agrees with torch)")
    return path


# ---- op database -----------------------------------------------------------------------------


def opdb_results(subjects: list[Subject], oracle: str | None, ops: Iterable[OpInfo] = OPS,
                 dtypes: tuple[str, ...] = DTYPES) -> list[Result]:
    results = []
    for subject in subjects:
        if not subject.available:
            continue
        for op in ops:
            for dtype in dtypes:
                t0 = time.perf_counter()
                r = check_op(op, subject.name, dtype, oracle)
                results.append(Result(
                    "opdb", r.id, subject.name, "pass" if r.ok else "fail",
                    "; ".join(r.failures), time.perf_counter() - t0,
                    {"op": op.name, "dtype": dtype, "samples": r.samples,
                     "checks": r.checks_run, "failures": r.failures}))
            _trim_caches([subject])
    return results


# ---- generated programs ------------------------------------------------------------------------


def program_results(subjects: list[Subject], oracle: str | None, count: int = DEFAULT_COUNT,
                    seed: int = DEFAULT_SEED) -> list[Result]:
    results = []
    for subject in subjects:
        if not subject.available:
            continue
        rep = check_programs(subject.name, count=count, seed_value=seed, oracle=oracle)
        details = {"programs": rep.run, "requested": count, "seed": seed,
                   "modes": dict(rep.modes), "dtypes": dict(rep.dtypes),
                   "features": dict(rep.features), "ops": dict(rep.ops),
                   "kinds": dict(rep.kind_counts), "kind_programs": rep.kind_programs}
        if rep.failure is not None:
            details["reproducer"] = rep.failure.reproducer
            details["program"] = rep.failure.program.source
            msg = (f"mismatch after {rep.run} programs (shrunk): {rep.failure.reason}")
            verdict = "fail"
        elif rep.crash is not None:
            details["traceback"] = rep.crash
            msg = "the program runner crashed: " + rep.crash.strip().splitlines()[-1]
            verdict = "fail"
        elif rep.coverage_failure:  # a template kind no program used: the suite's fault
            msg, verdict = rep.coverage_failure, "fail"
        else:
            msg = f"{rep.run} programs agree with {oracle or 'no oracle'} (seed {seed})"
            verdict = "pass" if rep.run >= min(count, 1) else "fail"
        results.append(Result("programs", f"generated[seed={seed}]", subject.name, verdict, msg,
                              rep.seconds, details))
    return results


# ---- unavailable subjects, xfails and skips ----------------------------------------------------


def unavailable_results(subjects: list[Subject], suites: Iterable[str]) -> list[Result]:
    return [Result(suite, "*", s.name, "unavailable", s.reason)
            for s in subjects if not s.available for suite in suites]


def read_id_file(path: str) -> list[str]:
    """Test-id substrings, one per line; ``#`` starts a comment; blank lines ignored."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            entry = line.split("#", 1)[0].strip()
            if entry:
                out.append(entry)
    return out


def read_xfails(path: str) -> list[tuple[str, str]]:
    """The entries of an xfails file with their reasons: ``(id substring, reason)``, the
    reason being the comment block just above the entry (or above the run of entries it
    heads), its ``#`` marks removed."""
    out: list[tuple[str, str]] = []
    comment: list[str] = []
    reason = ""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            text = line.strip()
            if text.startswith("#"):
                comment.append(text.lstrip("#").strip())
                continue
            entry = text.split("#", 1)[0].strip()
            if not entry:
                comment = []  # a blank line ends a block
                continue
            if comment:
                reason, comment = " ".join(c for c in comment if c), []
            out.append((entry, reason))
    return out


# An xfails entry written ``?id`` may pass or fail (a check that depends on the machine, e.g.
# the order of a multithreaded sum): a pass is then no news, a failure an xfail.
MAY_PASS = "?"


def apply_expectations(results: list[Result], xfails: list[str] | list[tuple[str, str]],
                       skips: list[str], warn: Callable[[str], None]) -> None:
    """Turn failures listed in ``xfails`` (ids, or ``(id, reason)`` pairs: the reason goes to
    the result's ``details["xfail_reason"]``) into ``xfail`` (passes into ``xpass``, a
    failure: the list is stale), and entries of ``skips`` into ``skip``; warn for unmatched
    entries."""
    reasons = dict(x if isinstance(x, tuple) else (x, "") for x in xfails)
    may_pass = {x[len(MAY_PASS):].strip(): x for x in reasons if x.startswith(MAY_PASS)}
    for bare, x in may_pass.items():
        reasons[bare] = reasons.pop(x)
    xfails = list(reasons)
    used: set[str] = set()
    for r in results:
        if r.verdict == "unavailable":
            continue
        hit_skip = [s for s in skips if s in r.key]
        if hit_skip:
            used.update(hit_skip)
            r.verdict, r.message = "skip", f"skipped by {hit_skip[0]!r}"
            continue
        hit_x = [x for x in xfails if x in r.key]
        if hit_x:
            used.update(hit_x)
            if reasons[hit_x[0]]:
                r.details["xfail_reason"] = reasons[hit_x[0]]
            if r.verdict == "fail":
                r.verdict = "xfail"
            elif r.verdict == "pass" and hit_x[0] not in may_pass:
                r.verdict = "xpass"
                r.message = f"listed as expected failure ({hit_x[0]!r}) but passed"
    for entry in [*xfails, *skips]:
        if entry not in used:
            warn(f"expectation entry {entry!r} matches no test id")


# ---- kernel coverage ---------------------------------------------------------------------------


def coverage_results(coverage: KernelCoverage, *, complete: bool = True) -> list[Result]:
    """One ``coverage/kernels`` result per backend a :class:`KernelCoverage` watched.

    It fails when a kernel the backend overrides (or adds, as an in-place variant) was never
    called: no case tested it, which is the suite's gap, not the backend's bug, and the
    message says so. Reference kernels the run never reached are listed in the details, not
    failed. A run narrowed by ``-k`` or ``--suite`` (``complete=False``) reports the table
    without a verdict (``skip``). ``details["kernels"]`` is the table: per kernel, calls, the
    largest operand, dtypes and layouts."""
    results = []
    for subject in coverage.stats:
        table = coverage.table(subject)
        overridden = [s for s in table if s.overridden and s.in_protocol]
        unreached = [s.name for s in overridden if s.calls == 0]
        details = {
            "kernels": [s.as_dict() for s in table],
            "overridden": [s.name for s in overridden],
            "unreached_overrides": unreached,
            "unreached_reference": [s.name for s in table
                                    if s.in_protocol and not s.overridden and s.calls == 0],
            "outside_protocol": [s.name for s in table if not s.in_protocol],
            "complete": complete,
        }
        reached = len(overridden) - len(unreached)
        if not complete:
            verdict = "skip"
            message = (f"kernel coverage is judged on a full run only (-k or --suite narrowed "
                       f"this one): {reached} of the {len(overridden)} kernels {subject} "
                       "overrides were called")
        elif unreached:
            verdict = "fail"
            message = (f"suite failure, not a fault of {subject}: {len(unreached)} of the "
                       f"{len(overridden)} kernels it overrides were never called by any case, "
                       f"so nothing tested them: {', '.join(unreached)}. A case that reaches "
                       "each through retrograd's own ops is missing (see "
                       "retrograd_conformance.cases.fusion); if no op of retrograd calls the "
                       "kernel at all, the kernel protocol has a dead entry")
        else:
            verdict = "pass"
            message = (f"every one of the {len(overridden)} kernels {subject} overrides was "
                       f"called ({sum(s.calls for s in overridden)} calls)")
        results.append(Result("coverage", "kernels", subject, verdict, message,
                              details=details))
    return results


def run_default(subjects: list[Subject], oracles: list[Subject], *,
                fuzz: int = DEFAULT_COUNT, seed: int = DEFAULT_SEED
                ) -> tuple[list[Result], KernelCoverage]:
    """A whole default run -- documents, semantics (the fusion family included), op database,
    generated programs -- with the kernels of every available retrograd subject counted, and
    the coverage results appended. What ``retrograd-conformance`` runs without options."""
    oracle = next((o.name for o in oracles if o.available), None)
    from .capabilities import capability_results

    results: list[Result] = unavailable_results(
        subjects, ("documents", "semantics", "opdb", "programs"))
    results += capability_results(subjects)
    with KernelCoverage.for_subjects(subjects) as coverage:
        results += document_results(subjects, oracles)
        results += semantics_results(subjects, oracles, SEMANTICS_CASES + FUSION_FAMILY)
        results += opdb_results(subjects, oracle)
        results += program_results(subjects, oracle, fuzz, seed)
    results += coverage_results(coverage)
    return results, coverage
