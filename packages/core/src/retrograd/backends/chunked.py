"""Run an elementwise kernel over large arrays chunk by chunk.

Why: an expression of several array operations on a million elements allocates a fresh
temporary for every operation -- each a new mapping of memory (page faults) and a pass
through main memory. Over chunks of 16K elements the temporaries stay in cache and the
allocator hands the same blocks back. The optimizers' update arithmetic
(``fma_rounded_once``: 5 operations for float32, about 20 for float64) is where this
matters: SGD on W3's 1.86 million parameters (tools/bench/ddp_w3.py) spent most of its
step allocating.

The kernel itself is the reference one, unchanged: this only slices its operands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["chunked_elementwise"]

CHUNK = 1 << 14


def _fits(x: Any, like: np.ndarray) -> bool:
    return not isinstance(x, np.ndarray) or x.shape == like.shape


def chunked_elementwise(kernel: Callable[..., Any], chunk: int = CHUNK) -> Callable[..., Any]:
    """``kernel(*operands)`` computed ``chunk`` elements at a time when the last operand is a
    large array and every other operand is a number or an array of its shape; otherwise the
    kernel as it is. The result has the last operand's shape."""

    def run(*operands: Any) -> Any:
        like = operands[-1]
        n = like.size
        if n <= chunk or not all(_fits(x, like) for x in operands):
            return kernel(*operands)
        flat = [x.reshape(-1) if isinstance(x, np.ndarray) else x for x in operands]
        first = kernel(*[x[:chunk] if isinstance(x, np.ndarray) else x for x in flat])
        out = np.empty(n, dtype=first.dtype)
        out[:chunk] = first
        for i in range(chunk, n, chunk):
            out[i:i + chunk] = kernel(*[x[i:i + chunk] if isinstance(x, np.ndarray) else x
                                        for x in flat])
        return out.reshape(like.shape)

    run.__name__ = getattr(kernel, "__name__", "chunked")
    run.__doc__ = kernel.__doc__
    return run
