"""``scaled_dot_product_attention`` (masks, causal, dropout).

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports.

A composition of differentiable ops, as PyTorch's math path: ``softmax(q @ k^T * scale +
mask) @ v``, so gradients (to the query, key, value and a float mask) and double backward
come from those ops. A bool mask (True: takes part) and ``is_causal`` (top-left aligned: query
``i`` sees keys ``0..i``) become an additive mask of 0 and -inf; a row with every key masked
gives zeros (PyTorch's "safe" softmax), and no gradient.
"""

from __future__ import annotations

import math
from typing import Any

from ..dtypes import bool_, float32
from ..tensor import Tensor
from .declare import op

__all__ = ["scaled_dot_product_attention"]

# c10's names of the scalar types, in PyTorch's messages
_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _c10(dt: Any) -> str:
    name = str(dt).rpartition(".")[2]
    return _C10_NAMES.get(name, name)


def _check(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float,
           is_causal: bool) -> None:
    """PyTorch's checks of the operands, in its order and words."""
    for pos, (arg, v) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{arg}' (position "
                            f"{pos}) must be Tensor, not {type(v).__name__}")
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError("scaled_dot_product_attention(): argument 'attn_mask' must be Tensor, "
                        f"not {type(attn_mask).__name__}")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_c10(query.dtype)} key.dtype: {_c10(key.dtype)} "
                           f"and value.dtype: {_c10(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (bool_, float32, query.dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_c10(attn_mask.dtype)} and  "
                           f"query.dtype: {_c10(query.dtype)} instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if not query.dtype.is_floating_point:
        want = "Float"
        got = str(query.dtype).rpartition(".")[2]
        got = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool"}.get(got, got)
        raise RuntimeError(f"expected scalar type {want} but found {got}")


def _repeat_heads(query: Tensor, t: Tensor, name: str) -> Tensor:
    """``t`` with each of its heads (dim -3) repeated to the query's number of heads
    (``enable_gqa``)."""
    from .rearrange import repeat_interleave

    hq = query.shape[-3] if query.ndim >= 3 else 1
    hk = t.shape[-3] if t.ndim >= 3 else 1
    if hq == hk:
        return t
    if hk == 0 or hq % hk:
        raise RuntimeError(f"Number of heads in {name} and value must divide the number of "
                           "heads in query")
    return repeat_interleave(t, hq // hk, -3)


@op("scaled_dot_product_attention", method=False, function=False)
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions
    (``query`` ``(..., L, E)``, ``key`` ``(..., S, E)``, ``value`` ``(..., S, Ev)``; the
    leading dimensions broadcast). ``attn_mask``: bool (True: the key takes part) or float
    (added), broadcast to ``(..., L, S)``. ``dropout_p``: dropout of the attention weights
    (always applied, as in PyTorch). ``is_causal``: query ``i`` sees keys ``0..i``.
    ``scale``: default ``1/sqrt(E)``. ``enable_gqa``: key and value heads (dim -3) repeated
    to the query's."""
    from .creation import ones, zeros
    from .dropout import dropout
    from .elementwise import add, eq, mul, where
    from .layout import tril
    from .linalg import matmul
    from .nn import softmax
    from .numeric import logical_not
    from .pointwise import masked_fill
    from .shape import matrix_transpose
    from .statistics import all as all_

    _check(query, key, value, attn_mask, float(dropout_p), is_causal)
    if enable_gqa:
        key = _repeat_heads(query, key, "key")
        value = _repeat_heads(query, value, "value")
    n_q, n_k = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = mul(matmul(query, matrix_transpose(key)), s)
    if is_causal and n_k > 0:
        # every query sees key 0: no row is all -inf, so the masked scores go straight to
        # the softmax (the masked entries' gradient is zero either way)
        hidden = logical_not(tril(ones(n_q, n_k, dtype=bool_, device=query.device)))
        attn = softmax(masked_fill(scores, hidden, -math.inf), -1)
    else:
        mask = tril(ones(n_q, n_k, dtype=bool_, device=query.device)) if is_causal else attn_mask
        if mask is not None:
            if mask.dtype is bool_:
                mask = masked_fill(zeros(tuple(mask.shape), dtype=query.dtype,
                                         device=query.device), logical_not(mask), -math.inf)
            scores = add(scores, mask)
            dead = all_(eq(scores, -math.inf), -1, keepdim=True)  # a row that sees no key
            scores = where(dead, 0.0, scores)
            attn = where(dead, 0.0, softmax(scores, -1))
        else:
            attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, float(dropout_p), True)
    return matmul(attn, value)
