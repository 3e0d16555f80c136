"""Op-database entries of the attention, embedding, one_hot and dropout: the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

``embedding`` is linear in its weight, so its samples square the lookup (or scale the weight)
to give the second-order check something to differentiate; one sample multiplies by a
``one_hot`` (not differentiable: no entry of its own). The padding row's missing gradient and
``scale_grad_by_freq``'s division are not derivatives (finite differences disagree, in PyTorch
too), so these samples keep the padding row and repeated indices out of the lookup;
``test_parity_embedding_dropout.py`` checks them against PyTorch. ``dropout`` is random in
training, so its samples are the deterministic cases (``p=0``, ``p=1``, ``training=False``).
``scaled_dot_product_attention``'s samples are those PyTorch runs on its math path (3-d
inputs, or a float mask), whose double backward PyTorch has."""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]

_IDX = [[0, 2, 4], [2, 2, 1]]


def _emb(lib: Any, w: Any, **kw: Any) -> Any:
    return lib.nn.functional.embedding(lib.int_tensor(_IDX), w, **kw)


def _sdpa(lib: Any, q: Any, k: Any, v: Any, **kw: Any) -> Any:
    return lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def _bool_mask(lib: Any, shape: tuple[int, ...]) -> Any:
    m = np.random.default_rng(5).random(shape) > 0.4
    m[..., 0] = True
    return lib.tensor(m.tolist(), dtype=lib.bool)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("embedding", (
        Sample("2-d indices, squared", ((5, 3),), lambda lib, w: _emb(lib, w) ** 2),
        Sample("padding_idx", ((5, 3),), lambda lib, w: _emb(lib, w * w, padding_idx=3)),
        Sample("negative padding_idx", ((6, 3),),
               lambda lib, w: _emb(lib, w, padding_idx=-1) * _emb(lib, w)),
        Sample("scale_grad_by_freq", ((5, 3),),
               lambda lib, w: lib.nn.functional.embedding(
                   lib.int_tensor([[0, 2], [4, 1]]), w, scale_grad_by_freq=True) ** 2),
        Sample("0-d index", ((4, 2),),
               lambda lib, w: lib.nn.functional.embedding(lib.int_tensor(3), w) * w[0]),
        Sample("batched times one_hot", ((5, 3),),
               lambda lib, w: (_emb(lib, w) ** 2) * lib.nn.functional.one_hot(
                   lib.int_tensor([[0, 2, 1], [2, 2, 1]]), 3)),
    )),
    OpInfo("dropout", (
        Sample("p=0", ((2, 3),), lambda lib, a: lib.nn.functional.dropout(a, 0.0) * a),
        Sample("eval", ((2, 3),),
               lambda lib, a: lib.nn.functional.dropout(a * a, 0.4, training=False)),
        Sample("p=1 batched", ((2, 2, 3),),
               lambda lib, a: lib.nn.functional.dropout(a, 1.0) + a * a),
        Sample("0-d eval", ((),), lambda lib, a: lib.nn.functional.dropout(a, 0.5, False) * a),
    )),
    OpInfo("scaled_dot_product_attention", (
        Sample("3-d", ((2, 3, 4), (2, 5, 4), (2, 5, 2)), _sdpa, domain=(0.2, 1.2)),
        Sample("2-d, scale", ((3, 4), (5, 4), (5, 3)),
               lambda lib, q, k, v: _sdpa(lib, q, k, v, scale=0.7), domain=(0.2, 1.2)),
        Sample("3-d causal", ((2, 4, 3), (2, 4, 3), (2, 4, 3)),
               lambda lib, q, k, v: _sdpa(lib, q, k, v, is_causal=True), domain=(0.2, 1.2)),
        Sample("3-d bool mask broadcast", ((2, 3, 4), (2, 5, 4), (2, 5, 2)),
               lambda lib, q, k, v: _sdpa(lib, q, k, v, attn_mask=_bool_mask(lib, (3, 5))),
               domain=(0.2, 1.2)),
        Sample("batched 4-d float mask", ((2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 4), (2, 3, 3)),
               lambda lib, q, k, v, m: _sdpa(lib, q, k, v, attn_mask=m), domain=(0.2, 1.2)),
    )),
)

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "embedding": (("embedding",), ("embedding_backward", "embedding_double_backward")),
    "dropout": (("mul",), ("mul",)),
    "scaled_dot_product_attention": (("matmul", "mul", "softmax", "add", "where", "masked_fill"),
                                     ("matmul", "softmax_backward", "where")),
}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops at every size of ``SIZES``: ``embedding`` with a
    table of ``n`` rows looked up at every row; two queries attending over ``n`` keys (a
    softmax and a weighted sum of ``n`` terms);
    ``dropout`` in evaluation mode (the deterministic case) on ``n`` values."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    def lookup(lib: Any, w: Any) -> Any:
        idx = lib.arange(w.shape[0], device=lib.device)
        return lib.nn.functional.embedding(idx, w) ** 2

    def attend(lib: Any, q: Any, k: Any, v: Any) -> Any:
        return lib.nn.functional.scaled_dot_product_attention(q, k, v)

    def dropped(lib: Any, x: Any) -> Any:
        return lib.nn.functional.dropout(x, 0.5, training=False) ** 2

    return [_row("embedding", "sizes",
                 [SweepSample(f"n={n}", _pool((n, 2)), lookup, n=n) for n in SIZES]),
            _row("scaled_dot_product_attention", "sizes",
                 [SweepSample(f"n={n} keys, 2 queries", _pool((1, 2, 2), (1, n, 2), (1, n, 2)),
                              attend, tol="size", n=n) for n in SIZES]),
            _row("dropout", "sizes",
                 [SweepSample(f"n={n},eval", _pool((n,)), dropped, n=n) for n in SIZES])]


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows
