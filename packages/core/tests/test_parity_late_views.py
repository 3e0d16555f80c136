"""Views taken while their base needed no gradient, against PyTorch (``ops.late_views``).

Before this, ``v = x[1]; x.add_(r)`` left ``v`` a constant: a gradient through it never
reached ``r`` -- silently wrong. PyTorch takes such a view again from the base's new history
(``AsStridedBackward0``); a view made under no_grad is refused instead; ``requires_grad_()``
on the base makes the view require grad without history. Each program runs on both."""

from __future__ import annotations

import pytest
from torch_parity import same

import retrograd as rg


def r_leaf(lib, value=2.0):
    return lib.tensor(value, dtype=lib.float64, requires_grad=True)


def zeros(lib, *shape):
    return lib.zeros(*shape, dtype=lib.float64)


PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


@program
def base_gets_history_view_used(lib):
    x = zeros(lib, 3)
    v = x[1]
    r = r_leaf(lib)
    x.add_(r * 2)
    (v * 3).backward()
    return r.grad, v.requires_grad, v.is_leaf, type(v.grad_fn).__name__


@program
def write_through_one_view_reaches_another(lib):
    x = zeros(lib, 3)
    v, w = x[1], x[0:2]
    r = r_leaf(lib)
    v.add_(r)
    (w * lib.tensor([5.0, 7.0], dtype=lib.float64)).sum().backward()
    return r.grad, x.requires_grad, w.requires_grad, type(x.grad_fn).__name__


@program
def view_of_a_view(lib):
    x = zeros(lib, 3)
    v = x[1:]
    vv = v[0]
    r = r_leaf(lib)
    x.add_(r)
    x.mul_(r)
    (vv * 3).backward()
    return r.grad


@program
def reshaped_view(lib):
    x = zeros(lib, 3)
    v = x.view(3, 1)
    r = r_leaf(lib)
    x.add_(r)
    v.sum().backward()
    return r.grad, type(v.grad_fn).__name__


@program
def transposed_view_of_a_matrix(lib):
    x = lib.arange(6, dtype=lib.float64).reshape(2, 3)
    v = x.t()
    r = r_leaf(lib)
    x.mul_(r)
    (v * lib.arange(6, dtype=lib.float64).reshape(3, 2)).sum().backward()
    return r.grad, v.shape


@program
def grad_of_a_view(lib):
    x = zeros(lib, 3)
    v = x[1]
    r = r_leaf(lib)
    x.add_(r)
    return lib.autograd.grad(v * 3, r)


@program
def view_used_then_written(lib):
    # a use takes the view again; then an in-place op on it is recorded through the base
    x = zeros(lib, 3)
    v = x[1]
    r = r_leaf(lib)
    x.add_(r)
    y = v * 1
    v.mul_(2)
    (x.sum() + y).backward()
    return r.grad


@program
def view_written_before_any_use(lib):
    # PyTorch refuses it (its in-place check reads the stale view as a leaf)
    x = zeros(lib, 3)
    v = x[1]
    r = r_leaf(lib)
    x.add_(r)
    v.mul_(2)
    x.sum().backward()
    return r.grad


@program
def setitem_gives_base_history(lib):
    x = zeros(lib, 2, 2)
    row = x[1]
    r = r_leaf(lib)
    x[0, 0] = r
    x[1, 1] = r * 3
    (row * lib.tensor([1.0, 10.0], dtype=lib.float64)).sum().backward()
    return r.grad


@program
def base_written_under_no_grad(lib):
    x = zeros(lib, 3)
    v = x[1]
    r = r_leaf(lib)
    with lib.no_grad():
        x.add_(r)
    return v.requires_grad


@program
def no_grad_view_refused_on_use(lib):
    x = zeros(lib, 3)
    with lib.no_grad():
        v = x[1]
    r = r_leaf(lib)
    x.add_(r)
    return v * 3


@program
def no_grad_view_refused_on_requires_grad(lib):
    x = zeros(lib, 3)
    with lib.no_grad():
        v = x[1]
    x.add_(r_leaf(lib))
    return v.requires_grad


@program
def detached_alias_not_taken_again(lib):
    x = zeros(lib, 3)
    d = x.detach()
    r = r_leaf(lib)
    x.add_(r)
    return d.requires_grad, d.grad_fn is None


@program
def requires_grad_on_base_then_view_used(lib):
    x = zeros(lib, 3)
    v = x[1]
    x.requires_grad_()
    (v * 3).backward()
    return x.grad, v.grad, v.requires_grad, v.is_leaf


@program
def requires_grad_on_base_view_not_used_in_graph(lib):
    x = zeros(lib, 3)
    v = x[1]
    x.requires_grad_()
    return lib.autograd.grad(v * 3, x, allow_unused=True)


@program
def requires_grad_on_base_view_written(lib):
    x = zeros(lib, 3)
    v = x[1]
    x.requires_grad_()
    v.mul_(2)


@program
def requires_grad_on_and_off(lib):
    x = zeros(lib, 3)
    v = x[1]
    x.requires_grad_()
    x.requires_grad_(False)
    return v.requires_grad


@program
def requires_grad_then_base_changes_under_no_grad(lib):
    x = zeros(lib, 3)
    v = x[1]
    x.requires_grad_()
    with lib.no_grad():
        x.mul_(2)
    (v * 3).backward()
    return x.grad, v.requires_grad, type(v.grad_fn).__name__


@program
def double_backward_through_taken_again_view(lib):
    x = zeros(lib, 3)
    v = x[1:]
    r = r_leaf(lib)
    x.add_(r * r)
    (g,) = lib.autograd.grad((v * v).sum(), r, create_graph=True)
    (gg,) = lib.autograd.grad(g, r)
    return g, gg


@program
def custom_function_marks_base_dirty(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t, s):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return 2 * g, g.sum() * 0

    x = zeros(lib, 3)
    v = x[2]
    r = r_leaf(lib)
    x.add_(r)
    Double.apply(x, r)
    (v * 5).backward()
    return r.grad


def test_registry_of_a_sliced_buffer_stays_small():
    """A loop of slices of one buffer leaves the buffer's registry pruned: memory bounded."""
    buf = rg.zeros(1000)
    for i in range(10_000):
        buf[i % 1000]
    assert len(buf._extra.plain_views) < 200


@program
def custom_function_marks_late_view_dirty(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = zeros(lib, 3)
    v = x[1:]
    r = r_leaf(lib, 3.0)
    x.add_(r)
    Double.apply(v)
    (x * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
    return r.grad, type(x.grad_fn).__name__


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_late_view_matches_torch(name):
    same(PROGRAMS[name])
