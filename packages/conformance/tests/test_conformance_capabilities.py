"""The ``capabilities`` family: every claim a backend declares is checked against its real
library, and a claim that does not hold fails the run -- e.g. a JAX backend that says its arrays
take in-place writes (JAX silently drops ``x += y``)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from retrograd import backends
from retrograd_conformance.cli import main

WIDE = ["--width", "200", "--no-progress"]


@pytest.fixture
def vendor_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    yield tmp_path
    for name in list(backends.registered_backends()):
        if name.endswith("_dev"):
            backends.unregister_backend(name)


def _rows(path, subject):
    report = json.loads(path.read_text())
    return {r["id"]: r for r in report["results"]
            if r["suite"] == "capabilities" and r["subject"] == subject}


def test_the_cpu_backend_keeps_its_claims(tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["--backend", "cpu", "--suite", "capabilities", "--json", str(js), *WIDE]) == 0
    rows = _rows(js, "retrograd:cpu")
    assert set(rows) == {"inplace", "dtypes", "memory"}
    assert all(r["verdict"] == "pass" for r in rows.values())


def test_a_jax_backend_claiming_in_place_writes_fails(vendor_dir, capsys):
    pytest.importorskip("jax")
    (vendor_dir / "jaxlie.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from retrograd.backends import ArrayAPIBackend
        backend = ArrayAPIBackend(jnp, name="jaxlie_dev")   # the default: inplace=True
    """))
    js = vendor_dir / "r.json"
    code = main(["--backend", "jaxlie:backend", "--suite", "capabilities", "--json", str(js), *WIDE])
    out = capsys.readouterr().out
    assert code == 1, out
    row = _rows(js, "retrograd:jaxlie_dev")["inplace"]
    assert row["verdict"] == "fail"
    assert "silently lost" in row["message"]
    assert "capabilities/inplace" in out


def test_the_same_backend_declaring_immutable_arrays_passes_and_refuses_writes(vendor_dir,
                                                                               capsys):
    pytest.importorskip("jax")
    (vendor_dir / "jaxok.py").write_text(textwrap.dedent("""
        import jax.numpy as jnp
        from retrograd.backends import ArrayAPIBackend, Capabilities
        backend = ArrayAPIBackend(jnp, name="jaxok_dev", capabilities=Capabilities(
            inplace=False, dtypes=("bool", "int32", "float16", "float32")))
    """))
    js = vendor_dir / "r.json"
    code = main(["--backend", "jaxok:backend", "--suite", "capabilities", "--json", str(js), *WIDE])
    assert code == 0, capsys.readouterr().out
    assert all(r["verdict"] == "pass" for r in _rows(js, "retrograd:jaxok_dev").values())


def test_a_dtype_claimed_but_missing_fails(vendor_dir, capsys):
    (vendor_dir / "strictlie.py").write_text(textwrap.dedent("""
        from retrograd.backends import Capabilities
        from retrograd_array_api_strict import ArrayApiStrictBackend

        class Lying(ArrayApiStrictBackend):
            capabilities = Capabilities()   # claims float16, which the standard lacks
            def __init__(self):
                super().__init__()
                self.name = "strictlie_dev"

        backend = Lying()
    """))
    js = vendor_dir / "r.json"
    code = main(["--backend", "strictlie:backend", "--suite", "capabilities", "--json", str(js),
                 *WIDE])
    assert code == 1
    row = _rows(js, "retrograd:strictlie_dev")["dtypes"]
    assert row["verdict"] == "fail" and "float16" in row["message"]
