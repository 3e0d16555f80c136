"""Reports: rich tables in the terminal, and JSON / JUnit XML files with a header that echoes
the versions and the configuration, so a report read later says what produced it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from .runner import Result
from .subjects import Subject

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
                "failed": sum(1 for r in self.results if r.failed)}

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

    def write_json(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, indent=2, default=str)

    def write_junit(self, path: str) -> None:
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
                    failure = ET.SubElement(case, "failure", message=r.message[:500])
                    failure.text = _long_message(r)
                elif r.verdict in ("skip", "unavailable", "xfail"):
                    ET.SubElement(case, "skipped", message=f"{r.verdict}: {r.message}"[:500])
        ET.indent(root)
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _long_message(r: Result) -> str:
    parts = [r.message]
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


def print_report(report: Report, console: Console, *, verbose: bool = False) -> None:
    h = report.header
    lines = [f"[bold]{k}[/]: {escape(str(v))}" for k, v in h["versions"].items()]
    lines += [f"[bold]config.{k}[/]: {escape(str(v))}" for k, v in h["config"].items()]
    console.print(Panel("\n".join(lines), title="retrograd-conformance", expand=False))

    t = Table(title="Subjects")
    for col in ("subject", "role", "status", "details"):
        t.add_column(col)
    for s in report.subjects + report.oracles:
        role = "oracle" if s.family == "torch" else "backend"
        detail = s.reason or ", ".join(f"{k}={v}" for k, v in s.info.items())
        status = "[green]available[/]" if s.available else "[yellow]unavailable[/]"
        t.add_row(s.name, role, status, escape(detail))
    console.print(t)

    _print_documents(report, console)
    _print_semantics(report, console, verbose)
    _print_opdb(report, console, verbose)
    _print_programs(report, console)
    _print_failures(report, console)
    s = report.summary()
    console.print("Summary: " + ", ".join(f"{_v(k)} {v}" for k, v in sorted(s["total"].items()))
                  + f"  -> exit {report.exit_code}")


def _print_documents(report: Report, console: Console) -> None:
    docs = [r for r in report.results if r.suite == "documents" and "case" in r.details]
    by_case: dict[str, list[Result]] = defaultdict(list)
    for r in docs:
        by_case[r.details["case"]].append(r)
    oracle_names = {o.name for o in report.oracles}
    for case_id, results in by_case.items():
        first = results[0].details
        subjects = list(dict.fromkeys(r.subject for r in results))
        t = Table(title=f"[bold]{case_id}[/]: {escape(first['title'])}",
                  caption=escape("; ".join(first["sources"])
                                 + (f" -- note: {first['note']}" if first["note"] else "")),
                  show_lines=False)
        t.add_column("quantity")
        t.add_column("document")
        for name in subjects:
            t.add_column(name + (" (oracle)" if name in oracle_names else ""))
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
            per = {r.details["dtype"]: r.verdict for r in results if r.subject == name}
            verdicts.append(" ".join(f"{_v(v)}({d[-2:]})" for d, v in sorted(per.items())))
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
    t = Table(title="Semantics (autograd corners, vs the oracle in the same dtype)")
    t.add_column("case")
    t.add_column("checks")
    for name in subjects:
        t.add_column(name + (" (oracle)" if name in oracle_names else ""))
    shown = 0
    for case_id, per in grid.items():
        if not verbose and all(not r.failed for rs in per.values() for r in rs):
            continue
        shown += 1
        first = next(iter(per.values()))[0].details
        cells = [case_id, escape(first["title"])]
        for name in subjects:
            cells.append(" ".join(f"{_v(r.verdict)}({r.details['dtype'][-2:]})"
                                  for r in per.get(name, [])))
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
    t = Table(title="Op database (gradcheck, gradgradcheck, vs oracle; float32 / float64)")
    t.add_column("op")
    t.add_column("samples")
    for name in subjects:
        t.add_column(name)
    all_ok = True
    for op, per in grid.items():
        row_ok = all(not r.failed for rs in per.values() for r in rs)
        all_ok &= row_ok
        if row_ok and not verbose:
            continue
        samples = next(iter(per.values()))[0].details["samples"]
        cells = [op, str(samples)]
        for name in subjects:
            cells.append(" ".join(f"{_v(r.verdict)}({r.details['dtype'][-2:]})"
                                  for r in per.get(name, [])))
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
    t = Table(title="Generated programs (hypothesis, vs oracle)")
    for col in ("subject", "programs", "seconds", "modes", "verdict"):
        t.add_column(col)
    for r in progs:
        modes = ", ".join(f"{k} {v}" for k, v in sorted(r.details.get("modes", {}).items()))
        t.add_row(r.subject, str(r.details.get("programs", "-")), f"{r.seconds:.1f}",
                  escape(modes), _v(r.verdict))
    console.print(t)


def _print_failures(report: Report, console: Console) -> None:
    bad = [r for r in report.results if r.failed]
    if not bad:
        return
    console.rule("[bold red]Failures")
    for r in bad:
        console.print(f"[bold red]FAIL[/] {escape(r.key)}")
        msg = r.message if r.suite != "opdb" else "\n".join(r.details.get("failures", []))
        console.print("  " + escape(msg).replace("\n", "\n  "))
        if r.details.get("reproducer"):
            console.print("  [bold]shrunk program (runnable):[/]")
            console.print(escape(r.details["reproducer"]), highlight=False, markup=True)
        if r.details.get("traceback"):
            console.print(escape(r.details["traceback"]))
