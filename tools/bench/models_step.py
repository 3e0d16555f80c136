"""One training step of a small model (forward + backward, no optimizer update), as a ``Case``:
the shared machinery of the CNN and transformer workloads (``models_cnn.py``,
``models_transformer.py``).

A model is described by its *arrays*: the inputs (never differentiated) and the named weights,
drawn once with NumPy so that every library starts from the same numbers. On torch and
retrograd the weights become leaf tensors and the model's *program* (written once against the
adapter's ``F`` and tensor methods, ``libs.py``) runs on them; the NumPy floor is a class with
``forward() -> (loss, saved)`` and ``backward(saved) -> {name: gradient}``.

Reported per repetition: ``step_ms`` (the headline), ``fwd_ms`` and ``bwd_ms``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from case import Case, Metrics

Arrays = tuple[dict[str, np.ndarray], dict[str, np.ndarray]]  # (inputs, weights)
Program = Callable[[Any, dict[str, Any], dict[str, Any]], Any]  # (ad, inputs, weights) -> loss


class Floor(Protocol):
    """The hand-written NumPy forward and backward of one model."""

    def forward(self) -> tuple[Any, Any]:
        """The loss and what the backward needs."""

    def backward(self, saved: Any) -> dict[str, np.ndarray]:
        """Every weight's gradient, by name."""


def _metrics(t0: float, t1: float, t2: float) -> Metrics:
    return {"step_ms": (t2 - t0) * 1e3, "fwd_ms": (t1 - t0) * 1e3, "bwd_ms": (t2 - t1) * 1e3}


class AutogradModel:
    """The model's program on torch or retrograd, its weights as leaf tensors."""

    def __init__(self, ad: Any, arrays: Arrays, program: Program) -> None:
        inputs, weights = arrays
        self.ad = ad
        self.program = program
        self.inputs = {k: ad.tensor(v) for k, v in inputs.items()}
        self.weights = {k: ad.tensor(v, requires_grad=True) for k, v in weights.items()}

    def zero_grad(self) -> None:
        for w in self.weights.values():
            w.grad = None

    def forward(self) -> Any:
        return self.program(self.ad, self.inputs, self.weights)

    def outputs(self) -> dict[str, np.ndarray]:
        self.zero_grad()
        loss = self.forward()
        loss.backward()
        out = {"loss": self.ad.to_numpy(loss)}
        out.update({k + ".grad": self.ad.to_numpy(w.grad) for k, w in self.weights.items()})
        return out


class AutogradStep(Case):
    """One timed step of ``AutogradModel``: ``loss = program(...)``, ``loss.backward()``."""

    def __init__(self, model: AutogradModel) -> None:
        self.model = model

    def rep(self) -> Metrics:
        self.model.zero_grad()
        gc.collect()
        t0 = time.perf_counter()
        loss = self.model.forward()
        self.model.ad.sync()
        t1 = time.perf_counter()
        loss.backward()
        self.model.ad.sync()
        return _metrics(t0, t1, time.perf_counter())

    def outputs(self) -> dict[str, np.ndarray]:
        return self.model.outputs()


class NumpyStep(Case):
    """One timed step of a hand-written NumPy floor."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.grads: dict[str, np.ndarray] = {}

    def rep(self) -> Metrics:
        self.grads = {}
        gc.collect()
        t0 = time.perf_counter()
        _, saved = self.floor.forward()
        t1 = time.perf_counter()
        self.grads = self.floor.backward(saved)
        return _metrics(t0, t1, time.perf_counter())

    def outputs(self) -> dict[str, np.ndarray]:
        loss, saved = self.floor.forward()
        grads = self.floor.backward(saved)
        return {"loss": np.asarray(loss), **{k + ".grad": g for k, g in grads.items()}}
