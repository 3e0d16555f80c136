"""The op database: covers every op core registers, its entries are valid PyTorch, and every
entry passes on the cpu backend in both dtypes."""

from __future__ import annotations

import pytest

from retrograd_conformance.adapter import make_lib
from retrograd_conformance.errors import Raised
from retrograd_conformance.opdb import OPS, check_op, missing_entries
from retrograd_conformance.opdb.checks import evaluate


def test_every_core_op_has_an_entry():
    missing = missing_entries()
    assert not missing, (
        f"core registers differentiable ops with no op-database entry: {missing}; add them to "
        "packages/conformance/src/retrograd_conformance/opdb/entries.py")


def test_entries_cover_the_shapes_the_issue_asks_for():
    labels = " ".join(s.label for op in OPS for s in op.samples)
    for needed in ("0-d", "broadcast", "batched"):
        assert needed in labels
    assert all(op.samples for op in OPS)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
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
