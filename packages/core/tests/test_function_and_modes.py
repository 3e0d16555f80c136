"""Custom Functions, grad modes (thread-local), creation and the Tensor surface."""

import threading

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import Function, gradcheck, gradgradcheck


class Cube(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None


class SplitTwo(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


def test_function_first_and_second_derivative():
    x = rg.tensor([0.5, -1.2], dtype=rg.float64, requires_grad=True)
    assert gradcheck(lambda t: Cube.apply(t, 2.0), [x])
    assert gradgradcheck(lambda t: Cube.apply(t, 2.0), [x])
    y = Cube.apply(x, 1.0)
    assert y.grad_fn.name() == "CubeBackward"
    assert y.grad_fn.needs_input_grad == (True, False)


def test_function_multiple_outputs():
    x = rg.tensor(1.0, requires_grad=True)
    a, b = SplitTwo.apply(x)
    (a + b * 10).backward()
    assert x.grad.item() == 32.0


def test_function_saved_tensor_version_checked():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = Cube.apply(h, 1.0)
    with rg.no_grad():
        h.add_(1)
    with pytest.raises(rg.VersionMismatch, match="CubeBackward"):
        y.sum().backward()


def test_function_constructor_refused():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Cube()  # as in PyTorch: instantiating warns, calling the instance raises
    with pytest.raises(rg.RetrogradError, match=r"Cube.apply"):
        f(rg.ones(1))


def test_grad_mode_is_thread_local():
    seen = {}
    stop = threading.Event()

    def other():
        seen["start"] = rg.is_grad_enabled()
        stop.wait(5)
        seen["end"] = rg.is_grad_enabled()

    t = threading.Thread(target=other)
    with rg.no_grad():
        t.start()
        assert not rg.is_grad_enabled()
        stop.set()
        t.join()
    assert seen == {"start": True, "end": True}


def test_grad_mode_switches():
    x = rg.ones(2, requires_grad=True)
    with rg.no_grad():
        assert (x * 2).grad_fn is None
        with rg.enable_grad():
            assert (x * 2).grad_fn is not None
    rg.set_grad_enabled(False)
    assert not rg.is_grad_enabled()
    rg.set_grad_enabled(True)
    with rg.set_grad_enabled(False):
        assert (x * 2).requires_grad is False
    assert rg.is_grad_enabled()

    @rg.no_grad()
    def f():
        return x * 2

    assert f().grad_fn is None


def test_creation_dtypes_follow_pytorch():
    assert rg.tensor(1.0).dtype is rg.float32
    assert rg.tensor(1).dtype is rg.int64
    assert rg.tensor(True).dtype is rg.bool
    assert rg.tensor([[1, 2], [3, 4.5]]).dtype is rg.float32
    assert rg.tensor(np.ones(2)).dtype is rg.float64
    assert rg.zeros(2, 3).shape == (2, 3) and rg.zeros(2, 3).dtype is rg.float32
    assert rg.arange(5).dtype is rg.int64 and rg.arange(0.0, 1.0, 0.25).tolist() == \
        [0.0, 0.25, 0.5, 0.75]
    assert rg.linspace(0, 1, 3).tolist() == [0.0, 0.5, 1.0]
    assert rg.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert rg.ones_like(rg.zeros(2, dtype=rg.float64)).dtype is rg.float64
    rg.manual_seed(3)
    a = rg.randn(4)
    rg.manual_seed(3)
    assert a.tolist() == rg.randn(4).tolist()
    assert (0 <= rg.rand(100)).numpy().all() and (rg.rand(100) < 1).numpy().all()


def test_python_scalars_do_not_promote():
    x = rg.ones(2)
    assert (x * 2.0).dtype is rg.float32 and (2 ** x).dtype is rg.float32


def test_tensor_surface():
    x = rg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert x.shape == (2, 2) and x.ndim == 2 and x.size() == (2, 2) and x.size(1) == 2
    assert x.numel() == 4 and x.is_leaf and x.grad_fn is None and x._version == 0
    y = (x * 2).sum()
    assert not y.is_leaf and y.item() == 20.0 and y.tolist() == 20.0
    assert x.detach().requires_grad is False
    assert x.clone().grad_fn.name() == "CloneBackward0"
    assert x.to(rg.float64).dtype is rg.float64 and x.double().dtype is rg.float64
    with pytest.raises(rg.RetrogradError, match="detach"):
        x.numpy()
    d = (x * 1).detach_()
    assert d.is_leaf and not d.requires_grad
    assert "requires_grad=True" in repr(x)
    z = rg.ones(2).requires_grad_()
    assert z.requires_grad
    with pytest.raises(rg.RetrogradError, match="leaf"):
        (z * 1).requires_grad = False


def test_to_dtype_is_differentiable():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.to(rg.float64) * 3).sum()
    y.backward()
    assert x.grad.dtype is rg.float32 and x.grad.tolist() == [3.0, 3.0]


def test_deepcopy_and_pickle_leaves():
    import copy
    import pickle

    t = rg.tensor([1.0, 2.0], requires_grad=True)
    t.grad = rg.tensor([0.5, 0.5])
    c = copy.deepcopy(t)
    assert c is not t and c.tolist() == [1.0, 2.0] and c.requires_grad and c.grad.tolist() == \
        [0.5, 0.5]
    with rg.no_grad():
        c.add_(1)
    assert t.tolist() == [1.0, 2.0]  # its own memory
    p = pickle.loads(pickle.dumps(t))
    assert p.tolist() == [1.0, 2.0] and p.requires_grad and p.is_leaf
    with pytest.raises(rg.RetrogradError, match="leaf"):
        copy.deepcopy(t * 2)
