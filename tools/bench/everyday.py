"""The everyday-op workloads O1-O3: one op (or two) forward and backward at 10^6 elements.

Each workload is an input of ``rows x cols`` elements (default 1000 x 1000), a program run on
it by torch and retrograd alike (the adapter's library module: ``ad.mod``), and the same
forward and backward written by hand in NumPy (the floor). One repetition is one forward (the
op's output) and one backward: ``autograd.grad(out, leaves, grad_outputs=g)`` with a fixed
cotangent ``g`` (no loss op around the op under test), timed apart:

- ``fwd_ms``: the forward (recording the graph);
- ``bwd_ms``: the backward, down to the leaves' gradients;
- ``step_ms``: the two together (the headline).

The inputs come from one seeded NumPy generator, so every library starts from the same
arrays. ``outputs()`` gives the output and the gradients for ``run.py --check``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from case import Case, Metrics, dtype_of, rng

ROWS, COLS = 1000, 1000
HEADLINES = ["step_ms", "fwd_ms", "bwd_ms"]


def shape_of(params: dict) -> tuple[int, int]:
    """``(rows, cols)``: ``params["rows"]`` and ``params["cols"]`` (default 1000 x 1000)."""
    return int(params.get("rows", ROWS)), int(params.get("cols", COLS))


def description(what: str) -> str:
    return f"{what}, (1000, 1000) = 10^6 elements, forward + backward"


class Spec:
    """One workload's inputs and programs.

    ``arrays(params)``: the inputs (NumPy), the first ``leaves`` of which are differentiable;
    ``program(mod, *tensors)``: the forward on torch or retrograd (``mod`` is the library);
    ``floor_forward(*arrays)`` -> (output, saved) and ``floor_backward(g, saved, *arrays)`` ->
    the leaves' gradients: the hand-written NumPy."""

    leaves: int = 1

    def arrays(self, params: dict) -> list[np.ndarray]:
        raise NotImplementedError

    def program(self, mod: Any, *tensors: Any) -> Any:
        raise NotImplementedError

    def floor_forward(self, *arrays: np.ndarray) -> tuple[np.ndarray, Any]:
        raise NotImplementedError

    def floor_backward(self, g: np.ndarray, saved: Any, *arrays: np.ndarray
                       ) -> Sequence[np.ndarray]:
        raise NotImplementedError

    def cotangent(self, params: dict, out_shape: tuple[int, ...]) -> np.ndarray:
        return rng(7).standard_normal(out_shape).astype(dtype_of(params))


def _metrics(t0: float, t1: float, t2: float) -> Metrics:
    return {"step_ms": (t2 - t0) * 1e3, "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}


class AutogradOp(Case):
    """The program on torch or retrograd."""

    def __init__(self, spec: Spec, ad: Any, params: dict) -> None:
        self.spec, self.ad = spec, ad
        arrays = spec.arrays(params)
        self.tensors = [ad.tensor(a, requires_grad=i < spec.leaves) for i, a in enumerate(arrays)]
        out = spec.program(ad.mod, *self.tensors)
        self.g = ad.tensor(spec.cotangent(params, tuple(out.shape)))

    def step(self) -> tuple[Any, tuple[Any, ...]]:
        out = self.spec.program(self.ad.mod, *self.tensors)
        grads = self.ad.mod.autograd.grad(out, self.tensors[:self.spec.leaves],
                                          grad_outputs=self.g)
        return out, tuple(grads)

    def rep(self) -> Metrics:
        gc.collect()
        t0 = time.perf_counter()
        out = self.spec.program(self.ad.mod, *self.tensors)
        self.ad.sync()
        t1 = time.perf_counter()
        self.ad.mod.autograd.grad(out, self.tensors[:self.spec.leaves], grad_outputs=self.g)
        self.ad.sync()
        return _metrics(t0, t1, time.perf_counter())

    def outputs(self) -> dict[str, np.ndarray]:
        out, grads = self.step()
        to = self.ad.to_numpy
        return {"out": to(out), **{f"grad{i}": to(g) for i, g in enumerate(grads)}}


class NumpyOp(Case):
    """The hand-written NumPy forward and backward (the floor)."""

    def __init__(self, spec: Spec, params: dict) -> None:
        self.spec = spec
        self.arrays = spec.arrays(params)
        out, _ = spec.floor_forward(*self.arrays)
        self.g = spec.cotangent(params, out.shape)

    def step(self) -> tuple[np.ndarray, Sequence[np.ndarray]]:
        out, saved = self.spec.floor_forward(*self.arrays)
        return out, self.spec.floor_backward(self.g, saved, *self.arrays)

    def rep(self) -> Metrics:
        gc.collect()
        t0 = time.perf_counter()
        _, saved = self.spec.floor_forward(*self.arrays)
        t1 = time.perf_counter()
        self.spec.floor_backward(self.g, saved, *self.arrays)
        return _metrics(t0, t1, time.perf_counter())

    def outputs(self) -> dict[str, np.ndarray]:
        out, grads = self.step()
        return {"out": np.asarray(out), **{f"grad{i}": np.asarray(g)
                                           for i, g in enumerate(grads)}}


def case_maker(spec: Spec) -> Callable[[str, dict, Any], Case]:
    """The workload module's ``make_case(lib, params, ad)``."""

    def make_case(lib: str, params: dict, ad: Any) -> Case:
        return NumpyOp(spec, params) if lib == "numpy" else AutogradOp(spec, ad, params)

    return make_case
