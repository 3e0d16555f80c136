"""Reference kernels, written once against an Array-API namespace ``xp``.

Two kinds live here:

* primitives (``add``, ``exp``, ``sum``, ``matmul``, ``reduce_to`` ...): one array function each;
* composite backward formulas (``tanh_backward``, ``linear_relu_backward`` ...), written against
  an op namespace ``F``. The backend binds them to its raw kernels for the fast walk, and the
  autograd layer binds the *same* functions to retrograd's differentiable ops for
  ``create_graph=True`` -- one formula, two executions. A device backend may replace a composite
  with a fused kernel (CuPy: one pass instead of several temporaries).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from . import (
    kernels_activations,
    kernels_arithmetic,
    kernels_attention,
    kernels_conv,
    kernels_indexing,
    kernels_layout,
    kernels_losses,
    kernels_normalization,
    kernels_numeric,
    kernels_pointwise,
    kernels_products,
    kernels_random,
    kernels_rearrange,
    kernels_selection,
    kernels_sorting,
    kernels_statistics,
    kernels_views,
    spacing,
)
from .put import put, put_via
from .summation import blocked_mean, blocked_sum

__all__ = [
    "reference_kernels",
    "COMPOSITES",
    "bind_composites",
    "normalize_dims",
    "class_target_error",
    "IGNORE_INDEX",
]

#: PyTorch's default ``ignore_index`` of ``cross_entropy``: a target of this value leaves the
#: sample out there; retrograd does not support it and says so.
IGNORE_INDEX = -100


def class_target_error(value: int | None, num_classes: int) -> Exception:
    """The error ``check_class_targets`` raises: PyTorch's ``IndexError("Target 5 is out of
    bounds.")`` for the first target (in order) outside ``[0, num_classes)`` -- ``value`` --,
    or, where the only such targets are ``IGNORE_INDEX`` (``value`` None), the refusal of
    PyTorch's ``ignore_index``. One function, so that a backend that checks on its device
    (and reports later) raises the very same words."""
    if value is None:
        return NotImplementedError(
            f"cross_entropy: a target of {IGNORE_INDEX} (PyTorch's default ignore_index, which "
            "leaves the sample out) is not supported")
    return IndexError(f"Target {value} is out of bounds. (cross_entropy: class indices must be "
                      f"in [0, {num_classes}))")


_NO_BASE = object()  # may_alias: the array type has no ``base`` attribute
_SPLIT = 134217729.0  # 2**27 + 1: splits a float64 into two 26-bit halves


def _veltkamp(a: Any) -> tuple[Any, Any]:
    """Veltkamp's split: ``a == hi + lo`` exactly, each half with at most 26 significant
    bits (an array or a Python float)."""
    c = a * _SPLIT
    hi = c - (c - a)
    return hi, a - hi


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = []
    for d in dim:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dim must be an int or a sequence of ints, got {dim!r}")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"dim {d} is out of range for a tensor of {ndim} dimension(s)")
        out.append(d % ndim if ndim else 0)
    return tuple(sorted(set(out)))


# ---------------------------------------------------------------------------------------------
# composite backward formulas: written against F, run on raw arrays or on differentiable ops
# ---------------------------------------------------------------------------------------------
def relu_backward(F: Any, g: Any, y: Any) -> Any:
    # PyTorch's threshold_backward: 0 where y <= 0, else g (a nan y passes g)
    return F.where(F.le(y, 0), 0.0, g)


def tanh_backward(F: Any, g: Any, y: Any) -> Any:
    return F.mul(g, F.sub(1.0, F.mul(y, y)))


def sigmoid_backward(F: Any, g: Any, y: Any) -> Any:
    return F.mul(F.mul(g, y), F.sub(1.0, y))


def pow_backward(F: Any, g: Any, a: Any, b: float) -> Any:
    """``g * d(a ** b)/da`` for a Python-number exponent ``b``."""
    if b == 0:
        return F.mul(g, 0.0)
    if b == 2:  # a ** 1 is a: one kernel fewer, the same values
        return F.mul(g, F.mul(a, b))
    return F.mul(g, F.mul(F.pow(a, b - 1), b))


def softmax_backward(F: Any, g: Any, y: Any, dim: int) -> Any:
    return F.mul(y, F.sub(g, F.sum(F.mul(g, y), dim, True)))


def log_softmax_backward(F: Any, g: Any, y: Any, dim: int) -> Any:
    return F.sub(g, F.mul(F.exp(y), F.sum(g, dim, True)))


def cross_entropy_backward(F: Any, g: Any, x: Any, logp: Any, target: Any, reduction: str) -> Any:
    probs = F.ce_probs(x, logp)
    diff = F.sub(probs, F.one_hot(target, probs))
    if reduction == "mean":
        return F.mul(diff, F.div(g, float(target.shape[0])))
    if reduction == "sum":
        return F.mul(diff, g)
    return F.mul(diff, F.unsqueeze(g, -1))


def linear_backward(
    F: Any, g: Any, x: Any, weight: Any, need_x: bool, need_w: bool, need_b: bool
) -> tuple[Any, Any, Any]:
    gx = F.matmul(g, weight) if need_x else None
    gw = F.matmul(F.matrix_transpose(g), x) if need_w else None
    gb = F.sum(g, 0, False) if need_b else None
    return gx, gw, gb


def linear_relu_backward(F: Any, g: Any, y: Any, x: Any, w: Any, nx: bool, nw: bool, nb: bool):
    return F.linear_backward(F.relu_backward(g, y), x, w, nx, nw, nb)


def linear_tanh_backward(F: Any, g: Any, y: Any, x: Any, w: Any, nx: bool, nw: bool, nb: bool):
    return F.linear_backward(F.tanh_backward(g, y), x, w, nx, nw, nb)


def linear_sigmoid_backward(F: Any, g: Any, y: Any, x: Any, w: Any, nx: bool, nw: bool, nb: bool):
    return F.linear_backward(F.sigmoid_backward(g, y), x, w, nx, nw, nb)


def put_kernel(F: Any, out: Any, key: Any, value: Any) -> Any:
    """``out`` with ``out[key] = value``, returned: through the backend's ``setitem`` where
    its arrays take writes, else the library's functional update (``backends.put``)."""
    return put_via(F.setitem, out, key, value)


COMPOSITES: dict[str, Callable[..., Any]] = {
    "put": put_kernel,
    "relu_backward": relu_backward,
    "tanh_backward": tanh_backward,
    "sigmoid_backward": sigmoid_backward,
    "pow_backward": pow_backward,
    "softmax_backward": softmax_backward,
    "log_softmax_backward": log_softmax_backward,
    "cross_entropy_backward": cross_entropy_backward,
    "linear_backward": linear_backward,
    "linear_relu_backward": linear_relu_backward,
    "linear_tanh_backward": linear_tanh_backward,
    "linear_sigmoid_backward": linear_sigmoid_backward,
}


def bind_composites(
    table: dict[str, Callable[..., Any]], namespace: Any, *, keep: set[str] | None = None
) -> None:
    """Bind every composite not in ``keep`` to ``namespace`` and store it in ``table``."""
    for name, fn in COMPOSITES.items():
        if keep and name in keep:
            continue
        bound = functools.partial(fn, namespace)
        table[name] = bound
        setattr(namespace, name, bound)


# ---------------------------------------------------------------------------------------------
# primitives
# ---------------------------------------------------------------------------------------------
def reference_kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """Every kernel the core calls, written in Array-API calls on ``xp``."""

    def _is_number(value: Any) -> bool:
        # A Python number, not an array: NumPy's 0-d results (``numpy.float64``) subclass
        # ``float`` but carry a dtype, and must keep it (with ``xp`` = NumPy itself, a 0-d
        # array reaches the kernels as such a scalar).
        return isinstance(value, (int, float, bool)) and not hasattr(value, "dtype")

    def _like(value: Any, ref: Any) -> Any:
        if _is_number(value):
            if _is_number(ref):  # two numbers: the namespace's default dtype
                return xp.asarray(value)
            return xp.asarray(value, dtype=ref.dtype)
        return value

    def where(cond: Any, a: Any, b: Any) -> Any:
        ref = a if not _is_number(a) else b
        return xp.where(cond, _like(a, ref), _like(b, ref))

    def sigmoid(x: Any) -> Any:
        # 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|): no overflow for either
        # sign, and within 2 ulps (exp(-softplus(-x)) was 33 ulps off at x = -33: softplus's
        # rounding of 33, turned into a relative error by exp)
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def relu(x: Any) -> Any:
        return xp.where(x <= 0, xp.zeros_like(x), x)  # relu(nan) is nan, as in PyTorch

    # Every sum below is blocked (summation.py): a library's own sum may add the rows of a
    # strided axis one after another (NumPy does), losing precision with the row count.
    def sum_(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        axis = dim if not isinstance(dim, list) else tuple(dim)
        return blocked_sum(xp, x, axis, keepdim)

    def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        axis = dim if not isinstance(dim, list) else tuple(dim)
        return blocked_mean(xp, x, axis, keepdim)

    def amax(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return xp.max(x, axis=dim, keepdims=keepdim)

    def logsumexp(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        m = xp.max(x, axis=dim, keepdims=True)
        m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        out = xp.log(blocked_sum(xp, xp.exp(x - m), dim, True)) + m
        if not keepdim:
            axes = normalize_dims(dim, x.ndim)
            out = xp.squeeze(out, axis=axes) if axes else out
        return out

    def softmax(x: Any, dim: int) -> Any:
        if x.shape[dim] == 0:  # nothing to normalise (max of an empty axis would raise)
            return xp.zeros(x.shape, dtype=x.dtype)
        e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
        return e / blocked_sum(xp, e, dim, True)

    def log_softmax(x: Any, dim: int) -> Any:
        if x.shape[dim] == 0:
            return xp.zeros(x.shape, dtype=x.dtype)
        shifted = x - xp.max(x, axis=dim, keepdims=True)
        return shifted - xp.log(blocked_sum(xp, xp.exp(shifted), dim, True))

    def cross_entropy_forward(x: Any, target: Any, reduction: str) -> tuple[Any, Any]:
        logp = log_softmax(x, 1)
        # one nonzero term per row: a plain sum is exact
        picked = xp.sum(xp.where(one_hot(target, logp) > 0, logp, xp.zeros_like(logp)), axis=1)
        losses = -picked
        if reduction == "mean":
            return blocked_mean(xp, losses), logp
        if reduction == "sum":
            return blocked_sum(xp, losses), logp
        return losses, logp

    def check_class_targets(target: Any, num_classes: int) -> None:
        """Raise ``class_target_error`` unless every class index in ``target`` (any shape, an
        integer array) lies in ``[0, num_classes)``. Checked where the array lives and then
        read as one bool (on a host backend no copy; on a device backend this is a
        device-to-host sync, which a device backend avoids by overriding this kernel with one
        that reports later: see docs/vendors.md)."""
        flat = xp.reshape(target, (-1,))
        bad = (flat < 0) | (flat >= num_classes)
        if not bool(xp.any(bad)):
            return
        bad = bad & (flat != IGNORE_INDEX)
        if not bool(xp.any(bad)):
            raise class_target_error(None, num_classes)
        first = int(xp.argmax(xp.astype(bad, xp.int8)))
        raise class_target_error(int(flat[first]), num_classes)

    def one_hot(target: Any, like: Any) -> Any:
        classes = xp.arange(like.shape[-1], dtype=target.dtype)
        return xp.astype(xp.expand_dims(target, axis=-1) == classes, like.dtype)

    def ce_probs(x: Any, logp: Any) -> Any:
        return xp.exp(logp)

    def matrix_transpose(x: Any) -> Any:
        axes = list(range(x.ndim))
        axes[-1], axes[-2] = axes[-2], axes[-1]
        return xp.permute_dims(x, tuple(axes))

    def linear_forward(x: Any, w: Any, b: Any) -> Any:
        out = x @ matrix_transpose(w)
        return out if b is None else out + b

    def reduce_to(g: Any, shape: tuple[int, ...]) -> Any:
        """Sum ``g`` down to ``shape``: undo broadcasting (leading dims, then size-1 dims)."""
        gshape = g.shape
        if gshape == shape:
            return g
        lead = len(gshape) - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
        )
        if axes:
            g = blocked_sum(xp, g, axes, True)
        return xp.reshape(g, shape)

    def expand(x: Any, shape: tuple[int, ...]) -> Any:
        return xp.broadcast_to(x, shape)

    def squeeze(x: Any, dims: tuple[int, ...]) -> Any:
        return xp.squeeze(x, axis=dims) if dims else x

    def getitem(x: Any, key: Any) -> Any:
        return x[key]

    def setitem(x: Any, key: Any, value: Any) -> None:
        x[key] = value

    def index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
        out = xp.zeros(shape, dtype=g.dtype)
        if _has_array_index(key):
            raise NotImplementedError(
                "index_backward with integer-array keys needs a scatter-add kernel; this "
                f"backend ({xp.__name__}) does not provide one"
            )
        return put(out, key, g)

    def index_zero(g: Any, key: Any) -> Any:
        return put(xp.asarray(g, copy=True), key, 0)

    def item(x: Any) -> Any:
        return x.item() if hasattr(x, "item") else float(x)

    def any_nonfinite(x: Any) -> bool:
        return not bool(xp.all(xp.isfinite(x)))

    def accumulate_(dst: Any, src: Any) -> None:
        operator.iadd(dst, src)

    def fma_rounded_once(a: Any, b: Any, c: Any) -> Any:
        """``a * b + c`` rounded once to ``c``'s dtype, as PyTorch's CPU update kernels
        (compiled with contraction) compute it; ``a``/``b`` arrays of ``c``'s shape or Python
        numbers. float64: Dekker's exact product, added in twice the precision; narrower
        floats: computed in float64 (where the product is exact) and rounded once."""
        if c.dtype != xp.float64:
            w = xp.float64
            a64 = a if _is_number(a) else xp.astype(a, w)
            b64 = b if _is_number(b) else xp.astype(b, w)
            return xp.astype(a64 * b64 + xp.astype(c, w), c.dtype)
        p = a * b
        ah, al = _veltkamp(a)
        bh, bl = _veltkamp(b)
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # a * b == p + err exactly
        s = p + c
        back = s - p
        rest = (p - (s - back)) + (c - back)  # p + c == s + rest exactly
        r = s + (rest + err)
        return xp.where(xp.isfinite(r), r, s)  # overflow or inf/nan inputs: the plain sum

    def assign_(dst: Any, src: Any) -> None:
        dst[...] = src

    def settle(arrays: list[Any]) -> list[Any]:
        """The arrays a backward made (its roots' values and gradients), as the backend keeps
        them: these arrays on an eager library; a lazy one (Dask) computes them together
        here, once, so that the graph they share runs once (``autograd.engine``)."""
        return arrays

    def put_flat(base: Any, positions: Any, values: Any) -> Any:
        """A new array: ``base`` with its elements at the flat (C-order) ``positions`` (an
        integer array, no position twice) replaced by ``values`` (an array of the positions'
        shape), ``base`` unchanged -- the functional write of a view into its base on a
        backend whose arrays are immutable (``retrograd._writes``). Standard calls only
        (a sort, then a search of every base position among the written ones); a library
        with a scatter of its own (JAX's ``.at[].set``) overrides it."""
        shape = tuple(base.shape)
        flat = xp.reshape(base, (-1,))
        pos = xp.reshape(positions, (-1,))
        vals = xp.reshape(xp.astype(values, base.dtype), (-1,))
        if pos.shape[0] == 0 or flat.shape[0] == 0:
            return xp.reshape(xp.asarray(flat, copy=True), shape)
        order = xp.argsort(pos)
        ranked = xp.take(pos, order)
        where = xp.arange(flat.shape[0], dtype=pos.dtype)
        k = xp.clip(xp.searchsorted(ranked, where), 0, pos.shape[0] - 1)
        hit = xp.take(ranked, k) == where
        return xp.reshape(xp.where(hit, xp.take(vals, xp.take(order, k)), flat), shape)

    def may_alias(a: Any) -> bool:
        """Whether ``a`` may share memory with (or be a read-only view of) another array. An
        array type with no ``base`` cannot say: assume it may (the caller copies), since a
        leaf's ``.grad`` must be an array it owns -- a later backward adds into it in place."""
        base = getattr(a, "base", _NO_BASE)
        return base is _NO_BASE or base is not None

    def memory_layout(a: Any) -> tuple[int, tuple[int, ...]] | None:
        """``(address of the first element, strides in bytes)`` of ``a``, read from the
        array interface NumPy and CuPy arrays show; None where there is none. It lets a view
        whose steps were not recorded be read off its memory (``ops.late_views``): a backend
        whose arrays show no such interface may override it."""
        for attr in ("__array_interface__", "__cuda_array_interface__"):
            info = getattr(a, attr, None)
            if info is not None:
                strides = info.get("strides")
                if strides is None:  # C-contiguous
                    size = getattr(getattr(a, "dtype", None), "itemsize", None)
                    if size is None:
                        return None
                    out, step = [], size
                    for n in reversed(tuple(a.shape)):
                        out.append(step)
                        step *= n
                    strides = tuple(reversed(out))
                return int(info["data"][0]), tuple(strides)
        return None

    def is_view(result: Any, base: Any) -> bool:
        # Without a way to ask, assume the result shares memory: an in-place op on a
        # presumed view then bumps the shared counter (a spurious error, never a wrong grad).
        return True

    def maximum(a: Any, b: Any) -> Any:
        return xp.maximum(_like(a, b), _like(b, a))

    def minimum(a: Any, b: Any) -> Any:
        return xp.minimum(_like(a, b), _like(b, a))

    def pow_(x: Any, p: Any) -> Any:
        """``x ** p``; a number exponent 3, -2 or -0.5 on a float32/float64 array computed as
        PyTorch does (``x*x*x``, ``1/(x*x)``, ``1/sqrt(x)``: other values at -0.0 and -inf)."""
        if type(p) in (int, float) and (p == 3 or p == -2 or p == -0.5) and \
                getattr(x, "dtype", None) in (xp.float32, xp.float64):
            if p == -0.5:
                return 1 / xp.sqrt(x)
            sq = x * x
            return sq * x if p == 3 else 1 / sq
        return x**p

    def clip(x: Any, lo: Any, hi: Any) -> Any:
        return xp.clip(x, lo, hi)

    def full(shape: tuple[int, ...], value: Any, dtype: Any) -> Any:
        return xp.full(shape, value, dtype=dtype)

    def random_like_numpy(values: Any, dtype: Any) -> Any:
        return xp.asarray(values, dtype=dtype)

    table: dict[str, Callable[..., Any]] = {
        "add": operator.add,
        "sub": operator.sub,
        "mul": operator.mul,
        "div": operator.truediv,
        "pow": pow_,
        "neg": operator.neg,
        "matmul": operator.matmul,
        "gt": operator.gt,
        "ge": operator.ge,
        "lt": operator.lt,
        "le": operator.le,
        "eq": operator.eq,
        "ne": operator.ne,
        "logical_and": xp.logical_and,
        "exp": xp.exp,
        "log": xp.log,
        "sqrt": xp.sqrt,
        "sin": xp.sin,
        "cos": xp.cos,
        "tanh": xp.tanh,
        "abs": xp.abs,
        "sign": xp.sign,
        "sigmoid": sigmoid,
        "relu": relu,
        "where": where,
        "maximum": maximum,
        "minimum": minimum,
        "clip": clip,
        "sum": sum_,
        "mean": mean,
        "amax": amax,
        "logsumexp": logsumexp,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "cross_entropy_forward": cross_entropy_forward,
        "check_class_targets": check_class_targets,
        "one_hot": one_hot,
        "ce_probs": ce_probs,
        "matrix_transpose": matrix_transpose,
        "linear_forward": linear_forward,
        "reduce_to": reduce_to,
        "expand": expand,
        "reshape": lambda x, shape: xp.reshape(x, shape),
        "permute": lambda x, dims: xp.permute_dims(x, tuple(dims)),
        "unsqueeze": lambda x, dim: xp.expand_dims(x, axis=dim),
        "squeeze": squeeze,
        "getitem": getitem,
        "setitem": setitem,
        "index_backward": index_backward,
        "index_zero": index_zero,
        "concat": lambda arrays, dim: xp.concat(list(arrays), axis=dim),
        "stack": lambda arrays, dim: xp.stack(list(arrays), axis=dim),
        "zeros": lambda shape, dtype: xp.zeros(shape, dtype=dtype),
        "ones": lambda shape, dtype: xp.ones(shape, dtype=dtype),
        "full": full,
        "empty": lambda shape, dtype: xp.empty(shape, dtype=dtype),
        "zeros_like": xp.zeros_like,
        "ones_like": xp.ones_like,
        "arange": lambda start, stop, step, dtype: xp.arange(start, stop, step, dtype=dtype),
        "linspace": functools.partial(spacing.linspace, xp),
        "astype": lambda x, dtype: xp.astype(x, dtype),
        "copy": lambda x: xp.asarray(x, copy=True),
        "from_numpy": random_like_numpy,
        "item": item,
        "any_nonfinite": any_nonfinite,
        "isnan": xp.isnan,
        "accumulate_": accumulate_,
        "fma_rounded_once": fma_rounded_once,
        "iadd": operator.iadd,
        "isub": operator.isub,
        "imul": operator.imul,
        "itruediv": operator.itruediv,
        "assign_": assign_,
        "may_alias": may_alias,
        "is_view": is_view,
        "put_flat": put_flat,
        "settle": settle,
        "memory_layout": memory_layout,
    }
    for family in (kernels_views, kernels_statistics, kernels_pointwise, kernels_sorting,
                   kernels_indexing, kernels_layout, kernels_products, kernels_activations,
                   kernels_arithmetic, kernels_random, kernels_selection,
                   kernels_rearrange, kernels_numeric, kernels_conv, kernels_normalization,
                   kernels_losses, kernels_attention):
        table.update(family.kernels(xp))
    bind_composites(table, SimpleNamespace(**table))
    return table


def _has_array_index(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(
        not isinstance(k, (int, slice, type(None), type(Ellipsis))) for k in items
    )
