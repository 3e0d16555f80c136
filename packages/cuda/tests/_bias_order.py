"""The fused bias gradient's summation order, emulated in NumPy float32 (see
``test_cuda_summation_order``): shared by that CPU test and by the gpu test that checks the
kernel computes exactly this (bitwise). Loaded through the ``bias_order`` fixture."""

from __future__ import annotations

import numpy as np

from retrograd_cuda.kernels.sources import BIAS_ROWS, bias_grid

F32 = np.float32


def _cadd(s, e, x):
    t = s + x
    bp = t - s
    err = (s - (t - bp)) + (x - bp)
    return t, e + err


def _cmerge(s, e, s2, e2):
    s, e = _cadd(s, e, s2)
    return s, e + e2


def _merge_rows(s, e):
    """Row 0 merges rows 1..BIAS_ROWS-1 of (BIAS_ROWS, ...) pairs, in order."""
    s0, e0 = s[0], e[0]
    for k in range(1, BIAS_ROWS):
        s0, e0 = _cmerge(s0, e0, s[k], e[k])
    return s0, e0


def emulate_bias_sum(ga: np.ndarray, sm_count: int) -> np.ndarray:
    """``ga.sum(0)`` in the kernel's order and arithmetic (``ga`` float32 (n, m))."""
    n, m = ga.shape
    _, grid_y = bias_grid(n, m, sm_count)
    threads = grid_y * BIAS_ROWS  # row-threads per column: thread t = by * BIAS_ROWS + ty
    run = -(-n // threads)
    rows = np.zeros((run * threads, m), F32)  # zeros past n: adding 0 changes no value
    rows[:n] = ga
    rows = rows.reshape(run, grid_y, BIAS_ROWS, m)  # row j * threads + by * BIAS_ROWS + ty
    s = np.zeros((grid_y, BIAS_ROWS, m), F32)
    e = np.zeros_like(s)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(run):
            s, e = _cadd(s, e, rows[j])
        ps, pe = _merge_rows(s.transpose(1, 0, 2), e.transpose(1, 0, 2))  # (grid_y, m)
        if grid_y > 1:  # the last block: thread ty merges partials ty, ty + 8, ...
            k = -(-grid_y // BIAS_ROWS)
            pad = np.zeros((k * BIAS_ROWS - grid_y, m), F32)
            ps = np.concatenate([ps, pad]).reshape(k, BIAS_ROWS, m)
            pe = np.concatenate([pe, pad]).reshape(k, BIAS_ROWS, m)
            s, e = np.zeros((BIAS_ROWS, m), F32), np.zeros((BIAS_ROWS, m), F32)
            for i in range(k):
                s, e = _cmerge(s, e, ps[i], pe[i])
            ps, pe = _merge_rows(s, e)
        else:
            ps, pe = ps[0], pe[0]
        return np.where(np.isfinite(ps), ps + pe, ps)


def previous_order_sum(ga: np.ndarray, sm_count: int) -> np.ndarray:
    """The order before: 2 blocks per SM, each thread's rows added one by one in float32, the
    block's rows and then the partials likewise (the counter-example)."""
    n, m = ga.shape
    grid_x = -(-m // 32)
    grid_y = max(1, min(-(-n // 64), 2 * sm_count // grid_x, 65535))
    threads = grid_y * BIAS_ROWS
    run = -(-n // threads)
    rows = np.zeros((run * threads, m), F32)
    rows[:n] = ga
    rows = rows.reshape(run, threads, m)
    acc = np.zeros((threads, m), F32)
    for j in range(run):
        acc = acc + rows[j]
    blocks = acc.reshape(grid_y, BIAS_ROWS, m)
    part = blocks[:, 0]
    for k in range(1, BIAS_ROWS):
        part = part + blocks[:, k]
    total = part[0]
    for b in range(1, grid_y):
        total = total + part[b]
    return total


def truth(ga: np.ndarray) -> np.ndarray:
    """The column sums of float32 ``ga``, pairwise in float64 (within ~1e-16)."""
    return np.add.reduce(ga.T.astype(np.float64), axis=1)


def max_rel(got: np.ndarray, exact: np.ndarray) -> float:
    """The largest relative error over the outputs."""
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact) / np.abs(exact)))
