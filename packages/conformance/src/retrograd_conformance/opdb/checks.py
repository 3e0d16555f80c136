"""Checking one op-database entry on one subject and dtype.

Three checks per sample:

- ``torch``: the output, the VJP with a fixed cotangent (by the fast walk, then again with
  ``create_graph=True``, which runs the same rules on differentiable ops), and a second-order
  VJP (the gradient of ``sum(g_i * w_i)``): values against PyTorch in float64, and the dtype
  and shape of each against PyTorch run in the sample's own dtype; and ownership: the inputs
  unchanged by the forward and by the backward, the seed (the op's incoming gradient)
  unchanged by the backward;
- ``gradcheck`` and ``gradgradcheck``: retrograd's finite-difference checks, float64 only
  (finite differences in float32 measure rounding, not derivatives).

The sweep rows (:mod:`.sweeps`: ``<op>/sizes``, ``<op>/layouts``...) have checks of their
own; :func:`check_op` runs either kind. A failure names the op, the sample, the quantity, the
expected and actual values, and the backend kernels that compute it (:mod:`.kernels`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..adapter import Lib, make_lib, normalize
from ..compare import ORACLE_TOL, compare, compare_types, fmt, strip_types
from ..errors import Raised
from .base import OpInfo, Sample
from .entries import OPS_BY_NAME
from .kernels import kernel_note
from .sweeps import SweepInfo, SweepSample, check_sweep, run_sample

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


def _host(lib: Lib, t: Any) -> np.ndarray:
    return np.array(lib.to_numpy(t), copy=True)


def _written(before: np.ndarray, after: np.ndarray) -> bool:
    return before.shape != after.shape or not np.array_equal(before, after, equal_nan=True)


def evaluate(lib: Lib, op: OpInfo, sample: Any, notes: list[str] | None = None
             ) -> dict[str, Any] | Raised:
    """Output, first- and second-order VJPs of one sample, normalized with their dtypes
    (:class:`~retrograd_conformance.compare.Typed`), or the error. With ``notes``, what the op
    wrote where it must not (its inputs, its incoming gradient) is appended there. A sweep
    sample gives its own results (:func:`.sweeps.run_sample`)."""
    if isinstance(sample, SweepSample) and isinstance(op, SweepInfo):
        return run_sample(lib, op, sample, lib.dtype_name).values
    key = f"{op.name}/{sample.label}"
    try:
        xs = [lib.tensor(a.tolist(), requires_grad=True) for a in sample.arrays(op.name)]
        before = [_host(lib, x) for x in xs] if notes is not None else []

        def unchanged(when: str) -> None:
            if notes is None:
                return
            for i, (x, b) in enumerate(zip(xs, before)):
                now = _host(lib, x)
                if _written(b, now):
                    notes.append(f"the {when} wrote into input {i} (before {fmt(b)}, after "
                                 f"{fmt(now)})")

        y = sample.call(lib, *xs)
        unchanged("forward")
        cot = lib.tensor(_weights(tuple(y.shape), key + "/cot"), dtype=y.dtype)
        seed = _host(lib, cot) if notes is not None else None
        # the fast walk (raw kernels), then the recorded one (differentiable ops)
        fast = lib.autograd.grad(y, xs, grad_outputs=cot, retain_graph=True, allow_unused=True)
        unchanged("backward")
        if notes is not None and seed is not None and _written(seed, _host(lib, cot)):
            notes.append(f"the backward wrote into its incoming gradient (the seed given as "
                         f"grad_outputs: before {fmt(seed)}, after {fmt(_host(lib, cot))})")
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
    return {k: normalize(lib, v, typed=True) for k, v in out.items()}


_ORACLE: dict[tuple[str, str, str, str], dict[str, Any] | Raised] = {}


def _oracle_outcome(oracle: str, op: OpInfo, sample: Sample, dtype: str
                    ) -> dict[str, Any] | Raised:
    """The oracle's outcome in ``dtype`` (the same for every subject: kept)."""
    key = (oracle, op.name, sample.label, dtype)
    if key not in _ORACLE:
        _ORACLE[key] = evaluate(make_lib(oracle, dtype), op, sample)
    return _ORACLE[key]


def _against_torch(op: OpInfo, sample: Sample, subject: str, dtype: str, oracle: str,
                   notes: list[str] | None = None) -> str | None:
    got = evaluate(make_lib(subject, dtype), op, sample, notes)
    ref = _oracle_outcome(oracle, op, sample, "float64")
    same = ref if dtype == "float64" else _oracle_outcome(oracle, op, sample, dtype)
    tol = ORACLE_TOL[dtype]
    if isinstance(ref, Raised):
        return f"the oracle itself raised ({ref}); fix the entry"
    if isinstance(got, Raised):
        return f"raised {got}{kernel_note(op.name, 'output')}"
    for key, expected in ref.items():
        actual = got.get(key)
        reason = None
        if isinstance(same, dict) and key in same:
            reason = compare_types(same[key], actual)
        if reason is None:
            reason = compare(strip_types(expected), strip_types(actual), tol)
        if reason:
            return f"{key}: {reason}{kernel_note(op.name, key)}"
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
    """Run every sample of ``op`` (an entry or a sweep row) on ``subject`` in ``dtype``."""
    result = OpResult(op.name, subject, dtype)
    if isinstance(op, SweepInfo):
        check_sweep(op, subject, dtype, oracle, result)
        return result
    for sample in op.samples:
        result.samples += 1
        where = f"{op.name}[{sample.label}]"
        notes: list[str] = []
        if oracle is not None:
            result.checks_run += 1
            reason = _against_torch(op, sample, subject, dtype, oracle, notes)
            if reason:
                result.failures.append(f"{where} vs {oracle}: {reason}")
        else:
            result.checks_run += 1
            out = evaluate(make_lib(subject, dtype), op, sample, notes)
            if isinstance(out, Raised):
                result.failures.append(f"{where}: raised {out}")
        for note in notes:
            which = "output" if "forward" in note else "vjp"
            result.failures.append(f"{where} ({dtype}): ownership: {note}"
                                   f"{kernel_note(op.name, which)}")
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
    """Core ops without an op-database entry (a sweep row does not count)."""
    return [name for name in core_op_names() if name not in OPS_BY_NAME]
