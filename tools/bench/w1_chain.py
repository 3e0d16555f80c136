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


def _metrics(wall: tuple[float, ...], cpu: tuple[float, ...], nodes: int) -> Metrics:
    """Wall-clock per node (the headline) and process CPU time per node: the arrays are tiny
    and single-threaded, so on an idle machine the two agree, and on a shared one the CPU time
    is the steadier of the two."""
    return {
        "fwd_us_per_node": (wall[1] - wall[0]) / nodes * 1e6,
        "bwd_us_per_node": (wall[2] - wall[1]) / nodes * 1e6,
        "fwd_cpu_us_per_node": (cpu[1] - cpu[0]) / nodes * 1e6,
        "bwd_cpu_us_per_node": (cpu[2] - cpu[1]) / nodes * 1e6,
    }


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
        c0, t0 = time.process_time(), time.perf_counter()
        y = self._forward(self.steps)
        self.ad.sync()
        c1, t1 = time.process_time(), time.perf_counter()
        y.sum().backward()
        self.ad.sync()
        c2, t2 = time.process_time(), time.perf_counter()
        del y
        return _metrics((t0, t1, t2), (c0, c1, c2), 3 * self.steps)

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
        c0, t0 = time.process_time(), time.perf_counter()
        saved = self._forward(self.steps)
        c1, t1 = time.process_time(), time.perf_counter()
        self._backward(saved)
        c2, t2 = time.process_time(), time.perf_counter()
        return _metrics((t0, t1, t2), (c0, c1, c2), 3 * self.steps)

    def outputs(self) -> dict[str, np.ndarray]:
        saved = self._forward(self.steps)
        return {"loss": np.asarray(saved[-1].sum()), "x.grad": self._backward(saved)}


def make_case(lib: str, params: dict, ad: Any) -> Case:
    return NumpyChain(params) if lib == "numpy" else AutogradChain(ad, params)
