"""Generated programs: deterministic, valid PyTorch, covering shared values, several roots,
retain_grad, seeds, create_graph and refused in-place changes, and agreeing with PyTorch on
cpu."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

from hypothesis import HealthCheck, given, seed, settings

from retrograd_conformance.adapter import make_lib
from retrograd_conformance.errors import Raised
from retrograd_conformance.programs import check_programs, programs, run_program


def _sources(n: int, seed_value: int) -> list:
    out = []

    @settings(max_examples=n, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @seed(seed_value)
    @given(programs())
    def collect(p):
        out.append(p)

    collect()
    return out


def test_programs_are_deterministic():
    a = [p.source for p in _sources(40, 7)]
    b = [p.source for p in _sources(40, 7)]
    assert a == b


def test_programs_are_valid_pytorch_and_cover_the_features():
    features, modes = Counter(), Counter()
    for p in _sources(400, 1):
        out = run_program(p.source, make_lib("torch", "float64"))
        if p.expects_error:
            assert isinstance(out["backward"], Raised), p.source
            assert out["backward"].kind == "runtime/version-mismatch", p.source
        else:
            assert not isinstance(out, Raised), f"{out}\n{p.source}"
        features.update(p.features)
        modes[p.mode] += 1
    for needed in ("repeated-operand", "broadcasting", "nonscalar-seed", "retain_grad",
                   "several-roots", "inplace-no_grad", "create_graph"):
        assert features[needed] >= 5, (needed, features)
    assert set(modes) == {"backward", "backward-seed", "multi-root", "grad", "create-graph",
                          "inplace"}


def test_programs_agree_with_torch_on_cpu():
    report = check_programs("retrograd:cpu", count=150)
    assert report.crash is None, report.crash
    assert report.failure is None, f"{report.failure.reason}\n{report.failure.reproducer}"
    assert report.run == 150


def test_reproducer_is_runnable(tmp_path):
    p = _sources(5, 2)[-1]
    path = tmp_path / "repro.py"
    path.write_text(p.reproducer("retrograd:cpu"))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "verdict: agree" in done.stdout


# ---- template kinds ----------------------------------------------------------------------------


def test_axis_kinds_are_only_emitted_on_operands_of_rank_two_or_more(monkeypatch):
    """transpose, permute, T (and matmul's x @ x.transpose(-1, -2)) never meet a 0-d or 1-d
    operand: the shape template draws only among the kinds its operand admits."""
    from retrograd_conformance.programs.builder import AXIS_KINDS, Builder
    from retrograd_conformance.programs.strategy import kind_programs

    ranks: list[tuple[str, int]] = []
    orig = Builder.tag

    def tag(self, template, kind, a):
        out = orig(self, template, kind, a)
        ranks.append(self._pending)
        return out

    monkeypatch.setattr(Builder, "tag", tag)
    seen: Counter = Counter()
    for p in _sources(300, 4):
        seen.update(p.kinds)
    kind_programs()
    drawn = [(k, r) for k, r in ranks if k in AXIS_KINDS]
    assert drawn, "no axis kind was drawn"
    assert all(r >= 2 for _, r in drawn), [d for d in drawn if d[1] < 2]
    assert all(r == 2 for k, r in drawn if k == "shape/T")
    assert seen["shape/permute"] and seen["shape/transpose"], seen


def test_a_run_reports_how_often_each_kind_appeared():
    from retrograd_conformance.programs.builder import ALL_KINDS

    report = check_programs("retrograd:cpu", count=120, seed_value=3)
    assert report.ok, report.failure and report.failure.reason
    counts = report.kind_counts
    assert list(counts) == list(ALL_KINDS)
    assert all(v >= 1 for v in counts.values()), [k for k, v in counts.items() if not v]
    assert report.kind_programs == len(ALL_KINDS)  # one program per kind closes the run
    assert not report.unseen_kinds and report.coverage_failure is None


def test_the_default_run_generates_every_kind_by_itself():
    """Without the one-per-kind programs: the default seed's 500 programs reach every kind
    (shape/T and shape/transpose used to never appear)."""
    from retrograd_conformance.programs.builder import ALL_KINDS
    from retrograd_conformance.programs.check import DEFAULT_SEED

    kinds: Counter = Counter()
    for p in _sources(500, DEFAULT_SEED):
        kinds.update(p.kinds)
    assert [k for k in ALL_KINDS if not kinds[k]] == []


def test_a_kind_the_generator_cannot_produce_fails_the_run(monkeypatch):
    from retrograd_conformance.programs import builder

    original = builder._shape_applies
    monkeypatch.setattr(builder, "_shape_applies",
                        lambda kind, a: kind != "T" and original(kind, a))
    report = check_programs("retrograd:cpu", count=120, seed_value=3, oracle=None)
    assert report.failure is None and report.crash is None
    assert report.unseen_kinds == ["shape/T"]
    assert not report.ok
    assert "shape/T" in report.coverage_failure and "120 generated programs" in \
        report.coverage_failure


def test_a_short_run_only_reports_kinds():
    report = check_programs("retrograd:cpu", count=10, seed_value=3, oracle=None)
    assert report.kind_programs == 0 and not report.unseen_kinds and report.ok
    assert sum(report.kinds.values()) > 0


def test_reproducer_exits_non_zero_and_shows_the_first_differing_digit():
    """A reproducer ends with SystemExit(1) on a mismatch; the digits line points at the
    first digit where the subject's value leaves torch's."""
    import numpy as np

    from retrograd_conformance.programs.builder import REPRO_TEMPLATE
    from retrograd_conformance.programs.check import differing_digits

    assert "raise SystemExit(0 if run_program_source(" in REPRO_TEMPLATE
    compile(REPRO_TEMPLATE.format(source="def program(lib):\n    return {}", subject="cpu",
                                  dtype="float32"), "<repro>", "exec")
    lines = differing_digits({"y": np.array([1.0, 2.0000001234])},
                             {"y": np.array([1.0, 2.0000001299])})
    torch_line, subject_line, caret = lines
    assert torch_line.endswith("2.0000001234") and "y[1]" in subject_line
    col = caret.index("^")
    assert torch_line[col] == "3" and subject_line[col] == "9"
    assert differing_digits({"y": np.array([1.0])}, {"y": np.array([1.0])}) == []
