"""The indexing ops against PyTorch: ``gather``, ``scatter``, ``scatter_add``,
``index_select``, ``take_along_dim``, ``index_add``, ``masked_select``, ``nonzero``.

Each program is written once against a library handle ``lib`` and run on torch and on
retrograd: values, dtypes, gradients, double backward (``create_graph``), node names and
errors (class and key phrase) are compared."""

from __future__ import annotations

from typing import Any

import pytest
from torch_parity import same

X = [[1.0, -2.0, 3.0, 0.5], [4.0, -1.5, 2.5, -3.0], [0.25, 1.5, -0.75, 2.0]]
S = [[0.5, -1.0, 2.0], [1.5, 3.0, -2.5]]


def leaf(lib: Any, data: Any = X) -> Any:
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def grads2(lib: Any, out: Any, *inputs: Any) -> Any:
    """The output, its node name, the gradients of sum(out**2) with create_graph=True and the
    gradients of the sum of their squares (a double backward)."""
    gs = lib.autograd.grad((out * out).sum(), inputs, create_graph=True)
    total = sum((g * g).sum() for g in gs)
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return out, out.grad_fn.name(), gs, second


PROGRAMS = {
    "gather dim=1": lambda lib: grads2(
        lib, lib.gather(leaf(lib), 1, lib.tensor([[0, 1, 1], [3, 0, 3]])), leaf(lib)),
    "gather dim=-2 method": lambda lib: (lambda x: grads2(
        lib, x.gather(-2, lib.tensor([[2, 0], [2, 2]])), x))(leaf(lib)),
    "gather int32 index": lambda lib: lib.gather(leaf(lib), 1, lib.tensor([[1], [0]],
                                                                          dtype=lib.int32)),
    "gather 0-d": lambda lib: (lambda x: grads2(lib, lib.gather(x, 0, lib.tensor(0)) * 3, x))(
        leaf(lib, 2.0)),
    "gather empty": lambda lib: lib.gather(leaf(lib), 1, lib.zeros((3, 0), dtype=lib.int64)),
    "gather float32": lambda lib: lib.gather(lib.tensor(X), 0, lib.tensor([[2, 1, 0, 2]])),
    "gather int64 values": lambda lib: lib.gather(lib.tensor([[1, 2], [3, 4]]), 1,
                                                  lib.tensor([[1, 1], [0, 1]])),
    "scatter src": lambda lib: (lambda x, s: grads2(
        lib, lib.scatter(x, 1, lib.tensor([[0, 1, 3], [2, 0, 1]]), s), x, s))(
        leaf(lib), leaf(lib, S)),
    "scatter src larger than index": lambda lib: (lambda x, s: grads2(
        lib, x.scatter(0, lib.tensor([[2, 0]]), s) * 1, x))(leaf(lib), leaf(lib, S)),
    "scatter value": lambda lib: (lambda x: grads2(
        lib, lib.scatter(x, 1, lib.tensor([[0, 2], [3, 1]]), 2.5), x))(leaf(lib)),
    "scatter value keyword": lambda lib: lib.scatter(leaf(lib), 0, lib.tensor([[1, 2]]),
                                                     value=-1.0),
    "scatter value into int64": lambda lib: lib.scatter(lib.tensor([[1, 2], [3, 4]]), 1,
                                                        lib.tensor([[1], [0]]), 7),
    "scatter_add": lambda lib: (lambda x, s: grads2(
        lib, lib.scatter_add(x, 1, lib.tensor([[0, 0, 3], [2, 2, 2]]), s), x, s))(
        leaf(lib), leaf(lib, S)),
    "scatter_add dim=0 method": lambda lib: (lambda x, s: grads2(
        lib, x.scatter_add(0, lib.tensor([[2, 2, 0], [2, 1, 0]]), s), x, s))(
        leaf(lib), leaf(lib, S)),
    "scatter_add only src": lambda lib: (lambda s: grads2(
        lib, lib.scatter_add(lib.zeros(3, 4, dtype=lib.float64), 1,
                             lib.tensor([[1, 1, 1], [0, 3, 0]]), s), s))(leaf(lib, S)),
    "index_select": lambda lib: (lambda x: grads2(
        lib, lib.index_select(x, 1, lib.tensor([3, 0, 3])), x))(leaf(lib)),
    "index_select dim=0 method int32": lambda lib: (lambda x: grads2(
        lib, x.index_select(0, lib.tensor([2, 2, 1], dtype=lib.int32)), x))(leaf(lib)),
    "index_select one-element index": lambda lib: lib.index_select(leaf(lib), -1,
                                                                   lib.tensor(2)),
    "index_select 0-d": lambda lib: (lambda x: grads2(
        lib, lib.index_select(x, 0, lib.tensor([0])) * 2, x))(leaf(lib, 1.5)),
    "index_select empty": lambda lib: lib.index_select(leaf(lib), 0,
                                                       lib.tensor([], dtype=lib.int64)),
    "take_along_dim": lambda lib: (lambda x: grads2(
        lib, lib.take_along_dim(x, lib.tensor([[1, 1], [0, 3], [2, 2]]), 1), x))(leaf(lib)),
    "take_along_dim broadcast": lambda lib: (lambda x: grads2(
        lib, x.take_along_dim(lib.tensor([[1], [0], [2]]), dim=1), x))(leaf(lib)),
    "take_along_dim broadcast input": lambda lib: (lambda x: grads2(
        lib, lib.take_along_dim(x, lib.tensor([[0, 1, 1], [3, 2, 3]]), 1), x))(
        leaf(lib, [X[0]])),
    "take_along_dim flat": lambda lib: (lambda x: grads2(
        lib, lib.take_along_dim(x, lib.tensor([5, 0, 11, 5])), x))(leaf(lib)),
    "index_add": lambda lib: (lambda x, s: grads2(
        lib, lib.index_add(x, 1, lib.tensor([3, 0, 3]), s * 1), x, s))(
        leaf(lib, X[:2]), leaf(lib, S)),
    "index_add alpha dim=0 method": lambda lib: (lambda x, s: grads2(
        lib, x.index_add(0, lib.tensor([2, 0]), s, alpha=-1.5), x, s))(
        leaf(lib, [r[:3] for r in X]), leaf(lib, S)),
    "index_add only source": lambda lib: (lambda s: grads2(
        lib, lib.index_add(lib.ones(2, 4, dtype=lib.float64), 1, lib.tensor([1, 1, 2]), s),
        s))(leaf(lib, S)),
    "masked_select": lambda lib: (lambda x: grads2(lib, lib.masked_select(x, x > 0.7), x))(
        leaf(lib)),
    "masked_select broadcast mask": lambda lib: (lambda x: grads2(
        lib, x.masked_select(lib.tensor([True, False, False, True])), x))(leaf(lib)),
    "masked_select broadcast input": lambda lib: (lambda x: grads2(
        lib, lib.masked_select(x, lib.tensor([[True, False, True, True], [False] * 4,
                                              [True] * 4])), x))(leaf(lib, X[1])),
    "masked_select none": lambda lib: (lambda x: grads2(
        lib, lib.masked_select(x, x > 100) + 1, x))(leaf(lib)),
    "masked_select 0-d": lambda lib: lib.masked_select(lib.tensor(2.0), lib.tensor(True)),
    "nonzero": lambda lib: lib.nonzero(lib.tensor([[1, 0, 2], [0, 0, 3]])),
    "nonzero method float": lambda lib: lib.tensor(X).gt(1).nonzero(),
    "nonzero as_tuple": lambda lib: lib.nonzero(lib.tensor([[1, 0], [0, 2]]), as_tuple=True),
    "nonzero 0-d": lambda lib: (lib.nonzero(lib.tensor(2.0)), lib.nonzero(lib.tensor(0.0)),
                                lib.nonzero(lib.tensor(2.0), as_tuple=True)),
    "nonzero empty": lambda lib: lib.nonzero(lib.zeros(0, 3)),
    "nonzero no grad": lambda lib: lib.nonzero(leaf(lib)).requires_grad,
}


def _inplace_chain(lib: Any) -> Any:
    x, s = leaf(lib, [r[:3] for r in X[:2]]), leaf(lib, [r[:2] for r in S])
    y = x * 1
    same_object = y.scatter_(1, lib.tensor([[0, 2], [1, 0]]), s) is y
    names = [y.grad_fn.name()]
    y.scatter_add_(0, lib.tensor([[1, 1]]), s[:1])
    names.append(y.grad_fn.name())
    y.index_add_(1, lib.tensor([2, 2]), s, alpha=2)
    names.append(y.grad_fn.name())
    return same_object, names, y._version, grads2(lib, y, x, s)


def _inplace_no_grad(lib: Any) -> Any:
    z = lib.zeros(2, 3)
    z.scatter_(1, lib.tensor([[1], [2]]), 5.0)
    z.scatter_add_(1, lib.tensor([[0, 0]]), lib.ones(1, 2))
    z.index_add_(0, lib.tensor([1]), lib.full((1, 3), 0.5))
    return z, z._version, z.requires_grad


PROGRAMS["in-place scatter_, scatter_add_, index_add_"] = _inplace_chain
PROGRAMS["in-place without grad"] = _inplace_no_grad


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_grads_and_double_backward(name: str) -> None:
    same(PROGRAMS[name])


def _x(lib: Any) -> Any:
    return leaf(lib)


ERRORS = [
    (lambda lib: lib.gather(_x(lib), 1, lib.tensor([[0.0]])), "Expected dtype int32/int64"),
    (lambda lib: lib.gather(_x(lib), 2, lib.tensor([[0]])), "Dimension out of range"),
    (lambda lib: lib.gather(_x(lib), 1, lib.tensor([[5]])), "out of bounds for dimension"),
    (lambda lib: lib.gather(_x(lib), 1, lib.tensor([[-1]])), "out of bounds for dimension"),
    (lambda lib: lib.gather(_x(lib), 1, lib.tensor([0])), "same number of dimensions"),
    (lambda lib: lib.gather(_x(lib), 1, lib.zeros(4, 1, dtype=lib.int64)),
     "to be no larger than self"),
    (lambda lib: lib.scatter(_x(lib), 1, lib.tensor([[0, 1], [2, 3]]),
                             lib.ones(1, 1, dtype=lib.float64)),
     "to be no larger size than src"),
    (lambda lib: lib.scatter(_x(lib), 1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float32)),
     "Expected self.dtype to be equal to src.dtype"),
    (lambda lib: lib.scatter(_x(lib), 1, lib.tensor([[0.0]]), 1.0),
     "Expected dtype int32/int64 for index"),
    (lambda lib: lib.scatter_add(_x(lib), 1, lib.tensor([[9]]), lib.ones(2, 2,
                                                                        dtype=lib.float64)),
     "out of bounds for dimension"),
    (lambda lib: lib.index_select(_x(lib), 1, lib.tensor([[0]])), "Index is supposed to be"),
    (lambda lib: lib.index_select(_x(lib), 1, lib.tensor([0.0])), "Expected dtype int32"),
    (lambda lib: lib.index_select(_x(lib), 1, lib.tensor([7])), "out of DATA bounds"),
    (lambda lib: lib.index_select(_x(lib), 2, lib.tensor([0])), "Dimension out of range"),
    (lambda lib: lib.index_select(lib.tensor(2.0), 0, lib.tensor([0, 0])),
     "Index to scalar can have only 1 value"),
    (lambda lib: lib.take_along_dim(_x(lib), lib.tensor([[0]], dtype=lib.int32), 1),
     "dtype of indices should be Long"),
    (lambda lib: lib.take_along_dim(_x(lib), lib.zeros(2, 2, 2, dtype=lib.int64), 1),
     "should have the same number of dimensions"),
    (lambda lib: lib.take_along_dim(_x(lib), lib.zeros(2, 2, dtype=lib.int64), 1),
     "must match the size of tensor b"),
    (lambda lib: lib.index_add(_x(lib), 1, lib.tensor([0]), lib.ones(3, 2,
                                                                     dtype=lib.float64)),
     "Number of indices (1) should be equal to source.size(dim)"),
    (lambda lib: lib.index_add(_x(lib), 1, lib.tensor([0]), lib.ones(2, 1,
                                                                     dtype=lib.float64)),
     "source tensor shape must match self tensor shape"),
    (lambda lib: lib.index_add(_x(lib), 1, lib.tensor([0]), lib.ones(3, 1)),
     "must have the same scalar type"),
    (lambda lib: lib.index_add(_x(lib), 1, lib.tensor([9]), lib.ones(3, 1,
                                                                     dtype=lib.float64)),
     "out of bounds for dimension"),
    (lambda lib: lib.masked_select(_x(lib), lib.ones(3, 4)), "expected BoolTensor for mask"),
    (lambda lib: lib.masked_select(_x(lib), lib.ones(2, 4, dtype=lib.bool)),
     "must match the size of tensor b"),
    (lambda lib: lib.nonzero(_x(lib), as_tuple=1), "must be bool"),
    (lambda lib: _x(lib).scatter_(1, lib.tensor([[0]]), 1.0), "a leaf Variable that requires"),
    (lambda lib: (_x(lib) * 1).index_add_(1, lib.tensor([0]), lib.ones(3, 2,
                                                                      dtype=lib.float64)),
     "Number of indices (1) should be equal to source.size(dim)"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case: int) -> None:
    program, phrase = ERRORS[case]
    same(program, phrase)


def test_repeated_scatter_add_accumulates_float32() -> None:
    same(lambda lib: lib.scatter_add(lib.zeros(2, 3), 1, lib.tensor([[0, 0, 0, 2]] * 2),
                                     lib.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0]])),
         tol=1e-6)


def test_array_api_strict_backend() -> None:
    """The Array-API fallbacks (no ``add.at``, no ``take_along_axis``) give NumPy's values."""
    import numpy as np

    import retrograd as rg
    from retrograd.backends.kernels_indexing import kernels

    try:
        import array_api_strict as xps
    except ImportError:  # pragma: no cover
        pytest.skip("array_api_strict is not installed")
    k, kn = kernels(xps), kernels(np)
    x = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0, 0, 3], [2, 2, 1]])
    src = np.arange(1.0, 7.0).reshape(2, 3)
    mask = x % 3 == 1
    cases = [
        ("gather", (x, idx, 1)), ("scatter_add", (x, idx, src, 1)),
        ("scatter", (x, np.array([[0, 1, 3], [2, 0, 1]]), src, 1)),
        ("index_select", (x, np.array([3, 3, 0]), 1)),
        ("index_add", (x, np.array([3, 0, 3]), np.ones((3, 3)), 1, 2.0)),
        ("masked_select", (x, mask)), ("masked_scatter_zero", (np.arange(4.0), mask)),
        ("nonzero", (mask,)),
    ]
    for name, args in cases:
        got = k[name](*[xps.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
        want = kn[name](*args)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)
    assert rg.gather is not None
