"""``x @ w.T`` for a few-row ``x`` on NumPy: computed as ``(w @ x.T).T`` where that is faster
*and gives the same bits*, decided once per shape by measuring both.

Why: a linear layer's forward is ``x @ w.T`` with ``x`` of shape (batch, in) and the weight
(out, in). With a small batch, OpenBLAS (NumPy's BLAS) runs that product far slower than the
same product with the operands' roles swapped: on this project's machines, float32, one thread,
a (64, 1024) x (1024, 1024)^T product takes 1.5 ms as ``x @ w.T`` and 1.2 ms as
``(w @ x.T).T`` *including* the copy back to a C-ordered result (batch 8: 1.2 vs 0.5 ms);
float64 mostly goes the other way (up to 1.4x slower swapped at batch 64), and past a batch
of ~128 the copy costs more than the swap gains. How much either way depends on the BLAS build
and the CPU kernel it picks, so nothing here is hard-coded: the first product of a new
(dtype, batch, out, in) runs both forms (on the caller's own arrays, a few times each,
alternating) and keeps the swapped one only if it was faster by a clear margin *and*
bit-identical to ``x @ w.T``. The result is always C-ordered and always the bits ``x @ w.T``
gives: the choice moves time, never values.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = ["matmul_wt"]

MAX_ROWS = 64  # the swap is tried only for products with at most this many rows ...
MIN_WEIGHT = 256 * 256  # ... and a weight of at least this many elements
ROUNDS = 3  # timed rounds of each form when a shape is first seen
MARGIN = 0.9  # the swapped form must take at most this fraction of the plain one's time
MAX_SHAPES = 512  # remembered decisions; the table starts over when full
MAX_TRIALS = 8  # row counts measured per weight shape (varying batches): the rest stay plain

_swap: dict[tuple[str, int, int, int], bool] = {}
_trials: dict[tuple[str, int, int], int] = {}


def matmul_wt(x: Any, w: Any) -> Any:
    """``x @ w.T`` for 2-D NumPy arrays, in whichever order of operands this BLAS runs faster."""
    if (type(x) is not np.ndarray or type(w) is not np.ndarray or x.ndim != 2 or w.ndim != 2
            or not 0 < x.shape[0] <= MAX_ROWS or w.size < MIN_WEIGHT or x.dtype != w.dtype
            or x.dtype.kind != "f"):
        return np.matmul(x, w.T)
    key = (x.dtype.char, x.shape[0], w.shape[0], w.shape[1])
    swap = _swap.get(key)
    if swap is None:
        return _decide(key, x, w)
    if swap:
        return _swapped(x, w)
    return np.matmul(x, w.T)


def _swapped(x: Any, w: Any) -> Any:
    out = np.empty((x.shape[0], w.shape[0]), dtype=x.dtype)
    out[...] = np.matmul(w, x.T).T  # copied into C order: the layout ``x @ w.T`` has
    return out


def _decide(key: tuple[str, int, int, int], x: Any, w: Any) -> Any:
    """Measure both forms for ``key`` and remember the choice; returns ``x @ w.T``. A model
    fed batches of many sizes measures the first ``MAX_TRIALS`` of them per weight shape (the
    measuring costs about eight products, once per shape) and keeps the plain form for the
    others."""
    plain = np.matmul(x, w.T)
    if len(_swap) >= MAX_SHAPES:  # start over: decisions and trial counts together
        _swap.clear()
        _trials.clear()
    weight_key = (key[0], key[2], key[3])
    trials = _trials.get(weight_key, 0)
    if trials >= MAX_TRIALS:
        _swap[key] = False
        return plain
    _trials[weight_key] = trials + 1
    swapped = _swapped(x, w)
    swap = False
    if np.array_equal(plain, swapped, equal_nan=True):
        times: dict[bool, list[float]] = {False: [], True: []}
        for i in range(ROUNDS):
            for form in ((False, True) if i % 2 == 0 else (True, False)):  # alternate who's first
                t0 = time.perf_counter()
                _swapped(x, w) if form else np.matmul(x, w.T)
                times[form].append(time.perf_counter() - t0)
        median = {form: sorted(ts)[ROUNDS // 2] for form, ts in times.items()}
        swap = median[True] <= MARGIN * median[False]
    _swap[key] = swap
    return plain
