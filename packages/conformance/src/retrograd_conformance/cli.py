"""``retrograd-conformance``: every installed backend against the document cases and PyTorch.

    retrograd-conformance [--backend NAME|MODULE:ATTR ...] [--oracle torch|none] [-k PATTERN]
                          [--suite documents|semantics|opdb|programs ...] [--fuzz N] [--seed S]
                          [--json PATH] [--junit PATH] [--xfails-file PATH] [--skips-file PATH]
                          [--list] [--list-backends] [--no-progress] [--no-rerun]
                          [--width COLUMNS] [--verbose]

Exit status: 0 all tested subjects passed; 1 a failure (or an xfail that now passes);
3 a backend named with --backend is unavailable; 4 no backend could be tested; 2 usage, or no
oracle; 130 interrupted (the reports of what ran are still written).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from rich.console import Console
from rich.markup import escape

from . import __version__
from .capabilities import capability_results
from .cases import DOCUMENT_CASES, SEMANTICS_CASES
from .errors import Raised
from .opdb import OPS
from .programs.check import DEFAULT_COUNT, DEFAULT_SEED
from .report import Report, make_console, print_report
from .runner import (
    Result,
    apply_expectations,
    document_results,
    opdb_results,
    program_results,
    read_id_file,
    read_xfails,
    semantics_results,
    unavailable_results,
)
from .subjects import (
    Subject,
    backend_names,
    recording_kernels,
    retrograd_subjects,
    torch_subjects,
    versions,
)

try:  # the fusion and kernels groups, run with the semantics suite
    from .cases import FUSION_FAMILY
except ImportError:  # pragma: no cover - a package without them
    FUSION_FAMILY = ()

SUITES = ("capabilities", "documents", "semantics", "opdb", "programs")
#: The semantics suite: the semantics family, then the fusion family (same case type, judge).
SEMANTICS_SUITE = tuple(SEMANTICS_CASES) + tuple(FUSION_FAMILY)

#: What each kind of generated program does after building its graph (``--list``).
PROGRAM_KINDS = {
    "backward": "a scalar root (or .sum() of one), then root.backward()",
    "backward-seed": "root.backward(seed) with an explicit (non-scalar) seed",
    "multi-root": "two roots: autograd.backward([r1, r2], seeds) or two backward calls",
    "grad": "autograd.grad(root, leaves [+ an interior tensor], grad_outputs=seed)",
    "create-graph": "first derivatives with create_graph=True, then second derivatives",
    "inplace": "a saved leaf changed in place under no_grad: backward must raise the "
               "version error",
}

#: Failing checks rerun once each (the rest are reported as they are).
MAX_RERUNS = 100


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="retrograd-conformance",
        description="Replay the document cases, autograd semantics cases, an op database and "
                    "generated programs on retrograd backends, with PyTorch as the oracle.")
    p.add_argument("--backend", action="append", metavar="NAME|MODULE:ATTR",
                   help="backend to test (repeatable): a name from the 'retrograd.backends' "
                        "entry-point group, or MODULE:ATTR naming a Backend object (a class or "
                        "factory is called) to test without installing an entry point; "
                        "default: every backend of the group")
    p.add_argument("--oracle", choices=("torch", "none"), default="torch",
                   help="compare with PyTorch (default) or only with the cases' own values")
    p.add_argument("-k", dest="pattern", metavar="PATTERN",
                   help="only cases / ops / suites whose id contains PATTERN")
    p.add_argument("--shard", type=_shard, metavar="I/N", default=(1, 1),
                   help="run the I-th of N parts of the documents, semantics and opdb suites "
                        "(every N-th case or op; the capabilities and generated programs in "
                        "part 1): N processes, each with its own memory, whose JSON reports "
                        "together are the whole run")
    p.add_argument("--suite", action="append", choices=SUITES,
                   help="run only these suites (repeatable); default: all")
    p.add_argument("--fuzz", type=int, default=DEFAULT_COUNT, metavar="N",
                   help=f"generated programs per backend (default {DEFAULT_COUNT})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"hypothesis seed for generated programs (default {DEFAULT_SEED})")
    p.add_argument("--json", metavar="PATH",
                   help="write the run's JSON report to PATH (a directory: a new file named "
                        "after the run in it)")
    p.add_argument("--junit", metavar="PATH",
                   help="write the run's JUnit XML report to PATH (a directory: as --json)")
    p.add_argument("--xfails-file", metavar="PATH",
                   help="ids (substrings of 'subject::suite/id') expected to fail")
    p.add_argument("--skips-file", metavar="PATH", help="ids (substrings) not to count")
    p.add_argument("--no-backend-xfails", action="store_true",
                   help="do not apply the xfails file a backend package ships "
                        "(its module's conformance_xfails())")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="list passing semantics cases and ops as well")
    p.add_argument("--list", action="store_true",
                   help="list the cases, ops and program kinds (after --suite and -k) and exit")
    p.add_argument("--list-backends", action="store_true",
                   help="list the backends found and exit")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress line on stderr")
    p.add_argument("--no-rerun", action="store_true",
                   help="do not rerun failing checks (a rerun flags nondeterministic failures "
                        "and records the frames and kernels of the failing path)")
    p.add_argument("--width", type=int, metavar="COLUMNS",
                   help="width of the report's tables (default: the terminal's; 120 in a log)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)``, 1 <= I <= N."""
    try:
        part, parts = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard: expected I/N such as 2/8, got {text!r}") \
            from None
    if not 1 <= part <= parts:
        raise argparse.ArgumentTypeError(f"--shard: I must be between 1 and N, got {text!r}")
    return part, parts


def _part(items: Sequence[Any], shard: tuple[int, int]) -> list[Any]:
    """The items of part ``I`` of ``N`` (``shard``): every N-th, from the I-th."""
    part, parts = shard
    return [x for i, x in enumerate(items) if i % parts == part - 1]


# ---- --list -----------------------------------------------------------------------------------


def list_checks(suites: Sequence[str], wanted: Callable[[str], bool], console: Console,
                shard: tuple[int, int] = (1, 1)) -> int:
    """Print every case, op and program kind the run (or its part ``shard``) would include;
    return how many."""
    shown = 0

    def section(title: str, rows: list[tuple[str, str]]) -> None:
        nonlocal shown
        console.print(f"[bold]{escape(title)}[/] ({len(rows)})", soft_wrap=True)
        width = max((len(i) for i, _ in rows), default=0)
        for ident, text in rows:  # one line each, whatever the width: grep-able
            console.print(f"  {escape(ident.ljust(width))}  {escape(text)}", highlight=False,
                          soft_wrap=True)
        shown += len(rows)

    if "documents" in suites:
        section("documents: worked examples with their own numbers "
                "(docs/conformance.md explains each)",
                [(f"documents/{c.id}", f"[{c.topic}] {c.title}") for c in _part(
                    [c for c in DOCUMENT_CASES if wanted(f"documents/{c.id}")], shard)])
    if "semantics" in suites:
        section("semantics: autograd corners, compared with PyTorch in the same dtype",
                [(f"semantics/{c.group}/{c.id}", c.title) for c in _part(
                    [c for c in SEMANTICS_SUITE
                     if wanted(f"semantics/{c.id}") or wanted(f"semantics/{c.group}/")], shard)])
    if "opdb" in suites:
        section("opdb: differentiable ops (vs PyTorch; gradcheck and gradgradcheck in float64)",
                [(f"opdb/{op.name}", f"{len(op.samples)} samples"
                  + (f"; also {', '.join(op.aliases)}" if op.aliases else "")
                  + ("" if op.gradgrad else "; no second order"))
                 for op in _part([op for op in OPS if wanted(f"opdb/{op.name}")], shard)])
    if "programs" in suites and wanted("programs/generated") and shard[0] == 1:
        section("programs: kinds of hypothesis-generated programs (--fuzz N per backend)",
                [(f"programs/{kind}", PROGRAM_KINDS.get(kind, "")) for kind in _program_modes()])
    return shown


def _program_modes() -> tuple[str, ...]:
    from .programs.strategy import MODES

    return tuple(MODES)


# ---- progress ---------------------------------------------------------------------------------


class ProgressLine:
    """A live line on stderr while the run goes: the suite, a bar, n of total, the elapsed
    time and the check in hand. Where stderr is not a terminal (a CI log), one plain line per
    suite instead; nothing at all with ``enabled=False``."""

    def __init__(self, enabled: bool) -> None:
        self.console = Console(stderr=True)
        self.live = enabled and self.console.is_terminal
        self.plain = enabled and not self.live
        self._progress: Any = None
        self._task: Any = None
        self._t0 = 0.0
        self._suite = ""

    def __enter__(self) -> ProgressLine:
        if self.live:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                SpinnerColumn(), TextColumn("[bold]{task.fields[suite]}"), BarColumn(),
                MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("{task.description}"), console=self.console, transient=True)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
            self._progress = None

    def suite(self, name: str, total: int, what: str) -> None:
        """A new suite of ``total`` steps begins."""
        self._end_plain()
        self._suite, self._t0 = name, time.perf_counter()
        if self._progress is not None:
            if self._task is not None:
                self._progress.remove_task(self._task)
            self._task = self._progress.add_task("", total=max(total, 1), suite=name)
        elif self.plain:
            self.console.print(f"retrograd-conformance: {name}: {what} ...", highlight=False)

    def step(self, label: str) -> None:
        """The check about to run."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=escape(label))

    def advance(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)

    def _end_plain(self) -> None:
        if self.plain and self._suite:
            self.console.print(f"retrograd-conformance: {self._suite}: done in "
                               f"{time.perf_counter() - self._t0:.1f} s", highlight=False)
            self._suite = ""

    def done(self) -> None:
        self._end_plain()


# ---- rerunning failures -----------------------------------------------------------------------


class Rechecker:
    """Reruns a failing check once: a rerun whose verdict or message differs flags the failure
    ``nondeterministic``; the rerun records the kernels the subject ran (``kernels``) and the
    innermost traceback frames of every error on the failing path (``frames``)."""

    def __init__(self, subjects: list[Subject], oracles: list[Subject]) -> None:
        self.reference = next((o for o in oracles if o.available), None)
        self.oracle_names = {o.name for o in oracles}
        self.retrograd_names = {s.name for s in subjects if s.available}

    @contextmanager
    def _recording(self, subject: str) -> Iterator[dict[str, int] | None]:
        if subject not in self.retrograd_names:  # the oracle: no kernel table to watch
            yield None
            return
        with recording_kernels(subject.partition(":")[2]) as calls:
            yield calls

    def recheck(self, r: Result) -> None:
        rerun = {"documents": self._documents, "semantics": self._semantics,
                 "opdb": self._opdb, "programs": self._programs}.get(r.suite)
        if rerun is None:
            return
        try:
            outcome = rerun(r)
        except Exception as exc:  # noqa: BLE001 - a diagnosis must never hide the failure
            r.details["rerun"] = {"error": f"{type(exc).__name__}: {exc}"}
            return
        if outcome is None:
            return
        verdict, message, frames, kernels = outcome
        r.details["rerun"] = {"verdict": verdict, "message": message}
        r.details["nondeterministic"] = (verdict, message) != ("fail", r.message)
        if frames:
            r.details["frames"] = frames
        if kernels is not None:
            r.details["kernels"] = dict(kernels)
        if r.details.get("reproducer") and (frames or kernels):
            r.details["reproducer"] = _annotate_reproducer(r.details["reproducer"], frames,
                                                           kernels)

    def _documents(self, r: Result) -> tuple[str, str, dict[str, list[str]], Any] | None:
        from .runner import judge_case, run_case

        case = next((c for c in DOCUMENT_CASES if c.id == r.details.get("case")), None)
        if case is None:
            return None
        dtype = r.details["dtype"]
        ref = None
        is_reference = self.reference is not None and r.subject == self.reference.name
        if self.reference is not None and r.subject not in self.oracle_names:
            ref = run_case(case, self.reference.name, "float64")
        with self._recording(r.subject) as calls:
            out = run_case(case, r.subject, "float64" if is_reference else dtype)
        again = judge_case(case, dtype, r.subject, out, ref)
        return again.verdict, again.message, _frames(out, _failing_rows(again)), calls

    def _semantics(self, r: Result) -> tuple[str, str, dict[str, list[str]], Any] | None:
        from .runner import judge_semantics_case, run_semantics_case

        case = next((c for c in SEMANTICS_SUITE if c.id == r.details.get("case")), None)
        if case is None:
            return None
        dtype = r.details["dtype"]
        ref_name = self.reference.name if self.reference is not None else "torch"
        ref = None
        if self.reference is not None and r.subject != self.reference.name:
            ref = run_semantics_case(case, self.reference.name, dtype)
        with self._recording(r.subject) as calls:
            out = run_semantics_case(case, r.subject, dtype)
        again = judge_semantics_case(case, dtype, r.subject, out, ref, ref_name)
        return again.verdict, again.message, _frames(out, _failing_rows(again)), calls

    def _opdb(self, r: Result) -> tuple[str, str, dict[str, list[str]], Any] | None:
        from .adapter import make_lib
        from .opdb import check_op
        from .opdb.checks import evaluate

        op = next((o for o in OPS if o.name == r.details.get("op")), None)
        if op is None:
            return None
        dtype = r.details["dtype"]
        oracle = self.reference.name if self.reference is not None else None
        with self._recording(r.subject) as calls:
            again = check_op(op, r.subject, dtype, oracle)
        frames: dict[str, list[str]] = {}
        for sample in op.samples:
            where = f"{op.name}[{sample.label}]"
            if any(f.startswith(where) for f in again.failures):
                out = evaluate(make_lib(r.subject, dtype), op, sample)
                frames.update({where if k == "the program" else f"{where} {k}": v
                               for k, v in _frames(out, None).items()})
        return ("pass" if again.ok else "fail"), "; ".join(again.failures), frames, calls

    def _programs(self, r: Result) -> tuple[str, str, dict[str, list[str]], Any] | None:
        from .adapter import make_lib
        from .programs.builder import Program
        from .programs.check import compare_program, run_program

        source = r.details.get("program")
        if not source or "(shrunk): " not in r.message:
            return None  # a crash of the runner itself: its traceback is in the report
        first = r.message.split("(shrunk): ", 1)[1]
        dtype = r.details.get("dtype") or _reproducer_dtype(r.details.get("reproducer", ""))
        program = Program(source, dtype, r.details.get("mode", "reproducer"), (),
                          expects_error=r.details.get(
                              "expects_error", first.startswith("expected a version-mismatch")))
        oracle = self.reference.name if self.reference is not None else None
        with self._recording(r.subject) as calls:
            out = run_program(source, make_lib(r.subject, dtype))
        reason = compare_program(program, r.subject, oracle)
        verdict = "fail" if reason is not None else "pass"
        message = f"{r.message.split('(shrunk): ', 1)[0]}(shrunk): {reason}" if reason else ""
        return verdict, message, _frames(out, None), calls


def _failing_rows(result: Result) -> set[str] | None:
    rows = result.details.get("rows")
    if rows is None:
        return None
    return {row["quantity"] for row in rows if not row["ok"]}


def _frames(outcome: Any, keys: set[str] | None) -> dict[str, list[str]]:
    """The frames of every error in an outcome: the whole program's, or those of the named
    quantities (all of them with ``keys`` None)."""
    if isinstance(outcome, Raised):
        return {"the program": list(outcome.frames)} if outcome.frames else {}
    out: dict[str, list[str]] = {}
    if isinstance(outcome, dict):
        for key, value in outcome.items():
            if isinstance(value, Raised) and value.frames and (keys is None or key in keys):
                out[key] = list(value.frames)
    return out


def _reproducer_dtype(text: str) -> str:
    found = re.search(r"dtype=['\"](\w+)['\"]", text)
    return found.group(1) if found else "float64"


def _annotate_reproducer(text: str, frames: dict[str, list[str]],
                         kernels: dict[str, int] | None) -> str:
    """The reproducer with the rerun's diagnosis as comments after its opening comments."""
    notes = []
    for key, lines in frames.items():
        notes.append(f"# {key} raised; innermost frames last:")
        notes += [f"#   {line}" for line in lines]
    if kernels:
        notes += textwrap.wrap(", ".join(f"{k} {n}" for k, n in kernels.items()), width=96,
                               initial_indent="# kernels the subject ran (first call order, "
                                              "calls): ",
                               subsequent_indent="#   ", break_on_hyphens=False)
    if not notes:
        return text
    lines = text.split("\n")
    at = 0
    while at < len(lines) and lines[at].startswith("#"):
        at += 1
    return "\n".join(lines[:at] + notes + lines[at:])


# ---- the run ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = make_console(args.width)
    suites = tuple(args.suite or SUITES)
    pattern = (args.pattern or "").lower()

    def wanted(text: str) -> bool:
        return not pattern or pattern in text.lower()

    if args.list:
        shown = list_checks(suites, wanted, console, args.shard)
        console.print(f"{shown} entries; `--list-backends` lists the backends")
        return 0
    if args.list_backends:
        for s in retrograd_subjects(args.backend or backend_names()):
            state = "available" if s.available else "unavailable"
            console.print(escape(f"{s.name}: {state} {s.reason}".rstrip()))
        return 0
    subjects = retrograd_subjects(args.backend or backend_names())
    oracles = torch_subjects() if args.oracle == "torch" else []
    if args.oracle == "torch" and not any(o.available for o in oracles):
        console.print(f"[bold red]the torch oracle is unavailable:[/] {oracles[0].reason}")
        return 2
    oracle = oracles[0].name if oracles else None
    run_id = time.strftime("%Y%m%dT%H%M%S")
    header = {
        "tool": "retrograd-conformance",
        "run_id": run_id,
        "versions": versions(),
        "config": {"backends": [s.name for s in subjects], "explicit_backends": bool(args.backend),
                   "oracle": args.oracle, "oracle_subjects": [o.name for o in oracles],
                   "pattern": args.pattern, "suites": list(suites), "fuzz": args.fuzz,
                   "shard": "{}/{}".format(*args.shard),
                   "seed": args.seed, "xfails_file": args.xfails_file,
                   "skips_file": args.skips_file, "argv": list(sys.argv[1:] if argv is None
                                                               else argv)},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    report = Report(header, subjects, oracles)
    t0 = time.perf_counter()
    available = [s for s in subjects if s.available]
    interrupted = False
    complete = not (args.pattern or args.suite or args.shard[1] > 1)  # coverage is judged
    with ProgressLine(not args.no_progress) as progress:
        try:
            report.results += unavailable_results(
                subjects, [s for s in suites if s != "capabilities"])
            with _kernel_coverage(subjects) if complete else nullcontext(None) as coverage:
                _run_suites(report, suites, wanted, subjects, available, oracles, oracle, args,
                            progress)
            if coverage is not None:
                report.results += _coverage_results(coverage, complete=True)
        except KeyboardInterrupt:
            interrupted = True
        xfails = read_xfails(args.xfails_file) if args.xfails_file else []
        shipped: set[str] = set()  # entries from the backends' own files
        if not args.no_backend_xfails:
            for s in subjects:
                own = s.info.get("xfails_file")
                if own and own != args.xfails_file and os.path.exists(own):
                    entries = [e for e in read_xfails(own) if e[0] not in dict(xfails)]
                    shipped.update(e[0] for e in entries)
                    xfails += entries
        skips = read_id_file(args.skips_file) if args.skips_file else []

        def warn(msg: str) -> None:
            # a narrowed run leaves a backend's own entries unmatched: no news
            if complete or not any(repr(e) in msg for e in shipped):
                console.print(f"[yellow]warning:[/] {escape(msg)}")

        apply_expectations(report.results, xfails, skips, warn)
        if not args.no_rerun and not interrupted:
            try:
                _recheck_failures(report, subjects, oracles, progress)
            except KeyboardInterrupt:
                interrupted = True
        progress.done()
    header["seconds"] = round(time.perf_counter() - t0, 2)
    if interrupted:
        header["interrupted"] = True
    print_report(report, console, verbose=args.verbose)
    for label, target, write in (("JSON", args.json, report.write_json),
                                 ("JUnit", args.junit, report.write_junit)):
        if target:
            console.print(f"{label} report: {escape(str(write(target)))}", highlight=False)
    if interrupted:
        console.print("[bold red]interrupted[/]: the report covers what ran")
        return 130
    return report.exit_code


def _kernel_coverage(subjects: list[Subject]) -> AbstractContextManager[Any]:
    """Count the kernels every available backend runs during the suites (which of its own
    kernels no check reached); a no-op where the package has no coverage module."""
    try:
        from .coverage import KernelCoverage
    except ImportError:  # pragma: no cover
        return nullcontext(None)
    return KernelCoverage.for_subjects(subjects)


def _coverage_results(coverage: Any, complete: bool) -> list[Result]:
    try:
        from .runner import coverage_results
    except ImportError:  # pragma: no cover
        return []
    return coverage_results(coverage, complete=complete)


def _run_suites(report: Report, suites: Sequence[str], wanted: Callable[[str], bool],
                subjects: list[Subject], available: list[Subject], oracles: list[Subject],
                oracle: str | None, args: argparse.Namespace, progress: ProgressLine) -> None:
    """Every suite, one check at a time, so the progress line can follow."""
    first = args.shard[0] == 1

    if "capabilities" in suites and first:  # the declared claims, before anything relies on them
        report.results += [r for r in capability_results(available)
                           if wanted(f"capabilities/{r.id}")]
    if "documents" in suites:
        cases = _part([c for c in DOCUMENT_CASES if wanted(f"documents/{c.id}")], args.shard)
        progress.suite("documents", len(cases),
                       f"{len(cases)} cases on {len(available)} backend(s)")
        for case in cases:
            progress.step(case.id)
            report.results += document_results(subjects, oracles, [case])
            progress.advance()
    if "semantics" in suites:
        sem = _part([c for c in SEMANTICS_SUITE
                     if wanted(f"semantics/{c.id}") or wanted(f"semantics/{c.group}/")],
                    args.shard)
        progress.suite("semantics", len(sem), f"{len(sem)} cases on {len(available)} backend(s)")
        for case in sem:
            progress.step(f"{case.group}/{case.id}")
            report.results += semantics_results(subjects, oracles, [case])
            progress.advance()
    if "opdb" in suites:
        ops = _part([op for op in OPS if wanted(f"opdb/{op.name}")], args.shard)
        progress.suite("opdb", len(ops) * len(available),
                       f"{len(ops)} ops on {len(available)} backend(s)")
        for subject in available:
            for op in ops:
                progress.step(f"{subject.name} {op.name}")
                report.results += opdb_results([subject], oracle, [op])
                progress.advance()
    if "programs" in suites and wanted("programs/generated") and first:
        progress.suite("programs", len(available),
                       f"{args.fuzz} programs on each of {len(available)} backend(s)")
        for subject in available:
            progress.step(f"{subject.name}: {args.fuzz} programs (seed {args.seed})")
            report.results += program_results([subject], oracle, args.fuzz, args.seed)
            progress.advance()


def _recheck_failures(report: Report, subjects: list[Subject], oracles: list[Subject],
                      progress: ProgressLine) -> None:
    failures = [r for r in report.results if r.verdict == "fail"]
    if not failures:
        return
    checker = Rechecker(subjects, oracles)
    progress.suite("rerun", min(len(failures), MAX_RERUNS),
                   f"{min(len(failures), MAX_RERUNS)} failing check(s) once more")
    for i, r in enumerate(failures):
        if i >= MAX_RERUNS:
            r.details["rerun"] = {"skipped": f"only the first {MAX_RERUNS} failures are rerun"}
            continue
        progress.step(r.key)
        checker.recheck(r)
        progress.advance()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
