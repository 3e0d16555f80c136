"""The MLP behind W3 and W4: linear layers with ReLU between them, mean softmax cross-entropy.

One *step* is forward + backward (gradients for every weight and bias, none for the input; no
optimizer update). The autograd side is the idiomatic PyTorch program (``F.linear``, ``F.relu``,
``F.cross_entropy``); the floor is the same mathematics written by hand in NumPy as a competent
user would: in-place bias add and ReLU, saved activations popped as the backward consumes them,
the softmax gradient computed from the forward's exponentials.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from case import dtype_of, rng

CLASSES = 10


def init(params: dict) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Input batch, integer targets, weights (out, in) and biases, drawn once with NumPy."""
    dtype = dtype_of(params)
    dims = [int(d) for d in params["dims"]]
    batch = int(params["batch"])
    r = rng(3)
    x = r.standard_normal((batch, dims[0])).astype(dtype)
    target = r.integers(0, dims[-1], size=batch).astype(np.int64)
    weights = [
        (r.standard_normal((o, i)) * np.sqrt(2.0 / i)).astype(dtype)
        for i, o in zip(dims[:-1], dims[1:])
    ]
    biases = [(r.standard_normal(o) * 0.01).astype(dtype) for o in dims[1:]]
    return x, target, weights, biases


def param_names(n_layers: int) -> list[str]:
    return [f"{kind}{i}" for i in range(n_layers) for kind in ("W", "b")]


class AutogradMLP:
    def __init__(self, ad: Any, params: dict) -> None:
        x, target, weights, biases = init(params)
        self.ad = ad
        self.x = ad.tensor(x)
        self.target = ad.tensor(target)
        self.layers = [
            (ad.tensor(w, requires_grad=True), ad.tensor(b, requires_grad=True))
            for w, b in zip(weights, biases)
        ]
        self.params = [p for layer in self.layers for p in layer]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def forward(self) -> Any:
        F = self.ad.F
        h = self.x
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = F.linear(h, w, b)
            if i < last:
                h = F.relu(h)
        return F.cross_entropy(h, self.target)

    def outputs(self) -> dict[str, np.ndarray]:
        self.zero_grad()
        loss = self.forward()
        loss.backward()
        out = {"loss": self.ad.to_numpy(loss)}
        for name, p in zip(param_names(len(self.layers)), self.params):
            out[name + ".grad"] = self.ad.to_numpy(p.grad)
        return out


class NumpyMLP:
    def __init__(self, params: dict) -> None:
        self.x, self.target, self.weights, self.biases = init(params)
        self.grads: list[np.ndarray] = []

    def forward(self) -> tuple[Any, tuple]:
        """The loss, and what the backward needs: the saved layer inputs and the softmax parts."""
        x, target, ws, bs = self.x, self.target, self.weights, self.biases
        last = len(ws) - 1
        saved = [x]  # the input of each layer (ReLU outputs), also the ReLU masks' source
        h = x
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = h @ w.T
            h += b
            if i < last:
                np.maximum(h, 0, out=h)
                saved.append(h)
        # mean softmax cross-entropy, log-sum-exp stabilised
        z = h - h.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        rows = np.arange(x.shape[0])
        loss = (np.log(s[:, 0]) - z[rows, target]).mean()
        return loss, (saved, e, s)

    def backward(self, state: tuple) -> list[np.ndarray]:
        """[gW0, gb0, gW1, gb1, ...]; pops the saved inputs as it goes."""
        saved, e, s = state
        ws, target = self.weights, self.target
        n = e.shape[0]
        g = e  # d loss / d logits = (softmax - onehot) / n, built in the exponentials' buffer
        g /= s
        g[np.arange(n), target] -= 1
        g /= n
        grads: list[np.ndarray] = [None] * (2 * len(ws))  # type: ignore[list-item]
        for i in range(len(ws) - 1, -1, -1):
            a = saved.pop()
            grads[2 * i] = g.T @ a
            grads[2 * i + 1] = g.sum(axis=0)
            if i > 0:
                g = g @ ws[i]
                g *= a > 0  # ReLU backward through the saved output
        return grads

    def step(self) -> tuple[Any, list[np.ndarray]]:
        loss, state = self.forward()
        return loss, self.backward(state)

    def outputs(self) -> dict[str, np.ndarray]:
        loss, grads = self.step()
        out = {"loss": np.asarray(loss)}
        for name, gr in zip(param_names(len(self.weights)), grads):
            out[name + ".grad"] = gr
        return out
