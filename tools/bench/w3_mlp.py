"""W3: MLP 784-1024-1024-10, ReLU, mean softmax cross-entropy; forward+backward per step.

Reported: step milliseconds, and its forward / backward parts. retrograd runs it with backward
fusion on and off (the subject's ``fusion`` parameter, applied by child.py) to show what the
fused Linear+activation nodes gain.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics
from mlp import AutogradMLP, NumpyMLP

DIMS = [784, 1024, 1024, 10]


class AutogradStep(Case):
    def __init__(self, ad: Any, params: dict) -> None:
        self.ad = ad
        self.model = AutogradMLP(ad, params)

    def rep(self) -> Metrics:
        self.model.zero_grad()
        gc.collect()
        t0 = time.perf_counter()
        loss = self.model.forward()
        self.ad.sync()
        t1 = time.perf_counter()
        loss.backward()
        self.ad.sync()
        t2 = time.perf_counter()
        return {"step_ms": (t2 - t0) * 1e3, "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}

    def outputs(self) -> dict[str, np.ndarray]:
        return self.model.outputs()


class NumpyStep(Case):
    def __init__(self, params: dict) -> None:
        self.model = NumpyMLP(params)

    def rep(self) -> Metrics:
        self.model.grads = []
        gc.collect()
        t0 = time.perf_counter()
        _, state = self.model.forward()
        t1 = time.perf_counter()
        self.model.grads = self.model.backward(state)
        t2 = time.perf_counter()
        return {"step_ms": (t2 - t0) * 1e3, "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}

    def outputs(self) -> dict[str, np.ndarray]:
        return self.model.outputs()


def make_case(lib: str, params: dict, ad: Any) -> Case:
    params = {"dims": DIMS, **params}
    return NumpyStep(params) if lib == "numpy" else AutogradStep(ad, params)
