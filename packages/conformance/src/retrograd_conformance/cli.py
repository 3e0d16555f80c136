"""``retrograd-conformance``: every installed backend against the documents and PyTorch.

    retrograd-conformance [--backend NAME ...] [--oracle torch|none] [-k PATTERN]
                          [--json PATH] [--junit PATH] [--fuzz N] [--seed S]
                          [--suite documents|semantics|opdb|programs ...]
                          [--xfails-file PATH] [--skips-file PATH] [--verbose]

Exit status: 0 all tested subjects passed; 1 a failure (or an xfail that now passes);
3 a backend named with --backend is unavailable; 4 no backend could be tested; 2 usage.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from . import __version__
from .cases import DOCUMENT_CASES, SEMANTICS_CASES
from .opdb import OPS
from .programs.check import DEFAULT_COUNT, DEFAULT_SEED
from .report import Report, print_report
from .runner import (
    apply_expectations,
    document_results,
    opdb_results,
    program_results,
    read_id_file,
    semantics_results,
    unavailable_results,
)
from .subjects import backend_names, retrograd_subjects, torch_subjects, versions

SUITES = ("documents", "semantics", "opdb", "programs")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="retrograd-conformance",
        description="Replay the design documents' examples, autograd semantics cases, an op "
                    "database and generated programs on retrograd backends, with PyTorch as "
                    "the oracle.")
    p.add_argument("--backend", action="append", metavar="NAME",
                   help="backend to test (repeatable); default: every backend in the "
                        "'retrograd.backends' entry-point group")
    p.add_argument("--oracle", choices=("torch", "none"), default="torch",
                   help="compare with PyTorch (default) or only with the documents")
    p.add_argument("-k", dest="pattern", metavar="PATTERN",
                   help="only cases / ops / suites whose id contains PATTERN")
    p.add_argument("--suite", action="append", choices=SUITES,
                   help="run only these suites (repeatable); default: all")
    p.add_argument("--fuzz", type=int, default=DEFAULT_COUNT, metavar="N",
                   help=f"generated programs per backend (default {DEFAULT_COUNT})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"hypothesis seed for generated programs (default {DEFAULT_SEED})")
    p.add_argument("--json", metavar="PATH", help="write a JSON report")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report")
    p.add_argument("--xfails-file", metavar="PATH",
                   help="ids (substrings of 'subject::suite/id') expected to fail")
    p.add_argument("--skips-file", metavar="PATH", help="ids (substrings) not to count")
    p.add_argument("--verbose", "-v", action="store_true", help="list passing ops as well")
    p.add_argument("--list-backends", action="store_true",
                   help="list the backends found and exit")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = Console()
    if not console.is_terminal:  # CI logs: wide enough for the per-case tables
        console = Console(width=160)
    if args.list_backends:
        for s in retrograd_subjects(backend_names()):
            state = "available" if s.available else "unavailable"
            console.print(escape(f"{s.name}: {state} {s.reason}".rstrip()))
        return 0
    subjects = retrograd_subjects(args.backend or backend_names())
    oracles = torch_subjects() if args.oracle == "torch" else []
    if args.oracle == "torch" and not any(o.available for o in oracles):
        console.print(f"[bold red]the torch oracle is unavailable:[/] {oracles[0].reason}")
        return 2
    oracle = oracles[0].name if oracles else None
    suites = tuple(args.suite or SUITES)
    pattern = (args.pattern or "").lower()

    def wanted(text: str) -> bool:
        return not pattern or pattern in text.lower()

    header = {
        "tool": "retrograd-conformance",
        "versions": versions(),
        "config": {"backends": [s.name for s in subjects], "explicit_backends": bool(args.backend),
                   "oracle": args.oracle, "oracle_subjects": [o.name for o in oracles],
                   "pattern": args.pattern, "suites": list(suites), "fuzz": args.fuzz,
                   "seed": args.seed, "xfails_file": args.xfails_file,
                   "skips_file": args.skips_file, "argv": list(sys.argv[1:] if argv is None
                                                               else argv)},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    report = Report(header, subjects, oracles)
    t0 = time.perf_counter()
    report.results += unavailable_results(subjects, suites)
    if "documents" in suites:
        cases = [c for c in DOCUMENT_CASES if wanted(f"documents/{c.id}")]
        report.results += document_results(subjects, oracles, cases)
    if "semantics" in suites:
        sem = [c for c in SEMANTICS_CASES
               if wanted(f"semantics/{c.id}") or wanted(f"semantics/{c.group}/")]
        report.results += semantics_results(subjects, oracles, sem)
    if "opdb" in suites:
        ops = [op for op in OPS if wanted(f"opdb/{op.name}")]
        report.results += opdb_results(subjects, oracle, ops)
    if "programs" in suites and wanted("programs/generated"):
        report.results += program_results(subjects, oracle, args.fuzz, args.seed)
    header["seconds"] = round(time.perf_counter() - t0, 2)
    xfails = read_id_file(args.xfails_file) if args.xfails_file else []
    skips = read_id_file(args.skips_file) if args.skips_file else []
    apply_expectations(report.results, xfails, skips,
                       lambda msg: console.print(f"[yellow]warning:[/] {msg}"))
    print_report(report, console, verbose=args.verbose)
    if args.json:
        report.write_json(args.json)
        console.print(f"JSON report: {args.json}")
    if args.junit:
        report.write_junit(args.junit)
        console.print(f"JUnit report: {args.junit}")
    return report.exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
