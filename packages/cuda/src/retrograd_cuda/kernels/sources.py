"""Every line of CUDA C the package owns, in one module, and the launch geometry that goes with it.

Why one module: the same strings are compiled by CuPy at run time on a GPU and by NVRTC in
the no-GPU checks (``retrograd_cuda.kernels.nvrtc``), and the same constants drive the
launches (``fused``) and the CPU emulation of the bias reduction's summation order
(``tests/test_cuda_summation_order.py``), so what CI checks is what runs. Nothing here imports
CuPy.

Two kinds of source:

* ``ELEMENTWISE``: specs for ``cupy.ElementwiseKernel`` (parameters, one-line operation,
  preamble). The compile check feeds them to CuPy's own code generator and compiles its
  output (``nvrtc.elementwise_sources``).
* ``RAW_MODULE``: a complete translation unit for ``cupy.RawModule`` with ``extern "C"`` entry
  points, one per (kernel, dtype), so no C++ name mangling is involved. Raw kernels are kept
  only where one launch does what CuPy needs two or more for: a row reduction plus the
  update (softmax backwards), and the activation derivative written *and* its column sum
  reduced in the same pass (the bias gradient).

Agreement with the CPU backend (stated in the package README and docs/vendors.md): the
activation derivatives use the CPU's operation order with no fused multiply-add, so they are
bitwise equal (but for float32 subnormals, which CuPy's ``-ftz=true`` flushes to zero); the
kernels with ``exp`` differ by CUDA's exp error (at most 2 ulp); every sum is compensated
(``COMPENSATED``), within the bound of ``bias_error_bound``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: CUDA C type for each float dtype the fused kernels handle; others use the reference kernels.
CTYPES: dict[str, str] = {"float32": "float", "float64": "double"}

#: Suffix of the ``extern "C"`` entry points per dtype.
SUFFIX: dict[str, str] = {"float32": "f32", "float64": "f64"}

#: Unit roundoff per dtype: the ``u`` of the error bounds.
UNIT_ROUNDOFF: dict[str, float] = {"float32": 2.0**-24, "float64": 2.0**-53}

ACTIVATIONS = r"""
// Products that must not be contracted into a fused multiply-add: the CPU backend rounds
// y * y before subtracting it, and so must we, or 1 - y*y differs near |y| = 1.
__device__ __forceinline__ float rg_mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rg_mul_rn(double a, double b) { return __dmul_rn(a, b); }
// Backward: derivatives in terms of the saved forward OUTPUT y (what the autograd nodes save),
// in the CPU backend's order of operations (backends/numpy.py), so the results are its bits.
template <typename T> __device__ __forceinline__ T rg_relu_bw(T g, T y) {
    return y <= T(0) ? T(0) : g;  // PyTorch's threshold_backward, as on cpu: 0 where y <= 0
                                  // (also for an inf or NaN g), else g (a NaN y passes g)
}
template <typename T> __device__ __forceinline__ T rg_tanh_bw(T g, T y) {
    return (T(1) - rg_mul_rn(y, y)) * g;
}
template <typename T> __device__ __forceinline__ T rg_sigmoid_bw(T g, T y) {
    return ((T(1) - y) * y) * g;
}
// Forward activations. sigmoid: one exp, no overflow for either sign (exp of a non-positive
// number only); NaN stays NaN. relu: NaN stays NaN and -0.0 gives 0.0, as torch and the cpu
// backend (np.maximum(x, 0)) give.
template <typename T> __device__ __forceinline__ T rg_sigmoid(T x) {
    if (x >= T(0)) return T(1) / (T(1) + exp(-x));
    const T e = exp(x);
    return e / (T(1) + e);
}
template <typename T> __device__ __forceinline__ T rg_relu(T x) {
    return !(x <= T(0)) ? x : T(0);
}
"""

COMPENSATED = r"""
// Compensated summation (TwoSum, Knuth): a running total is a pair (s, e) whose sum carries
// the total; TwoSum gives the rounding error of s + x exactly, and e collects those errors.
// The result is as accurate as a sum in twice the working precision, then rounded once:
// |result - exact| <= u |exact| + (D u)^2 sum |x| for D additions on the longest path
// (sources.bias_error_bound). No multiplication is involved, so no FMA contraction applies.
template <typename T> __device__ __forceinline__ void rg_cadd(T& s, T& e, T x) {
    const T t = s + x;
    const T bp = t - s;
    const T err = (s - (t - bp)) + (x - bp);
    s = t;
    e = e + err;
}
template <typename T> __device__ __forceinline__ void rg_cmerge(T& s, T& e, T s2, T e2) {
    rg_cadd(s, e, s2);
    e = e + e2;
}
// inf or NaN in s: its error terms are NaN, and the plain sum's answer (s) is the right one
template <typename T> __device__ __forceinline__ T rg_cfinal(T s, T e) {
    return isfinite(s) ? s + e : s;
}
"""


@dataclass(frozen=True)
class ElementwiseSpec:
    """What ``cupy.ElementwiseKernel(in_params, out_params, operation, name, preamble=...)`` takes.

    Parameters use CuPy's syntax (``"T g, T y"``): ``T`` is the float type, ``I`` an integer
    type, a dtype name a fixed type. ``scalars`` names the inputs passed as scalars, not
    arrays (the compile check needs to know).
    """

    name: str
    in_params: str
    out_params: str
    operation: str
    preamble: str = ""
    scalars: tuple[str, ...] = ()


#: ``check_class_targets``: the key of a bad target is ``seq << TARGET_SEQ_SHIFT | index``:
#: targets of up to 2**40 elements, 2**23 checks between two reads of the record.
TARGET_SEQ_SHIFT = 40

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
    # softmax-cross-entropy backward, (exp(logp) - onehot) * (g / count), the reference's
    # operations in its order. target (N, 1), g (N, 1) or 0-d (read on the device: no host
    # sync) and col (the column index, (C,)) broadcast against logp (N, C): CuPy's indexer
    # does the index arithmetic, in 32 bits below 2**31 elements, and takes strided inputs.
    "cross_entropy_backward": ElementwiseSpec(
        "rg_cross_entropy_backward",
        "T logp, I target, T g, T count, int32 col",
        "T gx",
        "gx = (exp(logp) - (target == col ? T(1) : T(0))) * (g / count)",
        scalars=("count",),
    ),
    # cross_entropy's class-target check, on the device, no sync (kernels.targets): a target
    # outside [0, n) records its position in the record of the device and stream, rec[0],
    # as an atomicMax of ~(seq << SEQ_SHIFT | i) -- the largest complement is the smallest
    # key, i.e. the first bad target of the earliest check -- and a target of -100 (PyTorch's
    # ignore_index, refused) the check's number in rec[1], as ~seq. A record of zeros: no bad
    # target. Only a bad element writes, so a good batch costs one read per target.
    "check_class_targets": ElementwiseSpec(
        "rg_check_class_targets",
        "I t, int64 n, int64 seq",
        "raw uint64 rec",
        "const long long v = (long long)t;"
        " if (v < 0 || v >= n) {"
        " if (v == -100) atomicMax(&rec[1], ~(unsigned long long)seq);"
        f" else atomicMax(&rec[0], ~(((unsigned long long)seq << {TARGET_SEQ_SHIFT})"
        " | (unsigned long long)i)); }",
        scalars=("n", "seq"),
    ),
}

# -- the fused bias-gradient kernel's launch geometry ----------------------------------------
# Block: BIAS_COLS columns (one warp reads 32 consecutive elements of a row: coalesced) by
# BIAS_ROWS threads down the rows. Grid: ceil(m / BIAS_COLS) column tiles by G row blocks.
BIAS_COLS = 32
BIAS_ROWS = 8
#: Row blocks per column tile aim at this many resident blocks per SM in all...
BIAS_BLOCKS_PER_SM = 4
#: ...but a thread gets at least this many rows (fewer blocks for short inputs)...
BIAS_MIN_RUN = 8
#: ...and at most this many: more row blocks past that, which bounds every thread's sum.
BIAS_MAX_RUN = 2048
MAX_GRID_Y = 65535


def bias_grid(n: int, m: int, sm_count: int) -> tuple[int, int]:
    """``(grid_x, grid_y)`` of the bias kernel for an ``(n, m)`` gradient on ``sm_count`` SMs.

    Thread ``(tx, ty)`` of block ``(bx, by)`` sums rows ``by * BIAS_ROWS + ty + j * grid_y *
    BIAS_ROWS`` (j = 0, 1, ...) of column ``bx * BIAS_COLS + tx``: at most ``BIAS_MAX_RUN``
    of them while ``n <= MAX_GRID_Y * BIAS_ROWS * BIAS_MAX_RUN`` (1.07e9 rows).
    """
    grid_x = max(1, -(-m // BIAS_COLS))
    rows = BIAS_ROWS
    fill = min(-(-n // (rows * BIAS_MIN_RUN)), (BIAS_BLOCKS_PER_SM * sm_count) // grid_x)
    grid_y = max(1, -(-n // (rows * BIAS_MAX_RUN)), fill)
    return grid_x, min(grid_y, MAX_GRID_Y)


def bias_depth(n: int, grid_y: int) -> int:
    """The most compensated additions any term's partial sum goes through (the ``D`` of the
    bound): its thread's run, the block's merge of BIAS_ROWS rows, and, with several row
    blocks, each last-block thread's share of the partials and the second BIAS_ROWS merge;
    every merge is counted twice (its TwoSum and its error term)."""
    run = -(-n // (grid_y * BIAS_ROWS))
    depth = run + 2 * (BIAS_ROWS - 1) + 1
    if grid_y > 1:
        depth += 2 * -(-grid_y // BIAS_ROWS) + 2 * (BIAS_ROWS - 1)
    return depth


def bias_error_bound(n: int, m: int, sm_count: int, dtype: str = "float32") -> float:
    """Bound on ``|gb - S| / sum|x|`` for the fused bias gradient of ``n`` rows (S the exact
    column sum of the rounded terms ``x``); for terms of one sign it bounds the relative error.

    Compensated summation (Ogita, Rump and Oishi's Sum2, SIAM J. Sci. Comput. 26(6), 2005, on a
    tree): S = s + (sum of the TwoSum errors) exactly; the errors total at most
    ``u * (1 + gamma_D) * D * sum|x|`` (each TwoSum's error is at most u times its rounded
    partial sum, and a term is in at most D of those) and are themselves summed with relative
    error ``gamma_D``; the final ``s + e`` rounds once. Hence
    ``u + (1 + u) * gamma_D * u * (1 + gamma_D) * D`` with ``gamma_D = D u / (1 - D u)``,
    about ``u + (D u)**2``.
    """
    u = UNIT_ROUNDOFF[dtype]
    _, grid_y = bias_grid(n, m, sm_count)
    d = bias_depth(n, grid_y)
    gamma = d * u / (1 - d * u)
    return u + (1 + u) * gamma * u * (1 + gamma) * d


_ROW_KERNELS = r"""
// ---------------------------------------------------------------------------------------
// Row reductions: one block per row of a contiguous (rows, cols) matrix. blockDim.x is a
// power of two between 32 and 256, chosen by the host for the row length. Each thread sums
// its columns compensated; the (s, e) pairs are merged by a shuffle tree.
template <typename T> __device__ T rg_block_sum(T s, T e) {
    __shared__ T warp_s[32], warp_e[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        rg_cmerge(s, e, __shfl_down_sync(0xffffffffu, s, o), __shfl_down_sync(0xffffffffu, e, o));
    if (lane == 0) { warp_s[warp] = s; warp_e[warp] = e; }
    __syncthreads();
    const unsigned n_warps = (blockDim.x + 31u) >> 5;
    s = threadIdx.x < n_warps ? warp_s[threadIdx.x] : T(0);
    e = threadIdx.x < n_warps ? warp_e[threadIdx.x] : T(0);
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1)
            rg_cmerge(s, e, __shfl_down_sync(0xffffffffu, s, o),
                      __shfl_down_sync(0xffffffffu, e, o));
        if (lane == 0) warp_s[0] = rg_cfinal(s, e);
    }
    __syncthreads();
    const T total = warp_s[0];
    __syncthreads();  // warp_s may be reused by the caller's next row
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
        T s = T(0), e = T(0);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            rg_cadd(s, e, is_log ? gr[c] : rg_mul_rn(gr[c], yr[c]));
        const T total = rg_block_sum(s, e);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            out[c] = is_log ? gr[c] - exp(yr[c]) * total : yr[c] * (gr[c] - total);
    }
}
"""

_BIAS_KERNEL = r"""
// ---------------------------------------------------------------------------------------
// Fused backward of act(x @ W.T + b) for a contiguous (n, m) gradient g and saved output y:
//   ga = act'(g, y)          written once, read by the two cuBLAS matmuls that follow
//   gb = ga.sum(axis=0)      reduced in the same pass, compensated and deterministic:
// block (bx, by) owns columns [32 bx, 32 bx + 32); thread (tx, ty) sums rows
// by * 8 + ty + j * 8 * gridDim.y (a run of at most BIAS_MAX_RUN, sources.bias_grid) as an
// (s, e) pair; row ty = 0 merges the block's 8 pairs in order. With gridDim.y == 1 it writes
// gb; otherwise the pairs go to partial[0, by, :] and partial[1, by, :], and the last block to
// finish a column tile (atomic ticket on counters[bx], which it resets to 0) merges them:
// thread ty the partials b = ty, ty + 8, ..., then row ty = 0 those 8 pairs, in order.
template <typename T, int ACT>
__device__ void rg_bias_act_bw(const T* __restrict__ g, const T* __restrict__ y,
                               T* __restrict__ ga, T* __restrict__ gb, T* partial,
                               unsigned int* counters, long long n, int m) {
    __shared__ T tile_s[BIAS_ROWS][BIAS_COLS + 1], tile_e[BIAS_ROWS][BIAS_COLS + 1];
    __shared__ bool is_last;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int c = blockIdx.x * BIAS_COLS + tx;
    const unsigned int blocks = gridDim.y;
    T s = T(0), e = T(0);
    if (c < m) {
        #pragma unroll 4
        for (long long r = (long long)blockIdx.y * BIAS_ROWS + ty; r < n;
             r += (long long)blocks * BIAS_ROWS) {
            const long long i = r * m + c;
            T v;
            if (ACT == 0) v = rg_relu_bw(g[i], y[i]);
            else if (ACT == 1) v = rg_tanh_bw(g[i], y[i]);
            else v = rg_sigmoid_bw(g[i], y[i]);
            ga[i] = v;
            rg_cadd(s, e, v);
        }
    }
    tile_s[ty][tx] = s;
    tile_e[ty][tx] = e;
    __syncthreads();
    if (ty == 0 && c < m) {
        for (int k = 1; k < BIAS_ROWS; ++k) rg_cmerge(s, e, tile_s[k][tx], tile_e[k][tx]);
        if (blocks == 1) {
            gb[c] = rg_cfinal(s, e);
        } else {
            partial[(long long)blockIdx.y * m + c] = s;
            partial[((long long)blocks + blockIdx.y) * m + c] = e;
        }
    }
    if (blocks == 1) return;
    __threadfence();  // release: this block's partials are visible before its ticket
    __syncthreads();
    if (tx == 0 && ty == 0) is_last = atomicAdd(&counters[blockIdx.x], 1u) == blocks - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();  // acquire: every other block's partials are visible to this one
    s = T(0);
    e = T(0);
    if (c < m) {
        for (unsigned int b = ty; b < blocks; b += BIAS_ROWS)
            rg_cmerge(s, e, __ldcg(partial + (long long)b * m + c),
                      __ldcg(partial + ((long long)blocks + b) * m + c));
    }
    tile_s[ty][tx] = s;
    tile_e[ty][tx] = e;
    __syncthreads();
    if (ty == 0 && c < m) {
        for (int k = 1; k < BIAS_ROWS; ++k) rg_cmerge(s, e, tile_s[k][tx], tile_e[k][tx]);
        gb[c] = rg_cfinal(s, e);
    }
    if (tx == 0 && ty == 0) counters[blockIdx.x] = 0u;  // ready for the next launch
}
"""

#: The activations of the fused linear kernels, by their ``ACT`` template index.
BIAS_ACTS: tuple[str, ...] = ("relu", "tanh", "sigmoid")


def _entry_points(ctype: str, suffix: str) -> str:
    """The ``extern "C"`` wrappers of one dtype (unmangled names CuPy can look up)."""
    t = ctype
    lines = [
        f'extern "C" __global__ void rg_softmax_bw_rows_{suffix}(const {t}* g, const {t}* y,'
        f" {t}* gx, long long rows, int cols, int is_log)"
        " { rg_softmax_bw_rows(g, y, gx, rows, cols, is_log); }",
    ]
    for act_id, act in enumerate(BIAS_ACTS):
        lines.append(
            f'extern "C" __global__ void rg_bias_{act}_bw_{suffix}(const {t}* g, const {t}* y,'
            f" {t}* ga, {t}* gb, {t}* partial, unsigned int* counters, long long n, int m)"
            f" {{ rg_bias_act_bw<{t}, {act_id}>(g, y, ga, gb, partial, counters, n, m); }}"
        )
    return "\n".join(lines) + "\n"


RAW_MODULE: str = (
    f"#define BIAS_COLS {BIAS_COLS}\n#define BIAS_ROWS {BIAS_ROWS}\n"
    + ACTIVATIONS
    + COMPENSATED
    + _ROW_KERNELS
    + _BIAS_KERNEL
    + "".join(_entry_points(CTYPES[d], SUFFIX[d]) for d in CTYPES)
)

#: Every ``extern "C"`` entry point of ``RAW_MODULE``, for lookups and for the tests.
RAW_ENTRY_POINTS: tuple[str, ...] = tuple(
    f"{stem}_{SUFFIX[d]}"
    for d in CTYPES
    for stem in ("rg_softmax_bw_rows",) + tuple(f"rg_bias_{a}_bw" for a in BIAS_ACTS)
)

#: NVRTC options of ``RAW_MODULE`` (``fused.raw_function`` and the compile check share them).
RAW_OPTIONS: tuple[str, ...] = ("--std=c++17",)

__all__ = [
    "ACTIVATIONS",
    "BIAS_ACTS",
    "BIAS_COLS",
    "BIAS_ROWS",
    "COMPENSATED",
    "CTYPES",
    "ELEMENTWISE",
    "ElementwiseSpec",
    "RAW_ENTRY_POINTS",
    "RAW_MODULE",
    "RAW_OPTIONS",
    "SUFFIX",
    "TARGET_SEQ_SHIFT",
    "bias_depth",
    "bias_error_bound",
    "bias_grid",
]
