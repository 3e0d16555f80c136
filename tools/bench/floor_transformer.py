"""The NumPy floor of the transformer step (``models_transformer.py``): forward and backward by
hand.

The residual stream is kept as one (batch*seq, width) matrix, so every projection is one GEMM
(``x @ W.T``, its gradients ``g.T @ x`` and ``g @ W``). Attention is batched matmuls over
(batch, heads): scores ``q @ k^T`` scaled, the causal mask written as -inf above the diagonal,
a softmax in place; its backward recomputes nothing (the probabilities are saved) and goes
through the softmax as ``P * (dP - rowsum(dP * P))``. LayerNorm saves ``xhat`` and ``1/std``
and uses the closed-form input gradient. GELU is the tanh form, its derivative from the saved
``tanh``. The embedding's gradient is ``np.add.at`` over the token ids (NumPy 2's fast path);
the position embedding's is a sum over the batch. The cross-entropy gradient is built in the
forward's exponentials.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float
                ) -> tuple[np.ndarray, tuple]:
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    var = np.einsum("ij,ij->i", xc, xc)[:, None] / x.shape[1]
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = xc
    xhat *= rstd
    y = xhat * g
    y += b
    return y, (xhat, rstd)


def _layer_norm_back(dy: np.ndarray, saved: tuple, g: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xhat, rstd = saved
    dg = np.einsum("ij,ij->j", dy, xhat)
    db = dy.sum(axis=0)
    dxhat = dy * g
    c = dy.shape[1]
    m1 = dxhat.sum(axis=1, keepdims=True) / c
    m2 = np.einsum("ij,ij->i", dxhat, xhat)[:, None] / c
    dxhat -= m1
    dxhat -= xhat * m2
    dxhat *= rstd
    return dxhat, dg, db


def _gelu(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = x * x
    t *= GELU_A
    t += 1.0
    t *= x
    t *= GELU_C
    np.tanh(t, out=t)
    y = t + 1.0
    y *= x
    y *= 0.5
    return y, t


def _gelu_back(dy: np.ndarray, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    # d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
    inner = x * x
    inner *= 3 * GELU_A
    inner += 1.0
    inner *= GELU_C
    inner *= x
    sech2 = t * t
    np.subtract(1.0, sech2, out=sech2)
    inner *= sech2
    inner += t
    inner += 1.0
    inner *= 0.5
    inner *= dy
    return inner


class NumpyTransformer:
    """Embeddings, pre-LN blocks (causal attention, GELU MLP), final LN, LM head, mean CE."""

    def __init__(self, inputs: dict[str, np.ndarray], weights: dict[str, np.ndarray], *,
                 heads: int, eps: float) -> None:
        self.idx = inputs["idx"]
        self.target = inputs["target"]
        self.w = weights
        self.heads = heads
        self.eps = eps
        self.layers = sum(1 for name in weights if name.endswith("ln1.weight"))
        t = self.idx.shape[1]
        self.mask = np.triu(np.ones((t, t), dtype=bool), k=1)

    def _attention(self, a: np.ndarray, p: str) -> tuple[np.ndarray, tuple]:
        w = self.w
        b, t = self.idx.shape
        c = a.shape[1]
        h, d = self.heads, c // self.heads
        qkv = a @ w[p + "qkv.weight"].T
        qkv += w[p + "qkv.bias"]
        q, k, v = qkv.reshape(b, t, 3, h, d).transpose(2, 0, 3, 1, 4)  # each (B, H, T, D)
        s = q @ k.transpose(0, 1, 3, 2)
        s *= 1.0 / math.sqrt(d)
        s[..., self.mask] = -np.inf
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        y = (s @ v).transpose(0, 2, 1, 3).reshape(b * t, c)
        out = y @ w[p + "proj.weight"].T
        out += w[p + "proj.bias"]
        return out, (a, q, k, v, s, y)

    def _attention_back(self, dout: np.ndarray, saved: tuple, p: str,
                        grads: dict[str, np.ndarray]) -> np.ndarray:
        a, q, k, v, probs, y = saved
        w = self.w
        b, t = self.idx.shape
        c = a.shape[1]
        h, d = self.heads, c // self.heads
        grads[p + "proj.weight"] = dout.T @ y
        grads[p + "proj.bias"] = dout.sum(axis=0)
        dy = (dout @ w[p + "proj.weight"]).reshape(b, t, h, d).transpose(0, 2, 1, 3)
        dqkv = np.empty((3, b, h, t, d), dtype=a.dtype)
        np.matmul(probs.transpose(0, 1, 3, 2), dy, out=dqkv[2])  # dv
        dp = dy @ v.transpose(0, 1, 3, 2)
        ds = dp
        ds -= np.einsum("bhij,bhij->bhi", dp, probs)[..., None]
        ds *= probs
        ds *= 1.0 / math.sqrt(d)
        np.matmul(ds, k, out=dqkv[0])  # dq
        np.matmul(ds.transpose(0, 1, 3, 2), q, out=dqkv[1])  # dk
        dqkv2 = dqkv.transpose(1, 3, 0, 2, 4).reshape(b * t, 3 * c)
        grads[p + "qkv.weight"] = dqkv2.T @ a
        grads[p + "qkv.bias"] = dqkv2.sum(axis=0)
        return dqkv2 @ w[p + "qkv.weight"]

    def _mlp(self, a: np.ndarray, p: str) -> tuple[np.ndarray, tuple]:
        w = self.w
        pre = a @ w[p + "fc.weight"].T
        pre += w[p + "fc.bias"]
        act, t = _gelu(pre)
        out = act @ w[p + "out.weight"].T
        out += w[p + "out.bias"]
        return out, (a, pre, t, act)

    def _mlp_back(self, dout: np.ndarray, saved: tuple, p: str,
                  grads: dict[str, np.ndarray]) -> np.ndarray:
        a, pre, t, act = saved
        w = self.w
        grads[p + "out.weight"] = dout.T @ act
        grads[p + "out.bias"] = dout.sum(axis=0)
        dpre = _gelu_back(dout @ w[p + "out.weight"], pre, t)
        grads[p + "fc.weight"] = dpre.T @ a
        grads[p + "fc.bias"] = dpre.sum(axis=0)
        return dpre @ w[p + "fc.weight"]

    def forward(self) -> tuple[Any, tuple]:
        """The loss and every saved intermediate, block by block."""
        w, eps = self.w, self.eps
        b, t = self.idx.shape
        x = (w["wte"][self.idx] + w["wpe"][:t]).reshape(b * t, -1)
        blocks = []
        for i in range(self.layers):
            p = f"h{i}."
            a, ln1 = _layer_norm(x, w[p + "ln1.weight"], w[p + "ln1.bias"], eps)
            out, att = self._attention(a, p)
            x += out
            a, ln2 = _layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"], eps)
            out, mlp = self._mlp(a, p)
            x += out
            blocks.append((ln1, att, ln2, mlp))
        a, lnf = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
        logits = a @ w["head.weight"].T
        logits -= logits.max(axis=1, keepdims=True)
        z = logits
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = (np.log(s[:, 0]) - z[np.arange(z.shape[0]), self.target]).mean()
        return loss, (blocks, lnf, a, e, s)

    def backward(self, saved: tuple) -> dict[str, np.ndarray]:
        """Every weight's gradient, by name."""
        blocks, lnf, a, e, s = saved
        w = self.w
        n = e.shape[0]
        g = e
        g /= s
        g[np.arange(n), self.target] -= 1
        g /= n
        grads: dict[str, np.ndarray] = {"head.weight": g.T @ a}
        dx, grads["ln_f.weight"], grads["ln_f.bias"] = _layer_norm_back(
            g @ w["head.weight"], lnf, w["ln_f.weight"])
        for i in range(self.layers - 1, -1, -1):
            p = f"h{i}."
            ln1, att, ln2, mlp = blocks[i]
            da = self._mlp_back(dx, mlp, p, grads)
            dln, grads[p + "ln2.weight"], grads[p + "ln2.bias"] = _layer_norm_back(
                da, ln2, w[p + "ln2.weight"])
            dx += dln
            da = self._attention_back(dx, att, p, grads)
            dln, grads[p + "ln1.weight"], grads[p + "ln1.bias"] = _layer_norm_back(
                da, ln1, w[p + "ln1.weight"])
            dx += dln
        b, t = self.idx.shape
        gwte = np.zeros_like(w["wte"])
        np.add.at(gwte, self.idx.reshape(-1), dx)
        grads["wte"] = gwte
        grads["wpe"] = dx.reshape(b, t, -1).sum(axis=0)
        return grads
