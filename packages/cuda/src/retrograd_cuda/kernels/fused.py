"""Host side of the fused kernels: shape checks, launch geometry, and fallbacks.

Each ``make_*`` returns a kernel with the signature the core's reference kernel has
(``retrograd.backends.reference``), so the backend can swap one for the other. A fused kernel
handles float32 and float64 with matching dtypes; anything else (float16, mixed dtypes, shapes
the fast path does not cover) goes to the reference kernel it replaces, so results never depend
on whether the fast path applied.

This module imports CuPy at the top: only ``CudaBackend`` imports it, and only once CuPy is
known to be usable.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import cupy
import numpy as np

from .sources import BIAS_COLS, BIAS_ROWS, ELEMENTWISE, RAW_MODULE, SUFFIX

Kernel = Callable[..., Any]

_FLOAT_SUFFIX = {np.dtype(name): suffix for name, suffix in SUFFIX.items()}
_SCALAR = {np.dtype("float32"): np.float32, np.dtype("float64"): np.float64}

#: Threads per block of the grid-stride kernels.
THREADS = 256
#: Upper bound on blocks of a grid-stride launch (the kernels loop over the rest).
MAX_BLOCKS = 65535


# ---------------------------------------------------------------------------------------------
# compiled objects, built on first use (CuPy caches the binaries on disk per device)
# ---------------------------------------------------------------------------------------------
@functools.cache
def elementwise(key: str) -> cupy.ElementwiseKernel:
    """The ``cupy.ElementwiseKernel`` of ``sources.ELEMENTWISE[key]``."""
    spec = ELEMENTWISE[key]
    return cupy.ElementwiseKernel(
        spec.in_params, spec.out_params, spec.operation, spec.name, preamble=spec.preamble
    )


_modules: dict[int, cupy.RawModule] = {}
_modules_lock = threading.Lock()


def raw_function(name: str) -> cupy.RawKernel:
    """An entry point of ``sources.RAW_MODULE``, compiled for the current device."""
    dev = cupy.cuda.runtime.getDevice()
    mod = _modules.get(dev)
    if mod is None:
        with _modules_lock:
            mod = _modules.get(dev)
            if mod is None:
                mod = cupy.RawModule(code=RAW_MODULE, options=("--std=c++17",))
                _modules[dev] = mod
    return mod.get_function(name)


@functools.cache
def _sm_count(dev: int) -> int:
    return int(cupy.cuda.Device(dev).attributes["MultiProcessorCount"])


def _suffix(*arrays: Any) -> str | None:
    """The dtype suffix when every array is a CuPy float32/float64 array of one dtype."""
    dt = arrays[0].dtype
    for a in arrays:
        if not isinstance(a, cupy.ndarray) or a.dtype != dt:
            return None
    return _FLOAT_SUFFIX.get(dt)


def _grid_stride_blocks(n: int) -> int:
    return max(1, min(MAX_BLOCKS, -(-n // THREADS)))


def _row_threads(cols: int) -> int:
    """Block size of the row kernels: a power of two in [32, 256] covering the row if it can."""
    return min(256, max(32, 1 << max(0, (cols - 1).bit_length())))


# ---------------------------------------------------------------------------------------------
# activation backward: one elementwise pass instead of two or three temporaries
# ---------------------------------------------------------------------------------------------
def make_activation_backward(key: str, reference: Kernel) -> Kernel:
    def kernel(g: Any, y: Any) -> Any:
        if _suffix(g, y) is None:
            return reference(g, y)
        return elementwise(key)(g, y)

    kernel.__name__ = f"fused_{key}"
    kernel.__doc__ = f"{key}(g, y) as one CUDA elementwise kernel (sources.ELEMENTWISE)."
    return kernel


def make_activation(key: str, reference: Kernel) -> Kernel:
    def kernel(x: Any) -> Any:
        if _suffix(x) is None:
            return reference(x)
        return elementwise(key)(x)

    kernel.__name__ = f"fused_{key}"
    kernel.__doc__ = f"{key}(x) forward as one CUDA elementwise kernel (sources.ELEMENTWISE)."
    return kernel


def make_accumulate(reference: Kernel) -> Kernel:
    def accumulate_(dst: Any, src: Any) -> None:
        """dst += src in place, one kernel; other dtypes fall back to the reference."""
        if _suffix(dst, src) is None:
            reference(dst, src)
            return
        elementwise("accumulate_")(src, dst)

    return accumulate_


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax backward: one block per row, the row sum and the update in one launch
# ---------------------------------------------------------------------------------------------
def _rows_backward(g: Any, y: Any, dim: int, is_log: int) -> Any:
    suffix = _suffix(g, y)
    if g.shape != y.shape:
        g = cupy.broadcast_to(g, y.shape)
    last = y.ndim - 1
    if dim != last:
        g = cupy.moveaxis(g, dim, last)
        y = cupy.moveaxis(y, dim, last)
    g = cupy.ascontiguousarray(g)
    y = cupy.ascontiguousarray(y)
    out = cupy.empty(y.shape, dtype=y.dtype)
    cols = y.shape[-1]
    rows = y.size // cols if cols else 0
    if rows and cols:
        if cols >= 2**31:
            raise ValueError(f"softmax backward: a row of {cols} elements is too long")
        raw_function(f"rg_softmax_bw_rows_{suffix}")(
            (min(rows, 2**31 - 1),),
            (_row_threads(cols),),
            (g, y, out, np.int64(rows), np.int32(cols), np.int32(is_log)),
        )
    return cupy.moveaxis(out, last, dim) if dim != last else out


def make_softmax_backward(reference: Kernel, *, is_log: bool) -> Kernel:
    def kernel(g: Any, y: Any, dim: int) -> Any:
        if _suffix(g, y) is None or y.ndim == 0 or not isinstance(dim, int):
            return reference(g, y, dim)
        if not -y.ndim <= dim < y.ndim:
            raise IndexError(f"dim {dim} is out of range for a tensor of {y.ndim} dimension(s)")
        return _rows_backward(g, y, dim % y.ndim, int(is_log))

    kernel.__name__ = "fused_log_softmax_backward" if is_log else "fused_softmax_backward"
    return kernel


# ---------------------------------------------------------------------------------------------
# cross-entropy backward: softmax probabilities minus the one-hot target, scaled, one pass
# ---------------------------------------------------------------------------------------------
def make_cross_entropy_backward(reference: Kernel) -> Kernel:
    def cross_entropy_backward(g: Any, x: Any, logp: Any, target: Any, reduction: str) -> Any:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        if (
            not isinstance(logp, cupy.ndarray)
            or logp.ndim != 2
            or not isinstance(target, cupy.ndarray)
            or target.dtype.kind not in "iu"
            or not isinstance(g, cupy.ndarray)
            or _FLOAT_SUFFIX.get(logp.dtype) is None
        ):
            return reference(g, x, logp, target, reduction)
        n, c = logp.shape
        if reduction == "none":
            if g.shape != (n,):
                return reference(g, x, logp, target, reduction)
            stride = 1
        else:
            if g.size != 1:
                return reference(g, x, logp, target, reduction)
            stride = 0
        suffix = _FLOAT_SUFFIX[logp.dtype]
        g = cupy.ascontiguousarray(g.astype(logp.dtype, copy=False).reshape(-1))
        logp = cupy.ascontiguousarray(logp)
        target = cupy.ascontiguousarray(target.astype(cupy.int64, copy=False))
        gx = cupy.empty((n, c), dtype=logp.dtype)
        if n and c:
            scale = 1.0 / n if reduction == "mean" else 1.0
            raw_function(f"rg_cross_entropy_bw_{suffix}")(
                (_grid_stride_blocks(n * c),),
                (THREADS,),
                (g, np.int64(stride), _SCALAR[logp.dtype](scale), logp, target, gx,
                 np.int64(n), np.int32(c)),
            )
        return gx

    return cross_entropy_backward


# ---------------------------------------------------------------------------------------------
# linear + activation backward: mask and bias gradient in one pass, then two cuBLAS GEMMs
# ---------------------------------------------------------------------------------------------
def bias_activation_backward(act: str, g: Any, y: Any) -> tuple[Any, Any]:
    """``(ga, gb)`` with ``ga = act'(g, y)`` and ``gb = ga.sum(0)`` for 2-D ``g``, ``y``.

    One kernel launch (plus a small memset of the block-ticket counters when the rows are
    split over several blocks). Deterministic: partial sums are added in block order.
    """
    suffix = _suffix(g, y)
    if suffix is None or g.ndim != 2 or g.shape != y.shape:
        raise ValueError("bias_activation_backward takes two 2-D float arrays of one shape")
    g = cupy.ascontiguousarray(g)
    y = cupy.ascontiguousarray(y)
    n, m = g.shape
    ga = cupy.empty((n, m), dtype=g.dtype)
    if n == 0 or m == 0:
        return ga, cupy.zeros((m,), dtype=g.dtype)
    gb = cupy.empty((m,), dtype=g.dtype)
    grid_x = -(-m // BIAS_COLS)
    target_blocks = 2 * _sm_count(cupy.cuda.runtime.getDevice())
    grid_y = max(1, min(-(-n // (8 * BIAS_ROWS)), target_blocks // grid_x, 65535))
    if grid_y > 1:
        partial = cupy.empty((grid_y, m), dtype=g.dtype)
        counters = cupy.zeros((grid_x,), dtype=cupy.uint32)
    else:  # the kernel writes gb directly and touches neither buffer
        partial = gb
        counters = cupy.empty((1,), dtype=cupy.uint32)
    raw_function(f"rg_bias_{act}_bw_{suffix}")(
        (grid_x, grid_y),
        (BIAS_COLS, BIAS_ROWS),
        (g, y, ga, gb, partial, counters, np.int64(n), np.int32(m)),
    )
    return ga, gb


def make_linear_activation_backward(act: str, reference: Kernel) -> Kernel:
    ew_key = f"{act}_backward"

    def kernel(
        g: Any, y: Any, x: Any, weight: Any, need_x: bool, need_w: bool, need_b: bool
    ) -> tuple[Any, Any, Any]:
        if (
            _suffix(g, y, x, weight) is None
            or g.ndim != 2
            or g.shape != y.shape
            or x.ndim != 2
            or weight.ndim != 2
        ):
            return reference(g, y, x, weight, need_x, need_w, need_b)
        if need_b:
            ga, gb = bias_activation_backward(act, g, y)
        else:
            ga, gb = elementwise(ew_key)(g, y), None
        gx = cupy.matmul(ga, weight) if need_x else None
        gw = cupy.matmul(ga.T, x) if need_w else None
        return gx, gw, gb

    kernel.__name__ = f"fused_linear_{act}_backward"
    kernel.__doc__ = (
        f"linear_{act}_backward: {act}' and the bias-gradient column sum in one kernel, "
        "then gx = ga @ W and gw = ga.T @ x on cuBLAS."
    )
    return kernel


def fused_kernels(reference: dict[str, Kernel]) -> dict[str, Kernel]:
    """Every fused kernel, each falling back to ``reference[name]`` outside its fast path."""
    out: dict[str, Kernel] = {k: make_activation(k, reference[k]) for k in ("relu", "sigmoid")}
    for act in ("relu", "tanh", "sigmoid"):
        key = f"{act}_backward"
        out[key] = make_activation_backward(key, reference[key])
        lin = f"linear_{act}_backward"
        out[lin] = make_linear_activation_backward(act, reference[lin])
    out["softmax_backward"] = make_softmax_backward(reference["softmax_backward"], is_log=False)
    out["log_softmax_backward"] = make_softmax_backward(
        reference["log_softmax_backward"], is_log=True
    )
    out["cross_entropy_backward"] = make_cross_entropy_backward(reference["cross_entropy_backward"])
    out["accumulate_"] = make_accumulate(reference["accumulate_"])
    return out


FUSED_NAMES: tuple[str, ...] = (
    "relu",
    "sigmoid",
    "relu_backward",
    "tanh_backward",
    "sigmoid_backward",
    "softmax_backward",
    "log_softmax_backward",
    "cross_entropy_backward",
    "linear_relu_backward",
    "linear_tanh_backward",
    "linear_sigmoid_backward",
    "accumulate_",
)

__all__ = [
    "FUSED_NAMES",
    "bias_activation_backward",
    "elementwise",
    "fused_kernels",
    "raw_function",
]
