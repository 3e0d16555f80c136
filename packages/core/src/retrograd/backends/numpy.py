"""The ``cpu`` backend: NumPy arrays, with a few kernels NumPy does faster than the reference.

Every kernel that computes runs with NumPy's floating-point errors ignored (``host.quiet``):
``log(0)``, ``1 / 0``, ``exp(1000)`` or ``inf - inf`` give PyTorch's values and, as in
PyTorch, no ``RuntimeWarning`` -- forward and backward -- while the user's own NumPy state
(``np.seterr``) is left as it was. Only kernels that cannot raise one (shape and view
kernels, creation, comparisons of ``g`` with 0 ...) are left bare: see ``_NO_FP_ERRORS``.

The backward walk holds the quiet state itself while it runs derivative rules
(``host.quiet_enter``), so it gives them ``walk_ops``: the same kernels unwrapped. ``ops``
keeps the two tables in step: every assignment to it -- the constructor's, ``override``'s, a
test's ``monkeypatch.setattr`` -- is mirrored there (``_KernelNamespace``).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np

from .base import Backend
from .chunked import chunked_elementwise
from .gemm import matmul_wt
from .host import quiet, quiet_call, unquiet
from .reference import COMPOSITES
from .summation import mean_numpy, sum_numpy

__all__ = ["NumpyBackend", "backend"]


def _reduce_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``g`` down to ``shape`` (leading axes, then size-1 axes) in one blocked sum
    (``summation.py``: a bias gradient over many rows stays accurate)."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = sum_numpy(g, axes)
    return g if g.shape == shape else g.reshape(shape)


def _index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)  # repeated integer indices accumulate, as the chain rule requires
    return out


def _where(cond: Any, a: Any, b: Any) -> Any:
    return np.where(cond, a, b)


def _relu(x: Any) -> Any:
    return np.maximum(x, 0)


def _relu_backward(g: Any, y: Any) -> Any:
    """PyTorch's ``threshold_backward(g, y, 0)``: 0 where ``y <= 0``, else ``g`` -- a
    selection, not ``g * (y > 0)``: an inf or nan ``g`` gives 0 where ``y <= 0`` (inf * 0
    would be nan), and a nan ``y`` passes ``g`` (nan > 0 is false)."""
    bits = _SAME_WIDTH_INT.get(g.dtype) if type(g) is np.ndarray else None
    if bits is None or g.shape != y.shape or g.ndim == 0:  # (0-d: NumPy returns scalars)
        return np.where(y <= 0, 0, g)
    return _keep_where_positive(g, y, bits, out=None)


#: a float dtype -> the integer of its width, to select by bit mask
_SAME_WIDTH_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _keep_where_positive(g: Any, y: Any, bits: Any, out: Any) -> Any:
    """``np.where(y <= 0, 0, g)`` bit for bit -- ``g`` kept as is (its -0.0, inf and NaN),
    +0.0 where dropped -- as an AND with an all-ones or all-zeros mask: a masked selection
    with a random mask runs ten times slower (a branch per element)."""
    mask = np.less_equal(y, 0).astype(bits)
    mask -= 1  # kept: -1 (every bit set); dropped: 0
    target = mask if out is None else out.view(bits)
    np.bitwise_and(g.view(bits), mask, out=target)
    return target.view(g.dtype)


def _relu_backward_(g: Any, y: Any) -> Any:
    """In place into ``g`` (the engine only calls it when it owns ``g``)."""
    if (type(g) is not np.ndarray or g.shape != y.shape or g.dtype != y.dtype
            or not g.flags.writeable):
        return _relu_backward(g, y)
    bits = _SAME_WIDTH_INT.get(g.dtype)
    if bits is None or g.ndim == 0:
        np.putmask(g, y <= 0, 0)
        return g
    _keep_where_positive(g, y, bits, out=g)
    return g


def _tanh_backward_(g: Any, y: Any) -> Any:
    if (type(g) is not np.ndarray or g.shape != y.shape or g.dtype != y.dtype
            or not g.flags.writeable):
        return _tanh_backward(g, y)
    t = np.multiply(y, y)
    np.subtract(1.0, t, out=t)
    np.multiply(g, t, out=g)
    return g


def _sigmoid_backward_(g: Any, y: Any) -> Any:
    if (type(g) is not np.ndarray or g.shape != y.shape or g.dtype != y.dtype
            or not g.flags.writeable):
        return _sigmoid_backward(g, y)
    t = np.subtract(1.0, y)
    np.multiply(t, y, out=t)
    np.multiply(g, t, out=g)
    return g


def _tanh_backward(g: Any, y: Any) -> Any:
    out = y * y
    if type(out) is not np.ndarray:  # 0-d operands give NumPy scalars: no out= buffers
        return g * (1.0 - out)
    np.subtract(1.0, out, out=out)
    np.multiply(out, g, out=out)
    return out


def _sigmoid_backward(g: Any, y: Any) -> Any:
    out = np.subtract(1.0, y)
    if type(out) is not np.ndarray:
        return g * y * out
    np.multiply(out, y, out=out)
    np.multiply(out, g, out=out)
    return out


def _sigmoid(x: Any) -> Any:
    # 1 / (1 + exp(-x)), PyTorch's formula: exp(-x) overflows to inf for large negative x and
    # the result is 0 there, as in PyTorch (run in the quiet state). The former
    # 0.5 * (1 + tanh(x / 2)) cancelled to 0 already at x = -20 in float32 (PyTorch: 2.06e-9)
    if x.dtype == np.float16:  # computed in float32 and rounded once, as PyTorch's CPU kernel
        return _sigmoid(x.astype(np.float32)).astype(np.float16)
    out = np.negative(x, out=np.empty_like(x)) if type(x) is np.ndarray else np.negative(x)
    if type(out) is not np.ndarray:
        return 1.0 / (1.0 + np.exp(out))
    np.exp(out, out=out)
    np.add(out, 1.0, out=out)
    np.divide(1.0, out, out=out)
    return out


def _linear_forward(x: Any, w: Any, b: Any) -> Any:
    out = matmul_wt(x, w)  # x @ w.T, the operands swapped where that is faster (gemm.py)
    if b is None:
        return out
    if type(out) is np.ndarray and out.dtype == np.result_type(out, b):
        out += b  # the matmul result is ours: add the bias in place, no second buffer
        return out
    return out + b


def _cross_entropy_forward(x: Any, target: Any, reduction: str) -> tuple[Any, Any]:
    """The reference composite (log_softmax, then the target's entries) without its one-hot
    matrix: the entries are picked by index, and the log-softmax is formed in the shifted
    logits' buffer. Same values; on W3's (64, 10) logits about half the time."""
    logp = x - x.max(axis=1, keepdims=True)
    logp -= np.log(sum_numpy(np.exp(logp), 1, True))
    losses = -logp[np.arange(logp.shape[0]), target]
    if reduction == "mean":
        return mean_numpy(losses), logp
    if reduction == "sum":
        return sum_numpy(losses), logp
    return losses, logp


def _cross_entropy_backward(g: Any, x: Any, logp: Any, target: Any, reduction: str) -> Any:
    """``(softmax - onehot) * g`` (``/ N`` for the mean), in the softmax's buffer."""
    out = np.exp(logp)
    out[np.arange(out.shape[0]), target] -= 1
    if reduction == "mean":
        scale = np.divide(g, float(target.shape[0]))
    else:
        scale = g if reduction == "sum" else np.expand_dims(g, -1)
    if np.result_type(out, scale) != out.dtype:
        return out * scale
    out *= scale
    return out


def _expand(x: Any, shape: tuple[int, ...]) -> Any:
    """``np.broadcast_to``: a read-only view of ``x`` (PyTorch's ``expand`` is a view, and
    refuses an in-place op that would write one element twice). Two cases differ:

    * one element (the common gradient of a full reduction): the same view, built by the
      ``ndarray`` constructor on ``x``'s memory, about 4x faster than ``broadcast_to``;
    * no element: a *writable* view of none of ``x``'s elements -- PyTorch lets an in-place
      op write into an empty expanded tensor (nothing), and counts it as a write."""
    if x.shape == shape:
        return x
    if 0 in shape:
        np.broadcast_to(x, shape)  # raises ValueError where ``x`` cannot expand to ``shape``
        return x[None][:0].reshape(shape)
    if x.size == 1 and x.ndim <= len(shape):
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    return np.broadcast_to(x, shape)


def _ones(shape: Any, dtype: Any) -> Any:
    out = np.empty(shape, dtype=dtype)  # np.ones is a Python function around the same two calls
    out.fill(1)
    return out


def _pow(x: Any, p: Any) -> Any:
    """``x ** p``, with PyTorch's special cases for a number exponent on a float32/float64
    tensor: 3 is ``x*x*x``, -2 is ``1/(x*x)`` and -0.5 is ``1/sqrt(x)`` (which differ from
    ``pow`` at -0.0 and -inf, and in the last bit); NumPy itself already computes 2, 0.5 and
    -1 as square, sqrt and reciprocal."""
    tp = type(p)
    if (tp is int or tp is float) and (p == 3 or p == -2 or p == -0.5) and \
            type(x) is np.ndarray and x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        if p == -0.5:
            out = np.sqrt(x)
        else:
            out = np.multiply(x, x)  # two multiplies beat the generic power kernel
            if p == 3:
                if type(out) is not np.ndarray:  # a 0-d input gives a NumPy scalar
                    return out * x
                return np.multiply(out, x, out=out)
        if type(out) is not np.ndarray:
            return x.dtype.type(1) / out
        return np.divide(1, out, out=out)
    return x**p


def _is_view(result: Any, base: Any) -> bool:
    if type(result) is np.ndarray and result.base is None and result is not base:
        return False  # it owns its memory, and a new array cannot be what ``base`` views
    if not isinstance(result, np.ndarray):
        return False
    if result.size == 0 or base.size == 0:
        # an empty array shares no byte with anything (may_share_memory says False): it is
        # a view when NumPy made it from ``base``'s memory -- the two ``base`` chains end at
        # one owner -- as ``t[1:]`` of a 1-row tensor, ``x[:, :0]`` or the reshape or
        # expand of an empty tensor are views in PyTorch
        return _owner(result) is _owner(base)
    return np.may_share_memory(result, base)


def _owner(a: Any) -> Any:
    """The object that owns ``a``'s memory: the end of its chain of ``base`` arrays."""
    while isinstance(a, np.ndarray):
        b = a.base
        if b is None:
            return a
        a = b
    return a


# Kernels that raise no floating-point error whatever their operands: they move, select or
# create values (a comparison or selection against an integer 0 casts nothing), or combine
# other kernels through ``F`` (the composites of ``reference.COMPOSITES`` not replaced here,
# which reach the quiet kernels). Every other kernel runs with the errors ignored.
_NO_FP_ERRORS = frozenset({
    "reshape", "permute", "unsqueeze", "squeeze", "matrix_transpose", "expand", "getitem",
    "concat", "stack", "copy", "zeros", "ones", "empty", "zeros_like", "ones_like", "arange",
    "item", "may_alias", "is_view", "isnan", "isinf", "any_nonfinite", "logical_and",
    "index_zero", "one_hot", "neg", "abs", "sign", "tanh", "relu", "relu_backward",
    "relu_backward_", "amax", "check_class_targets",
})


class _KernelNamespace(SimpleNamespace):
    """The backend's ``ops`` (the quiet kernels) that mirrors every assignment into
    ``_walk``, the namespace the backward walk gives derivative rules while it holds the
    quiet state: there each kernel is unwrapped (``host.unquiet``; a spy or fault injector
    set by a test stays itself) and each composite bound to ``ops`` is bound to ``_walk``
    instead, so that it too reaches the unwrapped kernels."""

    __slots__ = ("_walk",)

    def __init__(self) -> None:
        object.__setattr__(self, "_walk", SimpleNamespace())

    def __setattr__(self, name: str, value: Any) -> None:
        SimpleNamespace.__setattr__(self, name, value)
        walk = self._walk
        if type(value) is functools.partial and value.args and value.args[0] is self:
            value = functools.partial(value.func, walk, *value.args[1:], **value.keywords)
        else:
            value = unquiet(value)
        setattr(walk, name, value)

    def __delattr__(self, name: str) -> None:
        SimpleNamespace.__delattr__(self, name)
        self._walk.__dict__.pop(name, None)


class NumpyBackend(Backend):
    """NumPy on the host CPU."""

    def __init__(self) -> None:
        super().__init__(
            "cpu",
            np,
            overrides={
                "reduce_to": _reduce_to,
                "index_backward": _index_backward,
                "where": _where,
                "relu": _relu,
                "sigmoid": _sigmoid,
                "relu_backward": _relu_backward,
                "relu_backward_": _relu_backward_,
                "tanh_backward_": _tanh_backward_,
                "sigmoid_backward_": _sigmoid_backward_,
                "tanh_backward": _tanh_backward,
                "sigmoid_backward": _sigmoid_backward,
                "is_view": _is_view,
                "expand": _expand,
                "ones": _ones,
                "pow": _pow,
                "linear_forward": _linear_forward,
                "cross_entropy_forward": _cross_entropy_forward,
                "cross_entropy_backward": _cross_entropy_backward,
                "maximum": np.maximum,
                "minimum": np.minimum,
                "concat": lambda arrays, dim: np.concatenate(arrays, axis=dim),
                "stack": lambda arrays, dim: np.stack(arrays, axis=dim),
                "matrix_transpose": lambda x: np.swapaxes(x, -1, -2),
                "permute": np.transpose,
                "reshape": lambda x, shape: x.reshape(shape),
                "sum": sum_numpy,  # blocked sums (summation.py), as every reduction here
                "mean": mean_numpy,
                "from_numpy": lambda values, dtype: np.asarray(values, dtype=dtype),
                "item": lambda x: x.item(),
            },
            array_type=np.ndarray,
        )
        # the optimizers' update arithmetic: the reference kernel, chunk by chunk (chunked.py)
        self.kernels["fma_rounded_once"] = chunked_elementwise(self.kernels["fma_rounded_once"])
        # ``ops`` as a _KernelNamespace, its composites bound to it rather than to the plain
        # namespace the base class built
        plain, ops = self.ops, _KernelNamespace()
        for name, fn in self.kernels.items():
            if type(fn) is functools.partial and fn.args and fn.args[0] is plain:
                fn = self.kernels[name] = functools.partial(fn.func, ops, *fn.args[1:],
                                                            **fn.keywords)
            setattr(ops, name, fn)
        self.ops = ops
        #: the kernels a derivative rule gets in the backward walk, which holds NumPy's quiet
        #: state itself (``engine._walk_ops``): ``ops`` unwrapped, kept in step with it
        self.walk_ops = ops._walk
        self.override(**{
            name: quiet(fn) for name, fn in self.kernels.items()
            if name not in _NO_FP_ERRORS and not _is_bound_composite(name, fn)
        })

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        if dtype is None:  # no cast: nothing can overflow
            return np.asarray(data)
        return quiet_call(np.asarray, data, dtype=self.xp_dtype(dtype))

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)


def _is_bound_composite(name: str, fn: Any) -> bool:
    """Whether kernel ``name`` is a reference composite bound to the backend's op namespace
    (it runs the namespace's kernels, quiet themselves), not a NumPy override."""
    return name in COMPOSITES and getattr(fn, "func", None) is COMPOSITES[name]


backend = NumpyBackend()
