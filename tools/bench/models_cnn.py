"""CNN: one training step of a small LeNet-shaped network on MNIST-sized images.

The model: input (batch, 1, 28, 28); conv 1 -> 16 (5x5), ReLU, max-pool 2; conv 16 -> 32
(5x5), ReLU, max-pool 2; flatten (512); linear 512 -> 10; mean cross-entropy. One step is the
forward and the backward (every weight's and bias's gradient, none for the images), batch 64
by default (``params["batch"]``). torch and retrograd run the same program (``F.conv2d``,
``F.relu``, ``F.max_pool2d``, ``flatten``, ``F.linear``, ``F.cross_entropy``); the NumPy floor
is ``floor_cnn.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from case import Case, dtype_of, rng
from floor_cnn import NumpyCNN
from models_step import Arrays, AutogradModel, AutogradStep, NumpyStep

BATCH = 64
IMAGE = 28
CLASSES = 10
CONVS = ((1, 16), (16, 32))  # (in, out) channels of the two 5x5 convolutions
KERNEL = 5
HEADLINES = ["step_ms", "fwd_ms", "bwd_ms"]


def _flat_features() -> int:
    side = IMAGE
    for _ in CONVS:
        side = (side - KERNEL + 1) // 2
    return CONVS[-1][1] * side * side


def arrays(params: dict) -> Arrays:
    """The images, the integer targets and the weights (He-scaled normals, small biases)."""
    dt = dtype_of(params)
    batch = int(params.get("batch", BATCH))
    r = rng(5)
    inputs = {"x": r.standard_normal((batch, 1, IMAGE, IMAGE)).astype(dt),
              "target": r.integers(0, CLASSES, batch).astype(np.int64)}
    weights: dict[str, np.ndarray] = {}
    for i, (cin, cout) in enumerate(CONVS, 1):
        fan_in = cin * KERNEL * KERNEL
        weights[f"conv{i}.weight"] = (r.standard_normal((cout, cin, KERNEL, KERNEL))
                                      * np.sqrt(2.0 / fan_in)).astype(dt)
        weights[f"conv{i}.bias"] = (r.standard_normal(cout) * 0.01).astype(dt)
    feats = _flat_features()
    weights["fc.weight"] = (r.standard_normal((CLASSES, feats)) * np.sqrt(1.0 / feats)).astype(dt)
    weights["fc.bias"] = (r.standard_normal(CLASSES) * 0.01).astype(dt)
    return inputs, weights


def program(ad: Any, inputs: dict[str, Any], w: dict[str, Any]) -> Any:
    """The loss of one batch, on torch or retrograd (``ad`` from ``libs.py``)."""
    F = ad.F
    h = inputs["x"]
    for i in range(1, len(CONVS) + 1):
        h = F.max_pool2d(F.relu(F.conv2d(h, w[f"conv{i}.weight"], w[f"conv{i}.bias"])), 2)
    logits = F.linear(h.flatten(1), w["fc.weight"], w["fc.bias"])
    return F.cross_entropy(logits, inputs["target"])


def make_case(lib: str, params: dict, ad: Any) -> Case:
    """The CNN step on ``lib`` ("numpy": the floor)."""
    if lib == "numpy":
        return NumpyStep(NumpyCNN(*arrays(params)))
    return AutogradStep(AutogradModel(ad, arrays(params), program))
