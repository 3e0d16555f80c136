"""``backends.gemm.matmul_wt``: ``x @ w.T`` with the operands swapped where the BLAS runs that
faster. Whatever it decides, the result must be the bits of ``x @ w.T``, C-ordered."""

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import gemm


@pytest.fixture(autouse=True)
def fresh_decisions():
    saved = dict(gemm._swap), dict(gemm._trials)
    gemm._swap.clear()
    gemm._trials.clear()
    yield
    for table, old in zip((gemm._swap, gemm._trials), saved):
        table.clear()
        table.update(old)


def _operands(rows, out, inp, dtype, seed=0):
    r = np.random.default_rng(seed)
    return (r.standard_normal((rows, inp)).astype(dtype),
            r.standard_normal((out, inp)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows,out,inp", [(1, 256, 256), (8, 512, 300), (64, 1024, 784),
                                          (65, 512, 512), (64, 16, 16), (0, 512, 512)])
def test_result_is_the_bits_of_x_at_w_t_in_c_order(dtype, rows, out, inp):
    x, w = _operands(rows, out, inp, dtype)
    expected = x @ w.T
    for _ in range(3):  # the first call decides (for shapes in range), the others use it
        got = gemm.matmul_wt(x, w)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, expected)
    in_range = 0 < rows <= gemm.MAX_ROWS and w.size >= gemm.MIN_WEIGHT
    assert (len(gemm._swap) == 1) == in_range


def test_a_decision_to_swap_is_used_and_gives_c_order():
    x, w = _operands(8, 512, 512, np.float32)
    gemm._swap[("f", 8, 512, 512)] = True
    got = gemm.matmul_wt(x, w)
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-5, atol=1e-4)


def test_the_swap_is_refused_when_its_bits_differ(monkeypatch):
    x, w = _operands(8, 512, 512, np.float32)
    real = gemm._swapped
    monkeypatch.setattr(gemm, "_swapped", lambda a, b: np.nextafter(real(a, b), np.inf))
    monkeypatch.setattr(gemm, "MARGIN", 1e9)  # however fast it would be
    got = gemm.matmul_wt(x, w)
    np.testing.assert_array_equal(got, x @ w.T)
    assert gemm._swap[("f", 8, 512, 512)] is False


def test_the_decisions_are_bounded(monkeypatch):
    monkeypatch.setattr(gemm, "MAX_SHAPES", 3)
    monkeypatch.setattr(gemm, "ROUNDS", 1)
    w = np.ones((256, 256), np.float32)
    for rows in range(1, 8):
        gemm.matmul_wt(np.ones((rows, 256), np.float32), w)
        assert len(gemm._swap) <= 3


def test_a_full_table_starts_over_with_its_trial_counts(monkeypatch):
    monkeypatch.setattr(gemm, "MAX_SHAPES", 2)
    monkeypatch.setattr(gemm, "MAX_TRIALS", 1)
    monkeypatch.setattr(gemm, "ROUNDS", 1)
    w = np.ones((256, 256), np.float32)
    for rows in (1, 2):  # 1 row measured, 2 rows over the trial bound: plain, unmeasured
        gemm.matmul_wt(np.ones((rows, 256), np.float32), w)
    assert gemm._trials == {("f", 256, 256): 1} and len(gemm._swap) == 2
    gemm.matmul_wt(np.ones((3, 256), np.float32), w)  # the table is full: it starts over ...
    assert gemm._trials == {("f", 256, 256): 1}  # ... and 3 rows is measured afresh
    assert list(gemm._swap) == [("f", 3, 256, 256)]


def test_linear_forward_and_backward_through_it_match_numpy():
    x, w = _operands(16, 512, 384, np.float32, seed=3)
    b = np.random.default_rng(4).standard_normal(512).astype(np.float32)
    tx, tw, tb = rg.tensor(x, requires_grad=True), rg.tensor(w, requires_grad=True), rg.tensor(b)
    y = rg.nn.functional.linear(tx, tw, tb)
    np.testing.assert_array_equal(y.detach().numpy(), x @ w.T + b)
    y.sum().backward()
    np.testing.assert_allclose(tx.grad.numpy(), np.ones((16, 512), np.float32) @ w, rtol=1e-5)


def test_a_weight_shape_is_measured_for_a_bounded_number_of_batch_sizes(monkeypatch):
    monkeypatch.setattr(gemm, "ROUNDS", 1)
    calls = []
    real = gemm._swapped
    monkeypatch.setattr(gemm, "_swapped", lambda a, b: calls.append(a.shape[0]) or real(a, b))
    w = np.ones((256, 256), np.float32)
    for rows in range(1, 2 * gemm.MAX_TRIALS + 1):
        x = np.ones((rows, 256), np.float32)
        np.testing.assert_array_equal(gemm.matmul_wt(x, w), x @ w.T)
    measured = sorted(set(calls))
    assert measured == list(range(1, gemm.MAX_TRIALS + 1))  # later batch sizes: plain, unmeasured
    assert all(gemm._swap[("f", rows, 256, 256)] is False
               for rows in range(gemm.MAX_TRIALS + 1, 2 * gemm.MAX_TRIALS + 1))
