"""The statistics reductions against PyTorch: var/std (and their two-output ``var_mean`` /
``std_mean``), prod (with zeros), max/min (full, with a dim, binary), amin, argmax/argmin,
median/nanmedian, all/any, count_nonzero, trace, cumsum/cumprod. Each program is written once
against a library handle ``lib`` (``torch`` or ``retrograd``); values, gradients, double
backward, node names, dtypes and errors (class and key phrase) are compared."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from torch_parity import same

A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
C = [[[0.3, -1.2], [2.5, 0.7], [-0.4, 1.9]], [[1.1, -0.6], [0.2, 2.2], [-1.7, 0.9]]]
ZEROS = [[1.5, 0.0, -2.0], [0.0, 3.0, 0.0]]  # one zero in row 0, two in row 1
ONE_ZERO = [[1.5, 0.5, -2.0], [0.7, 0.0, 1.25]]


def leaf(lib: Any, data: Any = A) -> Any:
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def name(t: Any) -> Any:
    return None if t.grad_fn is None else t.grad_fn.name()


def first_and_second(lib: Any, loss_of: Any, *inputs: Any) -> dict[str, Any]:
    """The loss, its gradients with create_graph=True, and the gradients of the sum of the
    squares of those (a double backward)."""
    loss = loss_of()
    grads = lib.autograd.grad(loss, inputs, create_graph=True)
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, inputs, allow_unused=True, materialize_grads=True)
    return {"loss": loss, "grads": grads, "second": second}


def check_op(call: Any, data: Any = A, tol: float = 1e-12) -> None:
    """``call(lib, x)``: value, dtype, node name, gradient and double backward."""

    def program(lib: Any) -> Any:
        x = leaf(lib, data)
        y = call(lib, x)
        w = lib.linspace(0.5, 1.5, max(y.numel(), 1), dtype=lib.float64).reshape(y.shape)
        out = first_and_second(lib, lambda: (call(lib, x) * w).sum(), x)
        fast = lib.autograd.grad((call(lib, x) * w).sum(), x)  # the walk on raw kernels
        return {"y": y, "name": name(y), "fast": fast, **out}

    same(program, tol=tol)


# -- var / std -------------------------------------------------------------------------------
VAR_CALLS = {
    "var()": lambda lib, x: x.var(),
    "var(0)": lambda lib, x: lib.var(x, 0),
    "var(1,keepdim)": lambda lib, x: x.var(1, keepdim=True),
    "var(unbiased=False)": lambda lib, x: x.var(unbiased=False),
    "var(True)": lambda lib, x: lib.var(x, True),
    "var(dim=(0,2))": lambda lib, x: lib.var(x.reshape(1, 2, 3), dim=(0, 2)),
    "var(correction=0.5)": lambda lib, x: x.var(1, correction=0.5),
    "var(dim=None)": lambda lib, x: x.var(dim=None),
    "var 0-d": lambda lib, x: x[0, 0].var(correction=0),
    "std()": lambda lib, x: x.std(),
    "std(0,unbiased=False)": lambda lib, x: lib.std(x, 0, unbiased=False),
    "std(-1,keepdim)": lambda lib, x: x.std(-1, keepdim=True),
    "std(correction=2)": lambda lib, x: x.std(1, correction=2),
}


@pytest.mark.parametrize("key", list(VAR_CALLS))
def test_var_std(key: str) -> None:
    check_op(VAR_CALLS[key])


def test_var_3d_tuple_dims() -> None:
    check_op(lambda lib, x: lib.var(x, (0, 2), keepdim=True) + lib.std(x, (1, 2)).sum(), C)


def test_std_of_a_constant_slice_has_zero_gradient() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([[1.0, 1.0, 1.0], [0.5, 2.0, 3.0]], dtype=lib.float64,
                       requires_grad=True)
        x.std(1).sum().backward()
        return x.grad

    same(program)


def test_var_degrees_of_freedom_zero_or_less() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([2.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x.var()
            z = lib.var(lib.tensor([1.0, 2.0]), correction=2)
        y.backward()
        said = sorted({str(w.message).partition(" (input")[0] for w in caught})
        return y, x.grad, z, said

    same(program)


def test_var_mean_through_saved_tensor_hooks() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            s, m = lib.std_mean(x, 0)
            v, n = lib.var_mean(x, 1)
        (s + m * s).sum().backward(retain_graph=True)
        (g,) = lib.autograd.grad((v * n).sum(), x, create_graph=True)
        return x.grad, g, lib.autograd.grad(g.sum(), x)

    same(program)


def test_var_errors() -> None:
    same(lambda lib: lib.var(lib.tensor([1, 2, 3])), "std and var only support floating point")
    same(lambda lib: lib.tensor([1.0, 2.0]).var(1), "Dimension out of range")
    same(lambda lib: lib.tensor([[1.0, 2.0]]).std((0, 0)), "appears multiple times")


# -- var_mean / std_mean: one node, two outputs ----------------------------------------------
def test_var_mean_values_and_node() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        v, m = lib.var_mean(x, 0)
        s, m2 = lib.std_mean(x, dim=1, keepdim=True, correction=0)
        return (v, m, s, m2, name(v), name(m), name(s), v.grad_fn is m.grad_fn,
                v.output_nr, m.output_nr, type(lib.var_mean(x)).__name__)

    same(program)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_var_mean_gradients(fn: str, use: str) -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, C)

        def loss() -> Any:
            a, m = getattr(lib, fn)(x, (0, 2))
            if use == "first":
                return (a * a).sum()
            if use == "second":
                return (m * m * m).sum()
            return (a * a * m).sum()

        return first_and_second(lib, loss, x)

    same(program)


def test_var_mean_matches_var_and_mean() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, C)
        y = leaf(lib, C)
        v1, m1 = lib.var_mean(x, dim=[0, 2])
        (v1 * v1 * m1 * m1).sum().backward()
        v2, m2 = y.var(dim=[0, 2]), y.mean(dim=[0, 2])
        (v2 * v2 * m2 * m2).sum().backward()
        return x.grad, y.grad

    same(program)


def test_var_mean_prehook_sees_both_gradients() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        v, m = lib.var_mean(x, dim=0)
        seen = []

        def prehook(grads: Any) -> Any:
            seen.append(len(grads))
            return (grads[0] * 2, grads[1] * 3)

        m.grad_fn.register_prehook(prehook)
        (v + m).sum().backward()
        return x.grad, seen

    same(program)


def test_var_mean_retain_grad_and_hooks_after_inplace() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        v, m = lib.var_mean(x, dim=0)
        v.retain_grad()
        m.retain_grad()
        seen = []
        m.register_hook(lambda g: seen.append(g.tolist()))
        v.mul_(2)
        (v + m * 3).sum().backward()
        return x.grad, v.grad, m.grad, seen, name(v)

    same(program)


# -- prod ------------------------------------------------------------------------------------
PROD_CALLS = {
    "prod()": lambda lib, x: x.prod(),
    "prod(1)": lambda lib, x: lib.prod(x, 1),
    "prod(0,keepdim)": lambda lib, x: x.prod(0, keepdim=True),
    "prod(-1) of row": lambda lib, x: x[0].prod(-1),
    "prod 0-d": lambda lib, x: x[1, 1].prod(),
    "prod(dtype)": lambda lib, x: x.float().prod(1, dtype=lib.float64),
}


@pytest.mark.parametrize("key", list(PROD_CALLS))
def test_prod(key: str) -> None:
    check_op(PROD_CALLS[key], tol=1e-6 if "dtype" in key else 1e-12)  # float32 rounding


@pytest.mark.parametrize("data", [ZEROS, ONE_ZERO, [[0.0, 2.0, 0.0], [1.0, 0.5, 3.0]]],
                         ids=["zeros", "one-zero", "two-zeros-one-row"])
@pytest.mark.parametrize("form", ["full", "dim=1", "dim=0"])
def test_prod_with_zeros(data: Any, form: str) -> None:
    calls = {"full": lambda lib, x: x.prod(), "dim=1": lambda lib, x: x.prod(1),
             "dim=0": lambda lib, x: lib.prod(x, 0)}
    check_op(calls[form], data)


def test_prod_repeated_grad_grad() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, 4, 4, dtype=lib.float64).requires_grad_()
        y = x.prod(dim=-1).prod(dim=-1)
        (gy,) = lib.autograd.grad(y[0], x, create_graph=True)
        (gg1,) = lib.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        return gy, gg1

    same(program)


def test_prod_dtypes_and_errors() -> None:
    same(lambda lib: (lib.tensor([[1, 2], [3, 4]]).prod(), lib.tensor([True, False]).prod(),
                      lib.tensor([1, 2], dtype=lib.int32).prod(0),
                      lib.tensor([1.5, 2.0]).prod(dtype=lib.float64)))
    same(lambda lib: lib.tensor([[1.0, 2.0]]).prod((0, 1)), "invalid combination of arguments")
    same(lambda lib: lib.tensor([[1.0, 2.0]]).prod(2), "Dimension out of range")


# -- max / min / amin / argmax / argmin -------------------------------------------------------
EXTREME_CALLS = {
    "max()": lambda lib, x: x.max(),
    "min()": lambda lib, x: lib.min(x),
    "max(1).values": lambda lib, x: x.max(1).values,
    "max(dim=0,keepdim)[0]": lambda lib, x: lib.max(x, dim=0, keepdim=True)[0],
    "min(-1)[0]": lambda lib, x: x.min(-1)[0],
    "max 0-d dim": lambda lib, x: x[0, 1].max(0)[0],
    "amin()": lambda lib, x: x.amin(),
    "amin(1)": lambda lib, x: lib.amin(x, 1),
    "amin((0,1),keepdim)": lambda lib, x: lib.amin(x, (0, 1), keepdim=True),
}


@pytest.mark.parametrize("key", list(EXTREME_CALLS))
def test_extremes(key: str) -> None:
    check_op(EXTREME_CALLS[key])


def test_binary_max_min_are_maximum_minimum() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        y = leaf(lib, [[0.5, 1.0, -1.0], [2.0, 0.25, 1.5]])
        a, b = lib.max(x, y), x.min(y)
        (a * 2 + b).sum().backward()
        return a, b, name(a), name(b), x.grad, y.grad

    same(program)


def test_max_min_dim_named_tuple() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        r = lib.max(x, 1)
        values, indices = r
        m = x.min(dim=0, keepdim=True)
        return (r.values, r.indices, values, indices, r[0], r[1], len(r), type(r).__name__,
                m.values, m.indices, type(m).__name__, name(r.values), name(m.values),
                r.indices.requires_grad, str(r.indices.dtype).rpartition(".")[2])

    same(program)


TIES = [[3.0, 1.0, 3.0], [1.0, 2.0, 2.0]]


@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian", "amin", "amax"])
def test_full_reductions_share_the_gradient_among_ties(fn: str) -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, TIES)
        y = getattr(lib, fn)(x)
        y.backward()
        return y, x.grad

    same(program)


@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian"])
def test_dim_reductions_pick_one_index_among_ties(fn: str) -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, [[3.0, 1.0, 3.0], [5.0, 5.0, 0.0]])
        r = getattr(lib, fn)(x, 1)
        r.values.sum().backward()
        return r.values, r.indices, x.grad

    same(program)


@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian"])
def test_full_reductions_backprop_to_every_nan(fn: str) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([float("nan")] * 3, requires_grad=True)
        y = getattr(lib, fn)(x)
        y.backward()
        z = lib.tensor([1.0, float("nan"), 0.5], requires_grad=True)
        w = getattr(lib, fn)(z)
        w.backward()
        return y, x.grad, w, z.grad

    same(program)


def test_isolated_integer_branch() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib)
        y = leaf(lib, [[0.5, 1.0, -1.0], [2.0, 0.25, 1.5]])
        a = x + y
        b = lib.max(a, 1, True)[1].double()
        (b + a).sum().backward()
        return x.grad, y.grad

    same(program)


def test_argmax_argmin() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, [[1.0, 4.0, 4.0], [2.0, -1.0, -1.0]])
        out = [x.argmax(), x.argmin(), lib.argmax(x, 1), lib.argmin(x, dim=0, keepdim=True),
               x.argmax(keepdim=True), x.argmax(dim=-1, keepdim=True), x[0, 0].argmax(),
               x[0, 0].argmin(0)]
        return out, [t.requires_grad for t in out], [name(t) for t in out]

    same(program)


def test_keepdim_needs_a_dim() -> None:
    same(lambda lib: lib.ones(2, 3).prod(keepdim=True), "invalid combination of arguments")
    same(lambda lib: lib.ones(2, 3).max(keepdim=True), "invalid combination of arguments")
    same(lambda lib: lib.min(lib.ones(2, 3), keepdim=True), "invalid combination of arguments")
    same(lambda lib: lib.ones(2, 3).median(keepdim=True), "missing 1 required positional")
    same(lambda lib: lib.ones(2, 3).max(dim=None), "invalid combination of arguments")
    same(lambda lib: lib.ones(2, 3).prod(None), "invalid combination of arguments")
    same(lambda lib: lib.cumsum(lib.ones(2, 3), None), "must be int, not NoneType")


def test_extreme_errors() -> None:
    same(lambda lib: lib.ones(0).max(), "Expected reduction dim to be specified")
    same(lambda lib: lib.ones(0).amin(), "Expected reduction dim to be specified")
    same(lambda lib: lib.ones(2, 0).max(1), "to have non-zero size")
    same(lambda lib: lib.ones(2, 3).max(2), "Dimension out of range")
    same(lambda lib: lib.ones(2, 3).argmin(5), "Dimension out of range")
    same(lambda lib: lib.ones(0).argmax(), "Expected reduction dim to be specified")


# -- median ----------------------------------------------------------------------------------
MEDIAN_CALLS = {
    "median() odd": lambda lib, x: x[:, :2].reshape(-1)[:3].median(),
    "median() even": lambda lib, x: x.median(),
    "median(1).values": lambda lib, x: lib.median(x, 1).values,
    "median(0,keepdim)": lambda lib, x: x.median(0, keepdim=True)[0],
    "nanmedian()": lambda lib, x: x.nanmedian(),
    "nanmedian(1)": lambda lib, x: lib.nanmedian(x, 1)[0],
}


@pytest.mark.parametrize("key", list(MEDIAN_CALLS))
def test_median(key: str) -> None:
    check_op(MEDIAN_CALLS[key])


@pytest.mark.parametrize("fn", ["max", "min", "median", "nanmedian"])
def test_dim_0_drops_the_reduced_axis(fn: str) -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, [[1.0, -2.0], [0.5, 4.0], [3.0, 0.25]])
        r = getattr(lib, fn)(x, 0)
        k = getattr(x, fn)(dim=-2, keepdim=True)
        (r.values * 2 + k.values.sum()).sum().backward()
        return r.values, r.indices, k.values, k.indices, x.grad

    same(program)


def test_median_of_empty() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(0, requires_grad=True)
        y = x.median()
        y.backward()
        return y, name(y), x.grad

    same(program)


def test_median_indices_and_nans() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([[1.0, float("nan"), 2.0, 0.5], [4.0, 3.0, 1.0, 2.0]])
        m = x.median(1)
        n = x.nanmedian(1)
        return (m.values, m.indices, n.values, n.indices, type(m).__name__, x.median(),
                x.nanmedian(), lib.ones(0).median())

    same(program)


# -- all / any / count_nonzero ---------------------------------------------------------------
def test_truth_reductions() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]], requires_grad=True)
        out = [x.all(), x.any(), lib.all(x, 1), lib.any(x, dim=0, keepdim=True),
               lib.all(x >= 1), x.all(dim=(0, 1)), lib.tensor([0, 0]).any(),
               lib.tensor(True).all(), x.count_nonzero(), lib.count_nonzero(x, 0),
               x.count_nonzero(dim=(0, 1)), lib.count_nonzero(lib.tensor([True, False]))]
        return out, [t.requires_grad for t in out], [name(t) for t in out]

    same(program)
    same(lambda lib: lib.ones(2).all(3), "Dimension out of range")
    same(lambda lib: lib.count_nonzero(lib.ones(2, 3), (0, 0)), "appears multiple times")


# -- trace -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 3), (5, 2), (2, 5), (4, 1), (1, 5)])
def test_trace(shape: tuple[int, int]) -> None:
    data = [[0.5 * i - 0.3 * j + 0.1 for j in range(shape[1])] for i in range(shape[0])]
    check_op(lambda lib, x: x.trace(), data)


def test_trace_dtypes_and_errors() -> None:
    same(lambda lib: (lib.tensor([[1, 2], [3, 4]]).trace(),
                      lib.trace(lib.tensor([[1, 2], [3, 4]], dtype=lib.int32))))
    same(lambda lib: lib.ones(3).trace(), "expected a matrix")


# -- cumsum / cumprod ------------------------------------------------------------------------
CUM_CALLS = {
    "cumsum(1)": lambda lib, x: x.cumsum(1),
    "cumsum(0)": lambda lib, x: lib.cumsum(x, 0),
    "cumsum(dim=-1) 0-d": lambda lib, x: x[0, 0].cumsum(dim=-1),
    "cumprod(1)": lambda lib, x: x.cumprod(1),
    "cumprod(0)": lambda lib, x: lib.cumprod(x, dim=0),
    "logcumsumexp(1)": lambda lib, x: x.logcumsumexp(1),
    "logcumsumexp(0)": lambda lib, x: lib.logcumsumexp(x, dim=0),
    "logcumsumexp 0-d": lambda lib, x: x[1, 2].logcumsumexp(0),
}


@pytest.mark.parametrize("key", list(CUM_CALLS))
def test_cumulative(key: str) -> None:
    check_op(CUM_CALLS[key])


@pytest.mark.parametrize("dim", [0, 1])
def test_cumprod_with_zeros(dim: int) -> None:
    check_op(lambda lib, x: x.cumprod(dim), ZEROS)
    check_op(lambda lib, x: x.cumprod(dim), ONE_ZERO)
    check_op(lambda lib, x: x.cumprod(dim), [[0.0, 2.0, 0.0, 1.5], [0.5, 0.0, 3.0, 0.0]])


def test_logcumsumexp_extremes() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([[-1000.0, 0.0, 3.0], [float("-inf"), float("-inf"), 1.0]],
                       dtype=lib.float64, requires_grad=True)
        y = x.logcumsumexp(1)
        (y * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
        big = lib.tensor([700.0, 710.0, 705.0], requires_grad=True)
        z = lib.logcumsumexp(big, 0)
        z.sum().backward()
        return y, x.grad, z, big.grad, name(y)

    same(program, tol=1e-6)  # float32 rounding of the last case
    same(lambda lib: lib.tensor([1, 2]).logcumsumexp(0), "not implemented for 'Long'")


def test_cumulative_3d_and_dtypes() -> None:
    check_op(lambda lib, x: x.cumsum(1) * x.cumprod(2), C)
    same(lambda lib: (lib.tensor([1, 2, 3]).cumsum(0), lib.tensor([True, True]).cumsum(0),
                      lib.tensor([1, 2, 3], dtype=lib.int32).cumprod(0),
                      lib.tensor([1.0, 2.0]).cumsum(0, dtype=lib.float64)))
    same(lambda lib: lib.ones(2).cumsum(1), "Dimension out of range")


# -- saved values through pack hooks ---------------------------------------------------------
def test_saved_tensor_hooks_see_what_the_nodes_save() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, ZEROS)
        packed = []

        def pack(t: Any) -> Any:
            packed.append(str(t.dtype).rpartition(".")[2])
            return t * 1

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = (x.max(1).values.sum() + x.median(0)[0].sum() + x.trace() + x.prod(1).sum()
                 + x.cumprod(1).sum() + x.amin() + x.std())
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        return y, g, lib.autograd.grad((g * g).sum(), x), sorted(packed)

    same(program)


# -- non-finite inputs -----------------------------------------------------------------------
NONFINITE = [[1.0, float("inf"), -2.0], [float("nan"), 0.5, float("-inf")]]
NONFINITE_CALLS = {
    "var(1)": lambda lib, x: x.var(1),
    "std(0)": lambda lib, x: x.std(0),
    "prod(1)": lambda lib, x: x.prod(1),
    "max(1)": lambda lib, x: x.max(1).values,
    "min(0)": lambda lib, x: x.min(0).values,
    "max()": lambda lib, x: x.max(),
    "amin(1)": lambda lib, x: x.amin(1),
    "median(1)": lambda lib, x: x.median(1).values,
    "nanmedian(1)": lambda lib, x: x.nanmedian(1).values,
    "cumsum(1)": lambda lib, x: x.cumsum(1),
    "cumprod(1)": lambda lib, x: x.cumprod(1),
    "logcumsumexp(1)": lambda lib, x: x.logcumsumexp(1),
    "trace": lambda lib, x: x.trace(),
}


@pytest.mark.parametrize("key", list(NONFINITE_CALLS))
def test_non_finite_inputs(key: str) -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, NONFINITE)
        y = NONFINITE_CALLS[key](lib, x)
        y.sum().backward()
        return y, x.grad

    same(program)
