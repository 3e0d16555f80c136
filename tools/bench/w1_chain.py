"""W1: a deep chain ``y = tanh(y * 1.0001 + 0.001)``, x of shape (16,), three nodes per step.

The per-node cost of the engine itself: the arrays are tiny, so the time is the library's
bookkeeping (node creation in forward, the walk in backward). Reported in microseconds per node,
nodes = 3 * steps (the final ``sum`` and the leaf's accumulation are not counted). The 10^6-node
chain (workload "W1-1e6") is this workload at 333,334 steps.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics, dtype_of, rng

WIDTH = 16


def _x0(params: dict) -> np.ndarray:
    return (rng(1).standard_normal(WIDTH) * 0.5).astype(dtype_of(params))


class AutogradChain(Case):
    def __init__(self, ad: Any, params: dict) -> None:
        self.ad = ad
        self.steps = int(params["steps"])
        self.warm_steps = min(self.steps, 10_000)
        self.x = ad.tensor(_x0(params), requires_grad=True)

    def _forward(self, steps: int) -> Any:
        tanh = self.ad.mod.tanh
        y = self.x
        for _ in range(steps):
            y = tanh(y * 1.0001 + 0.001)
        return y

    def warmup(self) -> None:
        self._forward(self.warm_steps).sum().backward()
        self.x.grad = None

    def rep(self) -> Metrics:
        self.x.grad = None
        gc.collect()
        t0 = time.perf_counter()
        y = self._forward(self.steps)
        self.ad.sync()
        t1 = time.perf_counter()
        y.sum().backward()
        self.ad.sync()
        t2 = time.perf_counter()
        del y
        nodes = 3 * self.steps
        return {
            "fwd_us_per_node": (t1 - t0) / nodes * 1e6,
            "bwd_us_per_node": (t2 - t1) / nodes * 1e6,
        }

    def outputs(self) -> dict[str, np.ndarray]:
        self.x.grad = None
        y = self._forward(self.steps)
        loss = y.sum()
        loss.backward()
        return {"loss": self.ad.to_numpy(loss), "x.grad": self.ad.to_numpy(self.x.grad)}


class NumpyChain(Case):
    """The floor: the same arithmetic, the tanh outputs kept by hand, the chain rule by hand."""

    def __init__(self, params: dict) -> None:
        self.steps = int(params["steps"])
        self.warm_steps = min(self.steps, 10_000)
        self.x = _x0(params)

    def _forward(self, steps: int) -> list[np.ndarray]:
        saved = []
        y = self.x
        for _ in range(steps):
            y = np.tanh(y * 1.0001 + 0.001)
            saved.append(y)
        return saved

    @staticmethod
    def _backward(saved: list[np.ndarray]) -> np.ndarray:
        g = np.ones_like(saved[-1])  # d sum(y) / dy
        for y in reversed(saved):
            g = g * (1.0 - y * y)  # tanh: dy/db = 1 - y^2
            g = g * 1.0001  # the add passes g through; the mul scales it
        return g

    def warmup(self) -> None:
        self._backward(self._forward(self.warm_steps))

    def rep(self) -> Metrics:
        gc.collect()
        t0 = time.perf_counter()
        saved = self._forward(self.steps)
        t1 = time.perf_counter()
        self._backward(saved)
        t2 = time.perf_counter()
        nodes = 3 * self.steps
        return {
            "fwd_us_per_node": (t1 - t0) / nodes * 1e6,
            "bwd_us_per_node": (t2 - t1) / nodes * 1e6,
        }

    def outputs(self) -> dict[str, np.ndarray]:
        saved = self._forward(self.steps)
        return {"loss": np.asarray(saved[-1].sum()), "x.grad": self._backward(saved)}


def make_case(lib: str, params: dict, ad: Any) -> Case:
    return NumpyChain(params) if lib == "numpy" else AutogradChain(ad, params)
