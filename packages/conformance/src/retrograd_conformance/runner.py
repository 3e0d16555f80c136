"""Running the suites (documents, semantics, op database, generated programs) on the subjects.

Everything a report or a pytest item needs is a :class:`Result`: suite, id, subject, verdict
(``pass``, ``fail``, ``unavailable``, ``xfail``, ``xpass``, ``skip``) and a readable message.
The CLI and the pytest plugin share these functions, so they cannot disagree.
"""

from __future__ import annotations

import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .adapter import make_lib, normalize
from .cases import DOCUMENT_CASES, SEMANTICS_CASES, Case, SemanticsCase
from .compare import DOCUMENT_TOL, ORACLE_TOL, compare, fmt
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
                           "spec_row": case.spec_row, "note": case.note})


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
                out = ref if oracle is reference else run_case(case, oracle.name, dtype)
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
    ours = [f for f in frames if os.path.basename(f.filename) == "semantics.py"]
    f = (ours or frames)[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}: {(f.line or '').strip()}"


def run_semantics_case(case: SemanticsCase, subject: str, dtype: str
                       ) -> dict[str, Any] | Raised:
    """Run a semantics program on one subject: typed results (dtypes kept), or the error that
    stopped it (a :class:`Stopped`, which says where). A library handle lacking one of
    ``case.requires`` is an error of kind ``missing-feature``, never a skip."""
    lib = make_lib(subject, dtype)
    missing = [name for name in case.requires if not lib.has(name)]
    if missing:
        module = getattr(lib.module, "__name__", subject)
        return Raised("missing-feature", "MissingFeature",
                      f"the case needs {', '.join(f'{module}.{m}' for m in missing)}, which "
                      f"{subject} does not have")
    with warnings.catch_warnings():  # the warning cases capture their own; keep runs quiet
        warnings.simplefilter("ignore")
        try:
            out = case.program(lib)
            return {k: normalize(lib, v, typed=True) for k, v in out.items()}
        except Exception as exc:  # noqa: BLE001 - the error is an outcome to compare
            return Stopped(lib.error_kind(exc), type(exc).__name__, str(exc), _where(exc))


def judge_semantics_case(case: SemanticsCase, dtype: str, subject: str,
                         outcome: dict[str, Any] | Raised, oracle: dict[str, Any] | Raised | None,
                         oracle_name: str = "torch") -> Result:
    """Compare a subject's outcome with PyTorch's (same dtype) and with ``case.expected``.

    The message reads as a bug report: the case, what it checks, then each quantity that
    differs with both values (dtype included) or both errors."""
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
            if reference is not None:
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
    return results


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
                   "features": dict(rep.features), "ops": dict(rep.ops)}
        if rep.failure is not None:
            details["reproducer"] = rep.failure.reproducer
            details["program"] = rep.failure.program.source
            msg = (f"mismatch after {rep.run} programs (shrunk): {rep.failure.reason}")
            verdict = "fail"
        elif rep.crash is not None:
            details["traceback"] = rep.crash
            msg = "the program runner crashed: " + rep.crash.strip().splitlines()[-1]
            verdict = "fail"
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


def apply_expectations(results: list[Result], xfails: list[str], skips: list[str],
                       warn: Callable[[str], None]) -> None:
    """Turn failures listed in ``xfails`` into ``xfail`` (passes into ``xpass``, a failure:
    the list is stale), and entries of ``skips`` into ``skip``; warn for unmatched entries."""
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
            if r.verdict == "fail":
                r.verdict = "xfail"
            elif r.verdict == "pass":
                r.verdict = "xpass"
                r.message = f"listed as expected failure ({hit_x[0]!r}) but passed"
    for entry in [*xfails, *skips]:
        if entry not in used:
            warn(f"expectation entry {entry!r} matches no test id")
