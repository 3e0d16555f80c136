"""What the conformance suite's sweeps found in retrograd's own ops, against PyTorch: cat and
stack promote their inputs' dtypes (each gradient in its input's dtype, also under
create_graph), softmax and log_softmax over an empty dimension give an empty result."""

from __future__ import annotations

import pytest
from torch_parity import same


def cat_int_and_float(lib):
    a = lib.tensor([1, 2])
    b = lib.tensor([0.5], requires_grad=True)
    c = lib.cat([a, b])
    c.sum().backward()
    return c, b.grad


def stack_mixed_floats_create_graph(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([0.5, 1.0], requires_grad=True)
    c = lib.stack([a, b])
    ga, gb = lib.autograd.grad((c * c).sum(), (a, b), create_graph=True)
    (gg,) = lib.autograd.grad(gb.sum(), b)
    return c, ga, gb, gg


def cat_bool_and_int(lib):
    return lib.cat([lib.tensor([True]), lib.tensor([3], dtype=lib.int32)])


def softmax_over_an_empty_dim(lib):
    x = lib.zeros(2, 0, requires_grad=True)
    y = lib.softmax(x, 1)
    z = lib.log_softmax(x, 1)
    (y.sum() + z.sum()).backward()
    return y, z, x.grad


PROGRAMS = {f.__name__: f for f in (cat_int_and_float, stack_mixed_floats_create_graph,
                                     cat_bool_and_int, softmax_over_an_empty_dim)}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_torch(name):
    same(PROGRAMS[name])
