"""Regenerate the table of docs/backends.md from conformance JSON reports.

    python -m nox -s conformance                       # writes out/conformance/report.json
    python tools/backends_table.py out/conformance/report.json [more.json ...]
    python tools/backends_table.py --check out/conformance/report.json   # exit 1 if stale

Each backend (a ``retrograd:<name>`` subject of any report given; a later report wins for
each check it also ran) gets one row: per suite family the count of checks
passed, and of those expected to fail (xfail), failed, or not run because the backend was
unavailable; then every xfail with the reason its backend's xfails file gives. The rows
replace the text between the markers of docs/backends.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "backends.md"
BEGIN, END = "<!-- backends-table:begin -->", "<!-- backends-table:end -->"
FAMILIES = ("capabilities", "documents", "semantics", "opdb", "programs", "coverage")


def _latest(reports: list[dict]) -> dict[str, dict]:
    """backend name -> {"subject": info, "checks": {(suite, id): result}}: a later report
    wins for each check it ran, so a record may be put together from several runs (one
    family each, or a rerun of some checks)."""
    rows: dict[str, dict] = {}
    for report in reports:
        ran = {s["name"]: s for s in report["subjects"] if s["family"] == "retrograd"}
        for name, subject in ran.items():
            rows.setdefault(name, {"checks": {}})["subject"] = subject
        for r in report["results"]:
            if r["subject"] in ran and r["suite"] in FAMILIES:
                rows[r["subject"]]["checks"][(r["suite"], r["id"])] = r
    return rows


def collect(reports: list[dict]) -> dict[str, dict]:
    """backend name -> {"families": {family: Counter of verdicts}, "subject": info}, each
    check counted as the latest report that ran it left it."""
    rows = {}
    for name, row in _latest(reports).items():
        families: dict[str, Counter] = {f: Counter() for f in FAMILIES}
        for (suite, _id), r in row["checks"].items():
            families[suite][r["verdict"]] += 1
        rows[name] = {"subject": row["subject"], "families": families}
    return rows


def cell(counts: Counter) -> str:
    if not counts:
        return "-"
    if counts.get("unavailable") and len(counts) == 1:
        return "unavailable"
    parts = [f"{counts['pass']} passed"] if counts.get("pass") else []
    for verdict in ("xfail", "fail", "xpass", "skip"):
        if counts.get(verdict):
            parts.append(f"{counts[verdict]} {verdict}")
    return ", ".join(parts) or "-"


def table(rows: dict[str, dict]) -> str:
    head = "| backend | " + " | ".join(FAMILIES) + " |"
    lines = [head, "|" + " --- |" * (len(FAMILIES) + 1)]
    for name in sorted(rows):
        fam = rows[name]["families"]
        lines.append(f"| `{name.split(':', 1)[1]}` | " + " | ".join(cell(fam[f]) for f in FAMILIES)
                     + " |")
    return "\n".join(lines)


def expected_failures(reports: list[dict]) -> str:
    """Each xfail (as the latest report that ran the check left it): the backend, the check
    and the reason its xfails file gives."""
    lines = []
    for name, row in sorted(_latest(reports).items()):
        for (suite, _id), r in sorted(row["checks"].items()):
            if r["verdict"] != "xfail":
                continue
            reason = r.get("details", {}).get("xfail_reason") or "(no reason given)"
            lines.append(f"- `{name.split(':', 1)[1]}` `{suite}/{r['id']}`: {reason}")
    if not lines:
        return ""
    return "\n\nExpected failures (from each backend's xfails file):\n\n" + "\n".join(lines)


def render(page: str, reports: list[dict]) -> str:
    start, stop = page.index(BEGIN) + len(BEGIN), page.index(END)
    runs = ", ".join(f"{r['header']['run_id']} (oracle torch "
                     f"{r['header'].get('versions', {}).get('torch', '?')})" for r in reports)
    body = f"\n{table(collect(reports))}{expected_failures(reports)}\n\nFrom run {runs}.\n"
    return page[:start] + body + page[stop:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", help="conformance JSON reports")
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/backends.md differs")
    args = ap.parse_args(argv)
    reports = [json.loads(Path(p).read_text()) for p in args.reports]
    page = PAGE.read_text()
    new = render(page, reports)
    if args.check:
        if new != page:
            print("docs/backends.md is stale: run tools/backends_table.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
