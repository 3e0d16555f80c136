"""TRANSFORMER: one training step of a small GPT-shaped language model.

The model (defaults: batch 16, sequence 64, width 128, 4 heads, 2 blocks, vocabulary 256):
token embedding plus a learned position embedding; per block, pre-LayerNorm causal multi-head
self-attention (one fused q/k/v projection, ``F.scaled_dot_product_attention(is_causal=True)``,
an output projection) and a pre-LayerNorm MLP (width -> 4 x width, GELU (tanh form), back),
each added to the residual stream; a final LayerNorm; an LM head (no bias); mean cross-entropy
over every position's next token. One step is the forward and the backward (every weight's
gradient). torch and retrograd run the same program; the NumPy floor is
``floor_transformer.py``. Parameters: ``batch``, ``seq``, ``width``, ``heads``, ``layers``,
``vocab``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from case import Case, dtype_of, rng
from floor_transformer import NumpyTransformer
from models_step import Arrays, AutogradModel, AutogradStep, NumpyStep

DEFAULTS = {"batch": 16, "seq": 64, "width": 128, "heads": 4, "layers": 2, "vocab": 256}
HEADLINES = ["step_ms", "fwd_ms", "bwd_ms"]
EPS = 1e-5


def sizes(params: dict) -> dict[str, int]:
    """The model's dimensions: ``DEFAULTS`` overridden by ``params``."""
    return {k: int(params.get(k, v)) for k, v in DEFAULTS.items()}


def arrays(params: dict) -> Arrays:
    """The token ids, the next-token targets and the weights (GPT-2-like scales)."""
    dt = dtype_of(params)
    d = sizes(params)
    b, t, c, v = d["batch"], d["seq"], d["width"], d["vocab"]
    r = rng(9)
    tokens = r.integers(0, v, (b, t + 1)).astype(np.int64)
    inputs = {"idx": tokens[:, :-1].copy(), "target": tokens[:, 1:].reshape(-1).copy()}

    def normal(*shape: int, std: float = 0.02) -> np.ndarray:
        return (r.standard_normal(shape) * std).astype(dt)

    def norm(prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}.weight": (1.0 + normal(c, std=0.1)).astype(dt),
                f"{prefix}.bias": normal(c)}

    weights = {"wte": normal(v, c), "wpe": normal(t, c)}
    for i in range(d["layers"]):
        p = f"h{i}."
        weights.update(norm(p + "ln1"))
        weights.update({p + "qkv.weight": normal(3 * c, c), p + "qkv.bias": normal(3 * c),
                        p + "proj.weight": normal(c, c), p + "proj.bias": normal(c)})
        weights.update(norm(p + "ln2"))
        weights.update({p + "fc.weight": normal(4 * c, c), p + "fc.bias": normal(4 * c),
                        p + "out.weight": normal(c, 4 * c), p + "out.bias": normal(c)})
    weights.update(norm("ln_f"))
    weights["head.weight"] = normal(v, c)
    return inputs, weights


def _attention(F: Any, a: Any, w: dict[str, Any], p: str, heads: int) -> Any:
    b, t, c = a.shape
    qkv = F.linear(a, w[p + "qkv.weight"], w[p + "qkv.bias"])
    q, k, v = (part.reshape(b, t, heads, c // heads).transpose(1, 2)
               for part in qkv.split(c, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(y.transpose(1, 2).reshape(b, t, c), w[p + "proj.weight"], w[p + "proj.bias"])


def _mlp(F: Any, a: Any, w: dict[str, Any], p: str) -> Any:
    h = F.gelu(F.linear(a, w[p + "fc.weight"], w[p + "fc.bias"]), approximate="tanh")
    return F.linear(h, w[p + "out.weight"], w[p + "out.bias"])


def program(ad: Any, inputs: dict[str, Any], w: dict[str, Any],
            heads: int = DEFAULTS["heads"]) -> Any:
    """The loss of one batch, on torch or retrograd (``ad`` from ``libs.py``)."""
    F = ad.F
    idx = inputs["idx"]
    c = w["wte"].shape[1]
    x = F.embedding(idx, w["wte"]) + w["wpe"]
    layers = sum(1 for name in w if name.endswith("ln1.weight"))
    for i in range(layers):
        p = f"h{i}."
        x = x + _attention(F, F.layer_norm(x, (c,), w[p + "ln1.weight"], w[p + "ln1.bias"], EPS),
                           w, p, heads)
        x = x + _mlp(F, F.layer_norm(x, (c,), w[p + "ln2.weight"], w[p + "ln2.bias"], EPS), w, p)
    x = F.layer_norm(x, (c,), w["ln_f.weight"], w["ln_f.bias"], EPS)
    logits = F.linear(x, w["head.weight"])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), inputs["target"])


def make_case(lib: str, params: dict, ad: Any) -> Case:
    """The transformer step on ``lib`` ("numpy": the floor)."""
    heads = sizes(params)["heads"]
    if lib == "numpy":
        return NumpyStep(NumpyTransformer(*arrays(params), heads=heads, eps=EPS))
    return AutogradStep(AutogradModel(ad, arrays(params), partial(program, heads=heads)))
