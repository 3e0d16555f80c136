"""Every line of CUDA C the package owns, in one module.

Why one module: the same strings are compiled by CuPy at run time on a GPU and by NVRTC in
the no-GPU tests (``retrograd_cuda.kernels.nvrtc``), so what CI checks is exactly what runs.
Nothing here imports CuPy.

Two kinds of source:

* ``ELEMENTWISE``: specs for ``cupy.ElementwiseKernel`` (parameters, one-line operation,
  preamble). CuPy wraps them in its own indexing code; for the compile test we wrap the same
  operation in a ``__global__`` template of our own (``nvrtc.elementwise_source``).
* ``RAW_MODULE``: a complete translation unit for ``cupy.RawModule`` with ``extern "C"``
  entry points, one per (kernel, dtype), so no C++ name mangling is involved.

The activation derivatives live once, in ``ACTIVATIONS``, and both kinds include it: the
fused linear+activation kernel and the plain activation backward cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

#: CUDA C type for each float dtype the fused kernels handle; others use the reference kernels.
CTYPES: dict[str, str] = {"float32": "float", "float64": "double"}

#: Suffix of the ``extern "C"`` entry points per dtype.
SUFFIX: dict[str, str] = {"float32": "f32", "float64": "f64"}

ACTIVATIONS = r"""
// Backward: derivatives in terms of the saved forward OUTPUT y (what the autograd nodes save).
template <typename T> __device__ __forceinline__ T rg_relu_bw(T g, T y) {
    return y > T(0) ? g : T(0);
}
template <typename T> __device__ __forceinline__ T rg_tanh_bw(T g, T y) {
    return g * (T(1) - y * y);
}
template <typename T> __device__ __forceinline__ T rg_sigmoid_bw(T g, T y) {
    return g * y * (T(1) - y);
}
// Forward activations. sigmoid: one exp, no overflow for either sign (exp of a non-positive
// number only); NaN stays NaN. relu: x > 0 ? x : 0 (so relu(NaN) = 0, like the reference).
template <typename T> __device__ __forceinline__ T rg_sigmoid(T x) {
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    const T e = exp(x);
    return e / (T(1) + e);
}
template <typename T> __device__ __forceinline__ T rg_relu(T x) {
    return x > T(0) ? x : T(0);
}
"""


@dataclass(frozen=True)
class ElementwiseSpec:
    """What ``cupy.ElementwiseKernel(in_params, out_params, operation, name, preamble=...)`` takes.

    Parameters use CuPy's syntax (``"T g, T y"``); ``T`` is the one type placeholder used.
    """

    name: str
    in_params: str
    out_params: str
    operation: str
    preamble: str = ""


ELEMENTWISE: dict[str, ElementwiseSpec] = {
    "relu_backward": ElementwiseSpec(
        "rg_relu_backward", "T g, T y", "T gx", "gx = rg_relu_bw(g, y)", ACTIVATIONS
    ),
    "tanh_backward": ElementwiseSpec(
        "rg_tanh_backward", "T g, T y", "T gx", "gx = rg_tanh_bw(g, y)", ACTIVATIONS
    ),
    "sigmoid_backward": ElementwiseSpec(
        "rg_sigmoid_backward", "T g, T y", "T gx", "gx = rg_sigmoid_bw(g, y)", ACTIVATIONS
    ),
    # forward activations the reference writes as 3-5 array calls (where + zeros_like;
    # exp(-logaddexp(0, -x)))
    "relu": ElementwiseSpec("rg_relu_forward", "T x", "T y", "y = rg_relu(x)", ACTIVATIONS),
    "sigmoid": ElementwiseSpec(
        "rg_sigmoid_forward", "T x", "T y", "y = rg_sigmoid(x)", ACTIVATIONS
    ),
    # dst is an output that is also read: CuPy passes it by reference, so this is in place.
    "accumulate_": ElementwiseSpec("rg_accumulate", "T src", "T dst", "dst = dst + src"),
}

# Block shape of the fused activation + bias-gradient kernel: 32 columns per block (one warp
# reads 32 consecutive floats of a row: coalesced), BIAS_ROWS threads down the rows.
BIAS_COLS = 32
BIAS_ROWS = 8

_ROW_KERNELS = r"""
// ---------------------------------------------------------------------------------------
// Row reductions: one block per row of a contiguous (rows, cols) matrix. blockDim.x is a
// power of two between 32 and 1024, chosen by the host for the row length.
template <typename T> __device__ T rg_block_sum(T v) {
    __shared__ T warp_sums[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    const unsigned n_warps = (blockDim.x + 31u) >> 5;
    v = threadIdx.x < n_warps ? warp_sums[threadIdx.x] : T(0);
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) warp_sums[0] = v;
    }
    __syncthreads();
    const T total = warp_sums[0];
    __syncthreads();  // warp_sums may be reused by the caller's next reduction
    return total;
}

// softmax:      gx = y * (g - sum(g * y))          (y = softmax output)
// log_softmax:  gx = g - exp(y) * sum(g)           (y = log_softmax output)
template <typename T>
__device__ void rg_softmax_bw_rows(const T* __restrict__ g, const T* __restrict__ y,
                                   T* __restrict__ gx, long long rows, int cols, int is_log) {
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* gr = g + r * cols;
        const T* yr = y + r * cols;
        T* out = gx + r * cols;
        T acc = T(0);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            acc += is_log ? gr[c] : gr[c] * yr[c];
        const T s = rg_block_sum(acc);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[c] = is_log ? gr[c] - exp(yr[c]) * s : yr[c] * (gr[c] - s);
    }
}

// cross_entropy: gx[i, c] = g[i * g_stride] * scale * (exp(logp[i, c]) - (c == target[i]))
// g_stride is 0 for "mean"/"sum" (a 0-d gradient, read on the device: no host sync) and 1
// for "none"; scale is 1/N for "mean", else 1.
template <typename T>
__device__ void rg_cross_entropy_bw(const T* __restrict__ g, long long g_stride, T scale,
                                    const T* __restrict__ logp,
                                    const long long* __restrict__ target,
                                    T* __restrict__ gx, long long rows, int cols) {
    const long long n = rows * cols;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / cols;
        const int c = (int)(i - r * cols);
        const T onehot = target[r] == (long long)c ? T(1) : T(0);
        gx[i] = g[r * g_stride] * scale * (exp(logp[i]) - onehot);
    }
}
"""

_BIAS_KERNEL = r"""
// ---------------------------------------------------------------------------------------
// Fused backward of act(x @ W.T + b) for a contiguous (n, m) gradient g and saved output y:
//   ga = act'(g, y)          written once, read by the two cuBLAS matmuls that follow
//   gb = ga.sum(axis=0)      reduced in the same pass, deterministically:
// block (bx, by) owns columns [32 bx, 32 bx + 32) and rows by, by + gridDim.y, ... (strided by
// 8 threads). With gridDim.y == 1 the block writes gb itself; otherwise each block writes its
// column sums to partial[by, :], and the last block to finish a column tile (atomic ticket on
// counters[bx], which it resets to 0) adds the partials in block order and writes gb.
template <typename T, int ACT>
__device__ void rg_bias_act_bw(const T* __restrict__ g, const T* __restrict__ y,
                               T* __restrict__ ga, T* __restrict__ gb, T* partial,
                               unsigned int* counters, long long n, int m) {
    __shared__ T tile[BIAS_ROWS][BIAS_COLS + 1];
    __shared__ bool is_last;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * BIAS_COLS + tx;
    T acc = T(0);
    if (c < m) {
        for (long long r = (long long)blockIdx.y * BIAS_ROWS + ty; r < n;
             r += (long long)gridDim.y * BIAS_ROWS) {
            const long long i = r * m + c;
            T v;
            if (ACT == 0) v = rg_relu_bw(g[i], y[i]);
            else if (ACT == 1) v = rg_tanh_bw(g[i], y[i]);
            else v = rg_sigmoid_bw(g[i], y[i]);
            ga[i] = v;
            acc += v;
        }
    }
    tile[ty][tx] = acc;
    __syncthreads();
    if (ty == 0) {
        T s = T(0);
        for (int k = 0; k < BIAS_ROWS; ++k) s += tile[k][tx];
        if (gridDim.y == 1) {
            if (c < m) gb[c] = s;
        } else {
            if (c < m) partial[(long long)blockIdx.y * m + c] = s;
            __threadfence();
        }
    }
    if (gridDim.y == 1) return;
    __syncthreads();
    if (tx == 0 && ty == 0) {
        const unsigned int ticket = atomicAdd(&counters[blockIdx.x], 1u);
        is_last = (ticket == gridDim.y - 1);
    }
    __syncthreads();
    if (!is_last) return;
    if (ty == 0 && c < m) {
        T s = T(0);
        for (unsigned int b = 0; b < gridDim.y; ++b)
            s += ((volatile T*)partial)[(long long)b * m + c];
        gb[c] = s;
    }
    if (tx == 0 && ty == 0) counters[blockIdx.x] = 0u;
}
"""


def _entry_points(ctype: str, suffix: str) -> str:
    """The ``extern "C"`` wrappers of one dtype (unmangled names CuPy can look up)."""
    t = ctype
    lines = [
        f'extern "C" __global__ void rg_softmax_bw_rows_{suffix}(const {t}* g, const {t}* y,'
        f" {t}* gx, long long rows, int cols, int is_log)"
        " { rg_softmax_bw_rows(g, y, gx, rows, cols, is_log); }",
        f'extern "C" __global__ void rg_cross_entropy_bw_{suffix}(const {t}* g,'
        f" long long g_stride, {t} scale, const {t}* logp, const long long* target, {t}* gx,"
        " long long rows, int cols)"
        " { rg_cross_entropy_bw(g, g_stride, scale, logp, target, gx, rows, cols); }",
    ]
    for act_id, act in enumerate(("relu", "tanh", "sigmoid")):
        lines.append(
            f'extern "C" __global__ void rg_bias_{act}_bw_{suffix}(const {t}* g, const {t}* y,'
            f" {t}* ga, {t}* gb, {t}* partial, unsigned int* counters, long long n, int m)"
            f" {{ rg_bias_act_bw<{t}, {act_id}>(g, y, ga, gb, partial, counters, n, m); }}"
        )
    return "\n".join(lines) + "\n"


RAW_MODULE: str = (
    f"#define BIAS_COLS {BIAS_COLS}\n#define BIAS_ROWS {BIAS_ROWS}\n"
    + ACTIVATIONS
    + _ROW_KERNELS
    + _BIAS_KERNEL
    + "".join(_entry_points(CTYPES[d], SUFFIX[d]) for d in CTYPES)
)

#: Every ``extern "C"`` entry point of ``RAW_MODULE``, for lookups and for the tests.
RAW_ENTRY_POINTS: tuple[str, ...] = tuple(
    f"{stem}_{SUFFIX[d]}"
    for d in CTYPES
    for stem in (
        "rg_softmax_bw_rows",
        "rg_cross_entropy_bw",
        "rg_bias_relu_bw",
        "rg_bias_tanh_bw",
        "rg_bias_sigmoid_bw",
    )
)
