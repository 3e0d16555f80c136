"""tools/backends_table.py: the table of docs/backends.md comes from real conformance reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from retrograd_conformance.cli import main

ROOT = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("backends_table", ROOT / "tools" / "backends_table.py")
table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table)


def test_a_report_becomes_one_row_per_backend(tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["--backend", "cpu", "--backend", "no_such_backend", "--suite", "documents",
                 "-k", "leaf-root", "--json", str(js),
                 "--no-progress"]) != 0  # the missing backend fails the run
    report = json.loads(js.read_text())
    rows = table.collect([report])
    assert set(rows) == {"retrograd:cpu", "retrograd:no_such_backend"}
    text = table.table(rows)
    assert "| `cpu` | - | 2 passed | - |" in text  # the case in float32 and float64
    assert "| `no_such_backend` | - | unavailable |" in text
    page = "intro\n" + table.BEGIN + "\nold\n" + table.END + "\nend\n"
    new = table.render(page, [report])
    assert new.startswith("intro\n" + table.BEGIN) and new.endswith(table.END + "\nend\n")
    assert "old" not in new and text in new
    caps = tmp_path / "caps.json"
    assert main(["--backend", "cpu", "--suite", "capabilities", "--json", str(caps),
                 "--no-progress"]) == 0
    both = table.collect([report, json.loads(caps.read_text())])  # the later run wins for cpu
    assert table.cell(both["retrograd:cpu"]["families"]["capabilities"]) == "3 passed"
