"""Importing retrograd_cuda never fails, and is_available() answers cleanly everywhere.

The "without CuPy" cases run in a subprocess whose import system hides CuPy, so they test the
real thing on every machine, CuPy installed or not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import retrograd_cuda
from retrograd_cuda import availability

# Makes `import cupy` fail and find_spec("cupy") return None, as on a machine without CuPy.
HIDE_CUPY = textwrap.dedent(
    """
    import sys
    class _HideCupy:
        def find_spec(self, name, path=None, target=None):
            if name == "cupy" or name.startswith(("cupy.", "cupyx", "cupy_backends")):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, _HideCupy())
    """
)


def run_python(code: str, env_extra: dict[str, str] | None = None) -> dict:
    import os

    env = dict(os.environ)
    env.pop("RETROGRAD_CUDA_DISABLE", None)
    env.update(env_extra or {})
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_without_cupy_and_everything_reports_unavailable():
    code = HIDE_CUPY + textwrap.dedent(
        """
        import json, sys
        import retrograd as rg
        import retrograd_cuda
        from retrograd.backends import get_backend
        b = get_backend("cuda")
        out = {
            "same": b is retrograd_cuda.backend,
            "available": retrograd_cuda.is_available(),
            "reason": retrograd_cuda.unavailable_reason(),
            "method": b.is_available(),
            "cupy_loaded": "cupy" in sys.modules,
            "array_type_ok": not isinstance(object(), b.array_type),
        }
        try:
            b.xp
        except retrograd_cuda.CudaUnavailableError as exc:
            out["xp_error"] = str(exc)
        try:
            rg.zeros(3, device="cuda")
        except Exception as exc:
            out["create_error"] = [type(exc).__name__, str(exc)]
        try:
            b.use_device(0)
        except retrograd_cuda.CudaUnavailableError as exc:
            out["use_device_error"] = str(exc)
        print(json.dumps(out))
        """
    )
    out = run_python(code)
    assert out["same"] is True
    assert out["available"] is False and out["method"] is False
    assert "CuPy is not installed" in out["reason"]
    assert "pip install" in out["reason"]
    assert out["cupy_loaded"] is False
    assert out["array_type_ok"] is True
    assert "needs CuPy" in out["xp_error"]
    assert out["create_error"][0] in ("RuntimeError", "RetrogradError", "CudaUnavailableError")
    assert "cuda" in out["create_error"][1]
    assert "not available" in out["use_device_error"]


def test_disable_environment_variable_wins():
    code = textwrap.dedent(
        """
        import json, retrograd_cuda
        print(json.dumps([retrograd_cuda.is_available(), retrograd_cuda.unavailable_reason()]))
        """
    )
    ok, reason = run_python(code, {"RETROGRAD_CUDA_DISABLE": "1"})
    assert ok is False
    assert "RETROGRAD_CUDA_DISABLE" in reason


def test_import_does_not_import_cupy():
    code = "import json, sys, retrograd_cuda; print(json.dumps('cupy' in sys.modules))"
    assert run_python(code) is False


def test_probe_is_cached_and_refresh_reprobes(monkeypatch):
    first = availability.probe()
    assert availability.probe() is first
    monkeypatch.setenv(availability.DISABLE_ENV, "1")
    try:
        disabled = availability.refresh()
        assert disabled.ok is False and availability.DISABLE_ENV in disabled.reason
        assert retrograd_cuda.is_available() is False
    finally:
        monkeypatch.delenv(availability.DISABLE_ENV)
        again = availability.refresh()
    assert again.ok == first.ok


def test_probe_result_is_consistent():
    state = availability.probe()
    assert isinstance(state.ok, bool)
    if state.ok:
        assert state.device_count >= 1 and state.reason == ""
    else:
        assert state.device_count == 0 and state.reason


@pytest.mark.usefixtures("no_gpu", "cupy_installed")
def test_cupy_installed_but_no_gpu_names_the_driver():
    reason = retrograd_cuda.unavailable_reason()
    assert "CUDA" in reason or "GPU" in reason


@pytest.mark.usefixtures("no_gpu")
def test_no_gpu_backend_refuses_work_with_a_reason():
    b = retrograd_cuda.backend
    with pytest.raises(retrograd_cuda.CudaUnavailableError, match="not available"):
        b.asarray([1.0, 2.0])
    with pytest.raises(retrograd_cuda.CudaUnavailableError, match="cuda:0"):
        b.use_device(0)
    with pytest.raises(retrograd_cuda.CudaUnavailableError):
        b.synchronize()
    assert b.unavailable_reason() == retrograd_cuda.unavailable_reason()


def test_unavailable_error_is_a_retrograd_error():
    import retrograd as rg

    assert issubclass(retrograd_cuda.CudaUnavailableError, rg.RetrogradError)
