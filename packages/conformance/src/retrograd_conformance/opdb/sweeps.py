"""Sweeps: the op database's rows beyond its small samples, one row per op and family.

The op entries (:mod:`.entries`) check each op on a few dozen well-conditioned numbers. The
sweeps check what those cannot see, each family as its own row (``opdb/<op>/<family>``), so a
report separates a wrong result from a size-, layout- or convention-specific one:

``sizes``
    every op at 0, 1, 7, 1023, 1024, 1025, 4097 and 100,003 elements (and ``sum`` once above
    2^24 elements, float32, forward only). Ops that sum are compared with a float64 reference
    from the same (float32-exact) inputs under a tolerance that grows with the number of terms
    (:func:`~retrograd_conformance.compare.size_tolerance`); their inputs are 1 + [0, 2^-9),
    on which a float32 accumulator that adds the terms one after another loses 6.5e-4 of the
    sum at 10^5 terms, and stops at 2^24. Reductions run over a whole 1-D tensor, the long
    axis of ``(2, n)`` and the strided axis of ``(n, 2)``.
``layouts``
    every unary, binary and reduction kernel (and matmul, linear, the softmaxes, the losses)
    on transposed, permuted, stepped (``x[::2]``, ``x[:, ::2]``), expanded (0-stride) and
    offset (``x[1:, 2:]``) views of leaves. The gradients are taken with respect to the
    leaves, so the backward runs through the views too. Where a backend stores a view with
    other strides than PyTorch (it materialized it), the sample still runs and the row notes
    that the layout was not exercised; a view a backend cannot build is skipped with its
    error (the view op's own row reports that error).
``extremes``
    sigmoid, tanh, exp, log, logsumexp, softmax, log_softmax, cross_entropy and pow at
    |x| = 50, 100 and 1000, both signs, in both dtypes, where PyTorch's result in that dtype
    is finite (a sample where it is not is skipped with the reason).
``accuracy``
    the elementary functions (exp, log, the trigonometric and hyperbolic functions, sigmoid,
    erf ...) on a dense grid across each one's domain, forward only, in both dtypes: every
    element within :data:`~retrograd_conformance.compare.ACCURACY_ULPS` (4 in float32, 8 in
    float64) units in the last place of the exact value (PyTorch's float64 result; for
    float64 inputs PyTorch's own result, itself within an ulp). The op entries' tolerance
    (2e-4 relative in float32) lets through a function a few ulps off everywhere, and the
    backward formulas built on these values amplify it: tanh's derivative is ``1 - y^2``, so
    4 ulps in tanh(6) move the derivative there by 2%.
``convention``
    the values where the derivative is a convention: relu and abs at 0, clamp at its bounds,
    ties of maximum, minimum and amax, pow at base 0. Compared with PyTorch in the same dtype;
    a failure says which convention differs, apart from the rows that check values.
``promotion``
    float32 with float64 operands, 0-d tensors, Python and NumPy scalars and int64 tensors:
    the result's and every gradient's dtype, and values within a few ulps of PyTorch's in the
    same dtypes.
``ownership``
    ``clone()``, ``tensor(ndarray)`` and ``.to()`` (another dtype, the same device -- the
    tensor itself -- and another device, both ways, and its gradient) give tensors
    independent of their source.

Every check of every row also compares the dtype and shape of each result with PyTorch's in
the same dtype, and checks ownership: the inputs unchanged by the forward and the backward,
and the seed (``grad_outputs``, the op's incoming gradient) unchanged by the backward.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..adapter import Lib, make_lib
from ..compare import (
    ORACLE_TOL,
    Tolerance,
    Typed,
    compare,
    compare_types,
    compare_ulps,
    fmt,
    size_tolerance,
    strip_types,
    ulp_tolerance,
)
from ..errors import Raised, kinds_agree
from .base import OpInfo
from .kernels import kernel_note

FAMILIES = ("sizes", "layouts", "extremes", "accuracy", "convention", "promotion", "ownership")
SIZES = (0, 1, 7, 1023, 1024, 1025, 4097, 100_003)
BIG_SUM = 2**24 + 4097  # one float32 sum past 2^24 terms
FLOAT = ("float32", "float64")


@dataclass(frozen=True)
class SweepSample:
    """One sweep sample.

    ``make(rng)`` gives the leaves' values (float64 arrays, made exact in the row's dtype
    before use); ``kinds`` their dtypes (``"f"`` the row's dtype, ``"o"`` the other float
    dtype, or a dtype name; default ``"f"``); ``view(lib, *leaves)`` the operands (a layout;
    default the leaves); ``call(lib, *operands)`` the result: a tensor, whose output and
    gradients with respect to the float leaves are checked, or a dict of quantities (the
    ownership programs). ``tol``: ``"oracle"`` (the op database's tolerance against a float64
    reference), ``"size"`` (a sum of ``n`` terms), ``"ulps"`` (each element within
    :data:`~retrograd_conformance.compare.ACCURACY_ULPS` of the float64 reference: accuracy),
    ``"ulp"`` or ``"same"`` (against PyTorch in the same dtypes: promotion; conventions)."""

    label: str
    make: Callable[[np.random.Generator], Sequence[np.ndarray]]
    call: Callable[..., Any]
    view: Callable[..., Sequence[Any]] | None = None
    kinds: tuple[str, ...] = ()
    grad: bool = True
    create_graph: bool = False
    tol: str = "oracle"
    n: int = 1
    dtypes: tuple[str, ...] = FLOAT
    layouts: tuple[str, ...] = ()
    finite: bool = False
    note: str = ""
    own: bool = True


@dataclass(frozen=True)
class SweepInfo(OpInfo):
    """A sweep row: ``name`` is ``<op>/<family>``; ``base`` the op."""

    family: str = ""
    base: str = ""


# ---- values -----------------------------------------------------------------------------------


def _distinct(rng: np.random.Generator, n: int, lo: float = 0.2, hi: float = 1.8,
              positive: bool = False) -> np.ndarray:
    """``n`` distinct float32-exact values with ``lo <= |v| <= hi`` (both signs unless
    ``positive``): no two tie, none sits on a kink at 0."""
    if n == 0:
        return np.zeros(0)
    v = lo + (hi - lo) * (rng.permutation(n) + rng.uniform(0.1, 0.9, n)) / n
    if not positive:
        v = v * rng.choice(np.array([-1.0, 1.0]), n)
    return v.astype(np.float32).astype(np.float64)


def _split(values: np.ndarray, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    out, at = [], 0
    for shape in shapes:
        k = math.prod(shape)
        out.append(values[at:at + k].reshape(shape))
        at += k
    return out


def _pool(*shapes: tuple[int, ...], positive: bool = False, lo: float = 0.2, hi: float = 1.8
          ) -> Callable[[np.random.Generator], list[np.ndarray]]:
    """Leaves of ``shapes`` holding distinct values from one pool (no ties across leaves)."""
    total = sum(math.prod(s) for s in shapes)
    return lambda rng: _split(_distinct(rng, total, lo, hi, positive), *shapes)


def _ones_plus(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    """1 + [0, 2^-9) in steps of 2^-20 (float32-exact): a float32 sum that adds the terms one
    after another drops every term's fraction once its total passes 2^15."""
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        total = sum(math.prod(s) for s in shapes)
        v = 1.0 + rng.integers(0, 2**11, total) * 2.0**-20
        return _split(v, *shapes)
    return make


def _const(*arrays: Any) -> Callable[[np.random.Generator], list[np.ndarray]]:
    fixed = [np.asarray(a, dtype=np.float64) for a in arrays]
    return lambda rng: [a.copy() for a in fixed]


@functools.lru_cache(maxsize=8)
def _cot(shape: tuple[int, ...], key: str) -> np.ndarray:
    """A fixed cotangent: multiples of 1/64 in [0.5, 1.5] (exact in float32). Kept for the
    next runs of the sample (the array is only read)."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return 0.5 + rng.integers(0, 65, size=shape) / 64.0


def _other(dtype: str) -> str:
    return "float64" if dtype == "float32" else "float32"


def _resolve(kind: str, dtype: str) -> str:
    return {"f": dtype, "o": _other(dtype)}.get(kind, kind)


# ---- running one sample -------------------------------------------------------------------


@dataclass
class Outcome:
    values: dict[str, Any] | Raised
    strides: list[tuple[int, ...] | None] = field(default_factory=list)
    ownership: list[str] = field(default_factory=list)
    size: int = 0
    view_error: Raised | None = None  # the layout's views could not be built


def _host(lib: Lib, t: Any) -> np.ndarray:
    return np.array(lib.to_numpy(t), copy=True)


def _strides(lib: Lib, t: Any) -> tuple[int, ...] | None:
    """Byte strides of ``t`` (size-1 axes as 0: their stride means nothing); None unknown."""
    try:
        if lib.kind == "torch":
            raw = tuple(int(s) * t.element_size() for s in t.stride())
        else:
            layout = getattr(t.backend.ops, "memory_layout", None)
            info = layout(t._data) if layout is not None else None
            if info is None:
                return None
            raw = tuple(int(s) for s in info[1])
    except Exception:  # noqa: BLE001 - a layout that cannot be read is unknown
        return None
    return tuple(0 if n == 1 else s for n, s in zip(tuple(t.shape), raw))


def _norm(lib: Lib, value: Any) -> Any:
    if value is None or isinstance(value, Raised | str):
        return value
    if isinstance(value, bool | np.bool_):
        return np.asarray(bool(value))
    if isinstance(value, int | float | np.number):
        return np.asarray(float(value))
    if isinstance(value, np.ndarray):
        return value if value.dtype == np.bool_ else value.astype(np.float64)
    if isinstance(value, list | tuple):
        return [_norm(lib, v) for v in value]
    if lib.is_tensor(value):
        return Typed(lib.dtype_of(value), lib.to_numpy(value))
    raise TypeError(f"a sweep returned a {type(value).__name__}")


def _changed(before: np.ndarray, after: np.ndarray) -> bool:
    return before.shape != after.shape or not np.array_equal(before, after, equal_nan=True)


def sample_arrays(row: SweepInfo, s: SweepSample) -> list[np.ndarray]:
    """The leaves' values of ``s`` (deterministic: seeded by the row and the label)."""
    return list(s.make(np.random.default_rng(zlib.crc32(f"{row.name}/{s.label}".encode()))))


def run_sample(lib: Lib, row: SweepInfo, s: SweepSample, dtype: str, *, widen: bool = False,
               own: bool = False, arrays: list[np.ndarray] | None = None) -> Outcome:
    """Run one sample on ``lib``: the leaves in their dtypes (all float64 with ``widen``,
    holding the values rounded to their own dtypes), the operands' strides, the results
    (typed), and with ``own`` what the op wrote where it must not. ``arrays``: the leaves'
    values, where the caller has them already (:func:`sample_arrays`)."""
    with warnings.catch_warnings():  # a kernel's NumPy warnings are not results: keep quiet
        warnings.simplefilter("ignore")
        return _run_sample(lib, row, s, dtype, widen, own,
                           sample_arrays(row, s) if arrays is None else arrays)


def _run_sample(lib: Lib, row: SweepInfo, s: SweepSample, dtype: str, widen: bool, own: bool,
                arrays: list[np.ndarray]) -> Outcome:
    kinds = list(s.kinds) + ["f"] * (len(arrays) - len(s.kinds))
    out = Outcome({}, size=sum(int(a.size) for a in arrays))
    notes = out.ownership
    try:
        leaves = []
        for a, kind in zip(arrays, kinds):
            dt = _resolve(kind, dtype)
            if dt in FLOAT:
                a = a.astype(dt)
                if widen:
                    dt = "float64"
                    a = a.astype(np.float64)
            else:
                a = a.astype(dt)
            leaves.append(lib.module.tensor(a, dtype=getattr(lib.module, dt), device=lib.device,
                                            requires_grad=s.grad and dt in FLOAT))
        own = own and s.own
        before = [_host(lib, t) for t in leaves] if own else []
        if s.view is None:
            operands = leaves
        else:
            try:
                operands = list(s.view(lib, *leaves))
            except Exception as exc:  # noqa: BLE001 - a layout the backend cannot build
                out.view_error = Raised(lib.error_kind(exc), type(exc).__name__, str(exc))
                out.values = out.view_error
                return out
        out.strides = [_strides(lib, t) if lib.is_tensor(t) else None for t in operands]
        y = s.call(lib, *operands)
        if isinstance(y, dict):
            out.values = {k: _norm(lib, v) for k, v in y.items()}
            return out

        def check(when: str) -> None:
            for i, (t, b) in enumerate(zip(leaves, before)):
                now = _host(lib, t)
                if _changed(b, now):
                    notes.append(f"the {when} wrote into input {i} (before {fmt(b)}, after "
                                 f"{fmt(now)})")

        if own:
            check("forward")
        values: dict[str, Any] = {"output": y}
        grads = [t for t in leaves if getattr(t, "requires_grad", False)]
        if s.grad and grads and getattr(y, "requires_grad", False):
            seed = _cot(tuple(y.shape), f"{row.name}/{s.label}/cot")
            cot = lib.module.tensor(seed, dtype=y.dtype, device=lib.device)
            cot_before = _host(lib, cot) if own else None
            gs = lib.autograd.grad(y, grads, grad_outputs=cot, retain_graph=s.create_graph,
                                   allow_unused=True)
            index = [i for i, t in enumerate(leaves) if getattr(t, "requires_grad", False)]
            for i, g in zip(index, gs):
                values[f"grad of input {i}"] = g
            if own:
                check("backward")
                if cot_before is not None and _changed(cot_before, _host(lib, cot)):
                    notes.append(f"the backward wrote into its incoming gradient (the seed "
                                 f"given as grad_outputs: before {fmt(cot_before)}, after "
                                 f"{fmt(_host(lib, cot))})")
            if s.create_graph:
                gs = lib.autograd.grad(y, grads, grad_outputs=cot, create_graph=True,
                                       allow_unused=True)
                for i, g in zip(index, gs):
                    values[f"grad of input {i} (create_graph)"] = g
        out.values = {k: _norm(lib, v) for k, v in values.items()}
    except Exception as exc:  # noqa: BLE001 - reported, compared with the oracle's outcome
        out.values = Raised(lib.error_kind(exc), type(exc).__name__, str(exc))
    return out


# ---- judging ------------------------------------------------------------------------------


_ORACLE_CACHE: dict[tuple[str, str, str, str, bool], Outcome] = {}
_CACHE_LIMIT = 4096  # elements: the oracle's outcomes of small samples are kept


def _oracle(oracle: str, row: SweepInfo, s: SweepSample, dtype: str, widen: bool,
            arrays: list[np.ndarray]) -> Outcome:
    key = (oracle, row.name, s.label, dtype, widen)
    hit = _ORACLE_CACHE.get(key)
    if hit is not None:
        return hit
    got = run_sample(make_lib(oracle, dtype), row, s, dtype, widen=widen, arrays=arrays)
    if got.size <= _CACHE_LIMIT:
        _ORACLE_CACHE[key] = got
    return got


def _finite(value: Any) -> bool:
    value = strip_types(value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype != np.bool_:
        return bool(np.all(np.isfinite(value)))
    return True


def _tolerance(s: SweepSample, dtype: str) -> Tolerance:
    if s.tol == "size":
        return size_tolerance(dtype, s.n)
    if s.tol == "ulp":
        return ulp_tolerance(dtype)
    return ORACLE_TOL[dtype]


def judge_sample(row: SweepInfo, s: SweepSample, subject: str, dtype: str, oracle: str | None,
                 failures: list[str], skipped: list[str]) -> None:
    """Run ``s`` on ``subject`` (and the oracle) and append what is wrong to ``failures``,
    what could not be checked to ``skipped``, each as one line naming the op, the sample,
    the dtype and the kernel."""
    where = f"{row.name}[{s.label}] ({dtype}) on {subject}"
    op = row.base
    arrays = sample_arrays(row, s)
    got = run_sample(make_lib(subject, dtype), row, s, dtype, own=True, arrays=arrays)
    if got.view_error is not None:
        layouts = " and ".join(filter(None, s.layouts))
        skipped.append(f"{where}: {subject} cannot build the {layouts} operand(s) "
                       f"({got.view_error}): skipped; the view op's own rows check it")
        return
    for note in got.ownership:
        which = "output" if "forward" in note or row.family == "ownership" else "grad"
        failures.append(f"{where}: ownership: {note}{kernel_note(op, which)}")
    if oracle is None:
        if isinstance(got.values, Raised):
            failures.append(f"{where}: raised {got.values}")
        return
    same = _oracle(oracle, row, s, dtype, False, arrays)
    widen = s.tol in ("oracle", "size", "ulps") and (dtype != "float64" or any(
        _resolve(k, dtype) == "float32" for k in s.kinds))
    ref = _oracle(oracle, row, s, dtype, True, arrays) if widen else same
    if isinstance(same.values, Raised):
        if isinstance(got.values, Raised):
            if not kinds_agree(got.values.kind, same.values.kind):
                failures.append(f"{where} vs {oracle}: {oracle} raises {same.values}; the "
                                f"subject raised {got.values}")
            return
        output = got.values.get("output") if isinstance(got.values, dict) else None
        failures.append(f"{where} vs {oracle}: {oracle} raises {same.values}; the subject "
                        f"returned {fmt(strip_types(output))}{kernel_note(op, 'output')}")
        return
    if isinstance(got.values, Raised):
        failures.append(f"{where} vs {oracle}: raised {got.values}; {oracle} returns "
                        f"{fmt(strip_types(same.values.get('output')))}"
                        f"{kernel_note(op, 'output')}")
        return
    if isinstance(ref.values, Raised):
        failures.append(f"{where}: the oracle raised in float64 ({ref.values}); fix the sample")
        return
    if s.finite and not all(_finite(v) for v in same.values.values()):
        bad = [k for k, v in same.values.items() if not _finite(v)]
        skipped.append(f"{where}: {oracle}'s {dtype} {', '.join(bad)} is not finite: not "
                       "checked (the sweep checks extremes where PyTorch stays finite)")
        return
    for i, want in enumerate(s.layouts):
        if not want or i >= len(got.strides):
            continue
        mine, theirs = got.strides[i], same.strides[i]
        if mine is None:
            skipped.append(f"{where}: the {want} layout of operand {i} could not be read "
                           "(no memory_layout): checked, but the layout is unconfirmed")
        elif theirs is not None and mine != theirs:
            skipped.append(f"{where}: {subject} stores the {want} operand {i} with strides "
                           f"{mine} (bytes), {oracle} with {theirs}: the {want} layout is not "
                           "exercised")
    # the precision a result carries: an output its own dtype's; a gradient float32 where any
    # operand or the output is float32 (PyTorch computes parts of a promoted op's backward in
    # an operand's dtype: pow's ``exponent - 1``)
    output = same.values.get("output")
    mixed = "float32" if dtype == "float32" or any(
        _resolve(k, dtype) == "float32" for k in s.kinds) or (
        isinstance(output, Typed) and output.dtype == "float32") else "float64"
    layout = ""
    if s.layouts:
        layout = f" (operand strides in bytes: {', '.join(str(st) for st in got.strides)})"
    for key, expected in same.values.items():
        if key not in got.values:
            failures.append(f"{where}: {key}: not returned by the subject")
            return
        actual = got.values[key]
        reason = compare_types(expected, actual)
        if reason is None:
            exp_values = ref.values.get(key, expected)
            precision = mixed
            if key == "output" and isinstance(expected, Typed) and expected.dtype in FLOAT:
                precision = expected.dtype if s.tol in ("ulp", "same") else dtype
            if s.tol == "ulps":  # the accuracy sweeps: each element against the exact value
                reason = compare_ulps(exp_values, actual, dtype, arrays[0])
            else:
                reason = compare(strip_types(exp_values), strip_types(actual),
                                 _tolerance(s, precision))
        if reason:
            note = f" ({s.note})" if s.note else ""
            which = "output" if row.family == "ownership" else key
            failures.append(f"{where} vs {oracle}: {key}: {reason}{note}{layout}"
                            f"{kernel_note(op, which)}")
            return


#: Failures of retrograd's core, not of a backend, that these sweeps found and core has not
#: fixed yet: (row, sample label) -> what is wrong. A listed sample that fails is reported as
#: skipped with this reason, so that no backend fails for core's fault;
#: ``tests/test_conformance_sweeps.py`` checks that each one still fails on ``cpu`` (delete the
#: entry with the fix).
KNOWN_CORE_BUGS: dict[tuple[str, str], str] = {}


def check_sweep(row: SweepInfo, subject: str, dtype: str, oracle: str | None,
                result: Any) -> None:
    """Fill ``result`` (an :class:`~.checks.OpResult`) with the row's samples on ``subject``."""
    for s in row.samples:
        if dtype not in s.dtypes:
            result.skipped.append(f"{row.name}[{s.label}] ({dtype}): swept in "
                                  f"{', '.join(s.dtypes)} only")
            continue
        result.samples += 1
        result.checks_run += 1
        failures: list[str] = []
        judge_sample(row, s, subject, dtype, oracle, failures, result.skipped)
        known = KNOWN_CORE_BUGS.get((row.name, s.label))
        if failures and known:
            result.skipped.append(f"{row.name}[{s.label}] ({dtype}): known {known} -- "
                                  f"{failures[0]}")
        else:
            result.failures += failures


# ---- the rows -----------------------------------------------------------------------------


def _F(lib: Lib) -> Any:
    return lib.nn.functional


def _row(op: str, family: str, samples: Sequence[SweepSample], notes: str = "") -> SweepInfo:
    return SweepInfo(f"{op}/{family}", tuple(samples), gradgrad=False, notes=notes,
                     family=family, base=op)


UNARY: dict[str, tuple[Callable[..., Any], bool]] = {
    "neg": (lambda lib, a: -a, False),
    "abs": (lambda lib, a: lib.abs(a), False),
    "exp": (lambda lib, a: lib.exp(a), False),
    "log": (lambda lib, a: lib.log(a), True),
    "sqrt": (lambda lib, a: lib.sqrt(a), True),
    "sin": (lambda lib, a: lib.sin(a), False),
    "cos": (lambda lib, a: lib.cos(a), False),
    "tanh": (lambda lib, a: lib.tanh(a), False),
    "sigmoid": (lambda lib, a: lib.sigmoid(a), False),
    "relu": (lambda lib, a: lib.relu(a), False),
    "clamp": (lambda lib, a: lib.clamp(a, min=-0.5, max=0.8), False),
}

BINARY: dict[str, tuple[Callable[..., Any], bool]] = {
    "add": (lambda lib, a, b: a + b, False),
    "sub": (lambda lib, a, b: a - b, False),
    "mul": (lambda lib, a, b: a * b, False),
    "div": (lambda lib, a, b: a / b, True),
    "pow": (lambda lib, a, b: a ** b, True),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), False),
    "minimum": (lambda lib, a, b: lib.minimum(a, b), False),
}


def _off_bounds(make: Callable[[np.random.Generator], list[np.ndarray]],
                bounds: tuple[float, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    """``make``'s values moved 0.1 away from where they sit within 0.05 of a bound."""
    def moved(rng: np.random.Generator) -> list[np.ndarray]:
        out = []
        for a in make(rng):
            for b in bounds:
                a = np.where(np.abs(a - b) < 0.05, a + 0.1, a)
            out.append(a.astype(np.float32).astype(np.float64))
        return out
    return moved


def _where_call(lib: Lib, c: Any, a: Any, b: Any) -> Any:
    return lib.where(c, a, b)


def _bools(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.integers(0, 2, s).astype(np.float64) for s in shapes]
    return make


def _chain(*makers: Callable[[np.random.Generator], list[np.ndarray]]
           ) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [a for m in makers for a in m(rng)]


def _targets(n: int, classes: int) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda rng: [rng.integers(0, classes, n).astype(np.float64)]


def _sizes_rows() -> list[SweepInfo]:
    rows: list[SweepInfo] = []
    big = (1025, SIZES[-1])
    for name, (fn, positive) in UNARY.items():
        bounds = (-0.5, 0.8) if name == "clamp" else ()
        rows.append(_row(name, "sizes", [
            SweepSample(f"n={n}", _off_bounds(_pool((n,), positive=positive), bounds), fn, n=n)
            for n in SIZES]))
    for name, (fn, positive) in BINARY.items():
        samples = [SweepSample(f"n={n}", _pool((n,), (n,), positive=positive), fn, n=n)
                   for n in SIZES]
        samples += [SweepSample(f"n={n},broadcast (n,) with (1,)",
                                _pool((n,), (1,), positive=True), fn, tol="size", n=n)
                    for n in big]
        rows.append(_row(name, "sizes", samples))
    rows.append(_row("where", "sizes", [
        SweepSample(f"n={n}", _chain(_bools((n,)), _pool((n,), (n,))), _where_call,
                    kinds=("bool", "f", "f"), n=n) for n in SIZES] + [
        SweepSample(f"n={n},broadcast (n,) with (1,)", _chain(_bools((n,)), _pool((n,), (1,))),
                    _where_call, kinds=("bool", "f", "f"), tol="size", n=n) for n in big]))

    def reductions(name: str, fn: Callable[..., Any], make: Callable[..., Any],
                   extra: Sequence[SweepSample] = ()) -> SweepInfo:
        samples = []
        for n in SIZES:
            samples += [
                SweepSample(f"n={n},all", make((n,)), lambda lib, a: fn(lib, a, None), tol="size",
                            n=n),
                SweepSample(f"n={n},dim=1 of (2, n)", make((2, n)),
                            lambda lib, a: fn(lib, a, 1), tol="size", n=n),
                SweepSample(f"n={n},dim=0 of (n, 2) (strided)", make((n, 2)),
                            lambda lib, a: fn(lib, a, 0), tol="size", n=n),
            ]
        return _row(name, "sizes", samples + list(extra))

    def _sum(lib: Lib, a: Any, d: Any) -> Any:
        return a.sum() if d is None else lib.sum(a, dim=d)

    def _big(rng: np.random.Generator) -> list[np.ndarray]:
        return [1.0 + (np.arange(BIG_SUM) % 8) / 8.0]

    rows.append(reductions("sum", _sum, _ones_plus, [SweepSample(
        f"n={BIG_SUM} (> 2^24),all", _big, lambda lib, a: a.sum(), grad=False, tol="size",
        n=BIG_SUM, dtypes=("float32",), own=False)]))
    rows.append(reductions("mean", lambda lib, a, d: lib.mean(a) if d is None
                           else a.mean(dim=d), _ones_plus))
    rows.append(reductions("amax", lambda lib, a, d: lib.amax(a) if d is None
                           else lib.amax(a, dim=d), lambda *s: _pool(*s)))
    rows.append(reductions("logsumexp", lambda lib, a, d: lib.logsumexp(a, dim=0 if d is None
                                                                          else d),
                           lambda *s: _pool(*s)))
    for name in ("softmax", "log_softmax"):
        rows.append(reductions(name, (lambda nm: lambda lib, a, d: getattr(_F(lib), nm)(
            a, dim=0 if d is None else d))(name), lambda *s: _pool(*s)))
    ce: list[SweepSample] = []
    for n in SIZES:
        for red in ("mean", "sum"):
            ce.append(SweepSample(
                f"n={n} rows of 3 classes,{red}", _chain(_pool((n, 3)), _targets(n, 3)),
                (lambda r: lambda lib, a, t: _F(lib).cross_entropy(a, t, reduction=r))(red),
                kinds=("f", "int64"), tol="size", n=n))
    rows.append(_row("cross_entropy", "sizes", ce))
    rows.append(_row("mse_loss", "sizes", [
        SweepSample(f"n={n}", _pool((n,), (n,)), lambda lib, a, b: _F(lib).mse_loss(a, b),
                    tol="size", n=n) for n in SIZES]))
    mm = []
    for n in SIZES:
        mm += [SweepSample(f"n={n},(n,)@(n,)", _pool((n,), (n,), positive=True),
                           lambda lib, a, b: a @ b, tol="size", n=n),
               SweepSample(f"n={n},(3, n)@(n, 2)", _pool((3, n), (n, 2), positive=True),
                           lambda lib, a, b: a @ b, tol="size", n=n)]
    rows.append(_row("matmul", "sizes", mm))
    rows.append(_row("linear", "sizes", [
        SweepSample(f"n={n} rows", _pool((n, 3), (2, 3), (2,), positive=True),
                    lambda lib, x, w, b: _F(lib).linear(x, w, b), tol="size", n=max(n, 3))
        for n in SIZES]))
    rows.append(_row("expand", "sizes", [
        SweepSample(f"n={n},(1,)->(n,)", _pool((1,)), (lambda k: lambda lib, a: a.expand(k))(n),
                    tol="size", n=n) for n in SIZES]))
    gi = []
    for n in SIZES:
        gi.append(SweepSample(f"n={n},x[::2]", _pool((n,)), lambda lib, a: a[::2], n=n))
        if n:
            idx = [0, n - 1, n // 2, 0, n - 1, n // 3, 0]
            gi.append(SweepSample(f"n={n},x[7 repeated indices]", _pool((n,)),
                                  (lambda ix: lambda lib, a: a[lib.int_tensor(ix)])(idx), n=n))
    rows.append(_row("getitem", "sizes", gi))
    rows.append(_row("cat", "sizes", [
        SweepSample(f"n={n}", _pool((n,), (n,)), lambda lib, a, b: lib.cat([a, b]))
        for n in SIZES]))
    rows.append(_row("stack", "sizes", [
        SweepSample(f"n={n}", _pool((n,), (n,)), lambda lib, a, b: lib.stack([a, b]))
        for n in SIZES]))
    shape_ops: dict[str, Callable[..., Any]] = {
        "reshape": lambda lib, a: a.reshape(-1, 1),
        "view": lambda lib, a: a.view(1, -1),
        "flatten": lambda lib, a: a.reshape(-1, 1).flatten(),
        "permute": lambda lib, a: a.reshape(-1, 1).permute(1, 0),
        "transpose": lambda lib, a: a.reshape(-1, 1).transpose(0, 1),
        "squeeze": lambda lib, a: a.reshape(-1, 1).squeeze(1),
        "unsqueeze": lambda lib, a: a.unsqueeze(0),
        "clone": lambda lib, a: a.clone(),
        "to": lambda lib, a: a.to(lib.float64 if lib.dtype_name == "float32" else lib.float32),
    }
    for name, fn in shape_ops.items():
        rows.append(_row(name, "sizes", [SweepSample(f"n={n}", _pool((n,)), fn) for n in SIZES]))
    return rows


# layouts: each builds a view of the given shape from a leaf of another shape ----------------


def _layout(name: str, shape: tuple[int, ...]) -> tuple[tuple[int, ...], Callable[[Any], Any]]:
    """``(leaf shape, view)``: ``view(leaf)`` has ``shape`` in layout ``name``."""
    if name == "contiguous":
        return shape, lambda t: t
    if name == "transposed":
        if len(shape) == 2:
            return (shape[1], shape[0]), lambda t: t.T
        return (shape[2], shape[1], shape[0]), lambda t: t.transpose(0, 2)
    if name == "permuted":
        if len(shape) == 3:
            return (shape[2], shape[0], shape[1]), lambda t: t.permute(1, 2, 0)
        return (shape[1], shape[0]), lambda t: t.permute(1, 0)
    if name == "stepped":
        if len(shape) == 1:
            return (2 * shape[0] - 1,), lambda t: t[::2]
        return shape[:-1] + (2 * shape[-1],), lambda t: t[..., ::2]
    if name == "stepped-rows":
        return (2 * shape[0] - 1,) + shape[1:], lambda t: t[::2]
    if name == "expanded":
        if len(shape) == 1:
            return (1,), lambda t: t.expand(*shape)
        return (1,) + shape[1:], lambda t: t.expand(*shape)
    if name == "expanded-col":
        return shape[:-1] + (1,), lambda t: t.expand(*shape)
    if name == "offset":
        if len(shape) == 1:
            return (shape[0] + 3,), lambda t: t[3:]
        if len(shape) == 2:
            return (shape[0] + 1, shape[1] + 2), lambda t: t[1:, 2:]
        return (shape[0] + 1,) + shape[1:], lambda t: t[1:]
    raise ValueError(f"unknown layout {name!r}")


def _label(names: Sequence[str], shapes: Sequence[tuple[int, ...]]) -> str:
    parts = []
    for name, shape in zip(names, shapes):
        leaf, _ = _layout(name, shape)
        parts.append(name if name == "contiguous" else f"{name} {leaf}->{shape}")
    return " with ".join(parts)


def _layout_sample(label: str, names: Sequence[str], shapes: Sequence[tuple[int, ...]],
                   call: Callable[..., Any], *, positive: bool = False,
                   extra: Sequence[tuple[str, Callable[[np.random.Generator], list[np.ndarray]]]]
                   = (), tol: str = "oracle") -> SweepSample:
    """A sample whose float operands are views (``names``) of leaves; ``extra`` are further
    leaves (kind, maker) passed after them unchanged (targets, masks)."""
    built = [_layout(n, s) for n, s in zip(names, shapes)]
    leaf_shapes = [b[0] for b in built]
    views = [b[1] for b in built]
    pool = _pool(*leaf_shapes, positive=positive)
    kinds = ("f",) * len(built) + tuple(k for k, _ in extra)

    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return pool(rng) + [a for _, m in extra for a in m(rng)]

    def view(lib: Lib, *leaves: Any) -> list[Any]:
        return [v(t) for v, t in zip(views, leaves)] + list(leaves[len(views):])

    size = max(math.prod(s) for s in shapes)
    return SweepSample(label or _label(names, shapes), make, call, view=view, kinds=kinds,
                       create_graph=True, layouts=tuple("" if name == "contiguous" else name
                                                         for name in names), tol=tol, n=size)


M34 = (3, 4)
UNARY_LAYOUTS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("transposed", M34), ("permuted", (2, 3, 4)), ("stepped", (5,)), ("stepped", M34),
    ("stepped-rows", M34), ("expanded", M34), ("expanded-col", M34), ("offset", M34),
    ("transposed", (2, 3, 4)),
)
BINARY_LAYOUTS: tuple[tuple[tuple[str, str], tuple[tuple[int, ...], tuple[int, ...]]], ...] = (
    (("transposed", "contiguous"), (M34, M34)),
    (("contiguous", "transposed"), (M34, M34)),
    (("stepped", "offset"), (M34, M34)),
    (("expanded", "transposed"), (M34, M34)),
    (("offset", "expanded-col"), (M34, M34)),
    (("stepped-rows", "stepped"), (M34, M34)),
    (("transposed", "transposed"), (M34, M34)),
    (("permuted", "contiguous"), ((2, 3, 4), (2, 3, 4))),
    (("transposed", "stepped"), (M34, (4,))),
    (("offset", "expanded"), ((4,), M34)),
)
REDUCE_LAYOUTS: tuple[tuple[str, tuple[int, ...], Any], ...] = (
    ("transposed", M34, None), ("transposed", M34, 0), ("transposed", M34, 1),
    ("permuted", (2, 3, 4), (0, 2)), ("permuted", (2, 3, 4), 1),
    ("stepped", M34, 1), ("stepped-rows", M34, 0), ("stepped", (5,), 0),
    ("expanded", M34, 0), ("expanded", M34, 1), ("expanded-col", M34, 1),
    ("expanded-col", M34, 0), ("offset", M34, None), ("offset", M34, -1),
)


def _layouts_rows() -> list[SweepInfo]:
    rows: list[SweepInfo] = []
    for name, (fn, positive) in UNARY.items():
        rows.append(_row(name, "layouts", [
            _layout_sample("", (lay,), (shape,), fn, positive=positive)
            for lay, shape in UNARY_LAYOUTS]))
    for name, (fn, positive) in BINARY.items():
        rows.append(_row(name, "layouts", [
            _layout_sample("", lays, shapes, fn, positive=positive)
            for lays, shapes in BINARY_LAYOUTS]))
    rows.append(_row("where", "layouts", [
        _layout_sample("", lays, shapes, lambda lib, a, b, c: lib.where(c, a, b),
                       extra=(("bool", _bools(np.broadcast_shapes(*shapes))),))
        for lays, shapes in BINARY_LAYOUTS]))

    def reduce_row(name: str, fn: Callable[..., Any], skip_ties: bool = False) -> SweepInfo:
        samples = []
        for lay, shape, dim in REDUCE_LAYOUTS:
            if skip_ties and lay.startswith("expanded") and (
                    dim is None or (lay == "expanded") == (dim in (0, -len(shape)))):
                continue  # amax over a broadcast axis ties: a convention, checked apart
            label = f"{_label((lay,), (shape,))},dim={dim}"
            samples.append(_layout_sample(label, (lay,), (shape,),
                                          (lambda d: lambda lib, a: fn(lib, a, d))(dim)))
        return _row(name, "layouts", samples)

    rows.append(reduce_row("sum", lambda lib, a, d: a.sum() if d is None else a.sum(dim=d)))
    rows.append(reduce_row("mean", lambda lib, a, d: a.mean() if d is None
                           else lib.mean(a, dim=d)))
    rows.append(reduce_row("amax", lambda lib, a, d: lib.amax(a) if d is None
                           else lib.amax(a, dim=d), skip_ties=True))
    rows.append(reduce_row("logsumexp", lambda lib, a, d: lib.logsumexp(
        a, dim=tuple(range(a.ndim)) if d is None else d)))
    for name in ("softmax", "log_softmax"):
        rows.append(reduce_row(name, (lambda nm: lambda lib, a, d: getattr(_F(lib), nm)(
            a, dim=-1 if d is None else (d if isinstance(d, int) else d[0])))(name)))
    targets = (("int64", _const([0, 3, 1])),)
    rows.append(_row("cross_entropy", "layouts", [
        _layout_sample(f"{_label((lay,), (M34,))},{red}", (lay,), (M34,),
                       (lambda r: lambda lib, a, t: _F(lib).cross_entropy(
                           a, t, reduction=r))(red), extra=targets)
        for lay in ("transposed", "stepped", "stepped-rows", "offset", "expanded-col")
        for red in ("mean", "none")]))
    rows.append(_row("mse_loss", "layouts", [
        _layout_sample("", lays, shapes, lambda lib, a, b: _F(lib).mse_loss(a, b))
        for lays, shapes in BINARY_LAYOUTS if shapes[0] == shapes[1]]))
    mm = (
        (("transposed", "contiguous"), (M34, (4, 2))),
        (("contiguous", "transposed"), (M34, (4, 2))),
        (("transposed", "transposed"), (M34, (4, 2))),
        (("stepped", "offset"), (M34, (4, 2))),
        (("expanded", "stepped-rows"), (M34, (4, 2))),
        (("offset", "expanded-col"), (M34, (4, 2))),
        (("permuted", "contiguous"), ((2, 3, 4), (4, 2))),
        (("transposed", "permuted"), ((2, 3, 4), (2, 4, 2))),
        (("stepped", "offset"), ((4,), (4,))),
        (("transposed", "stepped"), (M34, (4,))),
    )
    rows.append(_row("matmul", "layouts", [
        _layout_sample("", lays, shapes, lambda lib, a, b: a @ b) for lays, shapes in mm]))
    rows.append(_row("linear", "layouts", [
        _layout_sample("", lays, shapes, lambda lib, x, w, b: _F(lib).linear(x, w, b))
        for lays, shapes in (
            (("transposed", "transposed", "stepped"), (M34, (2, 4), (2,))),
            (("offset", "stepped", "offset"), (M34, (2, 4), (2,))),
            (("stepped-rows", "expanded", "expanded"), (M34, (2, 4), (2,))),
            (("permuted", "contiguous", "contiguous"), ((2, 3, 4), (2, 4), (2,))),
        )]))
    return rows


# extremes ------------------------------------------------------------------------------------

MAGNITUDES = (50.0, 100.0, 1000.0)


def _extreme(label: str, make: Callable[[np.random.Generator], list[np.ndarray]],
             call: Callable[..., Any], kinds: tuple[str, ...] = ()) -> SweepSample:
    return SweepSample(label, make, call, kinds=kinds, create_graph=True, finite=True)


def _extremes_rows() -> list[SweepInfo]:
    rows: list[SweepInfo] = []
    for name in ("sigmoid", "tanh", "exp"):
        fn = UNARY[name][0]
        rows.append(_row(name, "extremes", [
            _extreme(f"x={'+' if sign > 0 else '-'}{m:g}",
                     _const(sign * np.array([m, 0.75 * m, m - 0.5, 0.5 / sign])), fn)
            for m in MAGNITUDES for sign in (1.0, -1.0)]))
    # a tiny result compared on a scale where it shows: log(sigmoid(x)) for x far below 0
    # (a sigmoid computed as 0.5 * (1 + tanh(x / 2)) cancels to 0 there in float32, which
    # an absolute tolerance on sigmoid itself lets through)
    rows[0] = dataclasses.replace(rows[0], samples=rows[0].samples + tuple(
        _extreme(f"log(sigmoid(x)),x=-{m:g}", _const(-np.array([m, 0.75 * m, 0.5 * m])),
                 lambda lib, a: lib.sigmoid(a).log())
        for m in (20.0, 40.0)))
    rows.append(_row("log", "extremes", [
        _extreme(f"x={m:g} and 1/{m:g}", _const([m, 0.75 * m, 1 / m, 0.5]), UNARY["log"][0])
        for m in MAGNITUDES]))
    pw = []
    for m in MAGNITUDES:
        both = np.array([m, -m, 0.5 * m, -0.75 * m])
        pos = np.array([m, 0.5 * m, 1 / m, 0.75 * m])
        pw += [
            _extreme(f"x**2,|x|={m:g}", _const(both), lambda lib, a: a ** 2),
            _extreme(f"x**3,|x|={m:g}", _const(both), lambda lib, a: a ** 3),
            _extreme(f"x**0.5,x={m:g}", _const(pos), lambda lib, a: a ** 0.5),
            _extreme(f"x**-1.5,x={m:g}", _const(pos), lambda lib, a: a ** -1.5),
            _extreme(f"2**x,x=+{m:g}", _const([m, 0.5 * m, 1.0]), lambda lib, a: 2.0 ** a),
            _extreme(f"2**x,x=-{m:g}", _const([-m, -0.5 * m, 1.0]), lambda lib, a: 2.0 ** a),
            _extreme(f"x**y,x={m:g}", _const([m, 0.5 * m, 2.0], [1.5, -1.0, 3.0]),
                     lambda lib, a, b: a ** b),
        ]
    rows.append(_row("pow", "extremes", pw))

    def mats(m: float) -> dict[str, np.ndarray]:
        return {
            "mixed": np.array([[m, m - 1, -m, 0.5], [-m, -m + 2, -m - 0.5, -m + 1]]),
            "all-large": np.array([[m, m - 0.5, m - 3, m - 1], [-m, -m + 0.5, -m - 3, -m + 1]]),
        }

    for name in ("logsumexp", "softmax", "log_softmax"):
        samples = []
        for m in MAGNITUDES:
            for kind, x in mats(m).items():
                for dim in (-1, 0):
                    if name == "logsumexp":
                        call = (lambda d: lambda lib, a: lib.logsumexp(a, dim=d))(dim)
                    else:
                        call = (lambda nm, d: lambda lib, a: getattr(_F(lib), nm)(a, dim=d))(
                            name, dim)
                    samples.append(_extreme(f"{kind} rows,|x|={m:g},dim={dim}", _const(x), call))
        rows.append(_row(name, "extremes", samples))
    ce = []
    for m in MAGNITUDES:
        x = np.array([[m, m - 1, -m, 0.5], [-m, -m + 2, -m - 0.5, -m + 1], [0.25, m, -0.5, m - 2]])
        for red in ("mean", "sum", "none"):
            ce.append(_extreme(f"|logits|={m:g},{red}", _const(x, [0, 3, 1]),
                               (lambda r: lambda lib, a, t: _F(lib).cross_entropy(
                                   a, t, reduction=r))(red), kinds=("f", "int64")))
    rows.append(_row("cross_entropy", "extremes", ce))
    return rows


# conventions ----------------------------------------------------------------------------------


def _convention(label: str, make: Callable[[np.random.Generator], list[np.ndarray]],
                call: Callable[..., Any], note: str) -> SweepSample:
    return SweepSample(label, make, call, create_graph=True, tol="same", note=note)


def _convention_rows() -> list[SweepInfo]:
    c = _convention
    return [
        _row("relu", "convention", [
            c("relu at 0", _const([0.0, -1.25, 1.5, 0.0]), lambda lib, a: lib.relu(a),
              "PyTorch's relu'(0) is 0"),
            c("F.relu at 0", _const([[0.0, 2.0], [-0.5, 0.0]]),
              lambda lib, a: _F(lib).relu(a), "PyTorch's relu'(0) is 0"),
        ]),
        _row("abs", "convention", [
            c("abs at 0", _const([0.0, -1.25, 1.5]), lambda lib, a: lib.abs(a),
              "PyTorch's abs'(0) is sign(0) = 0"),
            c("abs at 0, 2-d", _const([[0.0, 0.5], [0.0, -2.0]]), lambda lib, a: a.abs(),
              "PyTorch's abs'(0) is sign(0) = 0"),
        ]),
        _row("clamp", "convention", [
            c("clamp(min=-0.5, max=0.75) at both bounds", _const([-0.5, 0.75, 0.25, -1.0, 1.0]),
              lambda lib, a: lib.clamp(a, min=-0.5, max=0.75),
              "PyTorch passes the gradient at a bound: min <= x <= max"),
            c("clamp(min=0.25) at min", _const([0.25, 1.0, 0.0]),
              lambda lib, a: a.clamp(min=0.25), "PyTorch passes the gradient at x == min"),
            c("clamp(max=0.5) at max", _const([0.5, -0.5, 1.0]),
              lambda lib, a: lib.clamp(a, max=0.5), "PyTorch passes the gradient at x == max"),
            c("clamp(min=0.5, max=0.5)", _const([0.5, 0.25, 1.0]),
              lambda lib, a: lib.clamp(a, min=0.5, max=0.5),
              "PyTorch passes the gradient where x == min == max"),
        ]),
        _row("maximum", "convention", [
            c("ties", _const([1.0, 2.0, -0.5], [1.0, 1.5, -0.5]),
              lambda lib, a, b: lib.maximum(a, b), "PyTorch splits a tie's gradient in halves"),
            c("ties, broadcast", _const([[1.0, 2.0, 3.0], [0.5, 2.0, 4.0]], [0.5, 2.0, 3.0]),
              lambda lib, a, b: lib.maximum(a, b), "PyTorch splits a tie's gradient in halves"),
            c("maximum(x, x)", _const([1.0, -2.0]), lambda lib, a: lib.maximum(a, a),
              "PyTorch: halves, which add up to 1"),
        ]),
        _row("minimum", "convention", [
            c("ties", _const([1.0, 2.0, -0.5], [1.0, 1.5, -0.5]),
              lambda lib, a, b: lib.minimum(a, b), "PyTorch splits a tie's gradient in halves"),
            c("ties, broadcast", _const([[1.0, 2.0, 3.0], [0.5, 2.0, 4.0]], [0.5, 2.0, 3.0]),
              lambda lib, a, b: lib.minimum(a, b), "PyTorch splits a tie's gradient in halves"),
        ]),
        _row("amax", "convention", [
            c("ties, dim=1", _const([[1.0, 3.0, 3.0, 2.0], [0.5, 0.5, 0.5, -1.0]]),
              lambda lib, a: lib.amax(a, dim=1),
              "PyTorch's amax shares the gradient evenly among the tied maxima"),
            c("ties, dim=0, keepdim", _const([[1.0, 3.0], [1.0, 2.0], [0.5, 3.0]]),
              lambda lib, a: lib.amax(a, dim=0, keepdim=True),
              "PyTorch's amax shares the gradient evenly among the tied maxima"),
            c("ties, all", _const([[2.0, 1.0], [2.0, 2.0]]), lambda lib, a: lib.amax(a),
              "PyTorch's amax shares the gradient evenly among the tied maxima"),
        ]),
        _row("pow", "convention", [
            c("x**2 at 0", _const([0.0, 1.5]), lambda lib, a: a ** 2, "d/dx x**2 = 0 at 0"),
            c("x**3 at 0", _const([0.0, -1.5]), lambda lib, a: a ** 3, "d/dx x**3 = 0 at 0"),
            c("x**0.5 at 0", _const([0.0, 2.25]), lambda lib, a: a ** 0.5,
              "PyTorch: d/dx x**0.5 = inf at 0"),
            c("x**0 at 0", _const([0.0, 2.0]), lambda lib, a: a ** 0,
              "PyTorch: 0**0 = 1, gradient 0"),
            c("x**1 at 0", _const([0.0, 2.0]), lambda lib, a: a ** 1, "gradient 1"),
            c("x**-1 at 0", _const([0.0, 2.0]), lambda lib, a: a ** -1.0,
              "PyTorch: 0**-1 = inf, gradient -inf"),
            c("x**2.5 at 0", _const([0.0, 4.0]), lambda lib, a: a ** 2.5, "gradient 0 at 0"),
            c("x**y at x=0", _const([0.0, 0.0, 0.0, 1.5], [2.0, 0.5, 0.0, 1.0]),
              lambda lib, a, b: a ** b,
              "PyTorch masks the exponent's gradient (0**y * log 0) to 0 where x == 0, y >= 0"),
            c("0**y (number base)", _const([2.0, 0.5, 0.0]), lambda lib, b: 0.0 ** b,
              "PyTorch masks the exponent's gradient to 0 where the base is 0, y >= 0"),
        ]),
    ]


# promotion -----------------------------------------------------------------------------------


def _promotion_rows() -> list[SweepInfo]:
    """Mixed operands: ``D`` is the row's dtype, ``O`` the other float dtype."""
    S = (2, 3)
    ints = _const(np.arange(1, 7).reshape(S))  # an int64 operand (1..6)
    tensors: list[tuple[str, tuple[str, ...], tuple[tuple[int, ...], ...]]] = [
        ("{D} tensor with {O} tensor", ("f", "o"), (S, S)),
        ("{O} tensor with {D} tensor", ("o", "f"), (S, S)),
        ("{D} tensor with 0-d {O} tensor", ("f", "o"), (S, ())),
        ("0-d {D} tensor with {O} tensor", ("f", "o"), ((), (3,))),
        ("int64 tensor with {D} tensor", ("int64", "f"), (S, S)),
    ]
    scalars: list[tuple[str, Callable[[Any], tuple[Any, Any]]]] = [
        ("{D} tensor with Python float", lambda a: (a, 1.25)),
        ("Python float with {D} tensor", lambda a: (1.25, a)),
        ("{D} tensor with Python int", lambda a: (a, 2)),
        ("{D} tensor with numpy.float64 scalar", lambda a: (a, np.float64(1.25))),
        ("{D} tensor with numpy.float32 scalar", lambda a: (a, np.float32(1.25))),
    ]
    ops: dict[str, tuple[Callable[..., Any], bool, bool]] = {
        # name: (f(lib, a, b), numbers allowed, positive values)
        "add": (lambda lib, a, b: a + b, True, False),
        "sub": (lambda lib, a, b: a - b, True, False),
        "mul": (lambda lib, a, b: a * b, True, False),
        "div": (lambda lib, a, b: a / b, True, True),
        "pow": (lambda lib, a, b: a ** b, True, True),
        "maximum": (lambda lib, a, b: lib.maximum(a, b), False, False),
        "minimum": (lambda lib, a, b: lib.minimum(a, b), False, False),
        "where": (lambda lib, a, b: lib.where(lib.tensor([[True, False, True]] * 2,
                                                         dtype=lib.bool), a, b), True, False),
        "cat": (lambda lib, a, b: lib.cat([a.reshape(-1), b.reshape(-1)]), False, False),
        "stack": (lambda lib, a, b: lib.stack([a, b]), False, False),
        "mse_loss": (lambda lib, a, b: _F(lib).mse_loss(a, b), False, False),
    }
    rows: list[SweepInfo] = []
    for name, (fn, numbers, positive) in ops.items():
        samples = []
        for label, kinds, shapes in tensors:
            if name in ("cat", "stack", "mse_loss") and (
                    () in shapes or shapes[0] != shapes[1]):
                continue
            make = _chain(ints, _pool(S, positive=positive)) if kinds[0] == "int64" else \
                _pool(*shapes, positive=positive, hi=4.0)
            samples.append(SweepSample(label, make, fn, kinds=kinds, tol="ulp",
                                       create_graph=True))
        if numbers:
            for label, args in scalars:
                samples.append(SweepSample(
                    label, _pool(S, positive=positive),
                    (lambda f, g: lambda lib, a: f(lib, *g(a)))(fn, args), tol="ulp",
                    create_graph=True))
            samples.append(SweepSample(
                "int64 tensor with Python float", ints,
                (lambda f: lambda lib, a: f(lib, a, 1.5))(fn), kinds=("int64",), tol="ulp"))
        rows.append(_row(name, "promotion", samples,
                         notes="D is the row's dtype, O the other float dtype"))
    rows.append(_row("matmul", "promotion", [
        SweepSample("{D} @ {O} (PyTorch refuses)", _pool((2, 3), (3, 2)),
                    lambda lib, a, b: a @ b, kinds=("f", "o"), tol="ulp"),
        SweepSample("{D} @ {D}", _pool((2, 3), (3, 2)), lambda lib, a, b: a @ b, tol="ulp"),
    ]))
    return rows


# ownership -----------------------------------------------------------------------------------


def _snap(lib: Lib, t: Any) -> np.ndarray:
    return _host(lib, t)


def _other_device(lib: Lib) -> str:
    """A device other than the subject's: ``cpu`` for a retrograd backend that is not the
    cpu one (a cross-backend ``.to()``), else ``cpu:0`` (as in PyTorch, a new tensor too)."""
    if lib.kind == "retrograd" and lib.device != "cpu":
        return "cpu"
    return "cpu:0"


def _clone_owns(lib: Lib, x: Any) -> dict[str, Any]:
    w = x.clone()
    with lib.no_grad():
        x.add_(1.0)
    after_x_changed = _snap(lib, w)
    with lib.no_grad():
        w.mul_(3.0)
    return {"clone after x.add_(1)": after_x_changed, "x after clone.mul_(3)": _snap(lib, x),
            "clone is x": w is x}


def _clone_of_view(lib: Lib, x: Any) -> dict[str, Any]:
    w = x.T.clone()
    with lib.no_grad():
        x.mul_(-2.0)
    return {"clone of x.T after x.mul_(-2)": _snap(lib, w)}


def _tensor_copies(lib: Lib, x: Any) -> dict[str, Any]:
    host = _snap(lib, x).astype(lib.dtype_name)
    t = lib.tensor(host)
    host += 1.0
    return {"tensor(ndarray) after the ndarray changed": _snap(lib, t)}


def _to_dtype(lib: Lib, x: Any) -> dict[str, Any]:
    other = lib.float64 if lib.dtype_name == "float32" else lib.float32
    w = x.to(other)
    with lib.no_grad():
        x.add_(1.0)
    seen = _snap(lib, w)
    with lib.no_grad():
        w.mul_(3.0)
    return {"to(other dtype) after x.add_(1)": seen, "x after w.mul_(3)": _snap(lib, x),
            "dtype": lib.dtype_of(w)}


def _to_self(lib: Lib, x: Any) -> dict[str, Any]:
    return {"x.to(its device) is x": x.to(lib.device) is x,
            "x.to(its dtype) is x": x.to(x.dtype) is x,
            "x.to(its device, its dtype) is x": x.to(lib.device, x.dtype) is x}


def _to_device(lib: Lib, x: Any) -> dict[str, Any]:
    w = x.to(_other_device(lib))
    with lib.no_grad():
        x.add_(1.0)
    seen = _snap(lib, w)
    with lib.no_grad():
        w.mul_(3.0)
    return {"to(other device) is x": w is x, "to(other device) after x.add_(1)": seen,
            "x after w.mul_(3)": _snap(lib, x), "dtype": lib.dtype_of(w)}


def _back_device(lib: Lib) -> str:
    """A device other than ``_other_device``'s tensors' own: the subject's for a retrograd
    backend that is not cpu, else ``cpu:0`` once more (``cpu:0`` tensors are on ``cpu``)."""
    if lib.kind == "retrograd" and lib.device != "cpu":
        return lib.device
    return "cpu:0"


def _to_device_and_back(lib: Lib, x: Any) -> dict[str, Any]:
    with lib.no_grad():
        h = x.to(_other_device(lib)) * 1.0
    v = h.to(_back_device(lib))
    with lib.no_grad():
        h.add_(5.0)
    seen = _snap(lib, v)
    with lib.no_grad():
        v.mul_(2.0)
    return {"back after the other-device tensor changed": seen,
            "other-device tensor after back.mul_(2)": _snap(lib, h)}


def _to_device_grad(lib: Lib, x: Any) -> dict[str, Any]:
    dev = _other_device(lib)
    seed = lib.module.tensor([0.5, 0.25, 2.0], dtype=x.dtype, device=dev)
    kept = _snap(lib, seed)
    (x.to(dev) * 2.0).backward(seed)
    first = x.grad.clone()
    (x.to(dev) * 2.0).backward(seed)
    return {"x.grad after one backward": first, "x.grad after two": x.grad,
            "seed after two backward calls": _snap(lib, seed),
            "seed changed": bool(np.any(_snap(lib, seed) != kept))}


def _ownership_rows() -> list[SweepInfo]:
    v3 = _const([1.5, -0.25, 2.0])
    m23 = _const([[1.5, -0.25, 2.0], [0.75, 3.0, -1.0]])

    def own(label: str, make: Any, program: Any, grad: bool = True) -> SweepSample:
        return SweepSample(label, make, program, grad=grad, tol="same")

    return [
        _row("clone", "ownership", [
            own("clone() owns its memory", v3, _clone_owns),
            own("clone() of a view owns its memory", m23, _clone_of_view),
            own("tensor(ndarray) copies the ndarray", m23, _tensor_copies, grad=False),
        ]),
        _row("to", "ownership", [
            own("to(other dtype) owns its memory", v3, _to_dtype),
            own("to(own device / dtype) is the tensor itself", v3, _to_self),
            own("to(another device) owns its memory", v3, _to_device),
            own("to(another device) and back owns its memory", v3, _to_device_and_back),
            own("gradient through to(another device)", v3, _to_device_grad),
        ]),
    ]


def _format_labels(rows: list[SweepInfo]) -> list[SweepInfo]:
    """Promotion labels name the dtypes symbolically (``{D}``, ``{O}``): the sample is the
    same in both rows' dtypes."""
    return [dataclasses.replace(row, samples=tuple(
        dataclasses.replace(s, label=s.label.replace("{D}", "D").replace("{O}", "O"))
        for s in row.samples)) for row in rows]


def build_sweeps() -> tuple[SweepInfo, ...]:
    from . import (
        entries_activations,
        entries_arithmetic,
        entries_attention,
        entries_conv,
        entries_indexing,
        entries_layout,
        entries_losses,
        entries_nn_extras,
        entries_normalization,
        entries_numeric,
        entries_products,
        entries_random,
        entries_rearrange,
        entries_selection,
        entries_sorting,
    )
    from .sweeps_accuracy import accuracy_rows  # (these import this module's helpers)
    from .sweeps_sizes import sizes_rows

    families = [entries_sorting, entries_indexing, entries_layout, entries_products,
                entries_activations, entries_arithmetic, entries_random,
                entries_selection, entries_rearrange, entries_numeric, entries_conv,
                entries_normalization, entries_losses, entries_attention, entries_nn_extras]
    rows = (_sizes_rows() + sizes_rows() + [r for f in families for r in f.sizes_rows()]
            + _layouts_rows()
            + _extremes_rows() + accuracy_rows() + _convention_rows()
            + _format_labels(_promotion_rows())
            + _ownership_rows())
    names = [r.name for r in rows]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise AssertionError(f"duplicate sweep rows: {sorted(dupes)}")
    for row in rows:
        labels = [s.label for s in row.samples]
        if len(set(labels)) != len(labels):
            raise AssertionError(f"{row.name}: duplicate sample labels")
    return tuple(rows)


SWEEPS: tuple[SweepInfo, ...] = build_sweeps()
