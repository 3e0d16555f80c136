"""W4: peak RSS increase of one training step, MLP 784 -> 8 hidden layers of 2048 -> 10, batch 512.

What is measured: in a fresh process, with the parameters and the batch already allocated and the
gradients unset, the peak resident memory during one forward+backward minus the resident memory
just before it (memory.py). The gradients the step leaves behind (every weight's: ~236 MiB in
float64) are part of it for every library, as are the saved activations and the temporaries.

Warm-up: one step of a *narrow* model of the same depth (width 64), so that libraries, BLAS
thread buffers and dispatch caches are initialised, but no large buffer has been freed into the
allocator before the measured step: the measured step is the first large one, as in a real
process, and the result does not depend on how many steps ran before it.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics
from memory import measure_peak
from mlp import AutogradMLP, NumpyMLP

DIMS = [784] + [2048] * 8 + [10]
WARM_WIDTH = 64


def _warm_params(params: dict) -> dict:
    dims = params["dims"]
    return {**params, "dims": [dims[0]] + [WARM_WIDTH] * (len(dims) - 2) + [dims[-1]], "batch": 8}


class AutogradMemory(Case):
    def __init__(self, ad: Any, params: dict) -> None:
        self.ad = ad
        self.params = params
        self.model = AutogradMLP(ad, params)

    def warmup(self) -> None:
        small = AutogradMLP(self.ad, _warm_params(self.params))
        small.forward().backward()
        del small

    def _step(self) -> None:
        t0 = time.perf_counter()
        loss = self.model.forward()
        loss.backward()
        self.ad.sync()
        self.seconds = time.perf_counter() - t0

    def rep(self) -> Metrics:
        self.model.zero_grad()
        gc.collect()
        m = measure_peak(self._step)
        return {**m, "step_ms": self.seconds * 1e3}  # type: ignore[dict-item]

    def outputs(self) -> dict[str, np.ndarray]:
        return self.model.outputs()


class NumpyMemory(Case):
    def __init__(self, params: dict) -> None:
        self.params = params
        self.model = NumpyMLP(params)

    def warmup(self) -> None:
        NumpyMLP(_warm_params(self.params)).step()

    def _step(self) -> None:
        t0 = time.perf_counter()
        _, self.model.grads = self.model.step()
        self.seconds = time.perf_counter() - t0

    def rep(self) -> Metrics:
        self.model.grads = []
        gc.collect()
        m = measure_peak(self._step)
        return {**m, "step_ms": self.seconds * 1e3}  # type: ignore[dict-item]

    def outputs(self) -> dict[str, np.ndarray]:
        return self.model.outputs()


def make_case(lib: str, params: dict, ad: Any) -> Case:
    params = {"dims": DIMS, **params}
    return NumpyMemory(params) if lib == "numpy" else AutogradMemory(ad, params)
