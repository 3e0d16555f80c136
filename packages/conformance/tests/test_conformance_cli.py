"""The CLI and the pytest plugin, as a vendor uses them."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from retrograd_conformance.cli import main


def test_cli_documents_on_cpu_writes_reports(tmp_path, capsys):
    js, xml = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["--backend", "cpu", "--suite", "documents", "-k", "shared",
                 "--json", str(js), "--junit", str(xml)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "shared-branch" in out and "design 002, how gradients meet" in out
    report = json.loads(js.read_text())
    assert report["header"]["versions"]["torch"].startswith("2.")
    assert report["header"]["versions"]["retrograd"]
    assert report["header"]["config"]["backends"] == ["retrograd:cpu"]
    assert {r["verdict"] for r in report["results"]} == {"pass"}
    assert {r["subject"] for r in report["results"]} == {"torch", "retrograd:cpu"}
    root = ET.parse(xml).getroot()
    names = {p.get("name") for p in root.find("properties")}
    assert "versions.torch" in names and "config.oracle" in names
    assert int(root.find("testsuite").get("tests")) > 0


def test_cli_unknown_backend_is_unavailable_and_fails(capsys):
    code = main(["--backend", "no_such_backend", "--suite", "documents", "-k", "leaf-root"])
    out = capsys.readouterr().out
    assert code != 0
    assert "unavailable" in out and "no_such_backend" in out


def test_cli_xfails_file(tmp_path, capsys):
    xf = tmp_path / "xfails.txt"
    xf.write_text("# a comment\nleaf-root[float32]   # known\nnothing-matches-this\n")
    code = main(["--backend", "cpu", "--suite", "documents", "-k", "leaf-root",
                 "--xfails-file", str(xf), "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert "nothing-matches-this" in out and "matches no test id" in out
    assert code == 1  # leaf-root passes, so the xfail entry is stale: xpass is a failure
    verdicts = {r["key"]: r["verdict"] for r in json.loads((tmp_path / "r.json").read_text())
                ["results"]}
    assert verdicts["retrograd:cpu::documents/leaf-root[float32]"] == "xpass"


def test_pytest_plugin(tmp_path):
    skips = tmp_path / "skips.txt"
    skips.write_text("float32  # only float64 here\nstale-entry\n")
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "retrograd_conformance",
           "--backend", "cpu", "-k", "test_document and shared-branch", "-p",
           "no:cacheprovider", "--skips-file", str(skips), "-rs", "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "2 passed" in out and "2 skipped" in out, out
    assert "stale-entry" in out and "matches no collected test id" in out
