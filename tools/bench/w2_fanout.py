"""W2: fan-out. ``u = x * x`` feeds K = 1000 branches ``(k * u).sum()`` that are added up.

Measures the engine where gradients *meet*: K contributions arrive at one node and are summed in
the pending map before it runs. x has shape (16,). Nodes: 1 (x*x) + 2K (mul, sum) + K-1 (adds).
Reported: forward+backward milliseconds, and forward / backward microseconds per node.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics, dtype_of, rng

WIDTH = 16


def _x0(params: dict) -> np.ndarray:
    return rng(2).standard_normal(WIDTH).astype(dtype_of(params))


def _nodes(k: int) -> int:
    return 1 + 2 * k + (k - 1)


def _metrics(wall: tuple[float, ...], cpu: tuple[float, ...], k: int) -> Metrics:
    """Wall-clock figures, plus process CPU time (steadier on a shared machine; see W1)."""
    nodes = _nodes(k)
    return {
        "step_ms": (wall[2] - wall[0]) * 1e3,
        "fwd_us_per_node": (wall[1] - wall[0]) / nodes * 1e6,
        "bwd_us_per_node": (wall[2] - wall[1]) / nodes * 1e6,
        "step_cpu_ms": (cpu[2] - cpu[0]) * 1e3,
        "bwd_cpu_us_per_node": (cpu[2] - cpu[1]) / nodes * 1e6,
    }


class AutogradFanout(Case):
    def __init__(self, ad: Any, params: dict) -> None:
        self.ad = ad
        self.k = int(params["k"])
        self.x = ad.tensor(_x0(params), requires_grad=True)

    def _forward(self) -> Any:
        u = self.x * self.x
        total = (1 * u).sum()
        for k in range(2, self.k + 1):
            total = total + (k * u).sum()
        return total

    def rep(self) -> Metrics:
        self.x.grad = None
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        total = self._forward()
        self.ad.sync()
        c1, t1 = time.process_time(), time.perf_counter()
        total.backward()
        self.ad.sync()
        c2, t2 = time.process_time(), time.perf_counter()
        return _metrics((t0, t1, t2), (c0, c1, c2), self.k)

    def outputs(self) -> dict[str, np.ndarray]:
        self.x.grad = None
        total = self._forward()
        total.backward()
        return {"loss": self.ad.to_numpy(total), "x.grad": self.ad.to_numpy(self.x.grad)}


class NumpyFanout(Case):
    """The floor: each branch's backward written out (broadcast the sum's grad, scale, add)."""

    def __init__(self, params: dict) -> None:
        self.k = int(params["k"])
        self.x = _x0(params)

    def _forward(self) -> tuple[np.ndarray, np.ndarray]:
        u = self.x * self.x
        total = (1 * u).sum()
        for k in range(2, self.k + 1):
            total = total + (k * u).sum()
        return total, u

    def _backward(self, u: np.ndarray) -> np.ndarray:
        gu = np.zeros_like(u)
        for k in range(1, self.k + 1):
            g_sum = np.ones_like(u)  # the sum's backward: the scalar grad (1) broadcast
            gu += k * g_sum  # the mul's backward, accumulated into u's slot
        return 2 * gu * self.x  # x * x: two edges to x, each contributing gu * x

    def rep(self) -> Metrics:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        _, u = self._forward()
        c1, t1 = time.process_time(), time.perf_counter()
        self._backward(u)
        c2, t2 = time.process_time(), time.perf_counter()
        return _metrics((t0, t1, t2), (c0, c1, c2), self.k)

    def outputs(self) -> dict[str, np.ndarray]:
        total, u = self._forward()
        return {"loss": np.asarray(total), "x.grad": self._backward(u)}


def make_case(lib: str, params: dict, ad: Any) -> Case:
    return NumpyFanout(params) if lib == "numpy" else AutogradFanout(ad, params)
