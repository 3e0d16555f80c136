"""Reference kernels of the attention, embedding, one_hot and dropout (see ``ops/``), in Array-
API calls on ``xp``; ``reference_kernels`` merges them into every backend's table.

``scaled_dot_product_attention`` and ``dropout`` are compositions of differentiable ops and
need no kernel of their own; the embedding's lookup is ``index_select`` on the flattened
indices, and its gradient a scatter-add of the output gradient's rows into zeros."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import kernels_indexing

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The attention, embedding, one_hot and dropout kernels on ``xp``."""
    index_add = kernels_indexing.kernels(xp)["index_add"]

    def _row_scale(idx: Any, num_weights: int, padding_idx: int, by_freq: bool,
                   dtype: Any) -> Any:
        """Per-index factors (1-d, of ``idx``'s length) of the gradient rows: 0 where the
        index is ``padding_idx`` (-1: none), else 1, or 1/count of the index when
        ``by_freq``; None when all are 1."""
        if padding_idx < 0 and not by_freq:
            return None
        scale = xp.ones(tuple(idx.shape), dtype=dtype)
        if by_freq:
            counts = index_add(xp.zeros((num_weights,), dtype=dtype), idx, scale, 0)
            scale = scale / xp.take(counts, idx, axis=0)
        if padding_idx >= 0:
            scale = xp.where(idx == padding_idx, xp.zeros_like(scale), scale)
        return scale

    def embedding(weight: Any, idx: Any) -> Any:
        """The rows of the 2-d ``weight`` at the integer ``idx`` (any shape): shape
        ``idx.shape + (embedding_dim,)``."""
        flat = xp.reshape(xp.astype(idx, xp.int64), (-1,))
        rows = xp.take(weight, flat, axis=0)
        return xp.reshape(rows, (*tuple(idx.shape), weight.shape[1]))

    def embedding_backward(g: Any, idx: Any, num_weights: int, padding_idx: int,
                           by_freq: bool) -> Any:
        """The embedding's weight gradient: zeros ``(num_weights, D)`` with the rows of ``g``
        added at their indices (none for ``padding_idx``; scaled by 1/count when
        ``by_freq``)."""
        d = g.shape[-1]
        flat = xp.reshape(xp.astype(idx, xp.int64), (-1,))
        rows = xp.reshape(g, (flat.shape[0], d))
        scale = _row_scale(flat, num_weights, padding_idx, by_freq, g.dtype)
        if scale is not None:
            rows = rows * xp.reshape(scale, (-1, 1))
        return index_add(xp.zeros((num_weights, d), dtype=g.dtype), flat, rows, 0)

    def embedding_double_backward(gg: Any, idx: Any, padding_idx: int) -> Any:
        """The rows of ``gg`` at ``idx``, zero where the index is ``padding_idx``: PyTorch's
        ``embedding_dense_double_backward`` (which, as there, ignores ``scale_grad_by_freq``)."""
        flat = xp.reshape(xp.astype(idx, xp.int64), (-1,))
        rows = xp.take(gg, flat, axis=0)
        scale = _row_scale(flat, gg.shape[0], padding_idx, False, gg.dtype)
        if scale is not None:
            rows = rows * xp.reshape(scale, (-1, 1))
        return xp.reshape(rows, (*tuple(idx.shape), gg.shape[1]))

    def one_hot_classes(idx: Any, num_classes: int) -> Any:
        """int64 ``idx.shape + (num_classes,)``: 1 at each element's class, else 0."""
        classes = xp.arange(num_classes, dtype=xp.int64)
        hit = xp.expand_dims(xp.astype(idx, xp.int64), axis=-1) == classes
        return xp.astype(hit, xp.int64)

    return {"embedding": embedding, "embedding_backward": embedding_backward,
            "embedding_double_backward": embedding_double_backward,
            "one_hot_classes": one_hot_classes}
