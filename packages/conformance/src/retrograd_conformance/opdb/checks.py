"""Checking one op-database entry on one subject and dtype.

Three checks per sample:

- ``torch``: the output, the VJP with a fixed cotangent (by the fast walk, then again with
  ``create_graph=True``, which runs the same rules on differentiable ops), and a second-order
  VJP (the gradient of ``sum(g_i * w_i)``) against PyTorch in float64;
- ``gradcheck`` and ``gradgradcheck``: retrograd's finite-difference checks, float64 only
  (finite differences in float32 measure rounding, not derivatives).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..adapter import Lib, make_lib, normalize
from ..compare import ORACLE_TOL, compare
from ..errors import Raised
from .base import OpInfo, Sample
from .entries import OPS_BY_NAME

CHECKS = ("torch", "gradcheck", "gradgradcheck")


@dataclass
class OpResult:
    op: str
    subject: str
    dtype: str
    samples: int = 0
    checks_run: int = 0
    failures: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def id(self) -> str:
        return f"{self.op}[{self.dtype}]"


def _weights(shape: tuple[int, ...], key: str) -> list[Any] | float:
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    arr = np.round(rng.uniform(0.3, 1.3, size=shape), 3)
    return arr.tolist() if arr.ndim else float(arr)


def evaluate(lib: Lib, op: OpInfo, sample: Sample) -> dict[str, Any] | Raised:
    """Output, first- and second-order VJPs of one sample, normalized (or the error)."""
    key = f"{op.name}/{sample.label}"
    try:
        xs = [lib.tensor(a.tolist(), requires_grad=True) for a in sample.arrays(op.name)]
        y = sample.call(lib, *xs)
        cot = lib.tensor(_weights(tuple(y.shape), key + "/cot"), dtype=y.dtype)
        # the fast walk (raw kernels), then the recorded one (differentiable ops)
        fast = lib.autograd.grad(y, xs, grad_outputs=cot, retain_graph=True, allow_unused=True)
        out: dict[str, Any] = {"output": y, "vjp": list(fast)}
        if op.gradgrad:
            gs = lib.autograd.grad(y, xs, grad_outputs=cot, create_graph=True,
                                   allow_unused=True)
            out["vjp (create_graph)"] = list(gs)
            s = (xs[0] * 0.0).sum()
            for i, g in enumerate(gs):
                if g is not None:
                    w = lib.tensor(_weights(tuple(g.shape), f"{key}/w{i}"), dtype=g.dtype)
                    s = s + (g * w).sum()
            # materialized: whether an input is *reachable* through the derivative's graph
            # depends on how each library writes its backward formulas, not on the maths
            out["second-order vjp"] = list(lib.autograd.grad(s, xs, allow_unused=True,
                                                             materialize_grads=True))
    except Exception as exc:  # noqa: BLE001 - reported, compared with the oracle's outcome
        return Raised(lib.error_kind(exc), type(exc).__name__, str(exc))
    return {k: normalize(lib, v) for k, v in out.items()}


def _against_torch(op: OpInfo, sample: Sample, subject: str, dtype: str, oracle: str
                   ) -> str | None:
    got = evaluate(make_lib(subject, dtype), op, sample)
    ref = evaluate(make_lib(oracle, "float64"), op, sample)
    tol = ORACLE_TOL[dtype]
    if isinstance(ref, Raised):
        return f"the oracle itself raised ({ref}); fix the entry"
    if isinstance(got, Raised):
        return f"raised {got}"
    for key, expected in ref.items():
        reason = compare(expected, got.get(key), tol)
        if reason:
            return f"{key}: {reason}"
    return None


def _finite_difference(op: OpInfo, sample: Sample, subject: str, which: str) -> str | None:
    lib = make_lib(subject, "float64")
    check = getattr(lib.autograd, which)
    try:
        xs = tuple(lib.tensor(a.tolist(), requires_grad=True) for a in sample.arrays(op.name))
        ok = check(lambda *ts: sample.call(lib, *ts), xs)
    except Exception as exc:  # noqa: BLE001
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{which} raised {type(exc).__name__}: {first[:300]}"
    return None if ok is not False else f"{which} returned False"


def check_op(op: OpInfo, subject: str, dtype: str, oracle: str | None = "torch") -> OpResult:
    """Run every sample of ``op`` on ``subject`` in ``dtype``."""
    result = OpResult(op.name, subject, dtype)
    for sample in op.samples:
        result.samples += 1
        where = f"{op.name}[{sample.label}]"
        if oracle is not None:
            result.checks_run += 1
            reason = _against_torch(op, sample, subject, dtype, oracle)
            if reason:
                result.failures.append(f"{where} vs {oracle}: {reason}")
        if dtype == "float64":
            for which in ("gradcheck", "gradgradcheck"):
                if which == "gradgradcheck" and not op.gradgrad:
                    result.skipped.append(f"{where} {which}")
                    continue
                result.checks_run += 1
                reason = _finite_difference(op, sample, subject, which)
                if reason:
                    result.failures.append(f"{where}: {reason}")
    return result


def core_op_names() -> list[str]:
    """The differentiable ops core declares, from ``retrograd.ops.registry()``."""
    from retrograd import ops

    registry = getattr(ops, "registry", None)
    if registry is None:
        raise LookupError(
            "retrograd.ops.registry() does not exist: core must expose the names of its "
            "differentiable ops so the op database can prove it covers them all")
    names = registry()
    return sorted(names.keys() if isinstance(names, dict) else names)


def missing_entries() -> list[str]:
    """Core ops without an op-database entry."""
    return [name for name in core_op_names() if name not in OPS_BY_NAME]
