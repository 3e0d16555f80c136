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
    both = table.collect([report, json.loads(caps.read_text())])  # later: its families win
    assert table.cell(both["retrograd:cpu"]["families"]["capabilities"]) == "3 passed"
    # the families the later run did not run are kept from the earlier one
    assert table.cell(both["retrograd:cpu"]["families"]["documents"]) == "2 passed"


def test_expected_failures_are_listed_with_the_reason_of_the_xfails_file(tmp_path):
    xfails = tmp_path / "xfails.txt"
    xfails.write_text("# header of the file\n\n# the reason, on\n# two lines\n"
                      "retrograd:cpu::documents/leaf-root[float32]\n")
    js = tmp_path / "r.json"
    # a passing check listed as failing is an xpass, which fails the run: the listing is
    # read from a report where the case is turned into a failure first
    main(["--backend", "cpu", "--suite", "documents", "-k", "leaf-root", "--json", str(js),
          "--no-progress", "--xfails-file", str(xfails)])
    report = json.loads(js.read_text())
    for r in report["results"]:
        if r["verdict"] == "xpass":
            r["verdict"] = "xfail"
    listed = table.expected_failures([report])
    assert "- `cpu` `documents/leaf-root[float32]`: the reason, on two lines" in listed


def test_a_backend_packages_own_xfails_file_is_applied(tmp_path, monkeypatch):
    """A backend's module that offers ``conformance_xfails()`` has its file read without
    ``--xfails-file``: here it lists a check that passes, so the run fails with an xpass."""
    (tmp_path / "xfails.txt").write_text("# listed, but it passes\n"
                                        "::documents/leaf-root[float64]\n")
    (tmp_path / "own_xfails_backend.py").write_text(
        "from pathlib import Path\n"
        "from retrograd.backends.numpy import NumpyBackend\n"
        "class OwnBackend(NumpyBackend):\n"
        "    pass\n"
        "backend = OwnBackend()\n"
        "backend.name = 'own_xfails'\n"
        "def conformance_xfails():\n"
        "    return str(Path(__file__).with_name('xfails.txt'))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    js = tmp_path / "r.json"
    args = ["--backend", "own_xfails_backend:backend", "--suite", "documents", "-k", "leaf-root",
            "--json", str(js), "--no-progress"]
    assert main(args) == 1
    verdicts = {r["id"]: r["verdict"] for r in json.loads(js.read_text())["results"]}
    assert verdicts["leaf-root[float64]"] == "xpass"
    assert main(args + ["--no-backend-xfails"]) == 0


def test_the_suite_lets_a_backend_trim_its_caches_between_ops(tmp_path, monkeypatch):
    """JAX keeps a compiled program per primitive and shape; the suite calls the backend's
    ``trim_caches()`` after each op of the database (and each case, and every 50 programs)."""
    (tmp_path / "trimmed_backend.py").write_text(
        "from retrograd.backends.numpy import NumpyBackend\n"
        "class Trimmed(NumpyBackend):\n"
        "    calls = 0\n"
        "    def trim_caches(self):\n"
        "        type(self).calls += 1\n"
        "backend = Trimmed()\n"
        "backend.name = 'trimmed'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import trimmed_backend

    assert main(["--backend", "trimmed_backend:backend", "--suite", "opdb", "-k", "opdb/exp",
                 "--no-progress"]) == 0
    assert trimmed_backend.Trimmed.calls >= 1


def test_a_later_report_wins_for_each_check_it_ran():
    def report(*results):
        return {"subjects": [{"name": "retrograd:x", "family": "retrograd"}],
                "header": {"run_id": "r", "versions": {}},
                "results": [{"subject": "retrograd:x", "suite": "opdb", "id": i, "verdict": v}
                            for i, v in results]}

    first = report(("a[float32]", "fail"), ("b[float32]", "pass"))
    rerun = report(("a[float32]", "pass"))  # only the failing check, run again
    rows = table.collect([first, rerun])
    assert table.cell(rows["retrograd:x"]["families"]["opdb"]) == "2 passed"


def test_a_coverage_failure_is_printed_without_a_crash():
    """The coverage check's details carry the kernel table (a list), not a case's kernel
    counts (a dict): printing its failure once raised AttributeError."""
    from retrograd_conformance.report import diagnosis
    from retrograd_conformance.runner import Result

    r = Result("coverage", "kernels", "retrograd:x", "fail", "setitem never called",
               details={"kernels": [{"name": "setitem", "calls": 0}]})
    assert isinstance(diagnosis(r), list)


def test_an_entry_marked_may_pass_is_no_news_when_it_passes():
    from retrograd_conformance.runner import Result, apply_expectations

    passing = Result("opdb", "a[float32]", "retrograd:x", "pass")
    failing = Result("opdb", "b[float32]", "retrograd:x", "fail")
    strict = Result("opdb", "c[float32]", "retrograd:x", "pass")
    apply_expectations([passing, failing, strict],
                       [("?::opdb/a[", "machine-dependent"), ("?::opdb/b[", "same"),
                        ("::opdb/c[", "strict")], [], lambda msg: None)
    assert (passing.verdict, failing.verdict, strict.verdict) == ("pass", "xfail", "xpass")
    assert failing.details["xfail_reason"] == "same"
