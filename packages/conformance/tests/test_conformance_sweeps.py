"""The sweep rows (``opdb/<op>/<family>``) catch what the small samples cannot: one planted
backend per bug class, each a NumPy backend with one kernel replaced, and the row that must
fail with a message naming the op, the sample, the dtype, the kernel and both values.

Also: the rows pass on cpu and on PyTorch itself (its float32 results meet the size-scaled
tolerances), every kernel named in a message is a real kernel, and the known core failures
the sweeps found still fail (delete an entry of ``KNOWN_CORE_BUGS`` with its fix).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from retrograd import backends
from retrograd.backends.numpy import NumpyBackend
from retrograd.backends.reference import COMPOSITES, reference_kernels
from retrograd.backends.summation import sum_numpy
from retrograd_conformance.opdb import ENTRIES, OPS, OPS_BY_NAME, SWEEPS, check_op
from retrograd_conformance.opdb.kernels import KERNELS
from retrograd_conformance.opdb.sweeps import (
    BIG_SUM,
    FAMILIES,
    KNOWN_CORE_BUGS,
    SIZES,
    judge_sample,
)

ROWS = {row.name: row for row in SWEEPS}


# ---- planted kernels --------------------------------------------------------------------------


def _axes(x: Any, dim: Any) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(np.ndim(x)))
    return tuple(d % np.ndim(x) for d in (dim if isinstance(dim, tuple | list) else (dim,)))


def sum_drops_tail(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """A sum that adds only the first 1024 terms of each reduced axis."""
    x = np.asarray(x)
    axes = _axes(x, dim)
    head = x[tuple(slice(0, 1024) if i in axes else slice(None) for i in range(x.ndim))]
    return sum_numpy(head, dim, keepdim)


def sum_sequential_float32(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """A float32 sum accumulated term after term into one float32 accumulator."""
    x = np.asarray(x)
    if x.dtype != np.float32 or x.ndim == 0:
        return sum_numpy(x, dim, keepdim)
    axes = _axes(x, dim)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [-1])
    if moved.shape[-1] == 0:
        out = np.zeros(moved.shape[:-1], np.float32)
    else:
        out = np.cumsum(moved, axis=-1, dtype=np.float32)[..., -1]
    if keepdim:
        out = out.reshape([1 if i in axes else n for i, n in enumerate(x.shape)])
    return np.asarray(out)


def tanh_ignoring_strides(x: Any) -> Any:
    """tanh of the elements in memory order, laid out as if the input were contiguous."""
    x = np.asarray(x)
    return np.tanh(np.ravel(x, order="K")).reshape(x.shape)


def sigmoid_naive(x: Any) -> Any:
    with np.errstate(all="ignore"):
        e = np.exp(x)
        return e / (1 + e)


def logsumexp_unshifted(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    with np.errstate(all="ignore"):
        return np.log(np.sum(np.exp(x), axis=dim, keepdims=keepdim))


def sign_of_zero_is_one(x: Any) -> Any:
    x = np.asarray(x)
    return np.where(x >= 0, 1, -1).astype(x.dtype)


def mean_by_first_axis(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """A mean over a partial tuple of dims that divides by the size of the first one only
    (right over one axis and over all of them)."""
    x = np.asarray(x)
    total = np.sum(x, axis=dim, keepdims=keepdim)
    axes = _axes(x, dim)
    if len(axes) in (1, x.ndim) or x.ndim == 0:
        return np.asarray(total / max(int(np.prod([x.shape[a] for a in axes])), 1))
    return np.asarray(total / x.shape[axes[0]])


def add_returning_float32(a: Any, b: Any) -> Any:
    """An add whose result is float32 whatever its operands."""
    return np.asarray(np.add(a, b)).astype(np.float32)


def copy_sharing_memory(x: Any) -> Any:
    """A copy kernel that is an asarray: the "copy" shares the source's memory."""
    return np.asarray(x)


def relu_backward_into_g(g: Any, y: Any) -> Any:
    """relu's backward written into the incoming gradient (which the caller owns)."""
    if isinstance(g, np.ndarray) and g.flags.writeable and g.shape == np.shape(y):
        np.putmask(g, np.asarray(y) <= 0, 0)
        return g
    return np.where(np.asarray(y) <= 0, 0, g)


class _Planted(NumpyBackend):
    def __init__(self, name: str, **kernels: Callable[..., Any]) -> None:
        super().__init__()
        self.name = name
        self.override(**kernels)


@contextlib.contextmanager
def planted(**kernels: Callable[..., Any]) -> Iterator[str]:
    """A NumPy backend with ``kernels`` replaced, registered for the duration."""
    name = "planted_" + ("_".join(sorted(kernels)) or "plain")
    backends.register_backend(name, _Planted(name, **kernels))
    try:
        yield f"retrograd:{name}"
    finally:
        backends.unregister_backend(name)


def _failures(row: str, subject: str, dtype: str) -> list[str]:
    return check_op(OPS_BY_NAME[row], subject, dtype).failures


def _one(failures: list[str], *needles: str) -> str:
    """The first failure containing every needle (the assertion shows them all if none)."""
    for f in failures:
        if all(n in f for n in needles):
            return f
    raise AssertionError(f"no failure mentions {needles}:\n" + "\n".join(failures))


# ---- each bug class is caught, by the row meant for it ---------------------------------------


def test_a_sum_that_drops_its_tail_fails_the_size_sweep():
    with planted(sum=sum_drops_tail) as subject:
        failures = _failures("sum/sizes", subject, "float64")
        small = ROWS["sum/sizes"]
        small_ok = [s for s in small.samples if s.label.startswith(("n=1023,", "n=1024,"))]
        healthy: list[str] = []
        for s in small_ok:
            judge_sample(small, s, subject, "float64", "torch", healthy, [])
    f = _one(failures, "sum/sizes[n=1025,all] (float64)", "output", "[forward kernel: sum]")
    assert "expected 1" in f and "got 1" in f  # both values: 1025 terms of about 1 vs 1024
    _one(failures, "n=100003,dim=0 of (n, 2) (strided)")
    assert not healthy, healthy  # up to 1024 terms the kernel is right, and passes


def test_a_sequential_float32_sum_fails_the_size_sweep():
    with planted(sum=sum_sequential_float32) as subject:
        failures = _failures("sum/sizes", subject, "float32")
        double = _failures("sum/sizes", subject, "float64")
    _one(failures, f"sum/sizes[n={BIG_SUM} (> 2^24),all] (float32)", "[forward kernel: sum]")
    f = _one(failures, "sum/sizes[n=100003,all] (float32)")
    assert "rtol=" in f  # the size-scaled tolerance it broke is in the message
    assert not any("n=1023," in f or "n=7," in f for f in failures)  # short sums are fine
    assert not double  # float64 goes through the blocked sum


def test_a_tanh_that_ignores_strides_fails_the_layout_sweep():
    with planted(tanh=tanh_ignoring_strides) as subject:
        failures = _failures("tanh/layouts", subject, "float32")
        plain = check_op(OPS_BY_NAME["tanh"], subject, "float32")
    f = _one(failures, "tanh/layouts[transposed (4, 3)->(3, 4)] (float32)", "output",
             "[forward kernel: tanh]")
    assert "operand strides in bytes: (4, 12)" in f  # the layout, as the backend stored it
    _one(failures, "permuted")
    assert not any("stepped (5,)" in f for f in failures)  # a 1-d step is in memory order
    assert plain.ok, plain.failures  # contiguous samples cannot see it


def test_a_naive_sigmoid_fails_the_extremes_sweep():
    with planted(sigmoid=sigmoid_naive) as subject:
        f32 = _failures("sigmoid/extremes", subject, "float32")
        f64 = _failures("sigmoid/extremes", subject, "float64")
        plain = check_op(OPS_BY_NAME["sigmoid"], subject, "float64")
    f = _one(f32, "sigmoid/extremes[x=+100] (float32)", "output", "non-finite entries differ",
             "[forward kernel: sigmoid]")
    assert "expected 1, got nan" in f
    _one(f64, "sigmoid/extremes[x=+1000] (float64)")
    assert not any("x=+50]" in f or "x=-" in f for f in f32 + f64)
    assert plain.ok, plain.failures


def test_logsumexp_without_the_max_shift_fails_the_extremes_sweep():
    with planted(logsumexp=logsumexp_unshifted) as subject:
        f32 = _failures("logsumexp/extremes", subject, "float32")
        f64 = _failures("logsumexp/extremes", subject, "float64")
        plain = check_op(OPS_BY_NAME["logsumexp"], subject, "float64")
    _one(f32, "logsumexp/extremes[mixed rows,|x|=100,dim=-1] (float32)", "output",
         "[forward kernel: logsumexp]")
    _one(f64, "|x|=1000", "(float64)", "non-finite entries differ")
    assert plain.ok, plain.failures


def tanh_six_ulps_off(x: Any) -> Any:
    """tanh, float32 results 6 ulps (of their binade) too large in magnitude."""
    y = np.tanh(x)
    if y.dtype != np.float32:
        return y
    _, e = np.frexp(y.astype(np.float64))
    return (y + np.sign(y) * np.ldexp(6.0, e - 24)).astype(np.float32)


def test_a_tanh_a_few_ulps_off_fails_the_accuracy_row_only():
    """The op entries' tolerance (2e-4 relative in float32) lets 6 ulps through; the accuracy
    row names the input, the error in ulps and how many elements are past the bound."""
    with planted(tanh=tanh_six_ulps_off) as subject:
        f32 = _failures("tanh/accuracy", subject, "float32")
        f64 = _failures("tanh/accuracy", subject, "float64")
        plain = check_op(OPS_BY_NAME["tanh"], subject, "float32")
    f = _one(f32, "tanh/accuracy[x in [-10, 10]] (float32)", "ulps from the exact value at x =",
             "above the bound of 4 ulps", "[forward kernel: tanh]")
    assert float(f.split(" ulps from")[0].rsplit(" ", 1)[1]) >= 5.5
    assert not f64
    assert plain.ok, plain.failures


def test_ulps_off_counts_units_in_the_last_place_of_the_expected_binade():
    from retrograd_conformance.compare import ulps_off

    one = np.array([1.0, 1.0, 0.75, 0.0])
    got = np.array([1.0 + 2.0**-23, 1.0 - 2.0**-24, 0.75 + 2.0**-24, 0.0])
    np.testing.assert_array_equal(ulps_off(one, got, "float32"), [1.0, 0.5, 1.0, 0.0])
    assert ulps_off(np.array([2.0]), np.array([2.0 + 2.0**-51]), "float64")[0] == 1.0
    assert np.isnan(ulps_off(np.array([1.0]), np.array([np.nan]), "float32")[0])


@pytest.mark.parametrize("subject", ["cpu", "array_api_strict"])
def test_retrograds_kernels_meet_the_accuracy_bound(subject):
    """The rows found two of retrograd's own kernels: the reference sigmoid
    (``exp(-softplus(-x))``, 33 ulps off at x = -33) and erfc's ``1 - erf`` below 2 and
    ``exp(-x*x)`` beyond (98 and 64 ulps in float64)."""
    pytest.importorskip("array_api_strict")
    bad = [f for row in SWEEPS if row.family == "accuracy" for dtype in ("float32", "float64")
           for f in check_op(row, f"retrograd:{subject}", dtype).failures]
    assert not bad, "\n".join(bad)


def test_sign_of_zero_one_fails_the_convention_row_and_nothing_else():
    with planted(sign=sign_of_zero_is_one) as subject:
        convention = _failures("abs/convention", subject, "float64")
        sizes = _failures("abs/sizes", subject, "float64")
        plain = check_op(OPS_BY_NAME["abs"], subject, "float64")
    f = _one(convention, "abs/convention[abs at 0] (float64)", "grad of input 0",
             "PyTorch's abs'(0) is sign(0) = 0", "[backward kernels: sign")
    assert "worst at flat index 0 of 3: expected 0, got 1.25" in f
    assert not sizes and plain.ok, (sizes, plain.failures)  # "convention", not "wrong"


def test_a_mean_dividing_by_the_wrong_count_fails_the_tuple_dims_samples():
    with planted(mean=mean_by_first_axis) as subject:
        result = check_op(OPS_BY_NAME["mean"], subject, "float64")
    f = _one(result.failures, "mean[dim=(1,2) of 3-d] vs torch: output",
             "[forward kernel: mean]")
    assert "expected" in f and "got" in f
    _one(result.failures, "mean[dim=(0,2),keepdim of 3-d]")
    assert not any("mean[dim=1]" in f or "mean[all]" in f for f in result.failures)


@pytest.mark.filterwarnings("ignore::UserWarning")  # gradcheck on the float32 results
def test_a_float32_result_of_a_float64_add_fails_on_its_dtype():
    with planted(add=add_returning_float32) as subject:
        plain = check_op(OPS_BY_NAME["add"], subject, "float64")
        promotion = _failures("add/promotion", subject, "float32")
    f = _one(plain.failures, "add[same-shape] vs torch: output: dtype: expected float64, got "
                             "float32", "[forward kernel: add]")
    assert f
    # float32 + float64: core casts the kernel's float32 back to float64, but its values
    # carry float32 rounding, which the promotion row's float64 tolerance sees
    _one(promotion, "add/promotion[D tensor with O tensor] (float32)", "output")


def test_a_copy_that_shares_memory_fails_the_ownership_row():
    with planted(copy=copy_sharing_memory) as subject:
        failures = _failures("clone/ownership", subject, "float32")
    f = _one(failures, "clone/ownership[clone() owns its memory] (float32)",
             "clone after x.add_(1)", "[forward kernel: copy]")
    assert "expected [ 1.5 , -0.25,  2.  ], got [2.5 , 0.75, 3.  ]" in f
    _one(failures, "clone() of a view owns its memory")


def test_a_backward_that_writes_into_its_incoming_gradient_fails_ownership():
    with planted(relu_backward=relu_backward_into_g) as subject:
        result = check_op(OPS_BY_NAME["relu"], subject, "float32")
    f = _one(result.failures, "relu[2-d] (float32): ownership: the backward wrote into its "
                              "incoming gradient", "[backward kernel: relu_backward]")
    assert "before" in f and "after" in f


def test_a_to_that_shares_memory_fails_the_ownership_row(monkeypatch):
    """Core before its fix: a cross-backend ``.to()`` kept the memory ``to_numpy`` and
    ``asarray`` handed over (NumPy's asarray shares), so the result aliased its source. The
    ``to/ownership`` row sees it on any backend other than cpu."""
    from retrograd.ops import conversion

    monkeypatch.setattr(conversion, "may_share", lambda *arrays: False)  # never copies
    with planted() as subject:
        failures = _failures("to/ownership", subject, "float32")
    f = _one(failures, "to/ownership[to(another device) owns its memory] (float32)",
             "to(other device) after x.add_(1): expected [ 1.5 , -0.25,  2.  ]",
             "[forward kernel: astype]")
    assert f
    _one(failures, "to(another device) and back owns its memory")


def test_the_strict_example_passes_the_ownership_and_layout_rows():
    pytest.importorskip("retrograd_array_api_strict")
    bad: list[str] = []
    for row in SWEEPS:
        if row.family in ("ownership", "layouts", "convention"):
            for dtype in ("float32", "float64"):
                bad += check_op(row, "retrograd:array_api_strict", dtype).failures
    assert not bad, "\n".join(bad[:10])


# ---- the rows on healthy subjects ----------------------------------------------------------


@pytest.mark.parametrize("family", ["sizes", "extremes", "layouts", "accuracy"])
def test_pytorch_itself_meets_the_sweeps_tolerances(family):
    """torch in float32 against torch in float64: the tolerances are ones PyTorch meets (of
    the size sweep, the samples that sum, whose tolerance scales with the size)."""
    bad: list[str] = []
    for row in SWEEPS:
        if row.family != family:
            continue
        for s in row.samples:
            if family == "sizes" and s.tol != "size":
                continue
            for dtype in s.dtypes:
                judge_sample(row, s, "torch", dtype, "torch", bad, [])
    assert not bad, "\n".join(bad[:10])


def test_every_family_has_rows_and_every_row_belongs_to_an_op():
    families = {row.family for row in SWEEPS}
    assert families == set(FAMILIES)
    entries = {op.name for op in ENTRIES}
    for row in SWEEPS:
        assert row.base in entries, row.name
        assert row.name == f"{row.base}/{row.family}"
        assert row.samples
    assert len(OPS) == len(ENTRIES) + len(SWEEPS)


def test_each_op_is_swept_at_every_size():
    core = {op.name for op in ENTRIES}
    swept = {row.base for row in SWEEPS if row.family == "sizes"}
    assert core <= swept, core - swept
    for row in SWEEPS:
        if row.family != "sizes":
            continue
        labels = " ".join(s.label for s in row.samples)
        for n in SIZES:
            assert f"n={n}" in labels, (row.name, n)
    assert any(s.label.startswith(f"n={BIG_SUM}") and s.dtypes == ("float32",)
               for s in ROWS["sum/sizes"].samples)


def test_every_unary_binary_and_reduction_kernel_has_a_layout_row():
    for op in ("neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu",
               "clamp", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "where", "sum",
               "mean", "amax", "logsumexp", "softmax", "log_softmax", "matmul", "linear",
               "cross_entropy", "mse_loss"):
        row = ROWS[f"{op}/layouts"]
        text = " ".join(s.label for s in row.samples)
        for layout in ("transposed", "stepped", "expanded", "offset"):
            assert layout in text, (op, layout)
    for op in ("neg", "tanh", "add", "sum", "softmax"):
        assert "permuted" in " ".join(s.label for s in ROWS[f"{op}/layouts"].samples)


def test_every_kernel_a_message_names_exists():
    table = set(reference_kernels(np)) | set(COMPOSITES)
    for op, (forward, backward) in KERNELS.items():
        for name in forward + backward:
            assert name in table, (op, name)
    assert {op.name for op in ENTRIES} <= set(KERNELS)


def test_a_layout_a_backend_stores_otherwise_is_noted_not_failed():
    """A backend that materializes views (here: every view op copies) is not failed for it;
    the row notes which layouts it did not exercise."""
    def contiguous(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a, **k: np.ascontiguousarray(f(*a, **k))

    base = NumpyBackend()
    kernels = {k: contiguous(base.kernels[k]) for k in ("permute", "getitem", "expand")}
    with planted(**kernels) as subject:
        result = check_op(OPS_BY_NAME["exp/layouts"], subject, "float64")
    assert result.ok, result.failures
    assert any("the transposed layout is not exercised" in s for s in result.skipped)


def test_known_core_bugs_still_fail_on_cpu():
    """Each entry of KNOWN_CORE_BUGS names a sample core still gets wrong; when core is
    fixed, this fails: delete the entry."""
    for (row_name, label), why in KNOWN_CORE_BUGS.items():
        row = ROWS[row_name]
        sample = next(s for s in row.samples if s.label == label)
        failures: list[str] = []
        for dtype in sample.dtypes:
            judge_sample(row, sample, "retrograd:cpu", dtype, "torch", failures, [])
        assert failures, f"{row_name}[{label}] passes now: remove it from KNOWN_CORE_BUGS " \
                         f"({why})"


def test_a_layout_a_backend_cannot_build_is_skipped_with_the_reason():
    def no_permute(x: Any, dims: Any) -> Any:
        raise NotImplementedError("this backend has no strided permute")

    with planted(permute=no_permute) as subject:
        result = check_op(OPS_BY_NAME["exp/layouts"], subject, "float64")
    assert result.ok, result.failures
    reasons = [s for s in result.skipped if "cannot build the transposed operand(s)" in s]
    assert reasons and "no strided permute" in reasons[0]
