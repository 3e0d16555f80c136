"""The rearrange ops against PyTorch (``repeat_interleave``, ``take``, ``index_fill``,
``index_copy``, ``masked_scatter``, ``unfold``, ``rot90``, ``scatter_reduce``,
``slice_scatter``, ``select_scatter``, ``diagonal_scatter``, ``index_put``, ``ravel`` and the
in-place forms): each program runs on torch and on retrograd, and values, dtypes, node names,
gradients, double-backward gradients and errors (class and key phrase) are compared."""

from __future__ import annotations

from typing import Any

import pytest
from torch_parity import same

A = [[1.5, -2.0, 3.25, 0.5], [0.75, 4.0, -1.5, 2.5], [-0.25, 1.25, 2.0, -3.0]]
B = [[0.5, -1.25, 2.0], [1.75, -0.5, 3.0], [-2.25, 0.25, 1.0]]


def leaf(lib: Any, data: Any = A, dtype: Any = None) -> Any:
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def ints(lib: Any, data: Any) -> Any:
    return lib.tensor(data, dtype=lib.int64)


def full(lib: Any, fn: Any, *inputs: Any) -> dict[str, Any]:
    """The value, its node name, the gradients (create_graph) with a weighted loss, and the
    gradients of the sum of the squared gradients (a double backward)."""
    out = fn(*inputs)
    w = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) * 0.25 + 1
    loss = (out * w).sum() + (out * out).sum() * 0.5
    grads = lib.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in grads if g is not None)
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return {"out": out, "node": out.grad_fn.name(), "grads": grads, "second": second}


PROGRAMS: dict[str, Any] = {}


def program(fn: Any) -> Any:
    PROGRAMS[fn.__name__] = fn
    return fn


# -- ravel / take / rot90 --------------------------------------------------------------------
@program
def ravel_contiguous(lib):
    return full(lib, lambda x: x.ravel() * 1, leaf(lib)) | {
        "node": leaf(lib).ravel().grad_fn.name()}


@program
def ravel_transposed(lib):
    x = leaf(lib)
    return full(lib, lambda x: lib.ravel(x.t()), x)


@program
def ravel_0d(lib):
    return lib.ravel(lib.tensor(2.5)), lib.tensor(2.5).ravel().shape


@program
def take_values_grads(lib):
    return full(lib, lambda x: lib.take(x, ints(lib, [[0, -1], [5, 5], [11, -12]])), leaf(lib))


@program
def take_method_0d(lib):
    x = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
    return full(lib, lambda x: x.take(ints(lib, [0, -1, 0])), x)


@program
def take_empty_index(lib):
    return lib.take(leaf(lib), ints(lib, [])).shape


@program
def take_float32(lib):
    return lib.take(leaf(lib, dtype=lib.float32), ints(lib, [3, 1]))


@program
def rot90_k(lib):
    return [full(lib, lambda x, k=k: lib.rot90(x, k), leaf(lib)) for k in (-3, -1, 0, 1, 2, 3, 5)]


@program
def rot90_dims(lib):
    x = lib.arange(24.0, dtype=lib.float64).reshape(2, 3, 4).requires_grad_()
    return [full(lib, lambda x: x.rot90(1, [2, 0]), x),
            full(lib, lambda x: lib.rot90(x, 2, (-1, 1)), x)]


# -- repeat_interleave -----------------------------------------------------------------------
@program
def repeat_interleave_int(lib):
    return [full(lib, lambda x: lib.repeat_interleave(x, 2), leaf(lib)),
            full(lib, lambda x: x.repeat_interleave(3, dim=1), leaf(lib)),
            full(lib, lambda x: x.repeat_interleave(2, -2, output_size=6), leaf(lib))]


@program
def repeat_interleave_tensor(lib):
    return [full(lib, lambda x: x.repeat_interleave(ints(lib, [1, 0, 3]), dim=0), leaf(lib)),
            full(lib, lambda x: lib.repeat_interleave(x, ints(lib, [2]), dim=1), leaf(lib)),
            full(lib, lambda x: lib.repeat_interleave(x, ints(lib, 2)), leaf(lib))]


@program
def repeat_interleave_counts(lib):
    return (lib.repeat_interleave(ints(lib, [1, 2, 0, 3])),
            lib.repeat_interleave(lib.tensor([2, 1], dtype=lib.int32)),
            lib.repeat_interleave(ints(lib, [])))


@program
def repeat_interleave_zero_and_0d(lib):
    return (lib.repeat_interleave(leaf(lib), 0, dim=1).shape,
            lib.tensor(5.0).repeat_interleave(3))


# -- index_fill / index_copy -----------------------------------------------------------------
@program
def index_fill_scalar(lib):
    return [full(lib, lambda x: x.index_fill(1, ints(lib, [0, 2, 0]), -1.5), leaf(lib)),
            full(lib, lambda x: lib.index_fill(x, 0, ints(lib, -1), 2), leaf(lib))]


@program
def index_fill_tensor_value(lib):
    v = lib.tensor(0.75, dtype=lib.float64, requires_grad=True)
    return full(lib, lambda x, v: x.index_fill(1, ints(lib, [3, 1, 3]), v), leaf(lib), v)


@program
def index_fill_int_dtype(lib):
    return lib.tensor([[1, 2], [3, 4]]).index_fill(0, ints(lib, [1]), 7)


@program
def index_copy_grads(lib):
    return full(lib, lambda x, s: x.index_copy(1, ints(lib, [2, 0, 3]), s), leaf(lib),
                leaf(lib, B))


@program
def index_copy_dim0(lib):
    s = leaf(lib, [[9.0, 8.0, 7.0, 6.0]])
    return full(lib, lambda x, s: lib.index_copy(x, 0, ints(lib, [1]), s), leaf(lib), s)


# -- masked_scatter --------------------------------------------------------------------------
@program
def masked_scatter_grads(lib):
    src = leaf(lib, [[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]])
    return full(lib, lambda x, s: x.masked_scatter(x > 1.0, s), leaf(lib), src)


@program
def masked_scatter_broadcast(lib):
    src = leaf(lib, [float(i) for i in range(12)])
    m = lib.tensor([True, False, True, False])
    return full(lib, lambda x, s: lib.masked_scatter(x, m, s), leaf(lib), src)


@program
def masked_scatter_broadcast_self(lib):
    x = leaf(lib, [1.0, 2.0, 3.0, 4.0])
    src = leaf(lib, [float(i) for i in range(12)])
    return full(lib, lambda x, s: lib.masked_scatter(x, lib.tensor(A) > 1.0, s), x, src)


# -- unfold ----------------------------------------------------------------------------------
@program
def unfold_windows(lib):
    return [full(lib, lambda x: x.unfold(1, 2, 1), leaf(lib)),
            full(lib, lambda x: x.unfold(0, 2, 2), leaf(lib)),
            full(lib, lambda x: x.unfold(-1, 3, 2), leaf(lib)),
            full(lib, lambda x: x.unfold(1, 4, 1), leaf(lib))]


@program
def unfold_0d_and_empty(lib):
    x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
    return full(lib, lambda x: x.unfold(0, 1, 1), x), leaf(lib).unfold(1, 0, 1).shape


# -- scatter_reduce --------------------------------------------------------------------------
IDX = [[0, 1, 0, 1], [2, 2, 2, 2]]
SRC = [[1.25, -0.5, 2.5, 0.75], [-1.5, 3.0, 0.5, -2.0]]


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce: str, include_self: bool) -> None:
    same(lambda lib: full(lib, lambda x, s: x.scatter_reduce(
        0, ints(lib, IDX), s, reduce, include_self=include_self), leaf(lib), leaf(lib, SRC)))
    same(lambda lib: full(lib, lambda x, s: lib.scatter_reduce(
        x, 1, ints(lib, [[3, 3], [0, 1], [1, 1]]), s, reduce, include_self=include_self),
        leaf(lib), leaf(lib, [r[:2] for r in B])))


@program
def scatter_reduce_ties(lib):
    x = leaf(lib, [[1.0, 2.0], [3.0, 1.0]])
    s = leaf(lib, [[3.0, 2.0], [1.0, 2.0]])
    i = ints(lib, [[0, 0], [0, 0]])
    return [full(lib, lambda x, s, r=r: x.scatter_reduce(0, i, s, r), x, s)
            for r in ("amax", "amin")]


@program
def scatter_reduce_prod_zeros(lib):
    x = leaf(lib, [[0.0, 2.0, 1.5], [3.0, 0.5, 2.0]])
    s = leaf(lib, [[0.0, 2.0, 0.0], [4.0, 0.5, 1.25]])
    i = ints(lib, [[0, 1, 0], [1, 1, 0]])

    def grads(inc: bool) -> Any:
        out = x.scatter_reduce(0, i, s, "prod", include_self=inc)
        return out, lib.autograd.grad((out * out).sum() + out.sum(), (x, s))
    return grads(True), grads(False)


@program
def scatter_reduce_0d(lib):
    x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
    s = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
    return [full(lib, lambda x, s, r=r: x.scatter_reduce(0, ints(lib, 0), s, r), x, s)
            for r in ("sum", "prod", "mean", "amax")]


@program
def scatter_reduce_int(lib):
    x = lib.tensor([[1, 5], [3, 4]])
    s = lib.tensor([[2, 7], [6, 1]])
    return [x.scatter_reduce(0, ints(lib, [[1, 1], [1, 0]]), s, r, include_self=inc)
            for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)]


# -- slice/select/diagonal_scatter -----------------------------------------------------------
@program
def slice_scatter_grads(lib):
    return [full(lib, lambda x, s: lib.slice_scatter(x, s, 1, 0, 4, 2), leaf(lib),
                 leaf(lib, [r[:2] for r in B])),
            full(lib, lambda x, s: x.slice_scatter(s, start=-2), leaf(lib),
                 leaf(lib, [A[0], A[2]])),
            full(lib, lambda x, s: lib.slice_scatter(x, s, dim=1, start=1, end=10), leaf(lib),
                 leaf(lib, B))]


@program
def select_scatter_grads(lib):
    return [full(lib, lambda x, s: lib.select_scatter(x, s, 1, -1), leaf(lib),
                 leaf(lib, B[0])),
            full(lib, lambda x, s: x.select_scatter(s, 0, 2), leaf(lib), leaf(lib, A[0]))]


@program
def diagonal_scatter_grads(lib):
    return [full(lib, lambda x, s: lib.diagonal_scatter(x, s), leaf(lib), leaf(lib, B[0])),
            full(lib, lambda x, s: x.diagonal_scatter(s, 1), leaf(lib), leaf(lib, B[1])),
            full(lib, lambda x, s: lib.diagonal_scatter(x, s, -1, 1, 0), leaf(lib),
                 leaf(lib, B[2])),
            full(lib, lambda x, s: lib.diagonal_scatter(x, s, -2), leaf(lib),
                 leaf(lib, [1.0]))]


# -- index_put -------------------------------------------------------------------------------
@program
def index_put_grads(lib):
    return [full(lib, lambda x, v: x.index_put((ints(lib, [2, 0]),), v), leaf(lib),
                 leaf(lib, [A[1], A[0]])),
            full(lib, lambda x, v: lib.index_put(x, (ints(lib, [0, 2, 0]), ints(lib, [1, 3, 1])),
                                                 v, accumulate=True),
                 leaf(lib), leaf(lib, [1.0, 2.0, 3.0])),
            full(lib, lambda x, v: x.index_put([ints(lib, [1, -1])], v, True), leaf(lib),
                 leaf(lib, [0.5, 1.5, 2.5, 3.5])),
            full(lib, lambda x, v: x.index_put((lib.tensor(A) > 1.0,), v), leaf(lib),
                 leaf(lib, 2.0)),
            full(lib, lambda x, v: x.index_put((ints(lib, [[2], [0]]), ints(lib, [3, 1])), v,
                                               True), leaf(lib), leaf(lib, [1.0, 2.0])),
            full(lib, lambda x, v: x.index_put((ints(lib, 1),), v), leaf(lib), leaf(lib, A[2]))]


# -- in place ---------------------------------------------------------------------------------
@program
def in_place_forms(lib):
    x, s = leaf(lib), leaf(lib, B)
    y = x * 1
    y.index_fill_(1, ints(lib, [1]), 0.5)
    y.index_copy_(1, ints(lib, [0, 2, 3]), s)
    y.masked_scatter_(y > 1.0, s)
    y.scatter_reduce_(0, ints(lib, [[2, 0, 1, 1]]), s[:1, :], "amax", include_self=False)
    y.index_put_((ints(lib, [0]), ints(lib, [3])), s[0, 0], accumulate=True)
    (y * y).sum().backward()
    return y, y.grad_fn.name(), x.grad, s.grad, y._version


@program
def in_place_no_grad(lib):
    y = lib.tensor(A, dtype=lib.float64)
    y.index_fill_(0, ints(lib, [0]), lib.tensor(2.0, dtype=lib.float64))
    y.index_put_((ints(lib, [1]),), lib.tensor(9.0, dtype=lib.float64))
    return y, y._version


@program
def in_place_leaf_refused(lib):
    return leaf(lib).index_fill_(0, ints(lib, [0]), 1.0)


@program
def index_fill_other_dtype_value(lib):
    v = lib.tensor(1.5, dtype=lib.float32, requires_grad=True)
    return full(lib, lambda x, v: x.index_fill(1, ints(lib, [0, 1]), v), leaf(lib), v)


@program
def index_put_bool_and_int32(lib):
    x = lib.tensor(A, dtype=lib.float64)
    return (x.index_put((lib.tensor(True),), lib.tensor(1.0, dtype=lib.float64)),
            x.index_put((lib.tensor(False),), lib.tensor(1.0, dtype=lib.float64)),
            x.index_put((lib.tensor([0, 2], dtype=lib.int32),), lib.tensor(5.0, dtype=lib.float64)),
            x.index_put((lib.tensor([True, False, True]), ints(lib, [1, 3])),
                        lib.tensor([7.0, 8.0], dtype=lib.float64)))


@program
def through_views_in_place(lib):
    x = leaf(lib)
    y = x * 1
    y[0].index_fill_(0, ints(lib, [1]), 9.0)
    y[:, 1].masked_scatter_(y[:, 1] > 0, lib.arange(3.0, dtype=lib.float64))
    y.t()[2].index_copy_(0, ints(lib, [0]), x[1, :1] * 3)
    (y * y).sum().backward()
    return y, x.grad, y.grad_fn.name()


@program
def empty_operands(lib):
    x = lib.ones(0, 3, dtype=lib.float64, requires_grad=True)
    return (lib.take(leaf(lib), ints(lib, [])).shape, lib.repeat_interleave(x, 2, dim=0).shape,
            lib.rot90(x).shape, x.unfold(1, 2, 1).shape,
            x.index_fill(1, ints(lib, [0]), 1.0).shape,
            lib.slice_scatter(x, lib.ones(0, 1, dtype=lib.float64), 1, 1, 2).shape)


@program
def no_history_for_indices(lib):
    r = lib.repeat_interleave(ints(lib, [1, 2]))
    return r.requires_grad, r.grad_fn is None, str(r.dtype).rpartition('.')[2]


@program
def axis_and_keywords(lib):
    x = lib.tensor(A, dtype=lib.float64)
    i = ints(lib, [0])
    return (x.scatter_reduce(axis=1, index=ints(lib, [[0]]), src=x, reduce="sum"),
            lib.slice_scatter(x, x[:, :2], axis=1, start=0, end=2),
            lib.select_scatter(x, x[:, 0] * 2, axis=1, index=1),
            x.repeat_interleave(2, axis=1),
            x.index_copy(axis=1, index=i, source=x[:, :1] * 3),
            lib.index_fill(x, axis=1, index=i, value=1.0),
            x.unfold(dimension=1, size=2, step=1),
            lib.rot90(x, k=1, dims=[0, 1]),
            x.index_put(indices=(i,), values=lib.tensor(1.0, dtype=lib.float64),
                        accumulate=True),
            x.masked_scatter(mask=x > 0, source=x * 2),
            lib.take(x, index=i),
            lib.diagonal_scatter(x, x.diagonal() * 2, offset=0, dim1=0, dim2=1))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    same(PROGRAMS[name])


# -- errors ----------------------------------------------------------------------------------
def _x(lib: Any) -> Any:
    return lib.tensor(A, dtype=lib.float64)


ERRORS = [
    (lambda lib: lib.take(_x(lib), ints(lib, [12])), "out of range: tried to access index 12"),
    (lambda lib: lib.take(_x(lib), ints(lib, [-13])), "tried to access index -13"),
    (lambda lib: lib.take(_x(lib), lib.tensor([1], dtype=lib.int32)),
     "Expected a long tensor for index"),
    (lambda lib: lib.rot90(_x(lib), 1, [0]), "expected total rotation dims == 2"),
    (lambda lib: lib.rot90(_x(lib), 1, [1, -1]), "expected rotation dims to be different"),
    (lambda lib: lib.rot90(_x(lib), 1, [0, 2]), "Dimension out of range"),
    (lambda lib: lib.rot90(lib.ones(3), 1), "expected total dims >= 2"),
    (lambda lib: _x(lib).repeat_interleave(-1), "Repeats must be non-negative"),
    (lambda lib: _x(lib).repeat_interleave(ints(lib, [1, 2]), dim=1),
     "repeats must have the same size as input along dim"),
    (lambda lib: _x(lib).repeat_interleave(ints(lib, [1, -2, 1]), dim=0),
     "repeats can not be negative"),
    (lambda lib: lib.repeat_interleave(ints(lib, [[1, 2]])), "only accept 1D vector"),
    (lambda lib: _x(lib).repeat_interleave(2, dim=2), "Dimension out of range"),
    (lambda lib: _x(lib).repeat_interleave(ints(lib, [1, 2, 0]), dim=0, output_size=4),
     "allocated size does not match required size"),
    (lambda lib: _x(lib).repeat_interleave(2, dim=0, output_size=7), "Invalid output_size"),
    (lambda lib: _x(lib).index_fill(1, ints(lib, [4]), 1.0),
     "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda lib: _x(lib).index_fill(1, lib.tensor([1], dtype=lib.int32), 1.0),
     "Expected dtype int64 for index"),
    (lambda lib: _x(lib).index_fill(1, ints(lib, [[1]]), 1.0), "Index has to be a vector/scalar"),
    (lambda lib: _x(lib).index_fill(2, ints(lib, [1]), 1.0), "Dimension out of range"),
    (lambda lib: _x(lib).index_fill(1, ints(lib, [1]), lib.tensor([1.0])),
     "only supports a 0-dimensional value tensor"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [4, 0]), lib.ones(3, 2, dtype=lib.float64)),
     "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [-1, 0]), lib.ones(3, 2, dtype=lib.float64)),
     "index -1 is out of bounds"),
    (lambda lib: _x(lib).index_copy(1, lib.tensor([0], dtype=lib.int32),
                                    lib.ones(3, 1, dtype=lib.float64)),
     "Expected a long tensor for index"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [0]), lib.ones(3, 1)),
     "self and source expected to have the same dtype"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [0, 1]), lib.ones(3, 3, dtype=lib.float64)),
     "Number of indices (2) should be equal to source.size(dim) (3)"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [0, 1]), lib.ones(2, 2, dtype=lib.float64)),
     "Source/destination tensor must have same slice shapes"),
    (lambda lib: _x(lib).index_copy(1, ints(lib, [0, 1]), lib.ones(3, 2, 1, dtype=lib.float64)),
     "their dimensionality must match"),
    (lambda lib: _x(lib).masked_scatter((_x(lib) > 0).int(), lib.ones(12, dtype=lib.float64)),
     "masked_scatter_ only supports boolean masks"),
    (lambda lib: _x(lib).masked_scatter(lib.ones(3, 4, dtype=lib.bool),
                                        lib.ones(11, dtype=lib.float64)),
     "Number of elements of source < number of ones in mask"),
    (lambda lib: _x(lib).masked_scatter(_x(lib) > 0, lib.ones(12)),
     "expected self and source to have same dtypes"),
    (lambda lib: _x(lib).masked_scatter(lib.ones(5, dtype=lib.bool),
                                        lib.ones(12, dtype=lib.float64)),
     "must match the size of tensor b"),
    (lambda lib: _x(lib).unfold(1, 5, 1), "maximum size for tensor at dimension 1 is 4"),
    (lambda lib: _x(lib).unfold(1, 2, 0), "step is 0 but must be > 0"),
    (lambda lib: _x(lib).unfold(2, 2, 1), "Dimension out of range"),
    (lambda lib: _x(lib).unfold(1, -1, 1), "size is -1 but must be >= 0"),
    (lambda lib: lib.slice_scatter(_x(lib), lib.ones(3, 2, dtype=lib.float64), 1, 0, 3),
     "expected src to have a size equal to the slice of self"),
    (lambda lib: lib.slice_scatter(_x(lib), lib.ones(3, 2, dtype=lib.float64), 2),
     "Dimension out of range"),
    (lambda lib: lib.select_scatter(_x(lib), lib.ones(4, dtype=lib.float64), 1, 0),
     "expected src to have a size equal to the slice of self"),
    (lambda lib: lib.select_scatter(_x(lib), lib.ones(3, dtype=lib.float64), 1, 4),
     "index 4 out of range for tensor of size [3, 4] at dimension 1"),
    (lambda lib: lib.diagonal_scatter(_x(lib), lib.ones(4, dtype=lib.float64)),
     "expected src to have a size equal to the slice of self"),
    (lambda lib: lib.diagonal_scatter(_x(lib), lib.ones(3, dtype=lib.float64), 0, 0, 0),
     "diagonal dimensions cannot be identical"),
    (lambda lib: _x(lib).scatter_reduce(1, ints(lib, [[0, 1]]), lib.ones(3, 2), "sum"),
     "Expected self.dtype to be equal to src.dtype"),
    (lambda lib: _x(lib).scatter_reduce(1, ints(lib, [[0, 4]]),
                                        lib.ones(3, 2, dtype=lib.float64), "sum"),
     "index 4 is out of bounds for dimension 1 with size 4"),
    (lambda lib: _x(lib).scatter_reduce(1, ints(lib, [[0, 1]]),
                                        lib.ones(3, 2, dtype=lib.float64), "foo"),
     "reduce argument must be either sum, prod, mean, amax or amin"),
    (lambda lib: _x(lib).index_put((ints(lib, [2, 0]),), lib.ones(3, dtype=lib.float64)),
     "cannot be broadcast to indexing result of shape [2, 4]"),
    (lambda lib: _x(lib).index_put((ints(lib, [2, 0]),), lib.ones(4)),
     "Index put requires the source and destination dtypes match"),
    (lambda lib: _x(lib).index_put(ints(lib, [2, 0]), lib.ones(4, dtype=lib.float64)),
     "must be tuple of Tensors, not Tensor"),
    (lambda lib: _x(lib).index_put((ints(lib, [5]),), lib.ones(4, dtype=lib.float64)),
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda lib: _x(lib).index_put((ints(lib, [0, 1]), ints(lib, [0, 1, 2])),
                                   lib.ones(1, dtype=lib.float64)),
     "shape mismatch: indexing tensors could not be broadcast together"),
    (lambda lib: _x(lib).index_put((None, ints(lib, [0])), lib.ones(1, dtype=lib.float64)),
     "expected Tensor as element 0 in argument 0, but got NoneType"),
    (lambda lib: _x(lib).index_put((lib.tensor([True, False]),), lib.tensor(1.0, dtype=lib.float64)),
     "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor"),
    (lambda lib: lib.take(_x(lib), lib.tensor([1.0])), "Expected a long tensor for index"),
    (lambda lib: _x(lib).masked_scatter_(lib.ones(2, 3, 4, dtype=lib.bool),
                                         lib.ones(24, dtype=lib.float64)),
     "must be greater or equal to the number of dimensions in the tensor (3)"),
    (lambda lib: lib.repeat_interleave(lib.tensor([1.0, 2.0])), "not implemented for 'Float'"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case: int) -> None:
    program, phrase = ERRORS[case]
    same(program, phrase)
