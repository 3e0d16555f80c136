"""The selection and NaN-aware reductions against PyTorch: ``nansum``, ``nanmean``,
``cummax``, ``cummin``, ``kthvalue``, ``mode``, ``msort``, ``quantile``, ``nanquantile``,
``diff``, ``argwhere``. Each program runs on torch and on retrograd; values, dtypes, gradients
(also of a double backward), node names, result types and errors (class and key phrase) are
compared."""

from __future__ import annotations

import pytest
from torch_parity import same

NAN = float("nan")
A = [[1.0, -2.0, 3.5, 0.25], [0.5, 4.0, -1.5, 2.0], [-3.0, 1.25, 0.75, -0.5]]
WITH_NAN = [[1.0, NAN, 3.0, -2.0], [4.0, 0.5, NAN, NAN], [NAN, NAN, NAN, NAN]]


def leaf(lib, data=A, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def weights(lib, shape):
    """Distinct weights of ``shape`` (a gradient that tells the places apart)."""
    n = 1
    for s in shape:
        n *= s
    return (lib.arange(n, dtype=lib.float64) * 0.37 + 0.11).reshape(shape)


def grads(lib, make, *inputs):
    """The output, its node name, the first gradients (create_graph) and the gradients of
    the sum of their squares times the input (a double backward reaching the input)."""
    out = make()
    w = weights(lib, tuple(out.shape))
    loss = (out * w).sum()
    first = lib.autograd.grad(loss, inputs, create_graph=True)
    total = sum(((g * g) * (x * x)).sum() for g, x in zip(first, inputs))
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return {"out": out, "name": out.grad_fn.name(), "first": first, "second": second}


def bwd(lib, make, *inputs):
    """The output, its node name and the plain backward's gradients."""
    out = make()
    (out * weights(lib, tuple(out.shape))).sum().backward()
    return {"out": out, "name": out.grad_fn.name(), "grads": [x.grad for x in inputs]}


# -- nansum, nanmean -------------------------------------------------------------------------
NANSUM_CALLS = {
    "all": lambda lib, x: lib.nansum(x),
    "dim": lambda lib, x: lib.nansum(x, 1),
    "neg dim keepdim": lambda lib, x: x.nansum(-2, keepdim=True),
    "tuple": lambda lib, x: lib.nansum(x, (0, 1)),
    "empty tuple": lambda lib, x: lib.nansum(x, ()),
    "axis": lambda lib, x: lib.nansum(x, axis=0),
    "dtype": lambda lib, x: lib.nansum(x, 1, dtype=lib.float32),
}


@pytest.mark.parametrize("call", NANSUM_CALLS, ids=list(NANSUM_CALLS))
@pytest.mark.parametrize("data", [A, WITH_NAN], ids=["finite", "nan"])
def test_nansum(call, data):
    fn = NANSUM_CALLS[call]
    same(lambda lib: _run(lib, fn, data))


def _run(lib, fn, data):
    x = leaf(lib, data)
    return bwd(lib, lambda: fn(lib, x), x)


@pytest.mark.parametrize("call", ["all", "dim", "neg dim keepdim", "tuple"])
def test_nansum_double_backward(call):
    fn = NANSUM_CALLS[call]

    def program(lib):
        x = leaf(lib, WITH_NAN)
        out = fn(lib, x)
        (g,) = lib.autograd.grad((out * weights(lib, tuple(out.shape))).sum(), (x,),
                                 create_graph=True)
        y = leaf(lib, A)
        (h,) = lib.autograd.grad((g * y).sum() + (g * g).sum(), (y,))
        return g, h, g.requires_grad

    same(program)


NANMEAN_CALLS = {
    "all": lambda lib, x: lib.nanmean(x),
    "dim": lambda lib, x: lib.nanmean(x, 1),
    "keepdim": lambda lib, x: x.nanmean(0, keepdim=True),
    "tuple": lambda lib, x: lib.nanmean(x, (1, 0)),
    "axis": lambda lib, x: lib.nanmean(x, axis=-1),
    "dtype": lambda lib, x: lib.nanmean(x.float(), 1, dtype=lib.float64),
}


@pytest.mark.parametrize("call", NANMEAN_CALLS, ids=list(NANMEAN_CALLS))
@pytest.mark.parametrize("data", [A, WITH_NAN], ids=["finite", "nan"])
def test_nanmean(call, data):
    fn = NANMEAN_CALLS[call]
    same(lambda lib: _run(lib, fn, data))


def test_nanmean_graph_and_double_backward():
    def program(lib):
        x = leaf(lib, WITH_NAN)
        out = lib.nanmean(x, 1)
        nxt = out.grad_fn.next_functions[0][0].name()
        (g,) = lib.autograd.grad((out * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum(),
                                 (x,), create_graph=True)
        return out.grad_fn.name(), nxt, g

    same(program)


def test_nan_reduction_dtypes_and_edges():
    def program(lib):
        i = lib.tensor([[1, 2], [3, 4]])
        b = lib.tensor([True, False, True])
        h = lib.tensor([1.0, NAN, 2.0], dtype=lib.float16)
        f = lib.tensor([1.0, NAN], dtype=lib.float32)
        e = lib.zeros(0)
        s = lib.tensor(NAN)
        return [lib.nansum(i), lib.nansum(i, 0), lib.nansum(b), lib.nansum(i, dtype=lib.float32),
                lib.nansum(h), lib.nanmean(h), lib.nansum(f, dtype=lib.float64),
                lib.nanmean(f), lib.nansum(e), lib.nanmean(e), lib.nansum(s),
                lib.nanmean(s, 0), lib.nansum(lib.tensor(2.0), -1, keepdim=True),
                lib.nanmean(lib.full((2, 3), NAN), 1), lib.nansum(lib.zeros(2, 0), 1)]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.nanmean(lib.tensor([1, 2])), "expected input to have floating point"),
    (lambda lib: lib.nanmean(lib.tensor([1.0]), dtype=lib.int64),
     "could not infer output dtype"),
    (lambda lib: lib.nansum(lib.ones(2, 3), 2), "Dimension out of range"),
    (lambda lib: lib.nanmean(lib.ones(2, 3), -3), "Dimension out of range"),
    (lambda lib: lib.nansum(lib.ones(2, 3), (0, 0)), "appears multiple times"),
    (lambda lib: lib.nansum(lib.ones(2, 3), 1.5), "must be tuple of ints"),
    (lambda lib: lib.nansum(lib.ones(2, 3), 0, keepdim=1), "keepdim"),
])
def test_nan_reduction_errors(program, phrase):
    same(program, phrase)


# -- cummax, cummin --------------------------------------------------------------------------
CUM = [[1.0, 3.0, 3.0, 2.0, 5.0], [2.0, -1.0, 1.0, -1.0, 0.5], [4.0, 4.0, 4.0, -2.0, 4.0]]
CUM_NAN = [[1.0, 3.0, NAN, 2.0, NAN], [NAN, 1.0, 0.0, NAN, 9.0], [0.5, 2.0, 1.0, 7.0, 6.0]]


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("data", [CUM, CUM_NAN], ids=["ties", "nan"])
def test_cummax_cummin(name, dim, data):
    def program(lib):
        x = leaf(lib, data)
        res = getattr(lib, name)(x, dim)
        out = bwd(lib, lambda: res.values, x)
        return out, res.indices, type(res).__name__, list(res)

    same(program)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_double_backward(name):
    same(lambda lib: _cum_double(lib, name))


def _cum_double(lib, name):
    x = leaf(lib, CUM)
    return grads(lib, lambda: getattr(x, name)(dim=1)[0], x)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_dtypes_and_edges(name):
    def program(lib):
        f = getattr(lib, name)
        s = leaf(lib, 2.5)
        r0 = f(s, 0)
        (g0,) = lib.autograd.grad(r0.values * 3, (s,))
        return [f(lib.tensor([3, 1, 4, 1, 5, 9, 2, 6]), 0), f(lib.tensor([True, False, True]), 0),
                f(lib.tensor([[1, 5], [3, 2]], dtype=lib.int32), 0),
                f(lib.tensor([1.0, -2.0, 3.0], dtype=lib.float32), 0),
                f(lib.zeros(0), 0), f(lib.zeros(2, 0), 1), r0, r0.values.grad_fn.name(), g0,
                f(lib.tensor(-1), -1), f(lib.tensor(CUM), axis=1)]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.cummax(lib.ones(2, 3), 2), "Dimension out of range"),
    (lambda lib: lib.cummin(lib.ones(2, 3), -3), "Dimension out of range"),
    (lambda lib: lib.cummax(lib.ones(2, 3), 1.5), "must be int"),
    (lambda lib: lib.cummin(lib.ones(2, 3)), "missing 1 required positional"),
    (lambda lib: lib.cummax(lib.tensor(1.0), 1), "Expected reduction dim -1 or 0 for scalar"),
    (lambda lib: lib.kthvalue(lib.tensor(1.0), 1, 1), "Dimension out of range"),
    (lambda lib: lib.nansum(lib.tensor(1.0), 1), "Dimension out of range"),
])
def test_cummax_cummin_errors(program, phrase):
    same(program, phrase)


# -- kthvalue, mode --------------------------------------------------------------------------
@pytest.mark.parametrize("k,dim,keepdim", [(1, -1, False), (2, 1, False), (4, 1, True),
                                           (2, 0, False), (3, 0, True), (1, -2, True)])
def test_kthvalue(k, dim, keepdim):
    def program(lib):
        x = leaf(lib)
        res = lib.kthvalue(x, k, dim, keepdim)
        out = grads(lib, lambda: x.kthvalue(k, dim=dim, keepdim=keepdim).values, x)
        return out, res, type(res).__name__

    same(program)


def test_kthvalue_nan_ints_and_edges():
    def program(lib):
        x = lib.tensor([[2.0, NAN, 1.0, NAN, 0.0], [5.0, 1.0, 3.0, 4.0, 2.0]])
        s = leaf(lib, 4.0)
        r0 = lib.kthvalue(s, 1)
        r0.values.backward()
        return [lib.kthvalue(x, 3), lib.kthvalue(x, 4), lib.kthvalue(x, 5, axis=1),
                lib.kthvalue(lib.tensor([3, 1, 2]), 2), r0, s.grad, r0.values.grad_fn.name(),
                lib.kthvalue(lib.zeros(0, 3), 1, 1), lib.kthvalue(lib.tensor(7), 1, 0, True),
                lib.kthvalue(x.float(), 2, 0)]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.kthvalue(lib.ones(2, 3), 0), "out of range"),
    (lambda lib: lib.kthvalue(lib.ones(2, 3), 4), "out of range"),
    (lambda lib: lib.kthvalue(lib.ones(2, 3), 3, 0), "out of range for dimension 0"),
    (lambda lib: lib.kthvalue(lib.tensor(1.0), 2), "out of range"),
    (lambda lib: lib.kthvalue(lib.zeros(0), 1), "to have non-zero size"),
    (lambda lib: lib.kthvalue(lib.ones(2, 3), 1, 2), "Dimension out of range"),
    (lambda lib: lib.kthvalue(lib.ones(2, 3), 1.5), "must be int"),
    (lambda lib: lib.kthvalue(lib.tensor([True, False]), 1), "not implemented for 'Bool'"),
    (lambda lib: lib.kthvalue(lib.ones(2), 1, keepdim=2), "keepdim"),
])
def test_kthvalue_errors(program, phrase):
    same(program, phrase)


MODE = [[1.0, 2.0, 2.0, 3.0, 3.0], [5.0, 5.0, 1.0, 1.0, 0.5], [4.0, 3.0, 2.0, 1.0, 0.0],
        [7.0, 7.0, 7.0, 7.0, 7.0]]


@pytest.mark.parametrize("dim,keepdim", [(-1, False), (1, True), (0, False), (-2, True)])
def test_mode(dim, keepdim):
    def program(lib):
        x = leaf(lib, MODE)
        res = lib.mode(x, dim, keepdim)
        out = grads(lib, lambda: x.mode(dim, keepdim=keepdim).values, x)
        return out, res, type(res).__name__, res.indices.requires_grad

    same(program)


def test_mode_dtypes_and_edges():
    def program(lib):
        s = leaf(lib, 3.0)
        r0 = lib.mode(s)
        r0.values.backward()
        return [lib.mode(lib.tensor([1, 2, 2, 3])), lib.mode(lib.tensor([True, False, False])),
                lib.mode(lib.tensor([2.0, 1.0, 2.0, 1.0])), lib.mode(lib.tensor([4.0, 3.0, 2.0])),
                lib.mode(lib.zeros(0, 2), 1), lib.mode(lib.tensor([[1, 1], [2, 3]]), axis=0),
                r0, s.grad, r0.values.grad_fn.name(),
                lib.mode(lib.tensor([5.0, 5.0, 1.0, 1.0, NAN])),
                lib.mode(lib.tensor([3.0, 2.0, 2.0], dtype=lib.float32))]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.mode(lib.zeros(0)), "to have non-zero size"),
    (lambda lib: lib.mode(lib.zeros(2, 0), 1), "to have non-zero size"),
    (lambda lib: lib.mode(lib.ones(2, 3), 2), "Dimension out of range"),
    (lambda lib: lib.mode(lib.ones(2, 3), keepdim=3), "keepdim"),
])
def test_mode_errors(program, phrase):
    same(program, phrase)


# -- msort, argwhere -------------------------------------------------------------------------
def test_msort():
    def program(lib):
        x = leaf(lib)
        out = grads(lib, lambda: lib.msort(x), x)
        return [out, x.msort(), lib.msort(lib.tensor([3.0, NAN, 1.0])),
                lib.msort(lib.tensor([[3, 1], [2, 5]])), lib.msort(lib.tensor(3.0))]

    same(program)


def test_argwhere():
    def program(lib):
        x = lib.tensor([[0.0, 1.5, 0.0], [NAN, 0.0, -0.0], [2.0, 0.0, 3.0]])
        return [lib.argwhere(x), x.argwhere(), lib.argwhere(lib.tensor(0.0)),
                lib.argwhere(lib.tensor(2)), lib.argwhere(lib.tensor([True, False, True])),
                lib.argwhere(lib.zeros(2, 0, 3)), lib.argwhere(leaf(lib)).requires_grad,
                lib.argwhere(lib.ones(2, 1, 2, dtype=lib.int32))]

    same(program)


# -- diff ------------------------------------------------------------------------------------
DIFF_CALLS = {
    "default": lambda lib, x: lib.diff(x),
    "n=2": lambda lib, x: lib.diff(x, 2),
    "n=3,dim=1": lambda lib, x: x.diff(n=3, dim=1),
    "dim=0": lambda lib, x: lib.diff(x, dim=0),
    "dim=-2,n=2": lambda lib, x: lib.diff(x, 2, -2),
    "prepend": lambda lib, x: lib.diff(x, prepend=x[:, :1] * 2),
    "append,dim=0": lambda lib, x: lib.diff(x, dim=0, append=x[:1] * x[:1]),
    "both,n=2": lambda lib, x: lib.diff(x, 2, 1, x[:, 1:3], x[:, :2] + 1),
    "axis": lambda lib, x: lib.diff(x, axis=0),
}


@pytest.mark.parametrize("call", DIFF_CALLS, ids=list(DIFF_CALLS))
def test_diff(call):
    fn = DIFF_CALLS[call]

    def program(lib):
        x = leaf(lib)
        return grads(lib, lambda: fn(lib, x), x)

    same(program)


def test_diff_dtypes_and_edges():
    def program(lib):
        x = leaf(lib)
        return [lib.diff(x, 10), lib.diff(x, 4), lib.diff(x, n=0).grad_fn is not None,
                lib.diff(x, n=0), lib.diff(lib.tensor([True, False, False, True])),
                lib.diff(lib.tensor([True, False, False, True]), 2),
                lib.diff(lib.tensor([1, 3, 7], dtype=lib.int32)),
                lib.diff(lib.tensor([1, 3, 7]), prepend=lib.tensor([1.5])),
                lib.diff(lib.tensor([1.0, 3.0], dtype=lib.float32), append=lib.tensor([2.0])),
                lib.diff(lib.zeros(0)), lib.diff(lib.tensor([1.0]), 2),
                lib.diff(lib.zeros(2, 0), prepend=lib.ones(2, 1))]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.diff(lib.tensor(1.0)), "at least one-dimensional"),
    (lambda lib: lib.diff(lib.ones(3), -1), "order must be non-negative"),
    (lambda lib: lib.diff(lib.ones(2, 3), prepend=lib.ones(3)), "same dimension as input"),
    (lambda lib: lib.diff(lib.ones(2, 3), append=lib.ones(3, 1)), "input.size(0) = 2"),
    (lambda lib: lib.diff(lib.ones(2, 3), dim=2), "Dimension out of range"),
    (lambda lib: lib.diff(lib.ones(2, 3), dim=2, prepend=lib.ones(2, 1)),
     "Dimension out of range"),
    (lambda lib: lib.diff(lib.ones(2, 3), 1.5), "must be int"),
])
def test_diff_errors(program, phrase):
    same(program, phrase)


# -- quantile, nanquantile -------------------------------------------------------------------
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]
Q_CALLS = {
    "all": lambda lib, f, x, m: f(x, 0.4, interpolation=m),
    "dim": lambda lib, f, x, m: f(x, 0.3, 1, interpolation=m),
    "dim=0,keepdim": lambda lib, f, x, m: f(x, 0.75, 0, True, interpolation=m),
    "tensor q": lambda lib, f, x, m: f(x, lib.tensor([0.1, 0.5, 1.0], dtype=x.dtype), -1,
                                        interpolation=m),
    "tensor q,dim=0,keepdim": lambda lib, f, x, m: f(x, lib.tensor([0.0, 0.625], dtype=x.dtype),
                                                      0, True, interpolation=m),
    "tensor q,all,keepdim": lambda lib, f, x, m: f(x, lib.tensor([0.2, 0.9], dtype=x.dtype),
                                                    keepdim=True, interpolation=m),
    "0-d q tensor": lambda lib, f, x, m: f(x, lib.tensor(0.35, dtype=x.dtype), 1,
                                            interpolation=m),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", Q_CALLS, ids=list(Q_CALLS))
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile(name, call, mode):
    fn = Q_CALLS[call]

    def program(lib):
        x = leaf(lib)
        return grads(lib, lambda: fn(lib, getattr(lib, name), x, mode), x)

    same(program)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_nan(name, mode):
    def program(lib):
        x = leaf(lib, WITH_NAN)
        f = getattr(lib, name)
        out = bwd(lib, lambda: f(x, lib.tensor([0.25, 0.5], dtype=x.dtype), 1,
                                 interpolation=mode), x)
        return out, f(x.detach(), 0.6, interpolation=mode), f(x.detach(), 0.5, 0,
                                                              interpolation=mode)

    same(program)


def test_quantile_q_gradient_and_edges():
    def program(lib):
        x = leaf(lib)
        q = lib.tensor([0.25, 0.6], dtype=lib.float64, requires_grad=True)
        out = lib.quantile(x, q, dim=1)
        gx, gq = lib.autograd.grad(out.sum(), (x, q))
        s = lib.tensor(3.0)
        f32 = lib.tensor(A, dtype=lib.float32)
        return [out, gx, gq, lib.quantile(s, 0.5), lib.quantile(s, 0.5, 0, True),
                lib.quantile(s, lib.tensor([0.5, 0.2]), 0, True), lib.quantile(f32, 0.3),
                lib.nanquantile(f32, 0.7, 1), lib.quantile(x, 1), lib.quantile(x, 0),
                lib.quantile(x, lib.tensor([], dtype=lib.float64), 1).shape,
                x.quantile(0.5, axis=0), x.nanquantile(0.5, dim=0), lib.quantile(x, True),
                lib.quantile(lib.tensor([1.0, 2.0, 3.0, 4.0]), 0.5, interpolation="nearest"),
                lib.quantile(lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 0.5,
                             interpolation="nearest"),
                lib.nanquantile(lib.tensor([NAN, NAN]), 0.3)]

    same(program)


@pytest.mark.parametrize("program,phrase", [
    (lambda lib: lib.quantile(lib.ones(3), 1.5), "q must be in the range [0, 1] but got 1.5"),
    (lambda lib: lib.nanquantile(lib.ones(3), -0.1), "but got -0.1"),
    (lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5, 1.5])), "q values must be in"),
    (lambda lib: lib.quantile(lib.ones(3), lib.tensor([[0.5]])), "scalar or 1D tensor"),
    (lambda lib: lib.quantile(lib.ones(3), 0.5, interpolation="foo"),
     "interpolation must be one of linear"),
    (lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5), "either float or double dtype"),
    (lambda lib: lib.quantile(lib.ones(2, dtype=lib.float16), 0.5), "float or double"),
    (lambda lib: lib.quantile(lib.ones(3), lib.tensor([0.5], dtype=lib.float64)),
     "same dtype as the input"),
    (lambda lib: lib.quantile(lib.zeros(0), 0.5), "must be non-empty"),
    (lambda lib: lib.nanquantile(lib.zeros(2, 0), 0.5, 0), "must be non-empty"),
    (lambda lib: lib.quantile(lib.ones(2, 3), 0.5, 2), "Dimension out of range"),
    (lambda lib: lib.quantile(lib.ones(2, 3), [0.3, 0.5]), "invalid combination of arguments"),
    (lambda lib: lib.quantile(lib.ones(2, 3), 0.5, interpolation=3), "invalid combination"),
    (lambda lib: lib.quantile(lib.ones(2, 3), 0.5, dim=(0, 1)), "invalid combination"),
])
def test_quantile_errors(program, phrase):
    same(program, phrase)


# -- float32 -----------------------------------------------------------------------------------
def test_float32_results_and_gradients():
    def program(lib):
        x = leaf(lib, A, lib.float32)
        outs = [lib.nansum(x, 1), lib.nanmean(x, 0), lib.cummax(x, 1).values,
                lib.cummin(x, 0).values, lib.kthvalue(x, 2, 1).values, lib.mode(x, 0).values,
                lib.msort(x), lib.quantile(x, 0.4, 1), lib.nanquantile(x, 0.6), lib.diff(x)]
        total = sum((o * o).sum() for o in outs)
        (g,) = lib.autograd.grad(total, (x,))
        return outs, g

    same(program, tol=1e-6)


# -- the kernels on the Array API's strict library -------------------------------------------
def test_kernels_on_array_api_strict():
    """``cummax``/``cummin``/``mode`` in Array-API calls give NumPy's values (NaN, ties, bool,
    integers)."""
    import numpy as np

    from retrograd.backends.kernels_selection import kernels

    xps = pytest.importorskip("array_api_strict")
    k, kn = kernels(xps), kernels(np)
    cases = [np.array([[1.0, NAN, 3.0, 3.0, 0.5], [4.0, 5.0, NAN, 1.0, 1.0],
                       [2.0, 2.0, 1.0, 1.0, 7.0]]),
             np.array([[True, False, True], [False, False, True]]),
             np.array([[3, 1, 4], [1, 5, 9]], dtype=np.int32)]
    for x in cases:
        for name in ("cummax", "cummin", "mode"):
            for axis in range(x.ndim):
                got = k[name](xps.asarray(x), axis)
                want = kn[name](x, axis)
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(np.asarray(g), w, err_msg=name)
