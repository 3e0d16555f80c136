"""Reports: rich tables in the terminal, and JSON / JUnit XML files with a header that echoes
the versions and the configuration, so a report read later says what produced it."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .cases.base import CASES_DOC
from .errors import format_frames
from .runner import Result
from .subjects import Subject

#: Width of the report when no terminal is attached at all (a CI log): wide enough for the
#: per-case tables, narrow enough to read in a log viewer.
LOG_WIDTH = 120


def _terminal_width() -> int | None:
    """The width of a terminal attached to any standard stream, or the controlling one."""
    for fd in (1, 2, 0):
        try:
            return os.get_terminal_size(fd).columns or None
        except (OSError, ValueError):
            continue
    try:
        with open(os.ctermid()) as tty:  # stdout and stderr both piped (nox | tee)
            return os.get_terminal_size(tty.fileno()).columns or None
    except (OSError, AttributeError):
        return None


def make_console(width: int | None = None, **kwargs: Any) -> Console:
    """The report's console: ``width`` when given; else ``COLUMNS`` when set; else the width
    of the terminal the run is watched on, even when stdout is a pipe (``nox | tee``, a
    pager); else :data:`LOG_WIDTH`. Every table folds to that width."""
    if width:
        return Console(width=width, **kwargs)
    console = Console(**kwargs)
    if console.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return console
    return Console(width=_terminal_width() or LOG_WIDTH, **kwargs)

STYLE = {"pass": "green", "fail": "bold red", "unavailable": "yellow", "xfail": "magenta",
         "xpass": "bold red", "skip": "dim"}


@dataclass
class Report:
    header: dict[str, Any]
    subjects: list[Subject]
    oracles: list[Subject]
    results: list[Result] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        by_subject: dict[str, Counter] = defaultdict(Counter)
        for r in self.results:
            by_subject[r.subject][r.verdict] += 1
        total = Counter(r.verdict for r in self.results)
        return {"total": dict(total), "by_subject": {k: dict(v) for k, v in by_subject.items()},
                "failed": sum(1 for r in self.results if r.failed),
                "nondeterministic": sum(1 for r in self.results if r.failed
                                        and r.details.get("nondeterministic"))}

    @property
    def exit_code(self) -> int:
        if any(r.failed for r in self.results):
            return 1
        if self.header.get("config", {}).get("explicit_backends") and any(
                not s.available for s in self.subjects):
            return 3  # a backend asked for by name could not be tested
        if not any(s.available for s in self.subjects):
            return 4  # nothing was tested
        return 0

    # ---- files ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"header": self.header,
                "subjects": [asdict(s) for s in self.subjects + self.oracles],
                "summary": self.summary(),
                "results": [asdict(r) | {"key": r.key} for r in self.results]}

    def _target(self, path: str, suffix: str) -> str:
        """``path``, or for a directory a new file in it named after the run: one file per
        run, never one run's report overwritten by the next."""
        if os.path.isdir(path) or path.endswith(("/", os.sep)):
            os.makedirs(path, exist_ok=True)
            run = self.header.get("run_id") or self.header.get("started", "run")
            name = f"retrograd-conformance-{run}"
            candidate = os.path.join(path, name + suffix)
            n = 1
            while os.path.exists(candidate):
                n += 1
                candidate = os.path.join(path, f"{name}-{n}{suffix}")
            return candidate
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        return path

    @staticmethod
    def _replace(tmp: str, path: str) -> str:
        os.replace(tmp, path)  # a reader never sees half a report
        return path

    def write_json(self, path: str) -> str:
        """Write the run's JSON report; returns the file written."""
        target = self._target(path, ".json")
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, indent=2, default=str)
        return self._replace(tmp, target)

    def write_junit(self, path: str) -> str:
        """Write the run's JUnit XML report; returns the file written."""
        target = self._target(path, ".xml")
        root = ET.Element("testsuites", name="retrograd-conformance")
        props = ET.SubElement(root, "properties")
        for k, v in _flat(self.header).items():
            ET.SubElement(props, "property", name=k, value=str(v))
        groups: dict[str, list[Result]] = defaultdict(list)
        for r in self.results:
            groups[r.subject].append(r)
        subjects = {s.name: s for s in self.subjects + self.oracles}
        for name, results in groups.items():
            suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(results)),
                                  failures=str(sum(r.failed for r in results)), errors="0",
                                  skipped=str(sum(r.verdict in ("skip", "unavailable", "xfail")
                                                  for r in results)),
                                  time=f"{sum(r.seconds for r in results):.3f}")
            sp = ET.SubElement(suite, "properties")
            subj = subjects.get(name)
            if subj is not None:
                ET.SubElement(sp, "property", name="available", value=str(subj.available))
                for k, v in subj.info.items():
                    ET.SubElement(sp, "property", name=k, value=str(v))
            for r in results:
                case = ET.SubElement(suite, "testcase", classname=f"{name}.{r.suite}",
                                     name=r.id, time=f"{r.seconds:.3f}")
                if r.failed:
                    flag = "[nondeterministic] " if r.details.get("nondeterministic") else ""
                    failure = ET.SubElement(case, "failure", message=(flag + r.message)[:500])
                    failure.text = _long_message(r)
                elif r.verdict in ("skip", "unavailable", "xfail"):
                    ET.SubElement(case, "skipped", message=f"{r.verdict}: {r.message}"[:500])
        ET.indent(root)
        tmp = f"{target}.{os.getpid()}.tmp"
        ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
        return self._replace(tmp, target)


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def diagnosis(r: Result) -> list[str]:
    """What the rerun of a failure found, as plain lines: whether it repeated, the innermost
    frames of each error on the failing path, the kernels the subject ran."""
    out = []
    rerun = r.details.get("rerun") or {}
    if r.details.get("nondeterministic"):
        how = ("the rerun passed" if rerun.get("verdict") == "pass"
               else f"the rerun failed differently: {rerun.get('message', '')}")
        out.append(f"nondeterministic: {how}")
    elif rerun.get("verdict") == "fail":
        out.append("rerun once: the same failure")
    elif rerun.get("error") or rerun.get("skipped"):
        out.append(f"not rerun: {rerun.get('error') or rerun.get('skipped')}")
    same: dict[tuple[str, ...], list[str]] = {}  # one block per distinct stack
    for where, frames in (r.details.get("frames") or {}).items():
        same.setdefault(tuple(frames), []).append(where)
    for frames, wheres in same.items():
        out.append(f"{', '.join(wheres)} raised; innermost frames last:")
        out.append(format_frames(list(frames), "    "))
    kernels = r.details.get("kernels")
    if isinstance(kernels, list):  # the coverage check's table: no per-case kernel list
        kernels = None
    if kernels:
        out.append("kernels the subject ran (first call order, calls): "
                   + ", ".join(f"{k} {n}" for k, n in kernels.items()))
    elif kernels is not None:
        out.append("kernels the subject ran: none through its kernel table")
    return out


def _short_traceback(text: str, frames: int = 4) -> str:
    """The last ``frames`` frames of a formatted traceback, and its final line."""
    lines = text.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("  File ")]
    if len(starts) <= frames:
        return text.rstrip()
    return "\n".join([lines[0], f"  ... {len(starts) - frames} outer frame(s) left out"]
                     + lines[starts[-frames]:])


def _long_message(r: Result) -> str:
    parts = [r.message]
    parts += diagnosis(r)
    if r.details.get("reproducer"):
        parts.append("Shrunk program, runnable:\n" + r.details["reproducer"])
    if r.details.get("traceback"):
        parts.append(r.details["traceback"])
    if r.details.get("failures"):
        parts.append("\n".join(r.details["failures"]))
    return "\n\n".join(parts)


# ---- terminal ----------------------------------------------------------------------------------


def _v(verdict: str) -> str:
    return f"[{STYLE.get(verdict, '')}]{verdict}[/]"


def _cell(r: Result) -> str:
    """A verdict with its dtype, ``fail(32)``; a nondeterministic failure is starred."""
    star = "*" if r.failed and r.details.get("nondeterministic") else ""
    return f"{_v(r.verdict)}{star}({r.details['dtype'][-2:]})"


def _table(title: str, **kwargs: Any) -> Table:
    # wide enough for its title and caption on one line where the terminal allows
    return Table(title=title, title_justify="left", caption_justify="left", min_width=72,
                 **kwargs)


def _col(t: Table, name: str, **kwargs: Any) -> None:
    t.add_column(name, overflow="fold", **kwargs)


def print_report(report: Report, console: Console, *, verbose: bool = False) -> None:
    h = report.header
    lines = [f"[bold]{k}[/]: {escape(str(v))}" for k, v in h["versions"].items()]
    lines += [f"[bold]config.{k}[/]: {escape(str(v))}" for k, v in h["config"].items()]
    console.print(Panel("\n".join(lines), title="retrograd-conformance", expand=False))

    t = _table("Subjects")
    for col in ("subject", "role", "status"):
        _col(t, col, no_wrap=col != "subject")
    _col(t, "details")
    for s in report.subjects + report.oracles:
        role = "oracle" if s.family == "torch" else "backend"
        detail = s.reason or ", ".join(f"{k}={v}" for k, v in s.info.items())
        status = "[green]available[/]" if s.available else "[yellow]unavailable[/]"
        t.add_row(escape(s.name), role, status, escape(detail))
    console.print(t)

    _print_documents(report, console)
    _print_semantics(report, console, verbose)
    _print_opdb(report, console, verbose)
    _print_programs(report, console)
    _print_coverage(report, console, verbose)
    _print_failures(report, console)
    s = report.summary()
    flaky = (f", {s['nondeterministic']} of them nondeterministic (*)"
             if s["nondeterministic"] else "")
    console.print("Summary: " + ", ".join(f"{_v(k)} {v}" for k, v in sorted(s["total"].items()))
                  + flaky + f"  -> exit {report.exit_code}"
                  + (f" ({h['seconds']} s)" if "seconds" in h else ""))


def _print_documents(report: Report, console: Console) -> None:
    docs = [r for r in report.results if r.suite == "documents" and "case" in r.details]
    by_case: dict[str, list[Result]] = defaultdict(list)
    for r in docs:
        by_case[r.details["case"]].append(r)
    oracle_names = {o.name for o in report.oracles}
    for case_id, results in by_case.items():
        first = results[0].details
        subjects = list(dict.fromkeys(r.subject for r in results))
        caption = "; ".join(first["sources"]) + f" -- explained in {CASES_DOC}#{case_id}"
        if first["note"]:
            caption += f"\nnote: {first['note']}"
        t = _table(f"[bold]{escape(case_id)}[/]: {escape(first['title'])}",
                   caption=escape(caption), show_lines=False)
        _col(t, "quantity")
        _col(t, "expected")
        for name in subjects:
            _col(t, name + (" (oracle)" if name in oracle_names else ""))
        shown = [r for r in results if r.details["dtype"] == "float32"] or results
        by_subject = {r.subject: r for r in shown}
        for i, row in enumerate(shown[0].details["rows"]):
            cells = [escape(row["quantity"]), escape(row["document"] or "")]
            for name in subjects:
                r = by_subject.get(name)
                if r is None or i >= len(r.details["rows"]):
                    cells.append("")
                    continue
                rr = r.details["rows"][i]
                text = escape(rr["subject"] or "-")
                cells.append(text if rr["ok"] else f"[red]{text}[/]")
            t.add_row(*cells)
        verdicts = ["[bold]verdict[/]", ""]
        for name in subjects:
            per = sorted((r for r in results if r.subject == name),
                         key=lambda r: r.details["dtype"])
            verdicts.append(" ".join(_cell(r) for r in per))
        t.add_row(*verdicts)
        console.print(t)


def _print_semantics(report: Report, console: Console, verbose: bool) -> None:
    sem = [r for r in report.results if r.suite == "semantics" and "case" in r.details]
    if not sem:
        return
    subjects = list(dict.fromkeys(r.subject for r in sem))
    oracle_names = {o.name for o in report.oracles}
    grid: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in sem:
        grid[r.details["case"]][r.subject].append(r)
    t = _table("Semantics (autograd corners, vs the oracle in the same dtype)")
    _col(t, "case")
    _col(t, "checks")
    for name in subjects:
        _col(t, name + (" (oracle)" if name in oracle_names else ""))
    shown = 0
    for case_id, per in grid.items():
        if not verbose and all(not r.failed for rs in per.values() for r in rs):
            continue
        shown += 1
        first = next(iter(per.values()))[0].details
        cells = [escape(case_id), escape(first["title"])]
        for name in subjects:
            cells.append(" ".join(_cell(r) for r in per.get(name, [])))
        t.add_row(*cells)
    totals = ["[bold]all[/]", f"{len(grid)} cases"]
    for name in subjects:
        c = Counter(r.verdict for r in sem if r.subject == name)
        totals.append(", ".join(f"{_v(k)} {v}" for k, v in sorted(c.items())))
    t.add_row(*totals)
    if not verbose:
        t.caption = (f"{len(grid) - shown} of {len(grid)} cases pass everywhere "
                     "(--verbose lists them); failures in full below")
    console.print(t)


def _print_opdb(report: Report, console: Console, verbose: bool) -> None:
    ops = [r for r in report.results if r.suite == "opdb" and "op" in r.details]
    if not ops:
        return
    subjects = list(dict.fromkeys(r.subject for r in ops))
    grid: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in ops:
        grid[r.details["op"]][r.subject].append(r)
    t = _table("Op database (gradcheck, gradgradcheck, vs oracle; float32 / float64)")
    _col(t, "op")
    _col(t, "samples")
    for name in subjects:
        _col(t, name)
    all_ok = True
    for op, per in grid.items():
        row_ok = all(not r.failed for rs in per.values() for r in rs)
        all_ok &= row_ok
        if row_ok and not verbose:
            continue
        samples = next(iter(per.values()))[0].details["samples"]
        cells = [escape(op), str(samples)]
        for name in subjects:
            cells.append(" ".join(_cell(r) for r in per.get(name, [])))
        t.add_row(*cells)
    totals = ["[bold]all[/]", str(sum(next(iter(p.values()))[0].details["samples"]
                                      for p in grid.values()))]
    for name in subjects:
        c = Counter(r.verdict for r in ops if r.subject == name)
        checks = sum(r.details["checks"] for r in ops if r.subject == name)
        totals.append(", ".join(f"{_v(k)} {v}" for k, v in sorted(c.items()))
                      + f" ({checks} checks)")
    t.add_row(*totals)
    if all_ok and not verbose:
        t.caption = f"{len(grid)} ops, every one passing (--verbose lists them)"
    console.print(t)


def _print_programs(report: Report, console: Console) -> None:
    progs = [r for r in report.results if r.suite == "programs"]
    if not progs:
        return
    t = _table("Generated programs (hypothesis, vs oracle)")
    for col in ("subject", "programs", "seconds"):
        _col(t, col)
    _col(t, "modes")
    _col(t, "verdict")
    for r in progs:
        modes = ", ".join(f"{k} {v}" for k, v in sorted(r.details.get("modes", {}).items()))
        star = "*" if r.failed and r.details.get("nondeterministic") else ""
        t.add_row(escape(r.subject), str(r.details.get("programs", "-")), f"{r.seconds:.1f}",
                  escape(modes), _v(r.verdict) + star)
    console.print(t)


def _print_coverage(report: Report, console: Console, verbose: bool) -> None:
    cov = [r for r in report.results if r.suite == "coverage"]
    if not cov:
        return
    t = _table("Kernel coverage (which of each backend's own kernels the run called)")
    _col(t, "subject")
    _col(t, "verdict")
    _col(t, "what was reached")
    for r in cov:
        t.add_row(escape(r.subject), _v(r.verdict), escape(r.message))
    console.print(t)
    from .coverage import print_coverage

    print_coverage(cov, console, verbose=verbose)  # per kernel: calls, sizes, dtypes, layouts


def _print_failures(report: Report, console: Console) -> None:
    bad = [r for r in report.results if r.failed]
    if not bad:
        return
    console.rule("[bold red]Failures")
    for r in bad:
        flag = " [bold yellow](nondeterministic)[/]" if r.details.get("nondeterministic") else ""
        console.print(f"[bold red]FAIL[/] {escape(r.key)}{flag}")
        msg = r.message if r.suite != "opdb" else "\n".join(r.details.get("failures", []))
        console.print("  " + escape(msg).replace("\n", "\n  "))
        for line in diagnosis(r):
            console.print("  " + escape(line).replace("\n", "\n  "), highlight=False)
        if r.details.get("reproducer"):
            console.print("  [bold]shrunk program (runnable):[/]")
            console.print(escape(r.details["reproducer"]), highlight=False, soft_wrap=True)
        if r.details.get("traceback"):
            console.print(escape(_short_traceback(r.details["traceback"])), highlight=False)
