"""Comparing results: tolerances per dtype and a readable account of every mismatch.

float32 results are compared with a float64 reference, so the float32 tolerance is about
float32 rounding accumulated over a small program, not about the two libraries' agreement.
``atol`` scales with the reference's magnitude (``atol * max(1, max|ref|)``): a gradient of
size 1e3 may be off by 1e3 * eps in its small entries too.

Families that care about dtypes (``semantics``) normalize tensors to :class:`Typed`: when both
sides are typed the dtype names must be equal before the values are compared. Strings (hook
orders, dtype names) compare exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import Raised, Raises, kinds_agree, satisfies


@dataclass(frozen=True, eq=False)
class Typed:
    """A tensor result with its dtype kept: ``dtype`` (``"float32"``) and ``array`` (float64, or
    bool, as for untyped results)."""

    dtype: str
    array: np.ndarray

    def __str__(self) -> str:
        return f"{fmt(self.array)} ({self.dtype})"


@dataclass(frozen=True)
class Tolerance:
    """``|actual - expected| <= atol * max(floor, max|expected|) + rtol * |expected|``.

    The default ``floor`` of 1 makes ``atol`` absolute for small results; the sweeps' relative
    tolerances use ``floor=0`` (a softmax of 10^5 entries is all below 1e-4)."""

    rtol: float
    atol: float
    floor: float = 1.0


# Document cases: small exact numbers.
DOCUMENT_TOL = {"float32": Tolerance(1e-5, 1e-6), "float64": Tolerance(1e-10, 1e-12)}
# Oracle comparisons (subject in dtype vs torch in float64).
ORACLE_TOL = {"float32": Tolerance(2e-4, 2e-5), "float64": Tolerance(1e-7, 1e-9)}
# Generated programs: deeper compositions, float32 rounding compounds.
PROGRAM_TOL = {"float32": Tolerance(2e-3, 5e-4), "float64": Tolerance(1e-7, 1e-9)}

EPS = {"float32": 2.0**-23, "float64": 2.0**-52}


def size_tolerance(dtype: str, n: int) -> Tolerance:
    """The tolerance of a result that sums ``n`` terms, against a float64 reference computed
    from the same (``dtype``-exact) inputs.

    A sum of ``n`` float32 terms accurate as PyTorch's (a cascade of short partial sums, or a
    pairwise tree) is off by a few units of ``eps * log2(n)`` relative to the sum of the
    terms' magnitudes; one that adds the terms one after another into one float32 accumulator
    is off by up to ``eps * n`` (at 10^5 terms of about 1 + 2^-10 it loses 6.5e-4 of the sum;
    past 2^24 terms of about 1 it stops growing). So ``rtol = eps * (16 + 4 log2 n)``, and the
    same bound, four times over, relative to the largest entry (``floor=0``) for entries that
    cancel (a softmax backward's ``g - sum(g * y)``)."""
    r = EPS[dtype] * (16 + 4 * math.log2(max(n, 2)))
    if dtype == "float64":
        r *= 2  # the float64 reference has rounding errors of its own
    return Tolerance(r, 4 * r, 0.0)


def ulp_tolerance(dtype: str, ulps: int = 8) -> Tolerance:
    """A few units in the last place of ``dtype``: for results both libraries compute in the
    same dtype (the promotion samples)."""
    r = ulps * EPS[dtype]
    return Tolerance(r, r, 0.0)


#: The most a backend's elementary function may be off, in units in the last place of the
#: result's dtype, from the exact value (PyTorch's float64 result for a float32 input; its
#: float64 result, itself within an ulp, for a float64 one). See the ``accuracy`` sweeps.
#: float32 can be computed in float64 and rounded once; float64 has no wider type at hand,
#: and careful float64 implementations are a few ulps off (JAX's table: tanh 7, expm1 4.5;
#: retrograd's own erfc 6), so its bound is looser -- still far below what the op entries'
#: tolerance lets through (1e-7 relative: 450 ulps).
ACCURACY_ULPS = {"float32": 4.0, "float64": 8.0}
_SIGNIFICAND = {"float32": 24, "float64": 53}
_MIN_EXPONENT = {"float32": -125, "float64": -1021}  # frexp's exponent of the smallest normal


def ulps_off(expected: np.ndarray, actual: np.ndarray, dtype: str) -> np.ndarray:
    """How many units in the last place of ``dtype`` each element of ``actual`` is from the
    (wider) ``expected``: the ulp is that of the binade of the expected value, as JAX's
    accuracy tables measure it (https://docs.jax.dev/en/latest/accuracy.html)."""
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual, dtype=np.float64)
    _, exponent = np.frexp(e)
    exponent = np.maximum(exponent, _MIN_EXPONENT[dtype])
    ulp = np.ldexp(1.0, exponent - _SIGNIFICAND[dtype])
    same = (e == a) | (np.isnan(e) & np.isnan(a))
    with np.errstate(invalid="ignore"):
        return np.where(same, 0.0, np.abs(a - e) / ulp)


def compare_ulps(expected: Any, actual: Any, dtype: str, inputs: np.ndarray,
                 bound: float | None = None) -> str | None:
    """None when no element of ``actual`` is more than ``bound`` (default: the dtype's
    :data:`ACCURACY_ULPS`) ulps of ``dtype`` from ``expected``; else the worst element, its
    input (``inputs``, flat) and its error."""
    bound = ACCURACY_ULPS[dtype] if bound is None else bound
    digits = 9 if dtype == "float32" else 17
    exp = np.asarray(strip_types(expected), dtype=np.float64)
    act = np.asarray(strip_types(actual), dtype=np.float64)
    if exp.shape != act.shape:
        return f"shape: expected {exp.shape}, got {act.shape}"
    if exp.size == 0:
        return None
    off = ulps_off(exp, act, dtype)
    off = np.where(np.isnan(off), np.inf, off)  # a NaN or infinity where the other is not
    worst = int(np.argmax(off))
    if off.flat[worst] <= bound:
        return None
    over = int(np.count_nonzero(off > bound))
    return (f"{off.flat[worst]:.2f} ulps from the exact value at x = "
            f"{float(inputs.flat[worst]):.{digits}g}: expected {exp.flat[worst]:.{digits}g}, "
            f"got {act.flat[worst]:.{digits}g} ({over} of {exp.size} elements above the "
            f"bound of {bound:g} ulps)")


def strip_types(value: Any) -> Any:
    """``value`` with every :class:`Typed` replaced by its array (lists kept)."""
    if isinstance(value, Typed):
        return value.array
    if isinstance(value, list):
        return [strip_types(v) for v in value]
    return value


def compare_types(expected: Any, actual: Any) -> str | None:
    """None when every tensor in ``actual`` has the dtype and shape of its counterpart in
    ``expected`` (both normalized with ``typed=True``); else a one-line reason. Values are
    not compared."""
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"expected {len(expected)} results, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            reason = compare_types(e, a)
            if reason:
                return f"[{i}]: {reason}"
        return None
    if isinstance(expected, Typed) and isinstance(actual, Typed):
        if expected.dtype != actual.dtype:
            return f"dtype: expected {expected.dtype}, got {actual.dtype}"
        if expected.array.shape != actual.array.shape:
            return f"shape: expected {expected.array.shape}, got {actual.array.shape}"
        return None
    if isinstance(expected, Typed) and actual is not None and not isinstance(actual, Raised):
        return f"expected a {expected.dtype} tensor, got {fmt(actual)}"
    return None


def fmt(value: Any, limit: int = 60) -> str:
    """A short rendering of a result for tables and messages."""
    if value is None:
        return "None"
    if isinstance(value, Typed):
        text = f"{fmt(value.array, limit)} ({value.dtype})"
        return text if len(text) <= limit + 12 else text[: limit + 9] + "..."
    if isinstance(value, Raised | Raises):
        return str(value) if len(str(value)) <= limit else str(value)[: limit - 3] + "..."
    if isinstance(value, list):
        text = "[" + ", ".join(fmt(v, limit) for v in value) + "]"
    elif isinstance(value, np.ndarray):
        if value.dtype == np.bool_:
            text = str(value.tolist())
        elif value.ndim == 0:
            text = f"{float(value):.6g}"
        else:
            text = np.array2string(value, precision=5, separator=", ", threshold=8,
                                   max_line_width=10_000).replace("\n", "")
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _as_array(value: Any) -> np.ndarray | None:
    """An array for numbers, arrays and (nested) lists of numbers; None for anything else."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, bool):
        return np.asarray(value)
    if isinstance(value, int | float):
        return np.asarray(float(value))
    if isinstance(value, list):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        return arr
    return None


def compare(expected: Any, actual: Any, tol: Tolerance, *, expected_is_document: bool = False
            ) -> str | None:
    """None when ``actual`` matches ``expected``; else a one-line reason.

    ``expected`` may be a :class:`Raises` (document expectation), a :class:`Raised` (the
    oracle's error), None, an array, a number or a (nested) list of those.
    """
    if isinstance(expected, Raises):
        if isinstance(actual, Raised):
            if satisfies(actual.kind, expected.kind):
                return None
            return f"expected an error of kind {expected.kind}, got {actual}"
        return f"expected {expected}, got {fmt(actual)} (no error)"
    if isinstance(expected, Raised):
        if isinstance(actual, Raised):
            if kinds_agree(actual.kind, expected.kind):
                return None
            return f"oracle {expected}; subject {actual}"
        return f"oracle {expected}; subject returned {fmt(actual)}"
    if isinstance(actual, Raised):
        return f"expected {fmt(expected)}, got {actual}"
    if expected is None or actual is None:
        if expected is None and actual is None:
            return None
        return f"expected {fmt(expected)}, got {fmt(actual)}"
    if isinstance(expected, Typed) or isinstance(actual, Typed):
        if isinstance(expected, Typed) and isinstance(actual, Typed) \
                and expected.dtype != actual.dtype:
            return (f"dtype: expected {expected.dtype}, got {actual.dtype} (values: expected "
                    f"{fmt(expected.array)}, got {fmt(actual.array)})")
        reason = compare(expected.array if isinstance(expected, Typed) else expected,
                         actual.array if isinstance(actual, Typed) else actual, tol,
                         expected_is_document=expected_is_document)
        if reason and isinstance(actual, Typed):
            return f"values ({actual.dtype}): {reason}"
        return reason
    if isinstance(expected, str) or isinstance(actual, str):
        if isinstance(expected, str) and isinstance(actual, str) and expected == actual:
            return None
        return f"expected {fmt(expected, 200)}, got {fmt(actual, 200)}"
    if isinstance(expected, list) and not (isinstance(actual, np.ndarray)
                                           and _as_array(expected) is not None):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"expected {fmt(expected)}, got {fmt(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            reason = compare(e, a, tol, expected_is_document=expected_is_document)
            if reason:
                return f"[{i}]: {reason}"
        return None
    exp = _as_array(expected)
    act = _as_array(actual)
    if exp is None or act is None:
        return f"cannot compare {fmt(expected)} with {fmt(actual)}"
    if exp.dtype == np.bool_ or act.dtype == np.bool_:
        if exp.shape == act.shape and np.array_equal(exp, act):
            return None
        return f"expected {fmt(exp)}, got {fmt(act)}"
    if exp.shape != act.shape:
        return f"shape: expected {exp.shape}, got {act.shape}"
    exp = exp.astype(np.float64)
    act = act.astype(np.float64)
    if exp.size == 0:
        return None
    finite = np.isfinite(exp)
    if not np.array_equal(finite, np.isfinite(act)) or not np.array_equal(
            exp[~finite], act[~finite], equal_nan=True):
        where = np.flatnonzero((np.isfinite(exp) != np.isfinite(act))
                               | (~finite & (exp != act) & ~(np.isnan(exp) & np.isnan(act))))
        at = ""
        if where.size:
            i = int(where[0])
            at = (f" (first at flat index {i} of {exp.size}: expected {exp.flat[i]:.6g}, got "
                  f"{act.flat[i]:.6g})")
        return f"non-finite entries differ: expected {fmt(exp)}, got {fmt(act)}{at}"
    if not finite.any():
        return None
    e = np.where(finite, exp, 0.0)
    a = np.where(finite, act, 0.0)
    scale = max(tol.floor, float(np.max(np.abs(e))))
    err = np.abs(a - e)
    bound = tol.atol * scale + tol.rtol * np.abs(e)
    if np.all(err <= bound):
        return None
    worst = int(np.argmax(err - bound))
    return (f"expected {fmt(exp)}, got {fmt(act)} (max abs err {float(err.max()):.3g}; worst at "
            f"flat index {worst} of {exp.size}: expected {e.flat[worst]:.9g}, got "
            f"{a.flat[worst]:.9g}; rtol={tol.rtol:.3g} atol={tol.atol:.3g}x{scale:.3g})")
