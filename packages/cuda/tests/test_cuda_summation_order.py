"""The fused bias gradient's summation ORDER, emulated in NumPy float32: this checks the order
and its error bound, NOT the kernel (nothing here runs on a GPU).

The emulation follows ``rg_bias_act_bw`` in ``sources.RAW_MODULE`` step for step, driven by
the constants and the grid function the launcher uses (``BIAS_ROWS``, ``bias_grid``): each
thread's compensated run over rows ``by * BIAS_ROWS + ty + j * grid_y * BIAS_ROWS``, the
block's merge of its ``BIAS_ROWS`` pairs in order, then, with several row blocks, the last
block's threads merging partials ``ty, ty + BIAS_ROWS, ...`` and row 0 merging those pairs,
and ``s + e`` at the end. IEEE float32 arithmetic in NumPy is the GPU's (round to nearest,
no FMA: the sums contain no products); the one difference, CuPy's flush of subnormals to
zero, cannot arise with these data. That the kernel computes this order is what the gpu test
``test_bias_gradient_precision_against_torch`` checks, on a GPU, against float64 and torch.

It also runs the order the kernel had before (each thread's rows added one after another in
float32, then the partials the same way), to show the check can fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from retrograd_cuda.kernels.sources import (
    BIAS_MAX_RUN,
    BIAS_ROWS,
    MAX_GRID_Y,
    bias_error_bound,
    bias_grid,
)

# The emulation itself is in _bias_order.py (the gpu test compares the kernel with it, bitwise).

F32 = np.float32
FLOOR = 2.0**-23  # docs/vendors.md: a reduction's error may reach max(1.5 x torch's, 2**-23)
SM_COUNTS = {"A100": 108, "H100/H200": 132}


CASES = [(1_000, 256), (100_000, 16), (1_000_000, 4), (4_000_000, 2)]


@pytest.mark.parametrize("sm", sorted(SM_COUNTS.values()))
@pytest.mark.parametrize("n, m", CASES)
def test_emulated_order_meets_its_bound_and_the_floor(n, m, sm, bias_order):
    """Uniform [0, 1) terms (one sign: the bound is a relative one), test_precision's shapes."""
    ga = np.random.default_rng(n + m + sm).random((n, m), dtype=F32)
    err = bias_order.max_rel(bias_order.emulate_bias_sum(ga, sm), bias_order.truth(ga))
    bound = bias_error_bound(n, m, sm)
    assert err <= bound, (err, bound)
    assert bound <= FLOOR  # the bound itself is within the bar, at every tested size


def test_previous_order_fails_where_the_new_one_passes(bias_order):
    """4M rows on an H200's 132 SMs: ~1,000 float32 additions per thread in a row."""
    n, m, sm = 4_000_000, 2, SM_COUNTS["H100/H200"]
    ga = np.random.default_rng(7).random((n, m), dtype=F32)
    exact, b = bias_order.truth(ga), bias_order
    old = b.max_rel(b.previous_order_sum(ga, sm), exact)
    new = b.max_rel(b.emulate_bias_sum(ga, sm), exact)
    assert old > FLOOR > bias_error_bound(n, m, sm) >= new


@pytest.mark.parametrize("n, m", CASES)
def test_emulation_matches_torch_or_better(n, m, bias_order):
    """The emulated order against torch's own float32 column sum (CPU) on the same data."""
    torch = pytest.importorskip("torch")
    ga = np.random.default_rng(11).random((n, m), dtype=F32)
    exact = bias_order.truth(ga)
    ours = bias_order.max_rel(bias_order.emulate_bias_sum(ga, SM_COUNTS["H100/H200"]), exact)
    theirs = bias_order.max_rel(torch.from_numpy(ga).sum(0).numpy(), exact)
    assert ours <= max(1.5 * theirs, FLOOR), (ours, theirs)


def test_non_finite_terms_give_the_plain_sums_answer(bias_order):
    ga = np.ones((5000, 4), F32)
    ga[17, 0] = np.inf
    ga[18, 1] = np.nan
    ga[19, 2], ga[4000, 2] = np.inf, -np.inf
    out = bias_order.emulate_bias_sum(ga, 132)
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2]) and out[3] == 5000


@pytest.mark.parametrize("m", [1, 32, 33, 1024, 50_000])
@pytest.mark.parametrize("n", [1, 63, 64, 10**4, 4 * 10**6, 10**8, 10**9])
def test_every_thread_sums_a_bounded_run(n, m):
    for sm in SM_COUNTS.values():
        grid_x, grid_y = bias_grid(n, m, sm)
        assert grid_x * 32 >= m and 1 <= grid_y <= MAX_GRID_Y
        assert -(-n // (grid_y * BIAS_ROWS)) <= BIAS_MAX_RUN
