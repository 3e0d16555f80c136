"""Generated programs: deterministic, valid PyTorch, covering what SPEC §6 lists, and agreeing
with PyTorch on cpu."""

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
