"""The public API on ``device="cuda"``: the same core code on CuPy arrays, equal to the CPU.

Skipped, with the reason, where there is no GPU (a failure under ``RETROGRAD_REQUIRE_GPU=1``;
the ``multi_gpu`` ones need ``RETROGRAD_REQUIRE_GPU=2`` to fail on a one-GPU machine).
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
import retrograd_cuda

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def test_creation_and_round_trip(cp):
    x = rg.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    assert x.device == "cuda" and str(x.device) == "cuda:0"
    assert isinstance(x._data, cp.ndarray)
    assert x.backend is retrograd_cuda.backend
    assert x.dtype is rg.float32
    back = x.cpu()
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    for make in (rg.zeros, rg.ones, rg.randn, rg.rand, rg.empty):
        t = make(3, 5, device="cuda")
        assert t.shape == (3, 5) and t.device == "cuda"
    assert rg.arange(5, device="cuda").cpu().tolist() == [0, 1, 2, 3, 4]


def test_to_cuda_and_cuda_method_and_index(cp):
    a = rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64)
    for b in (a.to("cuda"), a.cuda(), a.cuda(0), a.to("cuda:0")):
        assert b.device == "cuda:0" and b.dtype is rg.float64
        assert b._data.device.id == 0
        np.testing.assert_array_equal(b.cpu().numpy(), a.numpy())


def test_numpy_on_gpu_tensor_says_cpu(cp):
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        rg.zeros(2, device="cuda").numpy()


def test_mixed_devices_raise_naming_both(cp):
    with pytest.raises((RuntimeError, ValueError)) as info:
        rg.zeros(2, device="cuda") + rg.zeros(2)
    assert "cuda" in str(info.value) and "cpu" in str(info.value)


def test_missing_device_index_is_named(cp):
    n = cp.cuda.runtime.getDeviceCount()
    with pytest.raises(ValueError, match=f"cuda:{n} does not exist"):
        rg.zeros(2, device=f"cuda:{n}")


@pytest.mark.multi_gpu
@pytest.mark.usefixtures("two_gpus")
def test_second_gpu_runs_every_op_on_its_own_device(cp):
    """Defect 2: with cuda:0 current, ops and fused kernels on cuda:1 arrays run on cuda:1
    (the output is there, no peer access is needed) and give cuda:0's results."""
    a = rg.tensor([1.0, 2.0], device="cuda:1", requires_grad=True)
    assert a.device == "cuda:1" and a._data.device.id == 1
    (a * a).sum().backward()
    assert a.grad.device == "cuda:1" and a.grad._data.device.id == 1
    np.testing.assert_allclose(a.grad.cpu().numpy(), [2.0, 4.0])
    b = a.detach().to("cuda:0")
    assert b.device == "cuda:0"
    assert cp.cuda.runtime.getDevice() == 0
    on0 = _mlp_grads("cuda:0", True, "relu")
    on1 = _mlp_grads("cuda:1", True, "relu")
    for x0, x1 in zip(on0, on1):
        np.testing.assert_array_equal(x0, x1)


def _mlp_grads(device, fuse, act, dtype=rg.float64):
    """A 3-layer MLP whose first layer takes data (x needs no gradient, so its node saves no
    weight): act(L1) -> act(L2) -> L3 -> cross-entropy. Returns the parameters' gradients."""
    rng = np.random.default_rng(0)
    x = rg.tensor(rng.standard_normal((37, 33)), dtype=dtype, device=device)
    target = rg.tensor(rng.integers(0, 7, size=37), device=device)
    shapes = [(65, 33), (65,), (40, 65), (40,), (7, 40), (7,)]
    params = [rg.tensor(rng.standard_normal(shape) * 0.3, dtype=dtype, device=device,
                        requires_grad=True) for shape in shapes]
    h = x
    for i in range(3):
        h = F.linear(h, params[2 * i], params[2 * i + 1])
        if i < 2:
            h = getattr(F, act)(h)
    loss = F.cross_entropy(h, target)
    rg.autograd.Engine.backward(loss, fuse=fuse)
    for p in params:
        assert p.grad.device == device
    return [p.grad.cpu().numpy() for p in params]


def _calls_during(fn, *args):
    """``fn(*args)`` and the fused kernels' path counts it added (``fused.CALLS``)."""
    from retrograd_cuda.kernels.fused import CALLS  # imports CuPy: only once a GPU is known

    before = CALLS.copy()
    out = fn(*args)
    return out, {k: CALLS[k] - before[k] for k in CALLS if CALLS[k] != before[k]}


@pytest.mark.parametrize("act", ["relu", "tanh", "sigmoid"])
def test_mlp_fused_equals_unfused_equals_cpu(cp, act):
    """The fused walk really runs the fused kernel, for both layers (the first has data input);
    the unfused walk never does: "fused equals unfused" compares two different code paths."""
    cpu = _mlp_grads("cpu", False, act)
    fused, ran_fused = _calls_during(_mlp_grads, "cuda", True, act)
    unfused, ran_unfused = _calls_during(_mlp_grads, "cuda", False, act)
    name = f"linear_{act}_backward"
    assert ran_fused.get(name) == 2 and f"{name}:fallback" not in ran_fused, ran_fused
    assert name not in ran_unfused and ran_unfused.get(f"{act}_backward") == 2, ran_unfused
    assert ran_fused.get("cross_entropy_backward") == 1 == ran_unfused.get("cross_entropy_backward")
    for c, f, u in zip(cpu, fused, unfused):
        np.testing.assert_allclose(f, u, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(f, c, rtol=1e-10, atol=1e-12)


def test_mlp_float32_fused_and_unfused_within_the_documented_tolerance(cp):
    fused, ran = _calls_during(_mlp_grads, "cuda", True, "relu", rg.float32)
    unfused = _mlp_grads("cuda", False, "relu", rg.float32)
    assert ran.get("linear_relu_backward") == 2
    for f, u in zip(fused, unfused):
        np.testing.assert_allclose(f, u, rtol=2e-6, atol=1e-7)


def test_grad_accumulates_in_place_on_gpu(cp):
    x = rg.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    first = x.grad
    ptr = first._data.data.ptr
    y.backward()
    assert x.grad._data.data.ptr == ptr
    np.testing.assert_allclose(x.grad.cpu().numpy(), [4.0, 8.0])


OPS = {
    "arith": lambda a, b: ((a + b) * a - b / (a.abs() + 1) + 2 ** a.tanh()).sum(),
    "unary": lambda a, b: (a.exp() + (a.abs() + 1).log() + (a.abs() + 1).sqrt() + a.sin()
                           + a.cos() + a.sigmoid() + a.relu() + -a).sum() * b.tanh().sum(),
    "clamp_where": lambda a, b: (rg.clamp(a, -0.5, 0.5) + rg.where(a > b, a, b)
                                 + rg.maximum(a, b) * rg.minimum(a, b)).sum(),
    "matmul": lambda a, b: (a @ b.T).sum() + (a[0] @ b[1]),
    "reductions": lambda a, b: ((a.sum(0) * a.mean(1, keepdim=True).sum()).sum() + rg.amax(a, 1).sum()
                                + rg.logsumexp(b, 1).sum()),
    "shapes": lambda a, b: (a.reshape(4, 3).T.permute(1, 0).transpose(0, 1).unsqueeze(0)
                            .squeeze(0).flatten() * b.view(12)).sum()
                           + a.unsqueeze(0).expand(2, 3, 4).sum(),
    "index": lambda a, b: ((a[1] * b[:, 2].sum()).sum() + a[rg.tensor([0, 2, 2], device=a.device)].sum()
                           + a[a > 0].sum() + a[None, ..., 1:3].sum()),
    "cat_stack": lambda a, b: (rg.cat([a, b], 0) ** 2).sum() + rg.stack([a, b], 1).sum(),
    "nn": lambda a, b: (F.softmax(a, 1) * b).sum() + (F.log_softmax(a, 0) * b).sum()
                       + F.mse_loss(a, b) + F.cross_entropy(a, rg.tensor([0, 3, 1],
                                                                          device=a.device)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_family_matches_cpu(cp, name):
    rng = np.random.default_rng(7)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    results = {}
    for device in ("cpu", "cuda"):
        a = rg.tensor(a0, dtype=rg.float64, device=device, requires_grad=True)
        b = rg.tensor(b0, dtype=rg.float64, device=device, requires_grad=True)
        out = OPS[name](a, b)
        out.backward()
        results[device] = [out.item(), a.grad.cpu().numpy(), b.grad.cpu().numpy()]
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-10)
    for g_cuda, g_cpu in zip(results["cuda"][1:], results["cpu"][1:]):
        np.testing.assert_allclose(g_cuda, g_cpu, rtol=1e-10, atol=1e-12)


def test_repeated_integer_indices_accumulate(cp):
    """index_backward uses a scatter-add on the GPU: repeated indices must add up."""
    x = rg.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    x[rg.tensor([0, 2, 2, 2], device="cuda")].sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [1.0, 0.0, 3.0])
    y = rg.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda", requires_grad=True)
    (y[y > 1.5] * 2).sum().backward()
    np.testing.assert_array_equal(y.grad.cpu().numpy(), [[0.0, 2.0], [2.0, 2.0]])


def test_double_backward_on_gpu(cp):
    x = rg.tensor(2.0, dtype=rg.float64, device="cuda", requires_grad=True)
    (g,) = rg.autograd.grad(5 * x * x, x, create_graph=True)
    (h,) = rg.autograd.grad(g, x)
    assert g.item() == 20.0 and h.item() == 10.0
    assert h.device == "cuda"


def test_version_check_and_in_place_on_gpu(cp):
    x = rg.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = x * x
    with rg.no_grad():
        x.add_(1)
    with pytest.raises(rg.VersionMismatch):
        y.backward(rg.ones(2, device="cuda"))
