"""The CLI and the pytest plugin, as a vendor uses them."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

from retrograd import backends
from retrograd.backends.numpy import NumpyBackend
from retrograd_conformance import cli
from retrograd_conformance.cases import DOCUMENT_CASES, SEMANTICS_CASES
from retrograd_conformance.cli import main
from retrograd_conformance.errors import Raised, format_frames, last_frames
from retrograd_conformance.opdb import OPS
from retrograd_conformance.programs.strategy import MODES
from retrograd_conformance.report import LOG_WIDTH, make_console
from retrograd_conformance.subjects import recording_kernels

WIDE = ["--width", "400"]  # no wrapping: the assertions below read whole lines


def _json(path):
    return json.loads(path.read_text())


def test_cli_documents_on_cpu_writes_reports(tmp_path, capsys):
    js, xml = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["--backend", "cpu", "--suite", "documents", "-k", "shared",
                 "--json", str(js), "--junit", str(xml), *WIDE])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "shared-branch" in out
    # captioned by topic, and by the section of docs/conformance.md that explains it
    assert "How gradients meet: a shared value receives two contributions" in out
    assert "docs/conformance.md#shared-branch" in out
    assert "design 00" not in out and ".txt" not in out
    report = _json(js)
    assert report["header"]["versions"]["torch"].startswith("2.")
    assert report["header"]["versions"]["retrograd"]
    assert report["header"]["config"]["backends"] == ["retrograd:cpu"]
    assert report["header"]["run_id"]
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
                 "--xfails-file", str(xf), "--json", str(tmp_path / "r.json"), *WIDE])
    out = capsys.readouterr().out
    assert "nothing-matches-this" in out and "matches no test id" in out
    assert code == 1  # leaf-root passes, so the xfail entry is stale: xpass is a failure
    verdicts = {r["key"]: r["verdict"] for r in _json(tmp_path / "r.json")["results"]}
    assert verdicts["retrograd:cpu::documents/leaf-root[float32]"] == "xpass"


# ---- --list ------------------------------------------------------------------------------------


def test_list_names_every_case_op_and_program_kind(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for case in DOCUMENT_CASES:
        assert any(line.split()[0] == f"documents/{case.id}" for line in lines if line.strip())
    for case in SEMANTICS_CASES:
        assert f"semantics/{case.group}/{case.id}" in out
    for op in OPS:
        assert f"opdb/{op.name} " in out
    for mode in MODES:
        assert f"programs/{mode} " in out
    assert "How gradients meet" in out  # the topic of each document case


def test_list_follows_suite_and_pattern(capsys):
    assert main(["--list", "--suite", "semantics", "-k", "hook"]) == 0
    out = capsys.readouterr().out
    assert "semantics/hooks/hook-chain" in out
    assert "documents/" not in out and "opdb/" not in out and "programs/" not in out
    assert "semantics/promotion/" not in out


# ---- --backend module:attr ---------------------------------------------------------------------


def _vendor_module(tmp_path, name):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(f"""
        from retrograd.backends.numpy import NumpyBackend

        class Mine(NumpyBackend):
            def __init__(self):
                super().__init__()
                self.name = "{name}_dev"

        backend = Mine()
    """))


@pytest.fixture
def vendor_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in list(backends.registered_backends()):
        if name.endswith("_dev"):
            backends.unregister_backend(name)


def test_backend_given_as_module_attribute(vendor_dir, capsys):
    _vendor_module(vendor_dir, "vendor_a")
    js = vendor_dir / "r.json"
    code = main(["--backend", "vendor_a:backend", "--suite", "documents", "-k", "leaf-root",
                 "--json", str(js), *WIDE])
    out = capsys.readouterr().out
    assert code == 0, out
    report = _json(js)
    subject = next(s for s in report["subjects"] if s["name"] == "retrograd:vendor_a_dev")
    assert subject["available"] and subject["info"]["loaded_from"] == "vendor_a:backend"
    assert {r["subject"] for r in report["results"]} == {"torch", "retrograd:vendor_a_dev"}


def test_backend_class_as_module_attribute_and_a_bad_one(vendor_dir, capsys):
    _vendor_module(vendor_dir, "vendor_b")
    code = main(["--backend", "vendor_b:Mine", "--suite", "documents", "-k", "leaf-root",
                 *WIDE])
    assert code == 0, capsys.readouterr().out
    code = main(["--backend", "vendor_b:nothing_here", "--suite", "documents", "-k",
                 "leaf-root", *WIDE])
    out = capsys.readouterr().out
    assert code == 3  # a backend asked for by name could not be tested
    assert "cannot load vendor_b:nothing_here" in out and "AttributeError" in out


# ---- progress, width, files --------------------------------------------------------------------


def test_progress_lines_go_to_stderr_and_can_be_turned_off(capsys):
    assert main(["--backend", "cpu", "--suite", "documents", "-k", "leaf-root"]) == 0
    captured = capsys.readouterr()
    assert "retrograd-conformance: documents: 1 cases on 1 backend(s)" in captured.err
    assert "documents: done in" in captured.err
    assert "retrograd-conformance: documents:" not in captured.out
    assert main(["--backend", "cpu", "--suite", "documents", "-k", "leaf-root",
                 "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_tables_fit_the_width(capsys):
    code = main(["--backend", "cpu", "--suite", "documents", "--suite", "semantics",
                 "--width", "80", "--verbose"])
    out = capsys.readouterr().out
    assert code == 0
    too_wide = [line for line in out.splitlines() if len(line) > 80]
    assert not too_wide, too_wide[:3]


def test_console_width_policy(monkeypatch):
    assert make_console(77).width == 77
    monkeypatch.setenv("COLUMNS", "91")
    assert make_console().width == 91
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr("retrograd_conformance.report._terminal_width", lambda: None)
    assert make_console(file=open(__file__)).width == LOG_WIDTH  # noqa: SIM115 - not a tty


def test_a_directory_gets_one_report_per_run(tmp_path, capsys):
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    for _ in range(2):
        assert main(["--backend", "cpu", "--suite", "documents", "-k", "leaf-root",
                     "--json", str(out_dir), "--junit", str(out_dir)]) == 0
    capsys.readouterr()
    assert len(list(out_dir.glob("retrograd-conformance-*.json"))) == 2
    assert len(list(out_dir.glob("retrograd-conformance-*.xml"))) == 2
    assert not list(out_dir.glob("*.tmp"))


def test_an_interrupted_run_still_writes_its_report(tmp_path, capsys, monkeypatch):
    real = cli.document_results
    calls = itertools.count()

    def interrupted(*args, **kwargs):
        if next(calls) == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "document_results", interrupted)
    js = tmp_path / "r.json"
    code = main(["--backend", "cpu", "--suite", "documents", "--json", str(js)])
    out = capsys.readouterr().out
    assert code == 130 and "interrupted" in out
    report = _json(js)
    assert report["header"]["interrupted"] is True
    assert {r["details"]["case"] for r in report["results"]} == {DOCUMENT_CASES[0].id}


# ---- diagnostics: rerun, frames, kernels -------------------------------------------------------


class _FlakyAdd(NumpyBackend):
    """``add`` is wrong on its first call only: the first run fails, the rerun passes."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "flaky_dev"
        good, seen = self.kernels["add"], itertools.count()
        self.override(add=lambda a, b: good(a, b) * (3.0 if next(seen) == 0 else 1.0))


class _RaisingSum(NumpyBackend):
    """``sum`` of a matrix raises: every case that sums a matrix stops there."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "raising_dev"
        good = self.kernels["sum"]

        def matrix_sum_unsupported(x, dim=None, keepdim=False):
            if getattr(x, "ndim", 0) == 2:
                raise RuntimeError("this backend cannot sum a matrix")
            return good(x, dim, keepdim)

        self.override(sum=matrix_sum_unsupported)


@pytest.fixture
def registered():
    names = []

    def register(backend):
        backends.register_backend(backend.name, backend)
        names.append(backend.name)
        return backend.name

    yield register
    for name in names:
        backends.unregister_backend(name)


def test_a_failure_that_does_not_repeat_is_flagged_nondeterministic(tmp_path, capsys,
                                                                     registered):
    name = registered(_FlakyAdd())
    js, xml = tmp_path / "r.json", tmp_path / "r.xml"
    code = main(["--backend", name, "--suite", "documents", "-k", "shared-branch-x3",
                 "--json", str(js), "--junit", str(xml), *WIDE])
    out = capsys.readouterr().out
    assert code == 1  # still a failure: it failed once
    failed = [r for r in _json(js)["results"] if r["verdict"] == "fail"]
    assert [r["key"] for r in failed] == [f"retrograd:{name}::documents/shared-branch-x3[float32]"]
    assert failed[0]["details"]["nondeterministic"] is True
    assert failed[0]["details"]["rerun"]["verdict"] == "pass"
    assert "(nondeterministic)" in out and "the rerun passed" in out
    assert "1 of them nondeterministic" in out
    failure = ET.parse(xml).getroot().find(".//failure")
    assert failure.get("message").startswith("[nondeterministic]")


def test_a_failure_reports_its_frames_and_kernels(tmp_path, capsys, registered):
    name = registered(_RaisingSum())
    js = tmp_path / "r.json"
    code = main(["--backend", name, "--suite", "documents", "-k", "broadcast-reduce",
                 "--json", str(js), *WIDE])
    out = capsys.readouterr().out
    assert code == 1
    failed = [r for r in _json(js)["results"] if r["verdict"] == "fail"]
    assert failed and all(not r["details"]["nondeterministic"] for r in failed)
    details = failed[0]["details"]
    frames = details["frames"]["the program"]
    assert "matrix_sum_unsupported" in frames[-1]  # the innermost frame is the kernel's
    assert not any("subjects.py" in f for f in frames)  # the kernel counter is not shown
    assert list(details["kernels"])[-1] == "sum"  # the kernel that raised was the last run
    assert "rerun once: the same failure" in out
    assert "innermost frames last" in out and "matrix_sum_unsupported" in out
    assert "kernels the subject ran" in out


def test_a_program_reproducer_carries_the_diagnosis(tmp_path, capsys, registered):
    name = registered(_RaisingSum())
    js = tmp_path / "r.json"
    code = main(["--backend", name, "--suite", "programs", "--fuzz", "200", "--json",
                 str(js), *WIDE])
    capsys.readouterr()
    assert code == 1
    (result,) = [r for r in _json(js)["results"] if r["suite"] == "programs"]
    reproducer = result["details"]["reproducer"]
    compile(reproducer, "reproducer.py", "exec")  # still a runnable file
    assert "innermost frames last" in reproducer and "matrix_sum_unsupported" in reproducer
    assert "# kernels the subject ran" in reproducer
    assert result["details"]["kernels"]["sum"] >= 1


def test_no_rerun(tmp_path, capsys, registered):
    name = registered(_RaisingSum())
    js = tmp_path / "r.json"
    assert main(["--backend", name, "--suite", "documents", "-k", "broadcast-reduce",
                 "--no-rerun", "--json", str(js)]) == 1
    capsys.readouterr()
    assert all("rerun" not in r["details"] for r in _json(js)["results"])


def test_recording_kernels_counts_and_restores(registered):
    import retrograd as rg

    name = registered(_RaisingSum())
    before = dict(backends.get_backend(name).kernels)
    with recording_kernels(name) as calls:
        x = rg.tensor([1.0, 2.0], device=name, requires_grad=True)
        (x.tanh() * x).sum().backward()
    assert calls["tanh"] == 1 and calls["tanh_backward"] == 1 and calls["mul"] >= 1
    assert backends.get_backend(name).kernels == before


def test_raised_keeps_the_innermost_frames():
    def inner():
        raise ValueError("deep down")

    try:
        inner()
    except ValueError as exc:
        captured = Raised("value", "ValueError", str(exc))  # as every runner builds one
        explicit = Raised.from_exception(exc, "value")
        frames = last_frames(exc, limit=1)
    assert captured.frames and "in inner: raise ValueError" in captured.frames[-1]
    assert explicit.frames == captured.frames
    assert len(frames) == 1 and frames[0] == captured.frames[-1]
    assert Raised("value", "ValueError", "x").frames == ()  # outside an except block
    assert captured == Raised("value", "ValueError", "deep down")  # frames are not compared
    assert format_frames(frames, "> ").startswith("> ")


# ---- the pytest plugin -------------------------------------------------------------------------


def test_pytest_plugin(tmp_path):
    skips = tmp_path / "skips.txt"
    skips.write_text("float32  # only float64 here\nstale-entry\n")
    _vendor_module(tmp_path, "vendor_p")
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "retrograd_conformance",
           "--backend", "cpu", "--backend", "vendor_p:backend",
           "-k", "test_document and shared-branch", "-p",
           "no:cacheprovider", "--skips-file", str(skips), "-rs", "-q"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "4 passed" in out and "4 skipped" in out, out
    assert "stale-entry" in out and "matches no collected test id" in out


# ---- --shard ------------------------------------------------------------------------------------


def test_shards_split_the_checks_and_together_are_the_whole_run(tmp_path, capsys):
    """Three parts of a narrowed run: disjoint, their union the unsharded run's checks; the
    capabilities and generated programs only in part 1; no coverage verdict for a part."""
    common = ["--backend", "cpu", "--suite", "capabilities", "--suite", "documents",
              "--suite", "programs", "--fuzz", "2", "--no-progress", *WIDE]

    def keys(name, *extra):
        code = main([*common, *extra, "--json", str(tmp_path / name)])
        assert code == 0, capsys.readouterr().out
        report = _json(tmp_path / name)
        return [(r["subject"], r["suite"], r["id"]) for r in report["results"]], report

    whole, _ = keys("whole.json")
    parts = [keys(f"part{i}.json", "--shard", f"{i}/3") for i in (1, 2, 3)]
    seen = [k for part, _ in parts for k in part]
    assert len(seen) == len(set(seen)) and set(seen) == set(whole)
    assert all(len(part) < len(whole) for part, _ in parts)
    assert [r["header"]["config"]["shard"] for _, r in parts] == ["1/3", "2/3", "3/3"]
    later = {k[1] for part, _ in parts[1:] for k in part}
    assert "programs" not in later and "capabilities" not in later
    assert {"programs", "capabilities", "documents"} <= {k[1] for k in parts[0][0]}


@pytest.mark.parametrize("spec", ["0/3", "4/3", "2", "a/b"])
def test_a_bad_shard_is_refused_naming_it(spec, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--backend", "cpu", "--shard", spec])
    assert exc.value.code == 2
    assert "--shard" in capsys.readouterr().err


def test_list_shows_the_part_a_shard_would_run(capsys):
    def listed(*extra):
        assert main(["--list", "--suite", "opdb", "--suite", "documents", *extra]) == 0
        return {line.split()[0] for line in capsys.readouterr().out.splitlines()
                if line.startswith("  ")}

    whole = listed()
    parts = [listed("--shard", f"{i}/4") for i in (1, 2, 3, 4)]
    assert set().union(*parts) == whole and sum(map(len, parts)) == len(whole)
