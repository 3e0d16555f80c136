"""Running generated programs on a subject and on the oracle, and driving hypothesis.

Each program runs on the subject in its dtype and on torch in float64 (the reference); the
results are compared name by name with :data:`~retrograd_conformance.compare.PROGRAM_TOL`, or
by error kind when the program (expectedly or not) raises. hypothesis runs with a fixed seed,
no database and no deadline, so a run is reproducible; on a mismatch it shrinks the program and
the report carries the shrunk source as a runnable reproducer.

A run also counts the template kinds its programs emitted (``shape/permute``,
``binary/where``...: :data:`~.builder.ALL_KINDS`). hypothesis draws its choices from earlier
examples, so a kind can be rare in any one run; a run of at least :data:`KIND_COVERAGE_MIN`
programs therefore ends, when they all agreed, with one program per kind
(:func:`~.strategy.kind_program`, deterministic), and fails if a kind still never appeared
(``unseen_kinds``): the generator can no longer produce it.
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from ..adapter import Lib, make_lib, normalize
from ..compare import PROGRAM_TOL, compare, fmt
from ..errors import Raised
from .builder import ALL_KINDS, Program
from .strategy import MODES, kind_program, programs

DEFAULT_SEED = 20240501
DEFAULT_COUNT = 500
#: programs a run needs before it adds the one-per-kind programs and fails on a template kind
#: that never appeared (a short run -- ``--fuzz 20`` -- only reports the counts)
KIND_COVERAGE_MIN = 100


def run_program(source: str, lib: Lib) -> dict[str, Any] | Raised:
    """Execute a program's source with ``lib``; normalized results, or the error it raised."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<generated program>", "exec"), namespace)  # noqa: S102
    try:
        result = namespace["program"](lib)
    except Exception as exc:  # noqa: BLE001 - the error is the result
        return Raised(lib.error_kind(exc), type(exc).__name__, str(exc))
    return {k: normalize(lib, v) for k, v in result.items()}


def compare_program(program: Program, subject: str, oracle: str | None) -> str | None:
    """None when the subject agrees with the oracle (and with expectations); else why not."""
    got = run_program(program.source, make_lib(subject, program.dtype))
    if program.expects_error:
        step = got.get("backward") if isinstance(got, dict) else got
        if not (isinstance(step, Raised) and step.kind == "runtime/version-mismatch"):
            return f"expected a version-mismatch error from backward, got {fmt(step, 200)}"
    if oracle is None:
        if isinstance(got, Raised):
            return f"the program raised: {got}"
        return None
    ref = run_program(program.source, make_lib(oracle, "float64"))
    tol = PROGRAM_TOL[program.dtype]
    if isinstance(ref, Raised) or isinstance(got, Raised):
        return compare(ref, got, tol)
    for key, expected in ref.items():
        if key not in got:
            return f"{key}: missing from the subject's results"
        reason = compare(expected, got[key], tol)
        if reason:
            return f"{key}: {reason}"
    return None


@dataclass
class ProgramFailure:
    program: Program
    reason: str
    reproducer: str


@dataclass
class ProgramReport:
    """What a run of generated programs did on one subject."""

    subject: str
    requested: int
    seed: int
    run: int = 0
    oracle_raised: int = 0
    seconds: float = 0.0
    modes: Counter = field(default_factory=Counter)
    ops: Counter = field(default_factory=Counter)
    features: Counter = field(default_factory=Counter)
    dtypes: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    kind_programs: int = 0  # the one-per-kind programs run after the generated ones
    unseen_kinds: list[str] = field(default_factory=list)
    failure: ProgramFailure | None = None
    crash: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and self.crash is None and not self.unseen_kinds

    @property
    def kind_counts(self) -> dict[str, int]:
        """How often each template kind appeared, every kind listed (0 for one that did
        not)."""
        return {k: self.kinds.get(k, 0) for k in ALL_KINDS}

    @property
    def coverage_failure(self) -> str | None:
        """Why the run fails for its coverage (a kind that never appeared), or None."""
        if not self.unseen_kinds:
            return None
        return (f"{len(self.unseen_kinds)} template kind(s) never appeared in {self.run} "
                f"generated programs (seed {self.seed}): {', '.join(self.unseen_kinds)}; the "
                "generator no longer reaches them")


class _Mismatch(AssertionError):
    def __init__(self, program: Program, reason: str) -> None:
        super().__init__(reason)
        self.program = program
        self.reason = reason


def check_programs(subject: str, *, count: int = DEFAULT_COUNT, seed_value: int = DEFAULT_SEED,
                   oracle: str | None = "torch", max_steps: int = 8,
                   modes: tuple[str, ...] = MODES) -> ProgramReport:
    """Run ``count`` generated programs on ``subject``; shrink and report the first mismatch."""
    report = ProgramReport(subject, count, seed_value)
    shrinking = [False]
    start = time.perf_counter()

    @settings(max_examples=count, database=None, deadline=None, derandomize=False,
              phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False, verbosity=Verbosity.quiet)
    @seed(seed_value)
    @given(programs(max_steps=max_steps, modes=modes))
    def check(program: Program) -> None:
        if not shrinking[0]:
            report.run += 1
            report.modes[program.mode] += 1
            report.dtypes[program.dtype] += 1
            report.ops.update(set(program.ops))
            report.features.update(program.features)
            report.kinds.update(program.kinds)
            if report.run % 50 == 0:
                _trim_caches(subject)
        reason = compare_program(program, subject, oracle)
        if reason is not None:
            shrinking[0] = True
            raise _Mismatch(program, reason)

    try:
        check()
    except _Mismatch as exc:
        report.failure = ProgramFailure(exc.program, exc.reason, exc.program.reproducer(subject))
    except Exception:  # noqa: BLE001 - anything else is reported, never swallowed as a pass
        report.crash = traceback.format_exc()
    if report.failure is None and report.crash is None and report.run >= KIND_COVERAGE_MIN:
        _cover_kinds(report, subject, oracle, modes)
    report.seconds = time.perf_counter() - start
    return report


def _trim_caches(subject: str) -> None:
    """The backend's ``trim_caches()`` (JAX: its compiled programs, one per primitive and
    shape, never evicted by size)."""
    family, _, name = subject.partition(":")
    if family == "retrograd":
        from retrograd import backends

        trim = getattr(backends.get_backend(name), "trim_caches", None)
        if trim is not None:
            trim()


def _cover_kinds(report: ProgramReport, subject: str, oracle: str | None,
                 modes: tuple[str, ...]) -> None:
    """One program per template kind, compared like the generated ones (not shrunk: each is
    a few lines); then the kinds that never appeared."""
    for kind in ALL_KINDS:
        program = kind_program(kind, modes)
        if program is None:
            continue
        report.kind_programs += 1
        report.kinds.update(program.kinds)
        try:
            reason = compare_program(program, subject, oracle)
        except Exception:  # noqa: BLE001 - reported, never swallowed as a pass
            report.crash = traceback.format_exc()
            return
        if reason is not None:
            report.failure = ProgramFailure(program, f"[the {kind} program] {reason}",
                                            program.reproducer(subject))
            return
    report.unseen_kinds = [k for k in ALL_KINDS if not report.kinds.get(k)]


def run_program_source(program: Any, subject: str, dtype: str, verbose: bool = True) -> bool:
    """Run a reproducer's ``program`` on ``subject`` and on torch (float64) and print both."""
    import inspect

    source = inspect.getsource(program)
    p = Program(source, dtype, "reproducer", ())
    got = run_program(source, make_lib(subject, dtype))
    ref = run_program(source, make_lib("torch", "float64"))
    if verbose:
        for name, value in (("torch (float64)", ref), (f"{subject} ({dtype})", got)):
            print(f"== {name}")
            items = value.items() if isinstance(value, dict) else [("raised", value)]
            for key, v in items:
                print(f"   {key}: {fmt(v, 400)}")
    reason = compare_program(p, subject, "torch")
    print("verdict:", "agree" if reason is None else f"MISMATCH: {reason}")
    if reason is not None and isinstance(ref, dict) and isinstance(got, dict):
        for line in differing_digits(ref, got):
            print(line)
    return reason is None


def differing_digits(ref: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """For each result that differs numerically: its entry that differs most, both values to
    17 significant digits, a caret under the first digit that differs."""
    import numpy as np

    lines = []
    for key in ref:
        if key not in got:
            continue
        try:
            a = np.asarray(ref[key], dtype=np.float64)
            b = np.asarray(got[key], dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if a.shape != b.shape or a.size == 0:
            continue
        diff = np.abs(a - b)
        diff = np.where(np.isnan(a) & np.isnan(b), 0.0, np.where(np.isnan(diff), np.inf, diff))
        if not np.any(diff > 0):
            continue
        idx = np.unravel_index(int(np.argmax(diff)), a.shape) if a.ndim else ()
        ta, tb = f"{float(a[idx]):.17g}", f"{float(b[idx]):.17g}"
        first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y),
                     min(len(ta), len(tb)))
        where = f"{key}[{', '.join(map(str, idx))}]" if idx else key
        pad = " " * (len(where) + 14)  # under the value: "   {where}: torch    "
        lines += [f"   {where}: torch    {ta}", f"   {where}: subject  {tb}",
                  f"{pad}{' ' * first}^ first differing digit"]
    return lines
