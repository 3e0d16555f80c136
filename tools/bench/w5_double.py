"""W5: double backward of ``(x ** 3).sum()``, x of 1000 elements.

One *call* is the whole thing a user writes: the forward, ``g = grad(y, x, create_graph=True)``
(a differentiable 3x^2), and ``h = grad(g.sum(), x)`` (6x). Reported in microseconds per call.
The floor is the closed form written by hand (two broadcasts and the two derivatives).
"""

from __future__ import annotations

import gc
import time
from typing import Any

import numpy as np
from case import Case, Metrics, dtype_of, rng

SIZE = 1000
CALLS_PER_REP = 20


def _x0(params: dict) -> np.ndarray:
    return rng(4).standard_normal(int(params.get("size", SIZE))).astype(dtype_of(params))


def _metrics(t0: float, c0: float, calls: int) -> Metrics:
    """Wall-clock per call, plus process CPU time per call (steadier on a shared machine)."""
    return {
        "us_per_call": (time.perf_counter() - t0) / calls * 1e6,
        "cpu_us_per_call": (time.process_time() - c0) / calls * 1e6,
    }


class AutogradDouble(Case):
    def __init__(self, ad: Any, params: dict) -> None:
        self.ad = ad
        self.x = ad.tensor(_x0(params), requires_grad=True)
        self.calls = int(params.get("calls", CALLS_PER_REP))

    def call(self) -> tuple[Any, Any, Any]:
        y = (self.x**3).sum()
        (g,) = self.ad.grad(y, [self.x], create_graph=True)
        (h,) = self.ad.grad(g.sum(), [self.x])
        return y, g, h

    def rep(self) -> Metrics:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(self.calls):
            self.call()
        self.ad.sync()
        return _metrics(t0, c0, self.calls)

    def outputs(self) -> dict[str, np.ndarray]:
        y, g, h = self.call()
        to = self.ad.to_numpy
        return {"loss": to(y), "g": to(g), "h": to(h)}


class NumpyDouble(Case):
    def __init__(self, params: dict) -> None:
        self.x = _x0(params)
        self.calls = int(params.get("calls", CALLS_PER_REP))

    def call(self) -> tuple[Any, np.ndarray, np.ndarray]:
        x = self.x
        y = (x**3).sum()
        g = np.ones_like(x) * (3 * x**2)  # seed broadcast through the sum, times d(x^3)/dx
        h = np.ones_like(x) * (6 * x)  # d(sum g)/dx
        return y, g, h

    def rep(self) -> Metrics:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(self.calls):
            self.call()
        return _metrics(t0, c0, self.calls)

    def outputs(self) -> dict[str, np.ndarray]:
        y, g, h = self.call()
        return {"loss": np.asarray(y), "g": g, "h": h}


def make_case(lib: str, params: dict, ad: Any) -> Case:
    return NumpyDouble(params) if lib == "numpy" else AutogradDouble(ad, params)
