import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # the shared harness: torch_parity.py

import retrograd as rg


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts with grad mode on and fusion at its default."""
    rg.autograd.set_fusion(True)
    with rg.enable_grad():
        yield
    rg.autograd.set_fusion(True)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
