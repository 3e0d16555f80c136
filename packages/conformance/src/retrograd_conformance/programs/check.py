"""Running generated programs on a subject and on the oracle, and driving hypothesis.

Each program runs on the subject in its dtype and on torch in float64 (the reference); the
results are compared name by name with :data:`~retrograd_conformance.compare.PROGRAM_TOL`, or
by error kind when the program (expectedly or not) raises. hypothesis runs with a fixed seed,
no database and no deadline, so a run is reproducible; on a mismatch it shrinks the program and
the report carries the shrunk source as a runnable reproducer.
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
from .builder import Program
from .strategy import MODES, programs

DEFAULT_SEED = 20240501
DEFAULT_COUNT = 500


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
    failure: ProgramFailure | None = None
    crash: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and self.crash is None


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
    report.seconds = time.perf_counter() - start
    return report


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
    return reason is None
