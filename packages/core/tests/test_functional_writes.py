"""Writes on a backend whose arrays cannot be written in place (``Capabilities(inplace=False)``:
JAX, Dask): ``retrograd._writes`` replaces arrays instead, and a write through a view reaches
its base and every other view of it, as through shared memory in PyTorch.

The backend here is NumPy behind ``ArrayAPIBackend`` declared immutable: its in-place kernels
``assign_``/``accumulate_`` refuse, so a program that still wrote in place would raise. Each
program runs on torch and on that backend (and on the cpu backend), and their values and
gradients are compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.backends import ArrayAPIBackend, Capabilities

pytest.importorskip("array_api_compat")

DEVICE = "immutable_numpy_test"


@pytest.fixture(scope="module", autouse=True)
def immutable_backend():
    be = ArrayAPIBackend(np, name=DEVICE, capabilities=Capabilities(inplace=False))
    assert be.functional
    rg.register_backend(DEVICE, be)
    yield be
    rg.backends.unregister_backend(DEVICE)


def _views_written(lib, dev):
    x = lib.arange(12.0, **dev).reshape(3, 4)
    v = x[1]
    v.mul_(2)
    w = x[:, 2]
    w.add_(1)
    x.T[0].zero_()
    x[2, 1:3] = 7.0
    return x, v, w


def _view_of_a_view(lib, dev):
    x = lib.zeros(4, 6, **dev)
    a = x[1:]
    b = a[:, ::2]
    b.fill_(3.0)
    x.view(-1)[5:8].add_(1.0)
    d = x.diagonal()
    d.sub_(2.0)
    return x, a, b, d


def _base_written_views_follow(lib, dev):
    x = lib.ones(2, 3, **dev)
    v, t = x[0], x.t()
    x.mul_(5.0)
    x[1] = lib.tensor([1.0, 2.0, 3.0], **dev)
    return x, v, t


def _detached_alias(lib, dev):
    x = lib.ones(3, **dev)
    x.detach().add_(1.0)
    x.data.mul_(3.0)
    return (x,)


def _advanced_setitem(lib, dev):
    x = lib.zeros(5, 2, **dev)
    x[lib.tensor([0, 3], **dev)] = lib.tensor([[1.0, 2.0]], **dev)
    x[x > 1.5] = -1.0
    r = x[2:]
    r[lib.tensor([True, False, True], **dev)] = 9.0
    return x, r


def _recorded_through_views(lib, dev):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True, **dev)
    b = a * 1
    b[1:].mul_(a[:3])
    b.view(2, 2)[0].exp_()
    (b * lib.arange(4.0, **dev)).sum().backward()
    return b.detach(), a.grad


def _grads_accumulate(lib, dev):
    w = lib.tensor([0.5, -1.0], requires_grad=True, **dev)
    for _ in range(3):
        (w * w).sum().backward()
    g = w.grad
    alias = g.view(1, 2)
    (w.sum() * 2).backward()
    return w.grad, alias


def _optimizer_and_batchnorm(lib, dev):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(),
                            lib.nn.Linear(4, 1)).double()
    weights = [np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) for p in net.parameters()]
    with lib.no_grad():
        for p, v in zip(net.parameters(), weights, strict=True):
            p.copy_(lib.tensor(v))
    net.to(dev["device"])
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = lib.tensor(np.linspace(-2, 2, 24).reshape(8, 3), **dev)
    for _ in range(3):
        opt.zero_grad()
        net(x).pow(2).mean().backward()
        opt.step()
    return tuple(t.detach() for t in net.state_dict().values() if t.dtype.is_floating_point)


def _reshape_view_or_copy(lib, dev):
    """``reshape`` is a view only where the strides allow it; else a copy the write misses."""
    x = lib.arange(6.0, **dev).reshape(2, 3)
    x.t().reshape(-1).add_(100.0)  # a copy in PyTorch: x unchanged
    x[0].reshape(3, 1).mul_(-1.0)  # a view
    x.reshape(3, 2)[1:].reshape(-1).add_(0.5)  # a view of a view
    with_error = 0.0
    try:
        x.t().view(-1)
    except RuntimeError:
        with_error = 1.0
    return x, lib.tensor([with_error])


PROGRAMS = [_reshape_view_or_copy, _views_written, _view_of_a_view, _base_written_views_follow, _detached_alias,
            _advanced_setitem, _recorded_through_views, _grads_accumulate,
            _optimizer_and_batchnorm]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_writes_on_immutable_arrays_match_torch(program):
    expected = [t.detach().double().numpy() for t in program(torch, {"device": "cpu"})]
    for device in ("cpu", DEVICE):
        got = program(rg, {"device": device})
        assert len(got) == len(expected)
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            np.testing.assert_allclose(g.double().cpu().numpy(), e, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{device}: result {i}")


def test_the_in_place_kernels_are_never_called():
    be = rg.get_backend(DEVICE)
    x = rg.zeros(3, device=DEVICE)
    with pytest.raises(NotImplementedError, match="cannot be written in place"):
        be.ops.assign_(x._data, 1.0)  # the kernel refuses ...
    x[1:].add_(2.0)  # ... and the tensor-level write does not use it
    assert x.tolist() == [0.0, 2.0, 2.0]


def _function_outputs(lib, dev):
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class ViewOf(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[1:]

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.ones(3, **dev)
    y = Alias.apply(x)
    y.add_(1.0)
    z = ViewOf.apply(x)
    z.mul_(3.0)
    return x, y, z


def test_writes_through_custom_function_outputs_match_torch():
    expected = [t.numpy() for t in _function_outputs(torch, {"device": "cpu"})]
    for device in ("cpu", DEVICE):
        got = _function_outputs(rg, {"device": device})
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g.cpu().numpy(), e)


def test_a_view_of_unknown_derivation_refuses_to_be_written():
    x = rg.ones(4, device=DEVICE)
    v = x[1:]
    v._extra.data_chain = None  # as a view whose steps retrograd never saw
    with pytest.raises(NotImplementedError, match="immutable arrays"):
        v.add_(1.0)
    assert x.tolist() == [1.0, 1.0, 1.0, 1.0]
