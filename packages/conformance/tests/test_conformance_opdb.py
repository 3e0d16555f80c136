"""The op database: covers every op core registers, its entries are valid PyTorch, and every
row (entries and sweeps) passes on the cpu backend in both dtypes; a check compares dtypes
and ownership too."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd_conformance.adapter import make_lib
from retrograd_conformance.compare import Typed
from retrograd_conformance.errors import Raised
from retrograd_conformance.opdb import ENTRIES, OPS, OPS_BY_NAME, check_op, missing_entries
from retrograd_conformance.opdb.checks import evaluate


def test_every_core_op_has_an_entry():
    missing = missing_entries()
    assert not missing, (
        f"core registers differentiable ops with no op-database entry: {missing}; add them to "
        "packages/conformance/src/retrograd_conformance/opdb/entries.py")


def test_entries_cover_the_shapes_the_issue_asks_for():
    labels = " ".join(s.label for op in ENTRIES for s in op.samples)
    for needed in ("0-d", "broadcast", "batched"):
        assert needed in labels
    assert all(op.samples for op in OPS)
    for name in ("sum", "mean", "amax", "logsumexp"):  # partial tuples of dims
        labels = [s.label for s in OPS_BY_NAME[name].samples]
        assert "dim=(1,2) of 3-d" in labels and "dim=(0,2),keepdim of 3-d" in labels


@pytest.mark.parametrize("op", ENTRIES, ids=lambda op: op.name)
def test_entry_is_valid_pytorch(op):
    lib = make_lib("torch", "float64")
    for sample in op.samples:
        out = evaluate(lib, op, sample)
        assert not isinstance(out, Raised), f"{op.name}[{sample.label}]: {out}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_on_cpu(op, dtype):
    result = check_op(op, "retrograd:cpu", dtype)
    assert result.ok, "\n".join(result.failures)


def test_results_carry_their_dtypes():
    lib = make_lib("retrograd:cpu", "float32")
    out = evaluate(lib, OPS_BY_NAME["to"], OPS_BY_NAME["to"].samples[0])
    assert isinstance(out["output"], Typed) and out["output"].dtype == "float64"
    assert out["vjp"][0].dtype == "float32"  # the gradient comes back in the input's dtype


def test_a_wrong_dtype_fails_with_the_dtype_named(monkeypatch):
    """float32 rows compare values with torch in float64, and dtypes with torch in float32."""
    from retrograd.backends import get_backend

    be = get_backend("cpu")
    monkeypatch.setattr(be.ops, "exp", lambda x: np.exp(np.asarray(x, dtype=np.float64)))
    result = check_op(OPS_BY_NAME["exp"], "retrograd:cpu", "float32")
    assert any("exp[2-d] vs torch: output: dtype: expected float32, got float64" in f
               and "[forward kernel: exp]" in f for f in result.failures), result.failures
