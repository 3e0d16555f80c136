"""Moving tensors between devices and dtypes (differentiable), and clone."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node, formula_node
from ..backends.registry import backend_for_device
from ..dtypes import Device, DType, as_device, as_dtype
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import edge_of

__all__ = ["to", "clone"]


class ToCopyBackward(Node):
    """Gradient of a device/dtype copy: copy the gradient back to the source device/dtype."""

    __slots__ = ("_src_backend", "_src_device", "_src_dtype")

    def __init__(self, src: Tensor) -> None:
        Node.__init__(self, (edge_of(src),))
        self._src_backend = src.backend
        self._src_device = src.device
        self._src_dtype = src.dtype

    def name(self) -> str:
        return "ToCopyBackward0"

    def apply(self, grad_outputs: Any) -> tuple[Any]:
        g = grad_outputs[0]
        src_be = self._src_backend
        if g is None:
            return (None,)
        host, g_be = g, None
        for be in _all_backends():
            if isinstance(g, be.array_type):
                host, g_be = be.to_numpy(g), be
                break
        with src_be.use_device(self._src_device.index):
            out = src_be.asarray(host, self._src_dtype)
            # the gradient sent on is the source's own array, never an alias of the incoming
            # one (which the caller may own: a seed, or a gradient a hook kept)
            if g_be is not None and may_share(src_be, out, g_be, g):
                out = src_be.ops.copy(out)
        return (out,)

    def apply_for_graph(self, grad_outputs: Any) -> tuple[Any]:
        return (to(grad_outputs[0], self._src_device, self._src_dtype),)


CloneBackward = formula_node("CloneBackward0", lambda F, g, s, a, n: (g,))


def _extent(be: Any, array: Any) -> tuple[int, int] | None:
    """The bytes ``[first, last)`` that ``array`` spans, read with the backend's
    ``memory_layout`` kernel; ``(0, 0)`` for an empty array, None where the backend cannot say."""
    shape = tuple(array.shape)
    if any(n == 0 for n in shape):
        return (0, 0)
    layout = getattr(be.ops, "memory_layout", None)
    info = layout(array) if layout is not None else None
    if info is None:
        return None
    start, strides = info
    lo = hi = int(start)
    for n, step in zip(shape, strides):
        if step < 0:
            lo += (n - 1) * int(step)
        else:
            hi += (n - 1) * int(step)
    return lo, hi + be.dtype_of(array).itemsize


def may_share(be_a: Any, a: Any, be_b: Any, b: Any) -> bool:
    """Whether arrays ``a`` (of backend ``be_a``) and ``b`` (of ``be_b``) may share memory:
    their byte ranges overlap, or a backend cannot say where its array lies (then a caller
    that needs its own memory copies). Arrays on different devices have disjoint addresses
    (one virtual address space: CUDA's unified addressing)."""
    ea, eb = _extent(be_a, a), _extent(be_b, b)
    if ea is None or eb is None:
        return True
    return ea[0] < eb[1] and eb[0] < ea[1]


def _all_backends() -> list[Any]:
    from ..backends.registry import _registered

    return list(_registered.values())


def to(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    device: Device | None = None
    dtype: DType | None = None
    for a in list(args) + [kwargs.pop("device", None), kwargs.pop("dtype", None)]:
        if a is None:
            continue
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, DType) or (a in (float, int, bool)):
            dtype = as_dtype(a)
        elif isinstance(a, str):
            try:
                dtype = as_dtype(a)
            except TypeError:
                device = as_device(a)
        elif isinstance(a, Device) or hasattr(a, "type"):
            device = as_device(a)
        else:
            raise TypeError(f"to(): unsupported argument {a!r}")
    if kwargs:
        raise TypeError(f"to(): unexpected keyword arguments {sorted(kwargs)}")
    same_device = device is None or device == t.device
    if not same_device and device is not None and device.index is None and \
            device.type == t.device.type:
        # "cuda" means the current device (PyTorch's ensure_has_index): t.to("cuda") on a
        # cuda:0 tensor with cuda:0 current is t itself, not a copy through the host. Only a
        # multi-device backend fills the index in; a one-device backend's tensors have none.
        device = t.backend.normalize_device(device)
        same_device = device == t.device
    same_dtype = dtype is None or dtype is t.dtype
    if same_device and same_dtype:
        return t
    target_backend, target_dev = (t.backend, t.device) if device is None else \
        backend_for_device(device)
    dt = dtype or t.dtype
    if target_backend is t.backend and (same_device or not target_backend.multi_device):
        # the same memory space: one astype, which copies. A one-device backend's "cpu:0" is
        # its only device, but -- as in PyTorch, where t.to("cpu:0") is a new tensor -- the
        # result is a copy, never an alias of t's memory (a host round trip could alias)
        data = t.backend.ops.astype(t._data, target_backend.xp_dtype(dt))
        if type(data) is not target_backend.array_type:
            data = target_backend.asarray(data)
    else:
        # another backend (or device): through the host. Either step may keep the memory it
        # was given -- ``to_numpy`` a view of t's array (DLPack does), ``asarray`` NumPy's
        # no-copy conversion -- so the result is checked, and copied where it may alias ``t``:
        # as in PyTorch, a ``.to()`` that changes the device is always a new tensor
        host = t.backend.to_numpy(t._data)
        with target_backend.use_device(target_dev.index):
            data = target_backend.asarray(host, dt)
            if type(data) is not target_backend.array_type:
                data = target_backend.asarray(data)
            if may_share(target_backend, data, t.backend, t._data):
                data = target_backend.ops.copy(data)
    out = Tensor(data, target_backend)
    if _grad.enabled and t._requires_grad and dt.is_floating_point:
        node = ToCopyBackward(t)
        out.grad_fn = node
        out._requires_grad = True
    return out


def clone(t: Tensor) -> Tensor:
    """A copy with its own memory; differentiable (gradient passes through)."""
    from ._core import record

    be = t.backend
    out = Tensor(be.ops.copy(t._data), be)
    if _grad.enabled and t._requires_grad:
        record(CloneBackward, out, (t,))
    return out
