"""``div``/``divide`` with ``rounding_mode``, ``div_`` with it, and the one-argument
``where``, run on PyTorch and on retrograd: values and dtypes, node names, gradients (zeros
without history for a rounded quotient; true division's for an explicit ``None``), and the
errors."""

from __future__ import annotations

import numpy as np
import pytest
from torch_parity import same


def _grads(L, fn):
    x = L.tensor([[1.5, -2.5, 7.0], [0.0, 4.0, -6.5]], dtype=L.float64, requires_grad=True)
    y = L.tensor([2.0, -3.0, 0.5], dtype=L.float64, requires_grad=True)
    r = fn(L, x, y)
    gs = L.autograd.grad((r * r).sum(), (x, y), allow_unused=True, create_graph=True)
    return (r, r.grad_fn.name(),
            [None if g is None else (g, g.grad_fn is not None) for g in gs])


@pytest.mark.parametrize("fn", [
    lambda L, x, y: L.div(x, y, rounding_mode="trunc"),
    lambda L, x, y: L.div(x, y, rounding_mode="floor"),
    lambda L, x, y: x.div(y, rounding_mode=None),
    lambda L, x, y: x.div(2.5, rounding_mode="floor"),
    lambda L, x, y: L.div(3, y, rounding_mode="floor"),
    lambda L, x, y: L.divide(x, y, rounding_mode="trunc"),
    lambda L, x, y: L.divide(x, y),
    lambda L, x, y: x.divide(y, rounding_mode="floor") * x,
])
def test_rounded_division_gradients(fn):
    same(lambda L: _grads(L, fn))


@pytest.mark.parametrize("case", [
    lambda L: L.div(L.tensor([7, -7, 6, -6]), 2, rounding_mode="trunc"),
    lambda L: L.div(L.tensor([7, -7, 6, -6]), 2, rounding_mode="floor"),
    lambda L: L.div(L.tensor([7, -7]), L.tensor([-2, 2]), rounding_mode="trunc"),
    lambda L: L.div(L.tensor([7, -7], dtype=L.int32), L.tensor([-2, 2]), rounding_mode="floor"),
    lambda L: L.div(L.tensor([7, -7]), 2.0, rounding_mode="trunc"),
    lambda L: L.div(L.tensor([7, -7]), 2),
    lambda L: L.div(L.tensor([1.0, -1.0, 0.0]), 0, rounding_mode="trunc"),
    lambda L: L.div(L.tensor([1.0, -1.0, 0.0]), 0, rounding_mode="floor"),
    lambda L: L.div(L.tensor([5.5, -5.5], dtype=L.float16), 2, rounding_mode="floor"),
    lambda L: L.div(L.tensor([[5.3], [-5.3]]), L.tensor([0.7, -0.7]), rounding_mode="floor"),
    lambda L: L.tensor([7.0, -7.0]).div_(2, rounding_mode="floor"),
    lambda L: L.tensor([7, -7]).div_(2, rounding_mode="trunc"),
    lambda L: L.tensor([7, -7]).div_(L.tensor(2), rounding_mode="floor"),
])
def test_rounded_division_values(case):
    same(case, tol=0)


def test_floor_matches_torch_on_many_floats():
    """PyTorch's floor division is Python's (from the remainder), not ``floor(a / b)``, which
    float32 rounds one too high now and then."""
    import torch

    import retrograd as rg

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=100_000) * 10, rng.normal(size=100_000)
    for dt in ("float32", "float64"):
        A, B = a.astype(dt), b.astype(dt)
        want = torch.div(torch.from_numpy(A), torch.from_numpy(B), rounding_mode="floor")
        assert np.array_equal(rg.div(rg.tensor(A), rg.tensor(B), rounding_mode="floor").numpy(),
                              want.numpy())
        assert np.array_equal(rg.floor_divide(rg.tensor(A), rg.tensor(B)).numpy(), want.numpy())


@pytest.mark.parametrize("case,phrase", [
    (lambda L: L.div(L.tensor([1.0]), 2, rounding_mode="round"), "rounding_mode to be one of"),
    (lambda L: L.div(L.tensor([1]), 0, rounding_mode="trunc"), "ZeroDivisionError"),
    (lambda L: L.div(L.tensor([1]), L.tensor([0]), rounding_mode="floor"), "ZeroDivisionError"),
    (lambda L: L.div(L.tensor([True]), L.tensor([True]), rounding_mode="trunc"),
     "not implemented for 'Bool'"),
    (lambda L: L.tensor([7]).div_(2.5, rounding_mode="floor"), "can't be cast"),
    (lambda L: L.tensor([7]).div_(2), "can't be cast"),
])
def test_rounded_division_errors(case, phrase):
    same(case, phrase)


def test_a_failed_div_leaves_the_tensor_alone():
    import retrograd as rg

    t = rg.tensor([7, -7])
    with pytest.raises(RuntimeError):
        t.div_(2.5, rounding_mode="floor")
    assert t.tolist() == [7, -7] and t._version == 0


@pytest.mark.parametrize("case", [
    lambda L: L.where(L.tensor([[1.5, -2.5], [0.0, 4.0]]) > 0),
    lambda L: L.where(L.tensor([0, 3, 0, 1])),
    lambda L: L.where(L.tensor(True)),
    lambda L: L.tensor([1.0, -2.0]).where(L.tensor([True, False]), 0.5),
    lambda L: L.where(L.tensor([True, False]), 1.0, 0),
])
def test_where_forms(case):
    same(case)


def test_where_with_one_value_is_refused():
    same(lambda L: L.where(L.tensor([True]), L.tensor([1.0])), "invalid combination")
