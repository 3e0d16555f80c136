"""Host side of the fused kernels: shape checks, launch geometry, caches, and fallbacks.

Each ``make_*`` returns a kernel with the signature the core's reference kernel has
(``retrograd.backends.reference``), so the backend can swap one for the other. A fused kernel
handles float32 and float64 with matching dtypes; anything else (float16, mixed dtypes, shapes
the fast path does not cover) goes to the reference kernel it replaces. The two paths agree
within the tolerance stated in the package README (the activation derivatives bitwise; the
sums within their error bounds), not always to the bit.

``CALLS`` counts, per kernel, how often the fast path ran and how often it fell back, so a test
can assert that the fused kernel really ran (a fused path that silently falls back passes
every "fused equals unfused" test).

Every launch runs on the device of its first array (``_on``), with compiled functions, the
bias kernel's ticket counters and partial sums cached per device (and per stream for the
buffers): one kernel launch per call, no memset, no per-call module lookup.

This module imports CuPy at the top: only ``CudaBackend`` imports it, and only once CuPy is
known to be usable.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import threading
from collections.abc import Callable
from typing import Any

import cupy
import numpy as np

from .sources import (
    BIAS_ACTS,
    BIAS_COLS,
    BIAS_ROWS,
    ELEMENTWISE,
    RAW_MODULE,
    RAW_OPTIONS,
    SUFFIX,
    bias_grid,
)

Kernel = Callable[..., Any]

_FLOAT_SUFFIX = {np.dtype(name): suffix for name, suffix in SUFFIX.items()}
_INDEX_DTYPES = (np.dtype("int32"), np.dtype("int64"))

#: Fast-path runs per kernel name, and fallbacks as ``"<name>:fallback"``.
CALLS: collections.Counter[str] = collections.Counter()


# ---------------------------------------------------------------------------------------------
# compiled objects and buffers, built on first use (CuPy caches the binaries on disk)
# ---------------------------------------------------------------------------------------------
@functools.cache
def elementwise(key: str) -> cupy.ElementwiseKernel:
    """The ``cupy.ElementwiseKernel`` of ``sources.ELEMENTWISE[key]`` (CuPy compiles it per
    device and argument layout on first use, and caches that)."""
    spec = ELEMENTWISE[key]
    return cupy.ElementwiseKernel(
        spec.in_params, spec.out_params, spec.operation, spec.name, preamble=spec.preamble
    )


_lock = threading.Lock()
_modules: dict[int, cupy.RawModule] = {}
_functions: dict[tuple[int, str], cupy.RawKernel] = {}


def raw_function(name: str, dev: int) -> cupy.RawKernel:
    """Entry point ``name`` of ``sources.RAW_MODULE`` on device ``dev``, compiled once."""
    fn = _functions.get((dev, name))
    if fn is None:
        with _lock, cupy.cuda.Device(dev):
            mod = _modules.get(dev)
            if mod is None:
                mod = _modules[dev] = cupy.RawModule(code=RAW_MODULE, options=RAW_OPTIONS)
            fn = _functions[(dev, name)] = mod.get_function(name)
    return fn


def _on(dev: int) -> contextlib.AbstractContextManager[Any]:
    """Make ``dev`` the current device for a launch (a no-op when it already is)."""
    if dev == cupy.cuda.runtime.getDevice():
        return contextlib.nullcontext()
    return cupy.cuda.Device(dev)


@functools.cache
def _sm_count(dev: int) -> int:
    return int(cupy.cuda.Device(dev).attributes["MultiProcessorCount"])


_buffers: dict[tuple[Any, ...], Any] = {}


def _stream_key() -> tuple[int, int]:
    """(current device, current stream): what a cached buffer is private to."""
    return cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr


def _buffer(key: tuple[Any, ...], size: int, dtype: Any, zeroed: bool = False) -> Any:
    """A cached 1-D buffer of at least ``size`` elements on the current device and stream.

    Stream-ordered reuse is safe: every kernel that uses it runs on that stream, one after the
    other; a buffer outgrown is freed into CuPy's pool, which hands memory back out on the
    same stream only. ``zeroed`` buffers are zeroed once, when made (the bias kernel leaves
    its ticket counters at 0). A buffer lives as long as the process, at the size of the
    largest call so far.
    """
    full = (*_stream_key(), *key)
    buf = _buffers.get(full)
    if buf is None or buf.size < size:
        make = cupy.zeros if zeroed else cupy.empty
        buf = _buffers[full] = make((max(size, 2 * (buf.size if buf is not None else 0)),),
                                    dtype=dtype)
    return buf


_columns: dict[tuple[int, int], Any] = {}


def _column_index(dev: int, c: int) -> Any:
    """``arange(c)`` as int32 on ``dev`` (the cross-entropy kernel's column index), cached."""
    col = _columns.get((dev, c))
    if col is None:
        if len(_columns) > 64:
            _columns.clear()
        col = _columns[(dev, c)] = cupy.arange(c, dtype=cupy.int32)
    return col


def _suffix(*arrays: Any) -> str | None:
    """The dtype suffix when every array is a CuPy float32/float64 array of one dtype."""
    dt = arrays[0].dtype if isinstance(arrays[0], cupy.ndarray) else None
    for a in arrays:
        if not isinstance(a, cupy.ndarray) or a.dtype != dt:
            return None
    return _FLOAT_SUFFIX.get(dt)


def _row_threads(cols: int) -> int:
    """Block size of the row kernels: a power of two in [32, 256] covering the row if it can."""
    return min(256, max(32, 1 << max(0, (cols - 1).bit_length())))


# ---------------------------------------------------------------------------------------------
# elementwise kernels: activations, their derivatives, accumulation
# ---------------------------------------------------------------------------------------------
def make_activation_backward(key: str, reference: Kernel) -> Kernel:
    def kernel(g: Any, y: Any) -> Any:
        if _suffix(g, y) is None:
            CALLS[f"{key}:fallback"] += 1
            return reference(g, y)
        CALLS[key] += 1
        with _on(g.data.device_id):
            return elementwise(key)(g, y)

    kernel.__name__ = f"fused_{key}"
    kernel.__doc__ = f"{key}(g, y) as one CUDA elementwise kernel (sources.ELEMENTWISE)."
    return kernel


def make_activation(key: str, reference: Kernel) -> Kernel:
    def kernel(x: Any) -> Any:
        if _suffix(x) is None:
            CALLS[f"{key}:fallback"] += 1
            return reference(x)
        CALLS[key] += 1
        with _on(x.data.device_id):
            return elementwise(key)(x)

    kernel.__name__ = f"fused_{key}"
    kernel.__doc__ = f"{key}(x) forward as one CUDA elementwise kernel (sources.ELEMENTWISE)."
    return kernel


def make_accumulate(reference: Kernel) -> Kernel:
    def accumulate_(dst: Any, src: Any) -> None:
        """dst += src in place, one kernel; other dtypes fall back to the reference."""
        if _suffix(dst, src) is None:
            CALLS["accumulate_:fallback"] += 1
            reference(dst, src)
            return
        CALLS["accumulate_"] += 1
        with _on(dst.data.device_id):
            elementwise("accumulate_")(src, dst)

    return accumulate_


# ---------------------------------------------------------------------------------------------
# softmax / log_softmax backward: one block per row, the row sum and the update in one launch
# ---------------------------------------------------------------------------------------------
def _rows_backward(g: Any, y: Any, dim: int, is_log: int, suffix: str) -> Any:
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
        raw_function(f"rg_softmax_bw_rows_{suffix}", y.data.device_id)(
            (min(rows, 2**31 - 1),),
            (_row_threads(cols),),
            (g, y, out, np.int64(rows), np.int32(cols), np.int32(is_log)),
        )
    return cupy.moveaxis(out, last, dim) if dim != last else out


def make_softmax_backward(reference: Kernel, *, is_log: bool) -> Kernel:
    name = "log_softmax_backward" if is_log else "softmax_backward"

    def kernel(g: Any, y: Any, dim: int) -> Any:
        suffix = _suffix(g, y)
        if suffix is None or y.ndim == 0 or not isinstance(dim, int):
            CALLS[f"{name}:fallback"] += 1
            return reference(g, y, dim)
        if not -y.ndim <= dim < y.ndim:
            raise IndexError(f"dim {dim} is out of range for a tensor of {y.ndim} dimension(s)")
        CALLS[name] += 1
        with _on(y.data.device_id):
            return _rows_backward(g, y, dim % y.ndim, int(is_log), suffix)

    kernel.__name__ = f"fused_{name}"
    return kernel


# ---------------------------------------------------------------------------------------------
# cross-entropy backward: softmax probabilities minus the one-hot target, scaled, one pass
# ---------------------------------------------------------------------------------------------
def make_cross_entropy_backward(reference: Kernel) -> Kernel:
    def cross_entropy_backward(g: Any, x: Any, logp: Any, target: Any, reduction: str) -> Any:
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        n = logp.shape[0] if getattr(logp, "ndim", 0) == 2 else -1
        if (
            n < 0
            or _suffix(logp) is None
            or not isinstance(target, cupy.ndarray)
            or target.dtype.kind not in "iu"
            or target.shape != (n,)
            or not isinstance(g, cupy.ndarray)
            or (g.shape != (n,) if reduction == "none" else g.size != 1)
        ):
            CALLS["cross_entropy_backward:fallback"] += 1
            return reference(g, x, logp, target, reduction)
        CALLS["cross_entropy_backward"] += 1
        dev = logp.data.device_id
        with _on(dev):
            if target.dtype not in _INDEX_DTYPES:
                target = target.astype(cupy.int64)
            g = g.astype(logp.dtype, copy=False).reshape((n, 1) if reduction == "none" else ())
            count = logp.dtype.type(n if reduction == "mean" else 1)
            col = _column_index(dev, logp.shape[1])
            return elementwise("cross_entropy_backward")(logp, target.reshape(n, 1), g, count, col)

    return cross_entropy_backward


# ---------------------------------------------------------------------------------------------
# linear + activation backward: derivative and bias gradient in one pass, then two cuBLAS GEMMs
# ---------------------------------------------------------------------------------------------
def bias_activation_backward(act: str, g: Any, y: Any) -> tuple[Any, Any]:
    """``(ga, gb)`` with ``ga = act'(g, y)`` and ``gb = ga.sum(0)`` for 2-D ``g``, ``y``.

    One kernel launch. Deterministic, and compensated: within ``sources.bias_error_bound`` of
    the exact column sums (README, "Precision").
    """
    suffix = _suffix(g, y)
    if suffix is None or g.ndim != 2 or g.shape != y.shape:
        raise ValueError("bias_activation_backward takes two 2-D float arrays of one shape")
    dev = g.data.device_id
    with _on(dev):
        g = cupy.ascontiguousarray(g)
        y = cupy.ascontiguousarray(y)
        n, m = g.shape
        ga = cupy.empty((n, m), dtype=g.dtype)
        if n == 0 or m == 0:
            return ga, cupy.zeros((m,), dtype=g.dtype)
        if m >= 2**31:
            raise ValueError(f"bias gradient: {m} columns is too many")
        gb = cupy.empty((m,), dtype=g.dtype)
        grid_x, grid_y = bias_grid(n, m, _sm_count(dev))
        counters = _buffer(("counters",), grid_x, cupy.uint32, zeroed=True)
        partial = _buffer(("partial", g.dtype.char), 2 * grid_y * m, g.dtype) if grid_y > 1 else gb
        raw_function(f"rg_bias_{act}_bw_{suffix}", dev)(
            (grid_x, grid_y),
            (BIAS_COLS, BIAS_ROWS),
            (g, y, ga, gb, partial, counters, np.int64(n), np.int32(m)),
        )
    return ga, gb


def make_linear_activation_backward(act: str, reference: Kernel) -> Kernel:
    name = f"linear_{act}_backward"
    ew_key = f"{act}_backward"

    def kernel(
        g: Any, y: Any, x: Any, weight: Any, need_x: bool, need_w: bool, need_b: bool
    ) -> tuple[Any, Any, Any]:
        # only the arrays the requested gradients read: the node saves the weight only when
        # x needs a gradient, and x only when the weight does (a first layer: weight=None)
        needed = (g, y) + ((weight,) if need_x else ()) + ((x,) if need_w else ())
        if (
            _suffix(*needed) is None
            or g.ndim != 2
            or g.shape != y.shape
            or (need_x and weight.ndim != 2)
            or (need_w and x.ndim != 2)
        ):
            CALLS[f"{name}:fallback"] += 1
            return reference(g, y, x, weight, need_x, need_w, need_b)
        CALLS[name] += 1
        with _on(g.data.device_id):
            if need_b:
                ga, gb = bias_activation_backward(act, g, y)
            else:
                ga, gb = elementwise(ew_key)(g, y), None
            gx = cupy.matmul(ga, weight) if need_x else None
            gw = cupy.matmul(ga.T, x) if need_w else None
        return gx, gw, gb

    kernel.__name__ = f"fused_{name}"
    kernel.__doc__ = (
        f"{name}: {act}' and the bias-gradient column sum in one kernel, "
        "then gx = ga @ W and gw = ga.T @ x on cuBLAS."
    )
    return kernel


def fused_kernels(reference: dict[str, Kernel]) -> dict[str, Kernel]:
    """Every fused kernel, each falling back to ``reference[name]`` outside its fast path."""
    out: dict[str, Kernel] = {k: make_activation(k, reference[k]) for k in ("relu", "sigmoid")}
    for act in BIAS_ACTS:
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
    "CALLS",
    "FUSED_NAMES",
    "bias_activation_backward",
    "elementwise",
    "fused_kernels",
    "raw_function",
]
