"""Sorting and searching against PyTorch: ``sort``, ``argsort``, ``topk``, ``searchsorted``,
``bucketize``, ``unique`` and ``unique_consecutive``. Each program runs on torch and on
retrograd; values, dtypes, indices (stable order among ties, NaN as the largest value),
gradients (also of a double backward), node names and errors (class and key phrase) are
compared."""

from __future__ import annotations

import pytest
from torch_parity import same

NAN = float("nan")
A = [[0.5, -2.0, 3.0, 1.25], [4.0, -1.5, 0.75, 2.5], [-0.25, 1.0, -3.5, 2.0]]
TIES = [2.0, 1.0, 2.0, NAN, 1.0, 0.0, NAN, 2.0]


def leaf(lib, data=A, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def grads(lib, out_of, x):
    """The output, its gradient (weighted cotangent, create_graph) and a double backward."""
    out = out_of(x)
    w = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) + 1
    (g,) = lib.autograd.grad((out * out * w).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad((g * g).sum(), x)
    return {"out": out, "grad": g, "second": h, "node": out.grad_fn.name(),
            "gnode": g.grad_fn is not None}


# -- values, indices, dtypes ----------------------------------------------------------------
VALUES = {
    "sort default": lambda lib: lib.sort(lib.tensor(A)),
    "sort dim 0": lambda lib: lib.sort(lib.tensor(A), 0),
    "sort descending": lambda lib: lib.tensor(A).sort(-1, True),
    "sort dim keyword": lambda lib: lib.sort(lib.tensor(A), dim=0, descending=True),
    "sort fields": lambda lib: (lambda r: (r.values, r.indices, r[0], type(r).__name__))(
        lib.sort(lib.tensor([3.0, 1.0]))),
    "sort stable ties": lambda lib: lib.sort(lib.tensor(TIES), stable=True),
    "sort stable ties descending": lambda lib: lib.sort(lib.tensor(TIES), stable=True,
                                                        descending=True),
    "sort ties 2-d dim 0": lambda lib: lib.sort(lib.tensor([[1.0, 2.0], [1.0, 0.0],
                                                             [1.0, 2.0]]), dim=0, stable=True),
    "sort nan largest": lambda lib: lib.sort(lib.tensor([1.0, NAN, -1.0, NAN, 0.0])),
    "sort int": lambda lib: lib.sort(lib.tensor([[3, -1, 2], [0, 5, 5]]), stable=True),
    "sort int descending": lambda lib: lib.sort(lib.tensor([3, -1, 2, 3]), descending=True,
                                                stable=True),
    "sort bool": lambda lib: lib.sort(lib.tensor([True, False, True]), stable=True),
    "sort float32": lambda lib: lib.sort(lib.tensor(A, dtype=lib.float32), 1),
    "sort empty": lambda lib: lib.sort(lib.zeros(0)),
    "sort empty 2-d": lambda lib: lib.sort(lib.zeros(2, 0), 1),
    "sort empty other dim": lambda lib: lib.sort(lib.zeros(0, 3), 1),
    "sort 0-d": lambda lib: lib.sort(lib.tensor(5.0)),
    "sort 0-d dim -1": lambda lib: lib.sort(lib.tensor(5.0), -1),
    "sort 3-d": lambda lib: lib.sort(lib.tensor(A).reshape(3, 2, 2), 1, descending=True),
    "argsort": lambda lib: lib.argsort(lib.tensor(A)),
    "argsort method dim 0 descending": lambda lib: lib.tensor(A).argsort(0, True),
    "argsort stable ties": lambda lib: lib.argsort(lib.tensor(TIES), stable=True),
    "argsort stable ties descending": lambda lib: lib.argsort(lib.tensor(TIES), stable=True,
                                                              descending=True),
    "argsort 0-d": lambda lib: lib.argsort(lib.tensor(1.5)),
    "argsort int": lambda lib: lib.argsort(lib.tensor([4, 1, 3])),
    "topk": lambda lib: lib.topk(lib.tensor(A), 2),
    "topk smallest": lambda lib: lib.tensor(A).topk(3, largest=False),
    "topk dim 0": lambda lib: lib.topk(lib.tensor(A), 2, dim=0),
    "topk k=0": lambda lib: lib.topk(lib.tensor(A), 0),
    "topk k=n": lambda lib: lib.topk(lib.tensor(A), 4, 1),
    "topk nan largest": lambda lib: lib.topk(lib.tensor([1.0, NAN, 0.0, 3.0]), 2),
    "topk nan smallest": lambda lib: lib.topk(lib.tensor([1.0, NAN, 0.0, 3.0]), 3,
                                              largest=False),
    "topk int": lambda lib: lib.topk(lib.tensor([5, 1, 9, 3]), 2),
    "topk 0-d": lambda lib: lib.topk(lib.tensor(2.0), 1),
    "topk fields": lambda lib: (lambda r: (r.values, r.indices, type(r).__name__))(
        lib.topk(lib.tensor([1.0, 3.0, 2.0]), 2)),
    "topk sorted=False as a set": lambda lib: lib.sort(
        lib.topk(lib.tensor([1.0, 3.0, 2.0, 7.0]), 3, sorted=False).values).values,
}


@pytest.mark.parametrize("name", list(VALUES))
def test_values(name):
    same(VALUES[name])


SEQ = [1.0, 3.0, 3.0, 5.0, 7.0]
SEARCH = {
    "left": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([0.0, 3.0, 4.0, 7.0, 9.0])),
    "right": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([0.0, 3.0, 7.0, 9.0]),
                                          right=True),
    "side right": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([3.0, 5.0]),
                                               side="right"),
    "side left": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([3.0, 5.0]),
                                              side="left"),
    "2-d values": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([[3.0], [6.0]])),
    "scalar value": lambda lib: lib.searchsorted(lib.tensor(SEQ), 3.0),
    "0-d value": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor(4.0)),
    "int32": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.tensor([3.0]), out_int32=True),
    "batched": lambda lib: lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]),
                                            lib.tensor([[3, 0], [3, 7]])),
    "batched right": lambda lib: lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]),
                                                  lib.tensor([[3], [4]]), right=True),
    "int sequence": lambda lib: lib.searchsorted(lib.tensor([1, 2, 3]), lib.tensor([2, 5])),
    "sorter": lambda lib: lib.searchsorted(lib.tensor([5.0, 1.0, 3.0]), lib.tensor([2.0, 4.0]),
                                           sorter=lib.tensor([1, 2, 0])),
    "empty values": lambda lib: lib.searchsorted(lib.tensor(SEQ), lib.zeros(0)),
    "empty sequence": lambda lib: lib.searchsorted(lib.zeros(0), lib.tensor([1.0])),
    "bucketize": lambda lib: lib.bucketize(lib.tensor([[0.0, 3.0], [4.0, 9.0]]),
                                           lib.tensor(SEQ)),
    "bucketize right": lambda lib: lib.bucketize(lib.tensor([0.0, 3.0, 7.0, 9.0]),
                                                 lib.tensor(SEQ), right=True),
    "bucketize int32": lambda lib: lib.bucketize(lib.tensor([3.0]), lib.tensor(SEQ),
                                                 out_int32=True),
    "bucketize scalar": lambda lib: lib.bucketize(3, lib.tensor([1, 3, 5])),
    "bucketize 0-d": lambda lib: lib.bucketize(lib.tensor(4.0), lib.tensor(SEQ)),
    "no grad": lambda lib: (lambda x: (
        lib.searchsorted(x, x.detach()).requires_grad,
        lib.bucketize(x, x.detach()).requires_grad,
        lib.argsort(x).requires_grad, lib.sort(x).indices.requires_grad,
        lib.topk(x, 2).indices.requires_grad, lib.argsort(x).grad_fn is None))(
        leaf(lib, [1.0, 2.0, 3.0])),
}


@pytest.mark.parametrize("name", list(SEARCH))
def test_search(name):
    same(SEARCH[name])


U = [3.0, 1.0, 2.0, 1.0, 3.0, 3.0]
M = [[1, 2], [1, 2], [0, 5], [1, 2], [0, 5]]
UNIQUE = {
    "unique": lambda lib: lib.unique(lib.tensor(U)),
    "unique all outputs": lambda lib: lib.unique(lib.tensor(U), return_inverse=True,
                                                 return_counts=True),
    "unique inverse 2-d": lambda lib: lib.unique(lib.tensor([[2, 1], [1, 3]]),
                                                 return_inverse=True),
    "unique counts": lambda lib: lib.tensor(U).unique(return_counts=True),
    "unique sorted=False": lambda lib: lib.unique(lib.tensor(U), sorted=False),
    "unique nan": lambda lib: lib.unique(lib.tensor([1.0, NAN, NAN, 1.0]), return_counts=True,
                                         return_inverse=True),
    "unique dim 0": lambda lib: lib.unique(lib.tensor(M), dim=0, return_inverse=True,
                                           return_counts=True),
    "unique dim 1": lambda lib: lib.unique(lib.tensor(M).T, dim=1, return_inverse=True,
                                           return_counts=True),
    "unique dim -1 3-d": lambda lib: lib.unique(lib.tensor([[[1, 0, 1], [2, 0, 2]]]), dim=-1),
    "unique empty": lambda lib: lib.unique(lib.zeros(0), return_inverse=True,
                                           return_counts=True),
    "unique empty dim": lambda lib: lib.unique(lib.zeros(0, 3), dim=0, return_inverse=True,
                                               return_counts=True),
    "unique 0-d": lambda lib: lib.unique(lib.tensor(5.0), return_inverse=True,
                                         return_counts=True),
    "unique bool": lambda lib: lib.unique(lib.tensor([True, False, True])),
    "consecutive": lambda lib: lib.unique_consecutive(lib.tensor(U)),
    "consecutive all": lambda lib: lib.tensor(U).unique_consecutive(return_inverse=True,
                                                                    return_counts=True),
    "consecutive dim 0": lambda lib: lib.unique_consecutive(
        lib.tensor(M), dim=0, return_inverse=True, return_counts=True),
    "consecutive 2-d flat": lambda lib: lib.unique_consecutive(
        lib.tensor(M), return_inverse=True, return_counts=True),
    "consecutive empty": lambda lib: lib.unique_consecutive(lib.zeros(0), return_counts=True),
    "requires grad": lambda lib: (lambda x: [
        [t.requires_grad for t in lib.unique(x, return_inverse=True, return_counts=True)],
        [t.requires_grad for t in lib.unique(x, return_inverse=True, dim=0)],
        [t.requires_grad for t in lib.unique_consecutive(x, return_counts=True)],
        lib.unique(x).grad_fn.name(), lib.unique(x, dim=0).grad_fn.name(),
        lib.unique_consecutive(x).grad_fn.name(),
        lib.unique_consecutive(x, dim=0).grad_fn.name(),
        lib.unique(x.detach()).requires_grad])(leaf(lib, U)),
}


@pytest.mark.parametrize("name", list(UNIQUE))
def test_unique(name):
    same(UNIQUE[name])


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib, x: lib.unique(x), "the derivative for '_unique2' is not implemented"),
    (lambda lib, x: lib.unique(x, dim=0), "the derivative for 'unique_dim' is not implemented"),
    (lambda lib, x: lib.unique_consecutive(x),
     "the derivative for 'unique_consecutive' is not implemented"),
    (lambda lib, x: lib.unique_consecutive(x, dim=0),
     "the derivative for 'unique_consecutive' is not implemented"),
])
def test_unique_backward_not_implemented(fn, phrase):
    same(lambda lib: fn(lib, leaf(lib, U)).sum().backward(), phrase)


# -- gradients ------------------------------------------------------------------------------
GRADS = {
    "sort": lambda lib: grads(lib, lambda x: lib.sort(x).values, leaf(lib)),
    "sort dim 0 descending": lambda lib: grads(
        lib, lambda x: x.sort(0, descending=True).values, leaf(lib)),
    "sort 3-d dim 1": lambda lib: grads(
        lib, lambda x: lib.sort(x.reshape(3, 2, 2), 1).values, leaf(lib)),
    "sort stable ties": lambda lib: grads(
        lib, lambda x: lib.sort(x, stable=True, descending=True).values,
        leaf(lib, [1.0, 2.0, 1.0, 2.0, 0.5])),
    "sort float32": lambda lib: grads(lib, lambda x: lib.sort(x, 1).values,
                                      leaf(lib, A, lib.float32)),
    "sort 0-d": lambda lib: grads(lib, lambda x: lib.sort(x).values, leaf(lib, 2.0)),
    "topk": lambda lib: grads(lib, lambda x: lib.topk(x, 2).values, leaf(lib)),
    "topk smallest dim 0": lambda lib: grads(
        lib, lambda x: x.topk(2, 0, largest=False).values, leaf(lib)),
    "topk k=n": lambda lib: grads(lib, lambda x: lib.topk(x, 4).values, leaf(lib)),
    "topk 0-d": lambda lib: grads(lib, lambda x: lib.topk(x, 1).values, leaf(lib, 2.0)),
    "sort then topk": lambda lib: grads(
        lib, lambda x: lib.topk(lib.sort(x, 0).values * x, 3, 1).values, leaf(lib)),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_grads(name):
    same(GRADS[name])


def test_backward_into_leaf():
    def program(lib):
        x = leaf(lib)
        v, i = lib.sort(x, 1, descending=True)
        (v * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        y = leaf(lib)
        lib.topk(y, 1, 0).values.sum().backward()
        e = leaf(lib, [[]])
        lib.sort(e).values.sum().backward()
        return x.grad, y.grad, e.grad, i

    same(program)


def test_third_order():
    def program(lib):
        x = leaf(lib, [0.5, -1.0, 2.0, 1.5])
        v = lib.topk(x, 3).values
        (g,) = lib.autograd.grad((v ** 3).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g ** 2).sum(), x, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), x)
        return g, h, k

    same(program)


# -- errors ---------------------------------------------------------------------------------
ERRORS = [
    (lambda lib: lib.sort(lib.tensor([1.0, 2.0]), 1), "Dimension out of range"),
    (lambda lib: lib.sort(lib.tensor(1.0), 1), "Dimension out of range"),
    (lambda lib: lib.argsort(lib.tensor(A), -3), "Dimension out of range"),
    (lambda lib: lib.sort(lib.tensor(A), 1.0), None),
    (lambda lib: lib.topk(lib.tensor([1.0, 2.0]), 3), "selected index k out of range"),
    (lambda lib: lib.topk(lib.tensor([1.0, 2.0]), -1), "selected index k out of range"),
    (lambda lib: lib.topk(lib.tensor(1.0), 2), "selected index k out of range"),
    (lambda lib: lib.topk(lib.tensor(A), 2, 2), "Dimension out of range"),
    (lambda lib: lib.topk(lib.tensor(A), 1.0), "must be int, not float"),
    (lambda lib: lib.searchsorted(lib.tensor([[1.0, 2.0], [3.0, 4.0]]),
                                  lib.tensor([[1.0], [2.0], [3.0]])),
     "first N-1 dimensions of boundaries tensor and input value tensor must match"),
    (lambda lib: lib.searchsorted(lib.tensor(1.0), lib.tensor([1.0])),
     "boundaries tensor should have positive dimension"),
    (lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]), side="mid"),
     "side can only be 'left' or 'right'"),
    (lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]), side="left",
                                  right=True), "side and right can't be set to opposites"),
    (lambda lib: lib.bucketize(lib.tensor([1.0]), lib.tensor([[1.0, 2.0]])),
     "boundaries tensor must be 1 dimension"),
    (lambda lib: lib.unique(lib.tensor([1.0, 2.0]), dim=1), "Dimension out of range"),
    (lambda lib: lib.unique_consecutive(lib.tensor(A), dim=2), "Dimension out of range"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, phrase = ERRORS[case]
    same(fn, phrase)
