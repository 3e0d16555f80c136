"""Each fused CUDA kernel against the core's reference kernel (run by NumPy on the host).

Random inputs, float32 and float64, odd sizes, sizes that are not multiples of the block sizes
(32 x 8 tiles, 256-thread blocks), empty arrays, non-contiguous inputs, and the fallbacks.
Skipped, with the reason, where there is no GPU.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import retrograd_cuda
from retrograd.backends import reference_kernels

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

REF = reference_kernels(np)
DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-13)}
# matmuls: cuBLAS and NumPy's BLAS sum in different orders
MM_TOL = {"float32": dict(rtol=2e-4, atol=2e-4), "float64": dict(rtol=1e-10, atol=1e-11)}


@pytest.fixture(scope="module")
def K():
    return retrograd_cuda.backend.kernels


def seed(*parts) -> int:
    """A seed that is stable across processes (``hash`` of a str is randomized)."""
    return zlib.crc32(repr(parts).encode())


def rand(rng, shape, dtype, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def close(actual, expected, dtype, tol=TOL):
    import cupy

    assert isinstance(actual, cupy.ndarray)
    assert actual.dtype == np.dtype(dtype)
    got = cupy.asnumpy(actual)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, **tol[dtype])


SHAPES = [(0,), (1,), (31,), (33,), (257, 3), (129, 1000), (2, 3, 5)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["relu_backward", "tanh_backward", "sigmoid_backward"])
def test_activation_backward(cp, K, name, shape, dtype):
    rng = np.random.default_rng(seed(name, shape, dtype))
    g = rand(rng, shape, dtype)
    y = rand(rng, shape, dtype, -1, 1) if name != "sigmoid_backward" else rand(rng, shape, dtype, 0, 1)
    if name == "relu_backward":
        y = np.maximum(y, 0)
    close(K[name](cp.asarray(g), cp.asarray(y)), REF[name](g, y), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["relu", "sigmoid"])
def test_activation_forward(cp, K, name, shape, dtype):
    rng = np.random.default_rng(seed(name, shape, dtype))
    x = rand(rng, shape, dtype, -30, 30)
    if x.size:
        x.flat[0] = 0.0  # the relu boundary
    close(K[name](cp.asarray(x)), REF[name](x), dtype)


def test_activation_forward_extremes(cp, K):
    x = np.array([-1e30, -100.0, 0.0, 100.0, 1e30, np.inf, -np.inf], dtype=np.float32)
    got = cp.asnumpy(K["sigmoid"](cp.asarray(x)))
    np.testing.assert_allclose(got, REF["sigmoid"](x), rtol=1e-6, atol=1e-30)
    assert not np.isnan(got).any()
    nan = cp.asarray(np.array([np.nan], dtype=np.float64))
    assert cp.asnumpy(K["relu"](nan))[0] == REF["relu"](np.array([np.nan]))[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_activation_backward_non_contiguous(cp, K, dtype):
    rng = np.random.default_rng(1)
    g, y = rand(rng, (65, 33), dtype), rand(rng, (33, 65), dtype).T
    close(K["tanh_backward"](cp.asarray(g), cp.asarray(y.T).T), REF["tanh_backward"](g, y), dtype)


def test_activation_backward_float16_falls_back(cp, K):
    rng = np.random.default_rng(2)
    g, y = rand(rng, (37,), "float16"), rand(rng, (37,), "float16", 0, 1)
    out = K["sigmoid_backward"](cp.asarray(g), cp.asarray(y))
    assert out.dtype == np.float16
    np.testing.assert_allclose(cp.asnumpy(out), REF["sigmoid_backward"](g, y), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape, dim",
    [((0, 5), 1), ((5, 0), 1), ((1, 1), 1), ((7, 33), 1), ((7, 33), 0), ((300, 1000), -1),
     ((64, 2049), 1), ((3, 4, 5), 1), ((3, 4, 5), 0), ((3, 4, 5), -1), ((17,), 0)],
)
@pytest.mark.parametrize("name", ["softmax_backward", "log_softmax_backward"])
def test_softmax_backward(cp, K, name, shape, dim, dtype):
    rng = np.random.default_rng(seed(name, shape, dim))
    x = rand(rng, shape, "float64")
    if x.size:
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        y = e / e.sum(axis=dim, keepdims=True)
    else:
        y = x.copy()
    if name == "log_softmax_backward":
        y = np.log(np.maximum(y, 1e-300))
    y, g = y.astype(dtype), rand(rng, shape, dtype)
    got = K[name](cp.asarray(g), cp.asarray(y), dim)
    close(got, REF[name](g, y, dim), dtype, TOL if dtype == "float64" else MM_TOL)


def test_softmax_backward_bad_dim(cp, K):
    z = cp.zeros((2, 3), dtype=cp.float32)
    with pytest.raises(IndexError, match="dim 2"):
        K["softmax_backward"](z, z, 2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("n, c", [(0, 5), (1, 1), (37, 10), (513, 1000), (3, 257)])
def test_cross_entropy_backward(cp, K, n, c, reduction, dtype):
    if n == 0 and reduction == "mean":
        pytest.skip("the mean over no rows is undefined (the reference divides by zero)")
    rng = np.random.default_rng(seed(n, c, reduction, dtype))
    x = rand(rng, (n, c), dtype, -4, 4)
    m = x.astype("float64").max(axis=1, keepdims=True) if n else 0.0
    logp = (x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))).astype(dtype)
    target = rng.integers(0, c, size=n).astype(np.int64)
    g = rand(rng, (n,), dtype) if reduction == "none" else np.asarray(rng.uniform(0.5, 2), dtype)
    got = K["cross_entropy_backward"](
        cp.asarray(g), cp.asarray(x), cp.asarray(logp), cp.asarray(target), reduction
    )
    close(got, REF["cross_entropy_backward"](g, x, logp, target, reduction), dtype)


def test_cross_entropy_backward_int32_target_and_bad_reduction(cp, K):
    rng = np.random.default_rng(3)
    logp = np.log(np.full((4, 3), 1 / 3, dtype=np.float32))
    target = rng.integers(0, 3, size=4)
    g = np.asarray(1.0, np.float32)
    got = K["cross_entropy_backward"](
        cp.asarray(g), None, cp.asarray(logp), cp.asarray(target.astype(np.int32)), "sum"
    )
    close(got, REF["cross_entropy_backward"](g, None, logp, target, "sum"), "float32")
    with pytest.raises(ValueError, match="reduction"):
        K["cross_entropy_backward"](cp.asarray(g), None, cp.asarray(logp), cp.asarray(target), "avg")


LINEAR_SIZES = [(0, 5, 7), (1, 1, 1), (37, 33, 65), (1000, 17, 3), (512, 784, 1024), (70, 9, 31)]
NEEDS = [(True, True, True), (False, True, True), (True, False, False), (False, False, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("needs", NEEDS)
@pytest.mark.parametrize("n, n_in, n_out", LINEAR_SIZES)
@pytest.mark.parametrize("act", ["relu", "tanh", "sigmoid"])
def test_linear_activation_backward(cp, K, act, n, n_in, n_out, needs, dtype):
    rng = np.random.default_rng(seed(act, n, n_in, n_out, needs, dtype))
    x, w = rand(rng, (n, n_in), dtype), rand(rng, (n_out, n_in), dtype, -0.3, 0.3)
    b = rand(rng, (n_out,), dtype)
    pre = x.astype("float64") @ w.T.astype("float64") + b
    y = {"relu": np.maximum(pre, 0), "tanh": np.tanh(pre), "sigmoid": 1 / (1 + np.exp(-pre))}[act]
    y, g = y.astype(dtype), rand(rng, (n, n_out), dtype)
    name = f"linear_{act}_backward"
    got = K[name](cp.asarray(g), cp.asarray(y), cp.asarray(x), cp.asarray(w), *needs)
    want = REF[name](g, y, x, w, *needs)
    for got_i, want_i in zip(got, want):
        assert (got_i is None) == (want_i is None)
        if want_i is not None:
            close(got_i, want_i, dtype, MM_TOL)


@pytest.mark.parametrize("n, m", [(1, 1), (7, 33), (4096, 3), (512, 1024), (100000, 5)])
def test_bias_reduction_is_deterministic_and_counters_reset(cp, n, m):
    """Several blocks per column tile exercise the last-block reduction; repeating the call
    checks the ticket counters were reset and that the sum order never changes."""
    from retrograd_cuda.kernels.fused import bias_activation_backward

    rng = np.random.default_rng(n * 7 + m)
    g, y = rand(rng, (n, m), "float32"), rand(rng, (n, m), "float32", -1, 1)
    ga1, gb1 = bias_activation_backward("tanh", cp.asarray(g), cp.asarray(y))
    ga2, gb2 = bias_activation_backward("tanh", cp.asarray(g), cp.asarray(y))
    assert cp.array_equal(gb1, gb2) and cp.array_equal(ga1, ga2)
    want = REF["tanh_backward"](g.astype("float64"), y.astype("float64")).sum(axis=0)
    np.testing.assert_allclose(cp.asnumpy(gb1), want, rtol=1e-4, atol=1e-3)


def test_linear_activation_backward_falls_back_on_mixed_dtypes(cp, K):
    rng = np.random.default_rng(4)
    g, y = rand(rng, (5, 3), "float64"), rand(rng, (5, 3), "float64", 0, 1)
    x, w = rand(rng, (5, 2), "float32"), rand(rng, (3, 2), "float32")
    got = K["linear_relu_backward"](cp.asarray(g), cp.asarray(y), cp.asarray(x), cp.asarray(w),
                                    True, True, True)
    want = REF["linear_relu_backward"](g, y, x, w, True, True, True)
    for got_i, want_i in zip(got, want):
        np.testing.assert_allclose(cp.asnumpy(got_i), want_i, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (33,), (257, 129), (4, 5, 6)])
def test_accumulate_in_place(cp, K, shape, dtype):
    rng = np.random.default_rng(seed(shape, dtype))
    dst, src = rand(rng, shape, dtype), rand(rng, shape, dtype)
    want = dst + src
    d = cp.asarray(dst)
    ptr = d.data.ptr
    assert K["accumulate_"](d, cp.asarray(src)) is None
    assert d.data.ptr == ptr  # in place
    close(d, want, dtype)


def test_accumulate_into_a_non_contiguous_view(cp, K):
    rng = np.random.default_rng(5)
    base, src = rand(rng, (40, 30), "float32"), rand(rng, (30, 20), "float32")
    want = base.copy()
    want.T[:, ::2] += src
    b = cp.asarray(base)
    K["accumulate_"](b.T[:, ::2], cp.asarray(src))
    close(b, want, "float32")


@pytest.mark.parametrize("dtype", ["int64", "float16"])
def test_accumulate_other_dtypes_fall_back(cp, K, dtype):
    dst, src = np.arange(6).astype(dtype), np.ones(6, dtype)
    want = dst + src
    d = cp.asarray(dst)
    K["accumulate_"](d, cp.asarray(src))
    assert d.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(cp.asnumpy(d), want)
