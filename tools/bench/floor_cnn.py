"""The NumPy floor of the CNN step (``models_cnn.py``): its forward and backward by hand.

Written as a competent NumPy user would, for speed:

- activations are kept channels-last (N, H, W, C), so that a convolution's im2col is one copy
  of ``sliding_window_view`` windows into a (N*OH*OW, K*K*C) matrix whose rows read the
  channels contiguously, and the convolution is one GEMM with the weight permuted to
  (O, K*K*C); the bias is added in place, ReLU runs in place;
- the weight's gradient is one GEMM against the saved im2col matrix; the input's gradient
  (second convolution only: the images need none) is one GEMM into the columns, then col2im:
  one strided add per kernel position (K*K of them);
- max-pool 2x2 is a reshape and the maximum of the window's four strided slices; its
  backward and the ReLU's are one fused mask, ``(y == max) & (y > 0)``: a window's ties are
  only ever zeros (ReLU output), whose gradient the ReLU zeroes anyway, so the mask routes
  exactly torch's gradient;
- the flatten goes through channels-first order (N, C, H, W), as torch's ``flatten`` does;
- the softmax cross-entropy gradient is built in the forward's exponentials, as in ``mlp.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _im2col(a: np.ndarray, k: int) -> np.ndarray:
    """(N, H, W, C) -> (N*OH*OW, K*K*C): every K x K window, channels innermost (a copy)."""
    n, h, w, c = a.shape
    win = sliding_window_view(a, (k, k), axis=(1, 2))  # (N, OH, OW, C, K, K), a view
    return win.transpose(0, 1, 2, 4, 5, 3).reshape(n * (h - k + 1) * (w - k + 1), k * k * c)


def _col2im(cols: np.ndarray, shape: tuple[int, int, int, int], k: int) -> np.ndarray:
    """The adjoint of ``_im2col``: each kernel position's columns added into its slice."""
    n, h, w, c = shape
    oh, ow = h - k + 1, w - k + 1
    cols = cols.reshape(n, oh, ow, k, k, c)
    out = np.zeros(shape, dtype=cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, i:i + oh, j:j + ow, :] += cols[:, :, :, i, j, :]
    return out


def _rows(w: np.ndarray) -> np.ndarray:
    """A (O, C, K, K) weight as the (O, K*K*C) matrix that multiplies ``_im2col``'s rows."""
    return w.transpose(0, 2, 3, 1).reshape(w.shape[0], -1)


def _unrows(g: np.ndarray, like: np.ndarray) -> np.ndarray:
    """The inverse of ``_rows``: (O, K*K*C) back to (O, C, K, K)."""
    o, c, k, _ = like.shape
    return np.ascontiguousarray(g.reshape(o, k, k, c).transpose(0, 3, 1, 2))


def _pool(y6: np.ndarray) -> np.ndarray:
    """2x2 max-pool of (N, PH, 2, PW, 2, C): three ``maximum`` calls over the window's four
    strided slices (5x faster than ``max(axis=(2, 4))`` here)."""
    top = np.maximum(y6[:, :, 0, :, 0], y6[:, :, 0, :, 1])
    return np.maximum(top, np.maximum(y6[:, :, 1, :, 0], y6[:, :, 1, :, 1]), out=top)


class NumpyCNN:
    """conv-relu-pool twice, linear, mean cross-entropy; forward and backward by hand."""

    def __init__(self, inputs: dict[str, np.ndarray], weights: dict[str, np.ndarray]) -> None:
        self.x = inputs["x"]
        self.target = inputs["target"]
        self.w = weights
        self.convs = sum(1 for name in weights if name.endswith(".weight")) - 1

    def forward(self) -> tuple[Any, tuple]:
        """The loss, and the saved im2col matrices, activations and softmax parts."""
        w = self.w
        a = self.x.transpose(0, 2, 3, 1)  # channels-last (a view; C = 1 is already contiguous)
        layers = []
        for i in range(1, self.convs + 1):
            wt = w[f"conv{i}.weight"]
            k = wt.shape[2]
            n, h, wd, _ = a.shape
            cols = _im2col(a, k)
            y = cols @ _rows(wt).T  # (N*OH*OW, O)
            y += w[f"conv{i}.bias"]
            np.maximum(y, 0, out=y)
            oh, ow = h - k + 1, wd - k + 1
            y6 = y.reshape(n, oh // 2, 2, ow // 2, 2, -1)
            pooled = _pool(y6)  # (N, OH/2, OW/2, O)
            layers.append((a.shape, cols, y6, pooled))
            a = pooled
        flat = np.ascontiguousarray(a.transpose(0, 3, 1, 2)).reshape(a.shape[0], -1)
        logits = flat @ w["fc.weight"].T
        logits += w["fc.bias"]
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        rows = np.arange(logits.shape[0])
        loss = (np.log(s[:, 0]) - z[rows, self.target]).mean()
        return loss, (layers, flat, e, s)

    def backward(self, saved: tuple) -> dict[str, np.ndarray]:
        """Every weight's and bias's gradient, by name."""
        layers, flat, e, s = saved
        w = self.w
        n = e.shape[0]
        g = e  # (softmax - onehot) / n, in the exponentials' buffer
        g /= s
        g[np.arange(n), self.target] -= 1
        g /= n
        grads = {"fc.weight": g.T @ flat, "fc.bias": g.sum(axis=0)}
        gflat = g @ w["fc.weight"]
        pooled_shape = layers[-1][3].shape  # (N, PH, PW, C)
        nb, ph, pw, c = pooled_shape
        gp = gflat.reshape(nb, c, ph, pw).transpose(0, 2, 3, 1)
        for i in range(self.convs, 0, -1):
            in_shape, cols, y6, pooled = layers[i - 1]
            p6 = pooled[:, :, None, :, None, :]
            gy = ((y6 == p6) & (y6 > 0)) * gp[:, :, None, :, None, :]  # pool + ReLU backward
            gy = gy.reshape(cols.shape[0], -1)  # (N*OH*OW, O)
            wt = w[f"conv{i}.weight"]
            grads[f"conv{i}.weight"] = _unrows(gy.T @ cols, wt)
            grads[f"conv{i}.bias"] = gy.sum(axis=0)
            if i > 1:
                gp = _col2im(gy @ _rows(wt), in_shape, wt.shape[2])
        return grads
