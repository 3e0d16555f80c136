"""A tensor prints as PyTorch prints it: the same text, once ``torch.``/``retrograd.`` is
taken out of dtype names -- four decimals, whole floats as ``1.``, scientific notation when
the magnitudes span more than 1000x, one width per tensor, rows wrapped at 80 columns, large
tensors summarized, and the ``size=``/``dtype=``/``grad_fn=``/``requires_grad=`` suffixes."""

from __future__ import annotations

import pytest
import torch

import retrograd as rg

CASES = [
    lambda L: L.tensor([1.5410, -0.2934, -2.1788]),
    lambda L: L.tensor([1.0, 2.0, 3.0]),
    lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]),
    lambda L: L.tensor(3.5),
    lambda L: L.tensor(3),
    lambda L: L.tensor([True, False]),
    lambda L: L.tensor([1e-5, 1.0]),
    lambda L: L.tensor([1e9, 1.0]),
    lambda L: L.tensor([1.0, float("nan"), float("inf"), 0.0]),
    lambda L: L.tensor([float("nan")]),
    lambda L: L.tensor([0.0, 0.0]),
    lambda L: L.tensor([1.5, 2.25], dtype=L.float64),
    lambda L: L.tensor([1, 2], dtype=L.int32),
    lambda L: L.zeros(0, 3),
    lambda L: L.tensor([]),
    lambda L: L.zeros(2, 0, dtype=L.int32),
    lambda L: L.arange(24.0).reshape(2, 3, 4) / 7,
    lambda L: L.arange(2000.0) / 3,
    lambda L: L.arange(3000).reshape(30, 100),
    lambda L: L.arange(40.0) * 1.37,
    lambda L: L.tensor([1.5, -2.0], requires_grad=True),
    lambda L: L.tensor([1.5, -2.0], requires_grad=True) * 2,
    lambda L: (L.arange(30.0) * 3.123).requires_grad_() * 1,
    lambda L: L.tensor([12345.678, 0.5]),
    lambda L: L.tensor([-1.0, 1000.0]),
    lambda L: L.tensor([1.5, 2.0], dtype=L.float16),
    lambda L: L.tensor([[1, -200], [3, 4]]),
]


@pytest.mark.parametrize("case", CASES)
def test_prints_as_torch(case):
    want = repr(case(torch)).replace("torch.", "")
    got = repr(case(rg)).replace("retrograd.", "")
    assert got == want


def test_the_default_dtype_is_not_printed():
    rg.set_default_dtype(rg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(rg.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0]))
        assert repr(rg.tensor([1.5], dtype=rg.float32)).replace("retrograd.", "") == \
            repr(torch.tensor([1.5], dtype=torch.float32)).replace("torch.", "")
    finally:
        rg.set_default_dtype(rg.float32)
        torch.set_default_dtype(torch.float32)
