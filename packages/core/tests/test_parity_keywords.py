"""PyTorch's keyword surface on the existing ops, against PyTorch: NumPy's ``axis``/``keepdims``
aliases, ``dtype=`` on the reductions and softmax, ``out=`` on the function forms, and
``pad(mode="circular")``. Each program runs on torch and on retrograd (``torch_parity.same``):
values, gradients (also of a double backward), node names, dtypes, errors (class and key phrase)
and warnings are compared."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from torch_parity import same

A = [[1.0, -2.0, 3.0, 0.5], [0.5, 4.0, -1.5, 2.0], [2.5, 0.25, 1.0, -3.0]]


def leaf(lib: Any, data: Any = A, dtype: Any = None) -> Any:
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def const(lib: Any, data: Any = A, dtype: Any = None) -> Any:
    return lib.tensor(data, dtype=dtype or lib.float64)


def _dt(t: Any) -> str:
    return str(t.dtype).rpartition(".")[2]


def _node(t: Any) -> str:
    """``t``'s node name, as ``name()`` gives it (``torch::autograd::CopySlices`` qualified)."""
    return t.grad_fn.name()


def grads_of(lib: Any, fn: Any) -> dict[str, Any]:
    """``fn(x)`` of a leaf: its value, node name, gradient and a double backward's."""
    x = leaf(lib)
    y = fn(lib, x)
    first = y[0] if isinstance(y, tuple) else y
    (g,) = lib.autograd.grad((first * first).sum(), (x,), create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum(), (x,), allow_unused=True)
    return {"y": y, "node": first.grad_fn.name(), "dtype": str(first.dtype).rpartition(".")[2],
            "g": g, "gg": gg}


# -- 1. axis / keepdims: the function and the method ----------------------------------------
ALIASED = {
    "sum_axis": lambda lib, x: lib.sum(x, axis=1),
    "sum_axis_keepdims": lambda lib, x: x.sum(axis=1, keepdims=True),
    "sum_axis_tuple": lambda lib, x: x.sum(axis=(0, 1)),
    "sum_dim_keepdims": lambda lib, x: lib.sum(x, 0, keepdims=True),
    "mean_axis": lambda lib, x: x.mean(axis=0),
    "mean_keepdims": lambda lib, x: lib.mean(x, axis=1, keepdims=True),
    "prod_axis": lambda lib, x: x.prod(axis=1, keepdims=True),
    "amax_axis": lambda lib, x: lib.amax(x, axis=1, keepdims=True),
    "amin_axis": lambda lib, x: x.amin(axis=0),
    "max_axis": lambda lib, x: tuple(lib.max(x, axis=1)),
    "min_axis_keepdims": lambda lib, x: tuple(x.min(axis=1, keepdims=True)),
    "logsumexp_axis": lambda lib, x: x.logsumexp(axis=1, keepdims=True),
    "median_axis": lambda lib, x: tuple(lib.median(x, axis=0)),
    "nanmedian_axis": lambda lib, x: tuple(x.nanmedian(axis=1, keepdims=True)),
    "var_axis": lambda lib, x: x.var(axis=1),
    "std_axis_keepdims": lambda lib, x: lib.std(x, axis=0, keepdims=True),
    "var_mean_axis": lambda lib, x: tuple(lib.var_mean(x, axis=1)),
    "std_mean_keepdims": lambda lib, x: tuple(lib.std_mean(x, dim=1, keepdims=True)),
    "cumsum_axis": lambda lib, x: x.cumsum(axis=0),
    "cumprod_axis": lambda lib, x: lib.cumprod(x, axis=1),
    "logcumsumexp_axis": lambda lib, x: x.logcumsumexp(axis=1),
    "softmax_axis": lambda lib, x: lib.softmax(x, axis=1),
    "log_softmax_axis": lambda lib, x: x.log_softmax(axis=0),
    "sort_axis": lambda lib, x: tuple(x.sort(axis=0)),
    "topk_axis": lambda lib, x: tuple(lib.topk(x, 2, axis=0)),
    "squeeze_axis": lambda lib, x: x.unsqueeze(0).squeeze(axis=0),
    "squeeze_axis_fn": lambda lib, x: lib.squeeze(x.unsqueeze(1), axis=1),
    "flip_dims_keyword": lambda lib, x: x.flip(dims=(0, 1)),
    "flip_dims_keyword_fn": lambda lib, x: lib.flip(x, dims=[1]),
    "unsqueeze_axis": lambda lib, x: x.unsqueeze(axis=1),
    "unsqueeze_axis_fn": lambda lib, x: lib.unsqueeze(x, axis=-1),
    "cat_axis": lambda lib, x: lib.cat([x, x * 2], axis=1),
    "stack_axis": lambda lib, x: lib.stack([x, x * 2], axis=1),
    "gather_axis": lambda lib, x: x.gather(axis=1, index=lib.tensor([[0, 2], [1, 1], [3, 0]])),
    "gather_axis_fn": lambda lib, x: lib.gather(x, axis=0, index=lib.tensor([[2, 0, 1, 1]])),
    "index_select_axis": lambda lib, x: lib.index_select(x, axis=1, index=lib.tensor([3, 0])),
    "take_along_dim_axis": lambda lib, x: lib.take_along_dim(x, lib.tensor([[1], [0], [2]]),
                                                             axis=1),
    "narrow_axis": lambda lib, x: x.narrow(axis=1, start=1, length=2),
    "select_axis": lambda lib, x: lib.select(x, axis=1, index=2),
    "unbind_axis": lambda lib, x: tuple(x.unbind(axis=1)),
    "chunk_axis": lambda lib, x: tuple(lib.chunk(x, 2, axis=1)),
    "tensor_split_axis": lambda lib, x: tuple(x.tensor_split(2, axis=0)),
    "split_with_sizes_axis": lambda lib, x: tuple(lib.split_with_sizes(x, [1, 3], axis=1)),
    "scatter_add_axis": lambda lib, x: lib.scatter_add(x, axis=0, index=lib.tensor([[0, 1]]),
                                                       src=x[:1, :2] * 3),
    "index_add_axis": lambda lib, x: lib.index_add(x, axis=0, index=lib.tensor([2]),
                                                   source=x[:1] * 2),
}


@pytest.mark.parametrize("name", sorted(ALIASED))
def test_aliases(name: str) -> None:
    fn = ALIASED[name]
    same(lambda lib: grads_of(lib, fn))


NOGRAD_ALIASED = {
    "argmax_axis": lambda lib, x: x.argmax(axis=1, keepdims=True),
    "argmin_axis": lambda lib, x: lib.argmin(x, axis=0),
    "all_axis": lambda lib, x: (x > 0).all(axis=1, keepdims=True),
    "any_axis": lambda lib, x: lib.any(x > 3, axis=0),
    "count_nonzero_axis": lambda lib, x: x.count_nonzero(axis=1),
    "argsort_axis": lambda lib, x: lib.argsort(x, axis=0),
}


@pytest.mark.parametrize("name", sorted(NOGRAD_ALIASED))
def test_aliases_no_grad(name: str) -> None:
    fn = NOGRAD_ALIASED[name]
    same(lambda lib: fn(lib, const(lib)))


def test_inplace_aliases() -> None:
    def prog(lib):
        x = const(lib)
        y = x.clone().unsqueeze_(axis=0)
        z = y.clone().squeeze_(axis=0)
        w = x.clone().scatter_add_(axis=1, index=lib.tensor([[0], [1], [2]]),
                                   src=lib.ones(3, 1, dtype=lib.float64))
        v = x.clone().index_add_(axis=1, index=lib.tensor([0]), source=x[:, :1])
        return y.shape, z.shape, w, v
    same(prog)


CONFLICTS = {
    "sum": (lambda lib, x: x.sum(1, axis=1), "axis"),
    "sum_keepdims": (lambda lib, x: lib.sum(x, 1, keepdim=True, keepdims=True), "keepdims"),
    "amax": (lambda lib, x: lib.amax(x, 1, axis=1), "axis"),
    "mean": (lambda lib, x: x.mean(1, axis=1), "axis"),
    "mean_kw": (lambda lib, x: lib.mean(x, dim=1, axis=1), "invalid combination"),
    "max": (lambda lib, x: lib.max(x, dim=1, axis=1), "invalid combination"),
    "var": (lambda lib, x: x.var(dim=1, axis=1), "invalid combination"),
    "all_keepdims": (lambda lib, x: lib.all(x, 1, keepdim=True, keepdims=True), "keepdims"),
    "softmax": (lambda lib, x: lib.softmax(x, dim=1, axis=1), "axis"),
    "cumsum": (lambda lib, x: x.cumsum(dim=1, axis=1), "axis"),
    "unsqueeze": (lambda lib, x: lib.unsqueeze(x, dim=1, axis=1), "axis"),
    "gather": (lambda lib, x: x.gather(1, lib.tensor([[0]]), axis=1), "axis"),
    "cumsum_no_dim": (lambda lib, x: x.cumsum(), "missing 1 required positional argument"),
    "unsqueeze_no_dim": (lambda lib, x: lib.unsqueeze(x), "missing 1 required positional"),
    "axis_out_of_range": (lambda lib, x: x.sum(axis=5), "Dimension out of range"),
    "sum_keepdims_without_dim": (lambda lib, x: x.sum(keepdims=True), "invalid combination"),
    "mean_keepdims_without_dim": (lambda lib, x: lib.mean(x, keepdims=True),
                                  "invalid combination"),
    "flip_unknown_keyword": (lambda lib, x: x.flip(axis=0), "flip()"),
    "mean_axis_out_of_range": (lambda lib, x: lib.mean(x, axis=-3), "Dimension out of range"),
}


@pytest.mark.parametrize("name", sorted(CONFLICTS))
def test_alias_errors(name: str) -> None:
    fn, phrase = CONFLICTS[name]
    same(lambda lib: fn(lib, const(lib)), phrase)


# -- 2. dtype= ----------------------------------------------------------------------------
DTYPED = {
    "sum": lambda lib, x: x.sum(dtype=lib.float64),
    "sum_dim": lambda lib, x: lib.sum(x, 1, dtype=lib.float64),
    "sum_same": lambda lib, x: x.sum(0, dtype=lib.float32),
    "mean": lambda lib, x: lib.mean(x, dtype=lib.float64),
    "mean_dim": lambda lib, x: x.mean(1, keepdim=True, dtype=lib.float64),
    "prod": lambda lib, x: x.prod(dtype=lib.float64),
    "cumsum": lambda lib, x: lib.cumsum(x, 1, dtype=lib.float64),
    "cumprod": lambda lib, x: x.cumprod(0, dtype=lib.float64),
    "softmax": lambda lib, x: x.softmax(1, dtype=lib.float64),
    "softmax_fn": lambda lib, x: lib.softmax(x, 0, dtype=lib.float64),
    "log_softmax": lambda lib, x: lib.log_softmax(x, 1, dtype=lib.float64),
    "nn_softmax": lambda lib, x: lib.nn.functional.softmax(x, 1, dtype=lib.float64),
    "nn_log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x, dim=0, dtype=lib.float64),
}


@pytest.mark.parametrize("name", sorted(DTYPED))
def test_dtype(name: str) -> None:
    fn = DTYPED[name]

    def prog(lib):
        x = leaf(lib, dtype=lib.float32)
        y = fn(lib, x)
        (g,) = lib.autograd.grad((y * y).sum(), (x,), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), (x,))
        x2 = leaf(lib, dtype=lib.float32)
        fn(lib, x2).sum().backward()
        return (y, y.grad_fn.name(), _dt(y), _dt(g), g, gg, _dt(x2.grad), x2.grad)
    same(prog, tol=1e-6)


def test_dtype_softmax_casts_first() -> None:
    """softmax's ``dtype`` casts before the op, recorded as PyTorch's ToCopyBackward0."""
    def prog(lib):
        x = leaf(lib, dtype=lib.float32)
        y = lib.softmax(x, 1, dtype=lib.float64)
        return [n[0].name() for n in y.grad_fn.next_functions]
    same(prog)


def test_dtype_integer_inputs() -> None:
    def prog(lib):
        i = lib.tensor([[1, 2, 3], [4, 5, 6]])
        return (i.sum(dtype=lib.float32), lib.mean(i, 1, dtype=lib.float64),
                i.softmax(0, dtype=lib.float32), lib.cumsum(i, 0, dtype=lib.float32),
                i.prod(1, dtype=lib.int32), i.sum(0, dtype=lib.int32))
    same(prog, tol=1e-6)


def test_mean_integer_dtype_refused() -> None:
    same(lambda lib: const(lib).mean(dtype=lib.int32), "Optional dtype must be either a "
         "floating point or complex dtype")


def test_sum_dtype_with_axis() -> None:
    same(lambda lib: grads_of(lib, lambda lib, x: x.sum(axis=0, keepdims=True,
                                                        dtype=lib.float32)), tol=1e-6)


# -- 3. out= ------------------------------------------------------------------------------
def _empty(lib: Any, shape: Any, dtype: Any = None) -> Any:
    return lib.zeros(shape, dtype=dtype or lib.float64)


OUTS = {
    "sum": lambda lib, x: lib.sum(x, 1, out=_empty(lib, (3,))),
    "sum_keepdim": lambda lib, x: lib.sum(x, 0, True, out=_empty(lib, (1, 4))),
    "sum_out_dtype": lambda lib, x: lib.sum(x, 1, out=_empty(lib, (3,), lib.float32)),
    "sum_into_int": lambda lib, x: lib.sum(x, 1, out=_empty(lib, (3,), lib.int64)),
    "mean": lambda lib, x: lib.mean(x, (0, 1), out=_empty(lib, ())),
    "prod": lambda lib, x: lib.prod(x, 1, out=_empty(lib, (3,))),
    "cumsum": lambda lib, x: lib.cumsum(x, 0, out=_empty(lib, (3, 4))),
    "cumprod": lambda lib, x: lib.cumprod(x, 1, out=_empty(lib, (3, 4))),
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 1, out=_empty(lib, (3, 4))),
    "amax": lambda lib, x: lib.amax(x, 1, out=_empty(lib, (3,))),
    "amin": lambda lib, x: lib.amin(x, 0, out=_empty(lib, (4,))),
    "logsumexp": lambda lib, x: lib.logsumexp(x, 1, out=_empty(lib, (3,))),
    "var": lambda lib, x: lib.var(x, 1, out=_empty(lib, (3,))),
    "std": lambda lib, x: lib.std(x, 0, out=_empty(lib, (4,))),
    "argmax": lambda lib, x: lib.argmax(x, 1, out=_empty(lib, (3,), lib.int64)),
    "argmin": lambda lib, x: lib.argmin(x, 0, out=_empty(lib, (4,), lib.int64)),
    "all": lambda lib, x: lib.all(x > 0, 1, out=_empty(lib, (3,), lib.bool)),
    "any": lambda lib, x: lib.any(x > 3, 0, out=_empty(lib, (4,), lib.bool)),
    "max_full": lambda lib, x: lib.max(x, out=_empty(lib, ())),
    "max_dim": lambda lib, x: tuple(lib.max(x, 1, out=(_empty(lib, (3,)),
                                                       _empty(lib, (3,), lib.int64)))),
    "min_dim": lambda lib, x: tuple(lib.min(x, 0, True, out=[_empty(lib, (1, 4)),
                                                             _empty(lib, (1, 4), lib.int64)])),
    "median_dim": lambda lib, x: tuple(lib.median(x, 1, out=(_empty(lib, (3,)),
                                                             _empty(lib, (3,), lib.int64)))),
    "sort": lambda lib, x: tuple(lib.sort(x, 0, out=(_empty(lib, (3, 4)),
                                                     _empty(lib, (3, 4), lib.int64)))),
    "topk": lambda lib, x: tuple(lib.topk(x, 2, out=(_empty(lib, (3, 2)),
                                                     _empty(lib, (3, 2), lib.int64)))),
    "matmul": lambda lib, x: lib.matmul(x, x.T, out=_empty(lib, (3, 3))),
    "bmm": lambda lib, x: lib.bmm(x[None], x.T[None], out=_empty(lib, (1, 3, 3))),
    "mm": lambda lib, x: lib.mm(x, x.T, out=_empty(lib, (3, 3))),
    "cat": lambda lib, x: lib.cat([x, x], 0, out=_empty(lib, (6, 4))),
    "cat_wider": lambda lib, x: lib.cat([x.float(), x.float()], 1, out=_empty(lib, (3, 8))),
    "stack": lambda lib, x: lib.stack([x, x], 1, out=_empty(lib, (3, 2, 4))),
    "gather": lambda lib, x: lib.gather(x, 1, lib.tensor([[0], [3], [1]]), out=_empty(lib, (3, 1))),
    "index_select": lambda lib, x: lib.index_select(x, 0, lib.tensor([2, 0]),
                                                    out=_empty(lib, (2, 4))),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, lib.tensor([[0], [3], [1]]), 1,
                                                        out=_empty(lib, (3, 1))),
    "softmax": lambda lib, x: lib.softmax(x, 1, out=_empty(lib, (3, 4))),
    "log_softmax": lambda lib, x: lib.log_softmax(x, 0, out=_empty(lib, (3, 4))),
}


@pytest.mark.parametrize("name", sorted(OUTS))
def test_out(name: str) -> None:
    fn = OUTS[name]

    def prog(lib):
        x = const(lib)
        res = fn(lib, x)
        return res, (res[0]._version if isinstance(res, tuple) else res._version)
    same(prog, tol=1e-6)


def test_out_returns_out_itself() -> None:
    def prog(lib):
        x = const(lib)
        o = _empty(lib, (3,))
        vi = (_empty(lib, (3,)), _empty(lib, (3,), lib.int64))
        r = lib.max(x, 1, out=vi)
        return (lib.sum(x, 1, out=o) is o, r[0] is vi[0], r[1] is vi[1],
                type(r).__name__.replace("_out", ""))
    same(prog)


OUT_ERRORS = {
    "requires_grad": (lambda lib, x: lib.sum(leaf(lib), 1, out=_empty(lib, (3,))),
                      "don't support automatic differentiation"),
    "out_requires_grad": (lambda lib, x: lib.cumsum(x, 1, out=leaf(lib)),
                          "don't support automatic differentiation"),
    "max_pair_requires_grad": (lambda lib, x: lib.max(leaf(lib), 1, out=(
        _empty(lib, (3,)), _empty(lib, (3,), lib.int64))), "don't support automatic"),
    "mean_into_int": (lambda lib, x: lib.mean(x, 0, out=_empty(lib, (4,), lib.int64)),
                      "can't be cast to the desired output type"),
    "amax_dtype": (lambda lib, x: lib.amax(x, 0, out=_empty(lib, (4,), lib.float32)),
                   "Expected the dtype for input and out to match"),
    "matmul_dtype": (lambda lib, x: lib.matmul(x, x.T, out=_empty(lib, (3, 3), lib.float32)),
                     "Expected out tensor to have dtype double, but got float instead"),
    "bmm_dtype": (lambda lib, x: lib.bmm(x[None], x.T[None],
                                         out=_empty(lib, (1, 3, 3), lib.float32)),
                  "Expected out tensor to have dtype double"),
    "gather_dtype": (lambda lib, x: lib.gather(x, 1, lib.tensor([[0]]),
                                               out=_empty(lib, (1, 1), lib.float32)),
                     "Expected out tensor to have dtype double"),
    "index_select_dtype": (lambda lib, x: lib.index_select(x, 0, lib.tensor([0]),
                                                           out=_empty(lib, (1, 4), lib.float32)),
                           "self and result must have the same scalar type"),
    "cat_into_int": (lambda lib, x: lib.cat([x, x], out=_empty(lib, (6, 4), lib.int64)),
                     "input types can't be cast to the desired output type Long"),
    "stack_into_int": (lambda lib, x: lib.stack([x, x], out=_empty(lib, (2, 3, 4), lib.int64)),
                       "input types can't be cast to the desired output type Long"),
    "max_indices_dtype": (lambda lib, x: lib.max(x, 0, out=(_empty(lib, (4,)),
                                                            _empty(lib, (4,)))),
                          "Expected out tensor to have dtype long int, but got double"),
    "argmax_dtype": (lambda lib, x: lib.argmax(x, 0, out=_empty(lib, (4,))),
                     "Expected out tensor to have dtype long int, but got double"),
    "all_dtype": (lambda lib, x: lib.all(x, 0, out=_empty(lib, (4,))),
                  "all only supports bool tensor for result, got: Double"),
    "softmax_dtype": (lambda lib, x: lib.softmax(x, 0, out=_empty(lib, (3, 4), lib.float32)),
                      "Expected out tensor to have dtype double"),
    "sum_out_without_dim": (lambda lib, x: lib.sum(x, out=_empty(lib, ())),
                            "invalid combination of arguments"),
}


@pytest.mark.parametrize("name", sorted(OUT_ERRORS))
def test_out_errors(name: str) -> None:
    fn, phrase = OUT_ERRORS[name]
    same(lambda lib: fn(lib, const(lib)), phrase)


def test_out_resized_with_warning() -> None:
    def prog(lib):
        x = const(lib)
        o = _empty(lib, (2,))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.sum(x, 1, out=o)
            lib.cat([x, x], out=_empty(lib, (0,)))  # an empty out: resized silently
        msgs = [str(m.message) for m in w]
        return (o, len(msgs), [("An output with one or more elements was resized" in m)
                               for m in msgs], [m.category.__name__ for m in w])
    same(prog)


def test_out_under_no_grad() -> None:
    def prog(lib):
        x = leaf(lib)
        with lib.no_grad():
            o = lib.sum(x, 1, out=_empty(lib, (3,)))
            v, i = lib.max(x, 0, out=(_empty(lib, (4,)), _empty(lib, (4,), lib.int64)))
        return o, v, i, o.requires_grad
    same(prog)


# -- 4. pad(mode="circular") ---------------------------------------------------------------
def _pad_input(lib: Any, shape: tuple[int, ...]) -> Any:
    n = 1
    for s in shape:
        n *= s
    return (lib.arange(n, dtype=lib.float64).reshape(shape) * 0.5 - 1.0).requires_grad_()


CIRCULAR = {
    "1d": ((1, 2, 4), (1, 2)),
    "1d_full_wrap": ((1, 2, 4), (4, 3)),
    "1d_zero": ((1, 1, 3), (0, 0)),
    "1d_negative": ((1, 2, 5), (-1, 2)),
    "1d_both_negative": ((2, 1, 6), (-2, -1)),
    "1d_unbatched": ((2, 5), (2, 1)),
    "2d": ((1, 1, 3, 4), (1, 2, 2, 1)),
    "2d_unbatched": ((2, 3, 3), (0, 1, 3, 0)),
    "2d_mixed_sign": ((2, 1, 4, 5), (-1, 2, 1, -2)),
    "3d": ((1, 1, 2, 3, 4), (1, 0, 1, 1, 2, 1)),
    "3d_unbatched": ((1, 2, 3, 2), (1, 1, 0, 2, 1, 0)),
}


@pytest.mark.parametrize("name", sorted(CIRCULAR))
def test_pad_circular(name: str) -> None:
    shape, pad = CIRCULAR[name]

    def prog(lib):
        x = _pad_input(lib, shape)
        y = lib.nn.functional.pad(x, pad, mode="circular")
        w = lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape)
        (g,) = lib.autograd.grad((y * y * w).sum(), (x,), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), (x,))
        return y, _node(y), g, gg
    same(prog)


def test_pad_circular_then_backward() -> None:
    def prog(lib):
        x = _pad_input(lib, (1, 2, 3))
        y = lib.nn.functional.pad(x, (2, 1), mode="circular")
        (y * y).sum().backward()
        return y, x.grad
    same(prog)


CIRCULAR_ERRORS = {
    "too_large": ((1, 2, 3), (4, 0), "Padding value causes wrapping around more than once"),
    "too_large_right": ((1, 1, 2, 2), (0, 0, 0, 3),
                        "Padding value causes wrapping around more than once"),
    "negative_too_large": ((1, 1, 3), (-2, -2), "Negative padding value is resulting in an "
                           "empty dimension"),
    "wrong_dims": ((3,), (1, 1), "is not supported for 1D input"),
    "odd_pad": ((1, 2, 3), (1,), "Padding length must be divisible by 2"),
    "too_many": ((2, 3), (1, 1, 1, 1, 1, 1), "Padding length should be less than or equal"),
    "pad_4d_too_few_dims": ((1, 2), (1, 1, 1, 1), "is not supported for 2D input"),
}


@pytest.mark.parametrize("name", sorted(CIRCULAR_ERRORS))
def test_pad_circular_errors(name: str) -> None:
    shape, pad, phrase = CIRCULAR_ERRORS[name]
    same(lambda lib: lib.nn.functional.pad(_pad_input(lib, shape), pad, mode="circular"),
         phrase)


def test_pad_circular_integer_and_float32() -> None:
    def prog(lib):
        i = lib.arange(6).reshape(1, 2, 3)
        f = lib.arange(6, dtype=lib.float32).reshape(1, 1, 2, 3)
        return (lib.nn.functional.pad(i, (1, 1), mode="circular"),
                lib.nn.functional.pad(f, (1, 0, 0, 1), mode="circular"))
    same(prog)
