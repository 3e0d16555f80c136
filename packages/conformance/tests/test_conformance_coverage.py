"""Kernel coverage (``coverage.py``, ``runner.coverage_results``): the counting wrappers count
what a run calls and leave the backend as they found it; a backend's own kernels are told from
the reference ones; an overridden kernel no case reaches fails the run as the suite's gap; and
the default run reaches every kernel of the protocol on ``cpu``, on the vendor example and on a
test backend that overrides every kernel (``override_all`` below) -- all but the kernels no op
of retrograd calls at all (:data:`UNCALLED_BY_RETROGRAD`), and on the two NumPy ones those it
calls only where a backend makes no strided views (:data:`UNCALLED_WITH_STRIDED_VIEWS`)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from rich.console import Console

import retrograd as rg
from retrograd import backends
from retrograd.backends import COMPOSITES, Backend, reference_kernels
from retrograd.backends.numpy import NumpyBackend
from retrograd_conformance.cases import FUSION_FAMILY, SEMANTICS_CASES
from retrograd_conformance.coverage import (
    IN_PLACE_VARIANTS,
    KernelCoverage,
    layout_of,
    overridden,
    print_coverage,
    protocol_kernels,
    replaced_kernels,
    wrapped_kernels,
)
from retrograd_conformance.runner import (
    coverage_results,
    document_results,
    run_default,
    semantics_results,
)
from retrograd_conformance.subjects import retrograd_subjects, torch_subjects

#: Kernels of the protocol that no op of today's retrograd calls. A backend overriding one of
#: them cannot have it tested; the coverage result says so.
UNCALLED_BY_RETROGRAD: set[str] = set()
#: Kernels retrograd calls only on a backend whose arrays make no strided views: the copying
#: ``as_strided``, which the ``as_strided`` op runs where ``as_strided_view`` returns None --
#: never on ``cpu`` (NumPy's views), nor on ``override_all`` (the cpu's ``as_strided_view``).
UNCALLED_WITH_STRIDED_VIEWS = {"as_strided"}
#: Kernels retrograd calls only on a backend that declares its arrays immutable (``put_flat``,
#: the functional write through a view) or lazy (``settle``, once per backward).
UNCALLED_ON_EAGER_MUTABLE = {"put_flat", "settle"}
#: On ``cpu`` also ``ce_probs``: only the reference ``cross_entropy_backward`` calls it, and
#: the cpu backend replaces that.
UNCALLED_ON_CPU = (UNCALLED_BY_RETROGRAD | UNCALLED_WITH_STRIDED_VIEWS
                   | UNCALLED_ON_EAGER_MUTABLE | {"ce_probs"})


def override_all_backend(name: str = "override_all") -> Backend:
    """A backend that overrides every kernel of the protocol (in-place variants included) with
    a function of its own: the cpu backend's kernels behind a new function each, and the
    composite formulas bound to this backend's own ``ops`` (so the primitives they run are its
    own too)."""
    cpu = NumpyBackend()
    backend = Backend(name, np, array_type=np.ndarray)

    def own(fn: Callable[..., Any]) -> Callable[..., Any]:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)
        return kernel

    table: dict[str, Callable[..., Any]] = {}
    for kname in protocol_kernels():
        if kname in COMPOSITES:
            table[kname] = own(functools.partial(COMPOSITES[kname], backend.ops))
        else:
            table[kname] = own(cpu.kernels[kname])
    backend.override(**table)
    return backend


@contextlib.contextmanager
def registered(backend: Backend) -> Iterator[str]:
    backends.register_backend(backend.name, backend)
    try:
        yield f"retrograd:{backend.name}"
    finally:
        backends.unregister_backend(backend.name)


def _snapshot(be: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    walk = getattr(be, "walk_ops", None)
    return (dict(be.kernels), dict(vars(be.ops)),
            None if walk is None or walk is be.ops else dict(vars(walk)))


def _same(be: Any, snap: tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]) -> bool:
    kernels, ops, walk = snap
    now = _snapshot(be)
    return (now[0].keys() == kernels.keys() and all(now[0][k] is v for k, v in kernels.items())
            and now[1].keys() == ops.keys() and all(now[1][k] is v for k, v in ops.items())
            and (walk is None or all(now[2][k] is v for k, v in walk.items())))


# ---- the protocol and who overrides what ---------------------------------------------------------


def test_protocol_names_every_kernel_retrograd_calls():
    names = set(protocol_kernels())
    assert set(reference_kernels(np)) <= names
    assert set(IN_PLACE_VARIANTS) <= names
    assert {"linear_relu_backward", "linear_tanh_backward", "linear_sigmoid_backward"} <= names


def test_overridden_tells_a_backends_own_kernels_from_the_reference():
    cpu = overridden(backends.get_backend("cpu"))
    assert cpu["relu_backward"] and cpu["relu_backward_"] and cpu["linear_forward"]
    assert not cpu["exp"] and not cpu["clip"]  # kept (behind NumPy's error-state guard)
    assert not cpu["linear_relu_backward"]  # the reference composite, bound to cpu's ops
    from retrograd_array_api_strict import OVERRIDES

    strict = overridden(backends.get_backend("array_api_strict"))
    assert {k for k, v in strict.items() if v} == set(OVERRIDES)
    assert all(overridden(override_all_backend()).values())
    # a guard that names what it wraps (functools.wraps) around a reference kernel is not one
    be = Backend("guarded", np)
    ref = be.kernels["exp"]
    be.override(exp=functools.wraps(ref)(lambda *a: ref(*a)))
    assert not overridden(be)["exp"]


# ---- the wrappers ----------------------------------------------------------------------------------


def test_wrappers_count_calls_sizes_dtypes_and_layouts():
    be = backends.get_backend("cpu")
    with KernelCoverage({"cpu": be}) as coverage:
        x = rg.tensor(np.ones((5, 4)), dtype=rg.float32)
        w = rg.tensor(np.ones((3, 4)), dtype=rg.float32, requires_grad=True)
        rg.nn.functional.relu(rg.nn.functional.linear(x.T.T, w)).sum().backward()
        rg.tensor(np.ones((4, 5)), dtype=rg.float64).T.exp()
    stats = {s.name: s for s in coverage.table("cpu")}
    assert stats["linear_forward"].calls == 1
    assert stats["linear_forward"].largest == 20
    assert stats["linear_forward"].largest_shape == (5, 4)
    assert stats["linear_forward"].dtypes == {"float32"}
    assert stats["exp"].layouts == {"transposed"} and stats["exp"].dtypes == {"float64"}
    assert stats["relu_backward_"].calls == 1  # the walk owned the gradient: in place
    assert coverage.calls("cpu")["relu"] == 1
    assert "clip" not in coverage.calls("cpu")


def test_wrappers_are_taken_off_even_when_nested_or_interrupted():
    for name in ("cpu", "array_api_strict"):
        be = backends.get_backend(name)
        snap = _snapshot(be)
        with KernelCoverage({name: be}) as outer:
            with KernelCoverage({name: be}, only={"mul", "relu_backward"}) as inner:
                (rg.ones(3, device=name, requires_grad=True) * 2).sum().backward()
            assert inner.calls(name) == {"mul": 2}  # forward, and g * 2 backward
            with pytest.raises(ZeroDivisionError), KernelCoverage({name: be}):
                raise ZeroDivisionError
            assert wrapped_kernels(be)  # the outer block's wrappers are still there
        assert outer.calls(name)["mul"] == 2  # the inner calls counted in both blocks
        assert not wrapped_kernels(be)
        assert _same(be, snap), f"{name}: a kernel was not put back"


def test_replaced_kernels_puts_everything_back():
    be = backends.get_backend("cpu")
    snap = _snapshot(be)
    with replaced_kernels(be, {"relu_backward_": None, "relu": lambda x: x}):
        assert not hasattr(be.ops, "relu_backward_") and "relu_backward_" not in be.kernels
        assert be.ops.relu(-1.0) == -1.0 and be.walk_ops.relu(-1.0) == -1.0
    assert _same(be, snap)


def test_layout_names():
    a = np.arange(24.0).reshape(4, 6)
    assert layout_of(a) == "contiguous"
    assert layout_of(a.T) == "transposed"
    assert layout_of(a[:, ::2]) == "strided"
    assert layout_of(np.broadcast_to(np.ones(3), (4, 3))) == "broadcast"
    assert layout_of(np.float64(1.0)) == "0-d" and layout_of(np.ones(())) == "0-d"
    assert layout_of(np.ones((0, 3))) == "empty"
    import array_api_strict as xp  # no strides, only DLPack

    s = xp.reshape(xp.arange(12.0), (3, 4))
    assert layout_of(s) == "contiguous"
    assert layout_of(xp.matrix_transpose(s)) in ("transposed", "contiguous")


# ---- the coverage result ---------------------------------------------------------------------------


def test_an_unreached_override_fails_the_suite_not_the_backend():
    be = Backend("overrides_clip", np)
    be.override(clip=lambda x, lo, hi: np.clip(x, lo, hi), exp=lambda x: np.exp(x))
    with registered(be) as subject:
        subjects = retrograd_subjects(["overrides_clip"])
        with KernelCoverage.for_subjects(subjects) as coverage:
            semantics_results(subjects, [], [c for c in SEMANTICS_CASES if c.id == "hook-chain"])
            rg.tensor([1.0], device="overrides_clip").exp()
        (result,) = coverage_results(coverage)
        (partial,) = coverage_results(coverage, complete=False)
    assert result.suite == "coverage" and result.subject == subject
    assert result.verdict == "fail" and result.failed
    assert result.message.startswith(f"suite failure, not a fault of {subject}")
    assert "never called by any case" in result.message and "clip" in result.message
    assert result.details["unreached_overrides"] == ["clip"]
    assert result.details["overridden"] == ["clip", "exp"]
    assert partial.verdict == "skip" and "1 of the 2 kernels" in partial.message
    console = Console(record=True, width=200)
    print_coverage([result], console)
    text = console.export_text()
    assert "Kernel coverage: retrograd:overrides_clip" in text and "clip" in text


def test_fusion_family_reaches_the_fused_and_in_place_kernels_everywhere():
    wanted = {"linear_relu_backward", "linear_tanh_backward", "linear_sigmoid_backward",
              "relu_backward_", "tanh_backward_", "sigmoid_backward_", "arange", "linspace",
              "full", "empty", "from_numpy", "any_nonfinite", "isnan", "index_zero"}
    with registered(override_all_backend()):
        subjects = retrograd_subjects(["cpu", "array_api_strict", "override_all"])
        with KernelCoverage.for_subjects(subjects) as coverage:
            results = semantics_results(subjects, torch_subjects(), FUSION_FAMILY)
    for s in subjects:
        table = {k.name for k in coverage.table(s.name)}
        missing = {k for k in wanted & table if not coverage.calls(s.name).get(k)}
        assert not missing, f"{s.name}: {sorted(missing)} not reached by the fusion family"
    bad = [r.message for r in results if r.subject == "retrograd:override_all" and r.failed]
    assert not bad, bad[0]


def test_document_cases_alone_leave_overrides_unreached():
    """A narrowed run: the result lists what it did not reach, without failing."""
    subjects = retrograd_subjects(["cpu"])
    with KernelCoverage.for_subjects(subjects) as coverage:
        document_results(subjects, [])
    (r,) = coverage_results(coverage, complete=False)
    assert r.verdict == "skip" and "relu_backward_" in r.details["unreached_overrides"]


@pytest.mark.stress
def test_default_run_reaches_every_kernel():
    """The whole default run (documents, semantics with the fusion family, op database, 500
    generated programs) on cpu, the vendor example and a backend that overrides everything."""
    with registered(override_all_backend()):
        subjects = retrograd_subjects(["cpu", "array_api_strict", "override_all"])
        results, coverage = run_default(subjects, torch_subjects())
    by_subject = {r.subject: r for r in results if r.suite == "coverage"}
    cpu, strict, every = (by_subject[f"retrograd:{n}"]
                          for n in ("cpu", "array_api_strict", "override_all"))
    assert cpu.verdict == "pass", cpu.message
    assert strict.verdict == "pass", strict.message
    assert set(cpu.details["unreached_reference"]) <= UNCALLED_ON_CPU
    assert set(strict.details["unreached_reference"]) <= (
        UNCALLED_BY_RETROGRAD | UNCALLED_ON_EAGER_MUTABLE)
    assert set(every.details["overridden"]) == set(protocol_kernels())
    assert set(every.details["unreached_overrides"]) == (
        UNCALLED_BY_RETROGRAD | UNCALLED_WITH_STRIDED_VIEWS | UNCALLED_ON_EAGER_MUTABLE), \
        every.message
