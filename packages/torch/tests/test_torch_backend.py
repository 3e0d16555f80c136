"""retrograd-torch: the whole conformance suite on ``device="torch"`` (the generated programs
cut to 100 to keep the test session short; ``nox -s conformance`` runs the full 500), its
declared capabilities, and a training step equal to the cpu backend's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from retrograd_torch import backend

import retrograd as rg
from retrograd.backends.capabilities import verify
from retrograd_conformance.testing import assert_suite_passes, assert_training_matches_cpu


def test_the_whole_conformance_suite_passes_on_the_torch_backend():
    assert_suite_passes("torch", fuzz=100)


def test_declared_capabilities_hold():
    assert verify(backend) == {"inplace": None, "dtypes": None, "memory": None}


def test_tensors_are_torch_tensors_and_a_step_equals_the_cpu_backend():
    assert_training_matches_cpu("torch", array_type=torch.Tensor)


def test_the_cuda_backend_is_registered_and_says_why_it_is_unavailable():
    from retrograd_torch import cuda_backend

    assert "torch_cuda" in rg.available_backends()
    assert cuda_backend.capabilities.memory == "device"
    assert cuda_backend.is_available() == torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert "sees no CUDA device" in cuda_backend.unavailable_reason()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")
def test_a_step_on_torch_cuda_equals_the_cpu_backend():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 5))
    grads = []
    for device in ("cpu", "torch_cuda"):
        rg.manual_seed(0)
        net = rg.nn.Sequential(rg.nn.Linear(5, 7), rg.nn.Tanh(), rg.nn.Linear(7, 1)).double()
        net.to(device)
        net(rg.tensor(x, device=device)).sum().backward()
        if device == "torch_cuda":
            assert net[0].weight._data.is_cuda
        grads.append([p.grad.cpu().numpy() for p in net.parameters()])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
