"""The layout ops against PyTorch: ``flip``, ``roll``, ``tril``/``triu``, ``movedim``,
``swapaxes``, ``unflatten``, ``reshape_as``, ``diag``, ``nn.functional.pad`` and the
``Tensor.new_*`` constructors -- values, dtypes, gradients, double backward, node names,
views and errors, each program written once against a library handle ``lib``."""

from __future__ import annotations

from typing import Any

import pytest
from torch_parity import same

import retrograd as rg
from retrograd.ops import layout

A = [[1.0, -2.0, 3.0, 0.5], [0.25, 4.0, -1.5, 2.0], [-0.75, 1.25, 2.5, -3.0]]
V = [1.5, -2.0, 0.75]


def leaf(lib: Any, data: Any = A) -> Any:
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def pad_of(lib: Any) -> Any:
    fn = getattr(lib.nn.functional, "pad", None)
    return fn if fn is not None else layout.pad


def grads(lib: Any, f: Any, data: Any = A) -> Any:
    """Value, node name, gradient and double-backward gradient of a weighted ``f(x)``."""
    x = leaf(lib, data)
    y = f(x)
    w = lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape) - 1.5
    loss = ((y * w) ** 2).sum() if y.numel() else y.sum() + (x * 0).sum()
    (g,) = lib.autograd.grad(loss, (x,), create_graph=True)
    (gg,) = lib.autograd.grad((g * g).sum() + (g * x).sum(), (x,), allow_unused=True)
    name = y.grad_fn.name() if y.grad_fn is not None else None
    return y, name, g, gg


DIFF = {
    "flip 0": lambda lib, x: lib.flip(x, [0]),
    "flip both neg": lambda lib, x: x.flip((-1, 0)),
    "flip none": lambda lib, x: lib.flip(x, []),
    "roll flat": lambda lib, x: lib.roll(x, 5),
    "roll dim": lambda lib, x: x.roll(-1, 1),
    "roll multi": lambda lib, x: lib.roll(x, (1, 7), (0, -1)),
    "tril": lambda lib, x: lib.tril(x),
    "tril k": lambda lib, x: x.tril(1),
    "triu": lambda lib, x: lib.triu(x),
    "triu -k": lambda lib, x: x.triu(-1),
    "tril batched": lambda lib, x: lib.tril(x.reshape(2, 3, 2), -1),
    "movedim": lambda lib, x: lib.movedim(x.reshape(2, 3, 2), 0, 2),
    "movedim seq": lambda lib, x: lib.movedim(x.reshape(2, 3, 2), (0, 1), (2, 0)),
    "moveaxis": lambda lib, x: x.reshape(2, 3, 2).moveaxis(-1, 0),
    "swapaxes": lambda lib, x: lib.swapaxes(x, 0, 1),
    "swapdims": lambda lib, x: x.swapdims(-1, 0),
    "unflatten": lambda lib, x: x.unflatten(1, (2, 2)),
    "unflatten -1": lambda lib, x: lib.unflatten(x, -1, (-1, 1, 2)),
    "reshape_as": lambda lib, x: x.reshape_as(lib.zeros(6, 2)),
    "reshape_as t": lambda lib, x: x.t().reshape_as(lib.zeros(12)),
    "diag 2d": lambda lib, x: lib.diag(x),
    "diag 2d k": lambda lib, x: x.diag(1),
    "diag 2d -k": lambda lib, x: lib.diag(x, -1),
    "diag 2d empty": lambda lib, x: lib.diag(x, 9),
    "diag 1d": lambda lib, x: lib.diag(x[0]),
    "diag 1d k": lambda lib, x: lib.diag(x[1], 2),
    "diag 1d -k": lambda lib, x: x[2].diag(-1),
    "pad constant": lambda lib, x: pad_of(lib)(x, (1, 2)),
    "pad constant 2 value": lambda lib, x: pad_of(lib)(x, (1, 0, 0, 2), value=3.5),
    "pad constant crop": lambda lib, x: pad_of(lib)(x, (-1, 2, 1, -2)),
    "pad reflect 1d": lambda lib, x: pad_of(lib)(x, (2, 1), mode="reflect"),
    "pad reflect 2d": lambda lib, x: pad_of(lib)(x[None], (1, 3, 2, 1), mode="reflect"),
    "pad replicate 1d": lambda lib, x: pad_of(lib)(x, (3, 1), mode="replicate"),
    "pad replicate 2d": lambda lib, x: pad_of(lib)(x[None], (0, 2, 1, 1), mode="replicate"),
    "pad reflect crop": lambda lib, x: pad_of(lib)(x, (-1, 2), mode="reflect"),
    "pad replicate crop": lambda lib, x: pad_of(lib)(x[None], (2, -1, -1, 1), mode="replicate"),
    "flip method varargs": lambda lib, x: x.flip(1, 0),
    "flip method int": lambda lib, x: x.flip(-1),
    "pad replicate 3d": lambda lib, x: pad_of(lib)(x.reshape(1, 2, 3, 2), (1, 0, 0, 1, 1, 1),
                                                   mode="replicate"),
}


@pytest.mark.parametrize("name", list(DIFF))
def test_values_grads_double_backward(name: str) -> None:
    same(lambda lib: grads(lib, lambda x: DIFF[name](lib, x)))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "int32"])
def test_dtypes(dtype: str) -> None:
    def prog(lib: Any) -> Any:
        x = lib.tensor([[1, 0, 2], [3, 1, 0]]).to(getattr(lib, dtype))
        return (lib.flip(x, [1]), lib.roll(x, 1, 0), lib.tril(x), lib.triu(x, 1),
                lib.movedim(x, 0, 1), lib.diag(x), lib.diag(x[0]), x.unflatten(1, (3, 1)))
    same(prog)


def test_zero_d_and_empty() -> None:
    same(lambda lib: grads(lib, lambda x: lib.flip(x, [0]), 2.0))
    same(lambda lib: grads(lib, lambda x: lib.roll(x, 3), 2.0))
    same(lambda lib: grads(lib, lambda x: lib.movedim(x, 0, -1), 2.0))
    same(lambda lib: grads(lib, lambda x: x.swapaxes(0, -1), 2.0))
    same(lambda lib: grads(lib, lambda x: x.unflatten(0, (1, 1)), 2.0), "tensor has no dim")
    same(lambda lib: lib.flip(lib.zeros(0, 3), [0, 1]))
    same(lambda lib: lib.roll(lib.zeros(0, 3), 2, 1))
    same(lambda lib: lib.tril(lib.zeros(0, 3)))
    same(lambda lib: lib.diag(lib.zeros(0)))


def test_views_share_base() -> None:
    def prog(lib: Any) -> Any:
        x = leaf(lib)
        y = x * 1
        v = lib.movedim(y.reshape(3, 2, 2), 0, 2)
        v.mul_(2)
        u = y.unflatten(1, (2, 2))
        u[0].add_(1)
        s = y.swapaxes(0, 1)
        s[0].zero_()
        (y * y).sum().backward()
        return y, x.grad, y._version, v._base is y, u._base is y
    same(prog)


def test_results_are_copies() -> None:
    def prog(lib: Any) -> Any:
        x = lib.tensor(A)
        outs = [lib.flip(x, [0]), lib.roll(x, 1), lib.tril(x), lib.diag(x)]
        x.add_(1)
        return outs
    same(prog)


def test_new_constructors() -> None:
    def prog(lib: Any) -> Any:
        x = lib.tensor([[1, 2]], dtype=lib.float64, requires_grad=True)
        i = lib.tensor([3], dtype=lib.int32)
        z = x.new_zeros(2, 3)
        o = x.new_ones((2,), dtype=lib.int64)
        f = i.new_full((2, 2), 7)
        t = x.new_tensor([1, 2])
        e = i.new_empty(3)
        r = x.new_zeros([1], requires_grad=True)
        return (z, o, f, t, tuple(e.shape), str(e.dtype)[-5:], z.requires_grad, z.grad_fn is None,
                r.requires_grad, r.is_leaf)
    same(prog)


def test_keywords() -> None:
    def prog(lib: Any) -> Any:
        x = lib.arange(6).reshape(2, 3)
        return (lib.roll(x, shifts=-7, dims=None), lib.diag(x, diagonal=1),
                lib.movedim(x[None], source=[0], destination=[-1]),
                x.reshape(-1).unflatten(dim=0, sizes=[2, 3]), x.new_zeros(size=(2,)),
                x.swapaxes(axis0=0, axis1=1), x.swapdims(dim0=0, dim1=1),
                lib.tril(x, diagonal=-1), x.new_full([2], 1.5))
    same(prog)


ERRORS = [
    (lambda lib: lib.flip(lib.zeros(2, 3), [0, 0]), "appears multiple times"),
    (lambda lib: lib.flip(lib.zeros(2, 3), [2]), "Dimension out of range"),
    (lambda lib: lib.flip(lib.zeros(2, 3), 0), "must be tuple of ints"),
    (lambda lib: lib.roll(lib.zeros(2, 3), 1, 5), "Dimension out of range"),
    (lambda lib: lib.roll(lib.zeros(2, 3), (1, 2), (0,)), "shifts and dimensions must align"),
    (lambda lib: lib.roll(lib.zeros(2, 3), (1, 2)), "shifts and dimensions must align"),
    (lambda lib: lib.roll(lib.tensor(1.0), 1, 0), "tensor has no dimensions"),
    (lambda lib: lib.tril(lib.zeros(3)), "must have at least 2 dimensions"),
    (lambda lib: lib.triu(lib.tensor(1.0)), "must have at least 2 dimensions"),
    (lambda lib: lib.movedim(lib.zeros(2, 3), (0, 1), (1,)), "same number of dims"),
    (lambda lib: lib.movedim(lib.zeros(2, 3), (0, 0), (1, 0)), "repeated dim in `source`"),
    (lambda lib: lib.movedim(lib.zeros(2, 3), (0, 1), (1, 1)), "repeated dim in `destination`"),
    (lambda lib: lib.movedim(lib.zeros(2, 3), 0, 3), "Dimension out of range"),
    (lambda lib: lib.zeros(2, 3).swapaxes(0, 2), "Dimension out of range"),
    (lambda lib: lib.zeros(2, 3).unflatten(1, (2, 2)), "don't multiply up to the size"),
    (lambda lib: lib.zeros(2, 3).unflatten(1, ()), "sizes must be non-empty"),
    (lambda lib: lib.zeros(2, 3).unflatten(2, (3,)), "Dimension out of range"),
    (lambda lib: lib.diag(lib.zeros(2, 2, 2)), "Supports 1D or 2D tensors. Got 3D"),
    (lambda lib: lib.diag(lib.tensor(1.0)), "Supports 1D or 2D tensors. Got 0D"),
    (lambda lib: lib.zeros(2, 3).reshape_as(lib.zeros(5)), "is invalid for input of size 6"),
    (lambda lib: pad_of(lib)(lib.zeros(2, 3), (1,)), "must be divisible by 2"),
    (lambda lib: pad_of(lib)(lib.zeros(2, 3), (1,) * 6), "less than or equal to two times"),
    (lambda lib: pad_of(lib)(lib.zeros(2, 3), (3, 3), mode="reflect"),
     "Padding size should be less than the corresponding input dimension"),
    (lambda lib: pad_of(lib)(lib.zeros(3), (1, 1), mode="reflect"), "not supported for 1D"),
    (lambda lib: pad_of(lib)(lib.zeros(2, 3), (1, 1, 1, 1), mode="replicate"),
     "not supported for 2D"),
    (lambda lib: pad_of(lib)(lib.zeros(2, 3), (1, 1), mode="bogus"),
     "Unrecognised padding mode"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i: int) -> None:
    prog, phrase = ERRORS[i]
    same(prog, phrase)


def test_declared() -> None:
    assert rg.Tensor.new_zeros is layout.new_zeros
    assert not hasattr(rg, "new_zeros")
    assert rg.flip is layout.flip and rg.Tensor.tril is layout.tril
