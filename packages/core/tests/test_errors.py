"""Bad input: each test checks the error class and that the message names the culprit."""

import numpy as np
import pytest

import retrograd as rg
from retrograd.autograd import Engine, Function
from retrograd.backends import Backend, register_backend, unregister_backend


@pytest.fixture
def other_device():
    """A second real backend (array-api-strict) so tensors can live on two devices."""
    xp = pytest.importorskip("array_api_strict")
    register_backend("strict", Backend("strict", xp))
    yield "strict"
    unregister_backend("strict")


def test_backward_on_tensor_without_grad():
    with pytest.raises(rg.RetrogradError, match=r"does not require grad.*shape \(2,\)"):
        rg.ones(2).sum().backward() if False else rg.ones(2).backward(rg.ones(2))


def test_backward_without_gradient_on_several_elements():
    y = rg.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(rg.RetrogradError, match=r"scalar outputs.*\(2, 3\)"):
        y.backward()


def test_seed_of_wrong_shape():
    y = rg.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(2, 3\)"):
        y.backward(rg.ones(3, 2))


def test_seed_of_another_dtype_is_cast_to_the_roots():
    # PyTorch casts the seed (test_parity_engine compares it with torch)
    x = rg.ones(2, requires_grad=True)
    (x * 2).backward(rg.ones(2, dtype=rg.float64))
    assert x.grad.dtype is rg.float32 and x.grad.tolist() == [2.0, 2.0]


def test_seed_of_wrong_device(other_device):
    y = rg.ones(2, requires_grad=True) * 2
    with pytest.raises(rg.RetrogradError, match="strict.*cpu"):
        y.backward(rg.ones(2, device=other_device))


def test_second_backward_after_release():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(rg.GraphFreedError, match=r"retain_graph=True.*SumBackward0"):
        y.backward()


def test_inplace_change_of_saved_tensor():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = (h * h).sum()
    h.add_(1)  # recorded (grad mode on) but still modifies what MulBackward0 saved
    with pytest.raises(rg.VersionMismatch, match=r"MulBackward0.*\(2,\).*version 1.*version 0"):
        y.backward()
    assert x.grad is None


def test_inplace_on_leaf_requiring_grad():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(rg.RetrogradError, match=r"add_.*leaf.*\(2,\).*requires grad"):
        x.add_(1)
    assert x._version == 0 and x.tolist() == [1.0, 2.0]
    with rg.no_grad():
        x.add_(1)
    assert x._version == 1 and x.tolist() == [2.0, 3.0]


def test_create_graph_through_function_without_double_backward():
    from retrograd.autograd import once_differentiable

    class Cube(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a * a

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * a * a

    # as in PyTorch, the first order works under create_graph; differentiating the result
    # again is what fails (test_parity_function compares the error with torch's)
    x = rg.tensor(2.0, requires_grad=True)
    (g,) = rg.autograd.grad(Cube.apply(x), x, create_graph=True)
    assert g.item() == 12.0
    y = Cube.apply(x)
    (g,) = rg.autograd.grad(y, x, rg.ones((), requires_grad=True), create_graph=True)
    with pytest.raises(rg.RetrogradError, match="differentiate twice"):
        g.backward()


def test_unused_input_to_grad():
    x = rg.tensor(1.0, requires_grad=True)
    z = rg.ones(3, requires_grad=True)
    with pytest.raises(rg.RetrogradError, match=r"index 1 .*allow_unused.*shape \(3,\)"):
        rg.autograd.grad(x * 2, [x, z])
    gx, gz = rg.autograd.grad(x * 2, [x, z], materialize_grads=True)
    assert gx.item() == 2.0 and gz.tolist() == [0.0, 0.0, 0.0]


class _WrongCount(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g


class _WrongShape(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return rg.ones(5)


def test_node_returning_wrong_number_of_gradients():
    a = rg.ones(2, requires_grad=True)
    b = rg.ones(2, requires_grad=True)
    with pytest.raises(rg.RetrogradError, match=r"_WrongCountBackward.*expected 2, got 1"):
        _WrongCount.apply(a, b).sum().backward()
    assert a.grad is None and b.grad is None


def test_node_returning_gradient_of_wrong_shape():
    a = rg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"_WrongShapeBackward.*\[5\].*\[2\]"):
        _WrongShape.apply(a).sum().backward()
    assert a.grad is None


def test_none_root_or_input_to_engine():
    x = rg.tensor(1.0, requires_grad=True)
    with pytest.raises(rg.RetrogradError, match="root is None"):
        Engine.backward(None)
    with pytest.raises(rg.RetrogradError, match="root is None"):
        Engine.grad(None, [x])
    with pytest.raises(rg.RetrogradError, match="input 1 is None"):
        Engine.grad(x * 2, [x, None])
    with pytest.raises(TypeError, match="never instantiated"):
        Engine()


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "maximum", "where"])
def test_ops_on_shapes_that_do_not_broadcast(op):
    a, b = rg.ones(3, 4), rg.ones(5)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(5,\)"):
        if op == "where":
            rg.where(rg.ones(3, 4) > 0, a, b)
        else:
            getattr(rg, op)(a, b)


def test_matmul_shape_error_names_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        rg.ones(2, 3) @ rg.ones(4, 5)


def test_setting_grad_of_wrong_shape():
    x = rg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[3, 2\].*\[2, 3\]"):
        x.grad = rg.ones(3, 2)
    assert x.grad is None
    with pytest.raises(TypeError, match="Tensor or None"):
        x.grad = np.ones((2, 3))
    with pytest.raises(TypeError, match="float64.*float32"):
        x.grad = rg.ones(2, 3, dtype=rg.float64)


def test_mixed_devices_name_both(other_device):
    a = rg.ones(2)
    b = rg.ones(2, device=other_device)
    with pytest.raises(rg.RetrogradError, match=r"cpu.*strict|strict.*cpu"):
        a + b


def test_numpy_on_other_device_says_cpu(other_device):
    t = rg.ones(2, device=other_device)
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        t.numpy()
    assert t.cpu().numpy().tolist() == [1.0, 1.0]


def test_requires_grad_on_integer_tensor():
    with pytest.raises(rg.RetrogradError, match="floating point.*int64"):
        rg.tensor([1, 2], requires_grad=True)


def test_unknown_device():
    with pytest.raises(ValueError, match="unknown device/backend 'tpu'"):
        rg.ones(2, device="tpu")
    with pytest.raises(ValueError, match="invalid device string"):
        rg.ones(2, device="cpu:x")


class _TwoDevices(Backend):
    """NumPy arrays on two devices, 0 and 1: the arrays put on device 1 are kept in a list
    (held, so that no other array can take one's identity; a real multi-device backend --
    CuPy -- asks the array). The device checks of the ops compare
    devices only on a backend like this one (``Backend.multi_device``)."""

    def __init__(self) -> None:
        super().__init__("twodev", np)
        self.on_device_1: list = []

    def device_index(self, array):
        return 1 if any(a is array for a in self.on_device_1) else 0


@pytest.fixture
def two_devices():
    be = _TwoDevices()
    register_backend("twodev", be)
    yield be
    unregister_backend("twodev")


def test_multi_device_is_known_from_device_index(two_devices):
    assert two_devices.multi_device
    assert not rg.ones(1).backend.multi_device
    assert not Backend("plain", np).multi_device


def test_ops_refuse_operands_on_two_devices_of_one_backend(two_devices):
    def on(device_index, *shape, dtype=rg.float64, requires_grad=False):
        t = rg.ones(*shape, device="twodev", dtype=dtype, requires_grad=requires_grad)
        if device_index == 1:
            two_devices.on_device_1.append(t._data)
        return t

    x, w, b = on(0, 4, 3), on(1, 2, 3, requires_grad=True), on(0, 2)
    cases = {
        "linear": lambda: rg.nn.functional.linear(x, w, b),
        "matmul": lambda: x @ on(1, 3, 2),
        "mul": lambda: x * on(1, 4, 3),
        "add": lambda: on(1, 4, 3) + x,
        "cross_entropy": lambda: rg.nn.functional.cross_entropy(
            on(0, 4, 3), on(1, 4, dtype=rg.int64)),
        "cat": lambda: rg.cat([x, on(1, 4, 3)]),
        "where": lambda: rg.where(on(0, 4, 3) > 0, x, on(1, 4, 3)),
        "add_": lambda: x.add_(on(1, 4, 3)),
    }
    for op, call in cases.items():
        with pytest.raises(rg.RetrogradError, match=rf"{op}.*twodev:0.*twodev:1|"
                                                    rf"{op}.*twodev:1.*twodev:0"):
            call()
    assert (x._data == 1).all()  # add_ left it unchanged
    assert w.grad is None
    # one device: all of them run
    y = rg.nn.functional.linear(x, on(0, 2, 3, requires_grad=True), b) * on(0, 4, 2)
    assert y.shape == (4, 2)
