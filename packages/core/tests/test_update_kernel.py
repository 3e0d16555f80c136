"""The optimizers' update kernel ``fma_rounded_once``: the NumPy backend runs the reference
kernel chunk by chunk (backends/chunked.py); the result must be the reference's, bit for bit,
whatever the size (chunk boundaries included), the dtype and the mix of arrays and numbers --
and it must be what torch's fused CPU update gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg
from retrograd.backends.chunked import CHUNK
from retrograd.backends.reference import reference_kernels

REFERENCE = reference_kernels(np)["fma_rounded_once"]
CPU = rg.get_backend("cpu")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [7, CHUNK, CHUNK + 1, 3 * CHUNK + 17])
@pytest.mark.parametrize("form", ["array*number", "number*array", "array*array", "0d*array"])
def test_chunked_equals_reference(dtype, n, form):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    c = rng.standard_normal(n).astype(dtype)
    x, y = {"array*number": (a, -0.37), "number*array": (0.9, b), "array*array": (a, b),
            "0d*array": (np.asarray(a[0]), b)}[form]
    got = CPU.ops.fma_rounded_once(x, y, c)
    want = REFERENCE(x, y, c)
    assert got.dtype == want.dtype == c.dtype and got.shape == c.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sgd_update_on_a_large_parameter_matches_torch_bit_for_bit(dtype):
    """Several chunks' worth of one parameter: SGD with momentum, weight decay and nesterov,
    three steps, against torch.optim.SGD (its fused single-rounding update)."""
    g = torch.Generator().manual_seed(0)
    p0 = torch.randn(3 * CHUNK + 5, generator=g, dtype=dtype)
    grads = [torch.randn(3 * CHUNK + 5, generator=g, dtype=dtype) for _ in range(3)]
    tp = p0.clone().requires_grad_()
    rp = rg.tensor(p0.numpy(), requires_grad=True)
    kw = dict(lr=0.05, momentum=0.9, weight_decay=1e-3, nesterov=True)
    topt, ropt = torch.optim.SGD([tp], **kw), rg.optim.SGD([rp], **kw)
    for gr in grads:
        tp.grad = gr.clone()
        rp.grad = rg.tensor(gr.numpy())
        topt.step()
        ropt.step()
    np.testing.assert_array_equal(rp.detach().numpy(), tp.detach().numpy())
