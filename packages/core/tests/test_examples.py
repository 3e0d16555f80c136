"""The examples/ scripts run (a few steps; the full accuracy run is marked slow)."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TRAIN_DIGITS = ROOT / "examples" / "train_digits.py"

pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", TRAIN_DIGITS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_digits_a_few_steps_with_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="the loss-curve plot needs matplotlib")
    example = load_example()
    plot = tmp_path / "loss.png"
    result = example.train(example.parse_args(["--steps", "12", "--plot", str(plot)]))
    assert len(result["losses"]) == 12
    assert all(math.isfinite(v) for v in result["losses"])
    assert result["losses"][0] > 1.5  # ~log(10) at random initialisation
    assert 0.0 <= result["test_accuracy"] <= 1.0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_train_digits_command_line(tmp_path):
    done = subprocess.run(
        [sys.executable, str(TRAIN_DIGITS), "--steps", "5", "--no-plot", "--no-progress"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "5 steps in" in done.stdout and "test accuracy" in done.stdout
    assert not list(tmp_path.iterdir())  # --no-plot wrote nothing


def test_train_digits_refuses_an_unusable_device():
    example = load_example()
    with pytest.raises(SystemExit, match="not usable"):
        example.train(example.parse_args(["--device", "no-such-device", "--steps", "1"]))


def test_train_digits_reaches_95_percent_on_cpu(tmp_path):
    plot = tmp_path / "loss.png"
    done = subprocess.run(
        [
            sys.executable,
            str(TRAIN_DIGITS),
            "--no-progress",
            "--min-accuracy",
            "0.95",
            "--plot",
            str(plot),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        # one BLAS thread: on a loaded two-core machine, threaded BLAS on these small
        # matrices is tens of times slower
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    accuracy = float(re.search(r"test accuracy ([\d.]+)%", done.stdout).group(1))
    assert accuracy >= 95.0
    if importlib.util.find_spec("matplotlib") is not None:
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.gpu
def test_train_digits_on_cuda(tmp_path):
    import retrograd as rg

    try:
        rg.zeros(1, device="cuda")
    except Exception as exc:
        pytest.skip(f"no usable cuda device: {exc}")
    example = load_example()
    result = example.train(
        example.parse_args(["--device", "cuda", "--steps", "300", "--no-progress", "--no-plot"])
    )
    assert result["test_accuracy"] >= 0.9


def test_committed_shared_branch_pictures_are_current(tmp_path):
    """docs/images holds what examples/shared_branch_pictures.py makes today (rerun it to refresh)."""
    spec = importlib.util.spec_from_file_location(
        "shared_branch_pictures", ROOT / "examples" / "shared_branch_pictures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.make_pictures(tmp_path)
    committed = ROOT / "docs" / "images"
    for kind in ("dot", "html", "text"):
        name = made[kind].name
        assert (committed / name).read_text(encoding="utf-8") == made[kind].read_text(
            encoding="utf-8"
        ), f"docs/images/{name} is stale: run python examples/shared_branch_pictures.py"
    svg = (committed / "shared-branch-graph.svg").read_text(encoding="utf-8")
    for word in ("AddBackward0", "MulBackward0", "AccumulateGrad", "input_nr=0", "seed"):
        assert word in svg
