"""In-place ops. Each bumps the tensor's version counter by one, and its rebase epoch, also
under no_grad (``touch``).

With grad mode on, an in-place op on a non-leaf (or on a tensor that then depends on an input
requiring grad) is recorded: the result is computed by the out-of-place op on a stand-in for
the old value and the tensor's history is rebased onto that node. On a leaf that requires
grad it is an error. Through a *view* the base is rebased instead, and the view taken again
from it (``ops.view_inplace``), as in PyTorch; a view PyTorch will not rebase (made in
no_grad mode, an output of a custom Function that aliases an input) is refused with
PyTorch's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._version import new_counter
from ..autograd.commit import expandable_to
from ..errors import RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..inference_mode import INFERENCE, INPLACE_ERROR
from ..tensor import Tensor
from . import promotion
from ._core import Scalar, check_device, inplace_result, same_device, view_refusal
from .late_views import wake
from .view_inplace import LEAF_VIEW

__all__ = ["add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "setitem"]


def _inplace(
    name: str,
    t: Tensor,
    operands: tuple[Any, ...],
    out_of_place: Callable[[Tensor], Tensor],
    raw_apply: Callable[[Any], None],
    needs_old: bool,
) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    for o in operands:
        if isinstance(o, Tensor):
            check_device(name, t, o)
        elif not isinstance(o, Scalar):
            raise TypeError(f"{name}: unsupported operand type {type(o).__name__}")
    grad = _grad.enabled
    if grad and t._extra is not None and t._extra.view_creation is not None:
        creation = t._extra.view_creation
        if creation != "no_grad_plain" or t._requires_grad or any(
                isinstance(o, Tensor) and o._requires_grad for o in operands):
            _refuse_view(creation, t)  # a view of a plain tensor: only a recorded op is refused
    if grad and t._requires_grad and t.grad_fn is None:
        if t._base is not None and t._extra is not None and \
                t._extra.view_chain is not None and t._extra.view_epoch != -1:
            raise RetrogradError(f"{name}: {LEAF_VIEW}")  # woken by requires_grad_: late_views
        raise RetrogradError(
            f"{name}: a leaf tensor of shape {t.shape} that requires grad is being used in an "
            "in-place operation; do it under retrograd.no_grad() or use an out-of-place op"
        )
    if t._vc is INFERENCE and not _grad.inference:  # refused before anything changes
        raise RetrogradError(INPLACE_ERROR)
    record = grad and (t._requires_grad or any(
        isinstance(o, Tensor) and o._requires_grad for o in operands))
    be = t.backend
    if record:
        if t._base is not None:
            # through a view: the base gets a CopySlices history (ops.view_inplace); a
            # detached alias (not a differentiable view) goes on like any tensor
            from .view_inplace import inplace_on_view

            if inplace_result(t, inplace_on_view, name, t, out_of_place, needs_old):
                return t
        # t's counter first, while t.grad_fn is still the node that may have saved t
        # unstamped (ops._core._stamp): that node must see the bump below
        vc = t._counter()
        old_data = be.ops.copy(t._data) if needs_old else t._data
        old = Tensor(old_data, be, t._requires_grad, t.grad_fn, t._output_nr)
        old._vc = new_counter()  # t's value before the op: a counter of its own
        res = inplace_result(t, out_of_place, old)
        if res.shape != t.shape:
            raise ShapeError(
                f"{name}: output with shape {list(t.shape)} doesn't match the broadcast shape "
                f"{list(res.shape)}"
            )
        be.ops.assign_(t._data, promotion.to_dtype_of(t, res))  # a promoted result: cast
        t.grad_fn = res.grad_fn
        t._output_nr = res._output_nr
        t._requires_grad = res._requires_grad
        t._follow_retain(old.grad_fn, old._output_nr)
        if t._base is None and t._extra is not None and t._extra.plain_views:
            wake(t, stale=True)  # its views taken while it needed no gradient
        touch(vc)
        return t
    try:
        raw_apply(t._data)
    except ValueError as exc:
        shapes = [getattr(o, "shape", ()) for o in operands]
        raise ShapeError(
            f"{name}: cannot apply an operand of shape {shapes} in place to a tensor of shape "
            f"{t.shape} ({exc})"
        ) from None
    touch(t._counter())
    return t


_VERSION_AND_EPOCH = 1 + (1 << 64)  # version: bytes 0-7 of a counter; rebase epoch: 8-14


def touch(vc: bytearray) -> None:
    """Count one in-place change of a tensor's data, recorded or not, in its version *and*
    its rebase epoch (``retrograd._version``). Why the epoch for an unrecorded change too:
    PyTorch takes every differentiable view of the tensor again from its base after any
    change of the shared data (under no_grad too), and refuses a view made under no_grad
    once its base has changed (``ops._core._check_view_fresh``). The counter's 16 bytes are
    read as one integer and both fields bumped by one addition, so this costs what a bump
    of the version alone does (the optimizer's ``p.add_`` under no_grad runs it). An inference
    tensor's shared counter never moves (``retrograd.inference_mode``)."""
    if vc is not INFERENCE:
        vc[:] = (int.from_bytes(vc, "little") + _VERSION_AND_EPOCH).to_bytes(16, "little")


def _refuse_view(creation: str, t: Tensor) -> None:
    """PyTorch's refusals of an in-place change, with grad mode on, to a view whose history
    cannot be rebased: one made under no_grad (the write would silently reach its base, or be
    recorded on a view PyTorch cannot rebase), or an output of a custom Function that aliases
    its input (the rebase would override the Function's backward). A recorded view of such a
    view is named by its node, in PyTorch's words."""
    if creation in ("no_grad", "no_grad_plain"):
        msg = view_refusal(creation, "is being modified inplace")
        fn = t.grad_fn
        if fn is not None and t._base is not None:
            op = fn.name()
            op = op[:-len("Backward0")] if op.endswith("Backward0") else op
            msg = msg.replace("A view was created in", f"Output {t._output_nr} of {op} is a "
                              "view of a view which was created in", 1)
        raise RetrogradError(msg)
    raise RetrogradError(creation.partition(": ")[2] or creation)


def _raw(o: Any) -> Any:
    return o._data if isinstance(o, Tensor) else o


def _check_broadcast(name: str, t: Tensor, other: Any) -> None:
    """``other`` must broadcast to ``t``'s own shape (an in-place result keeps it); otherwise
    ShapeError with PyTorch's wording, before anything is written."""
    if not isinstance(other, Tensor):
        return
    a, b = t.shape, other.shape
    if a == b:
        return
    nd = max(len(a), len(b))
    out = [0] * nd
    for i in range(nd - 1, -1, -1):  # from the right, as PyTorch reports the first mismatch
        sa = a[i - nd + len(a)] if i >= nd - len(a) else 1
        sb = b[i - nd + len(b)] if i >= nd - len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            raise ShapeError(
                f"{name}: The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                f"at non-singleton dimension {i} (shapes {a} and {b})"
            )
        out[i] = sa if sb == 1 else sb
    if tuple(out) != a:
        raise ShapeError(
            f"{name}: output with shape {list(a)} doesn't match the broadcast shape {list(out)} "
            f"(an in-place result keeps the shape of the tensor; the operand has shape {b})"
        )


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    from .elementwise import add, mul

    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    other, raw = promotion.inplace_operand("add_", t, other, "iadd", add)  # dtype rules
    _check_broadcast("add_", t, other)
    return _inplace("add_", t, (other,), lambda old: add(old, other),
                    raw, False)


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    from .elementwise import mul, sub

    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    other, raw = promotion.inplace_operand("sub_", t, other, "isub", sub)  # dtype rules
    _check_broadcast("sub_", t, other)
    return _inplace("sub_", t, (other,), lambda old: sub(old, other),
                    raw, False)


def mul_(t: Tensor, other: Any) -> Tensor:
    from .elementwise import mul

    other, raw = promotion.inplace_operand("mul_", t, other, "imul", mul)  # dtype rules
    _check_broadcast("mul_", t, other)
    return _inplace("mul_", t, (other,), lambda old: mul(old, other),
                    raw, True)


def div_(t: Tensor, other: Any) -> Tensor:
    from .elementwise import div

    other, raw = promotion.inplace_operand("div_", t, other, "itruediv", div)  # dtype rules
    _check_broadcast("div_", t, other)
    return _inplace("div_", t, (other,), lambda old: div(old, other),
                    raw, True)


def _replace_all(old: Tensor, value: Any) -> Tensor:
    """A result equal to ``value`` broadcast to ``old``'s shape; ``old`` gets zero gradient."""
    from .elementwise import add
    from .shape import expand, index_zero

    zeroed = index_zero(old, (Ellipsis,))
    if isinstance(value, Tensor):
        return add(zeroed, expand(value, *old.shape))
    return add(zeroed, value)


def fill_(t: Tensor, value: Any) -> Tensor:
    if not isinstance(value, Tensor) and promotion.is_number(promotion.scalar_value(value)):
        value = promotion.scalar_value(value)  # a NumPy scalar as the Python number it is
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ShapeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                         f"{value.ndim} dimensions (shape {value.shape})")
    return _inplace("fill_", t, (value,), lambda old: _replace_all(old, value),
                    lambda a: t.backend.ops.assign_(a, promotion.assign_value(t, value)), False)


def zero_(t: Tensor) -> Tensor:
    return fill_(t, 0)


def _constant(t: Tensor) -> Tensor:
    """``t``'s data as a tensor without history: a value whose gradient PyTorch ignores."""
    return Tensor(t._data, t.backend)


def copy_(t: Tensor, src: Any) -> Tensor:
    from .conversion import to

    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    if not same_device(t, src):
        src = to(src, t.device)
    if src._requires_grad and not t.dtype.is_floating_point:
        # PyTorch's copy_ records only into a dtype that can hold a gradient: an integer or
        # bool tensor written from one that requires grad stays a leaf without grad
        src = _constant(src)
    _check_broadcast("copy_", t, src)
    return _inplace("copy_", t, (src,), lambda old: _replace_all(old, src),
                    lambda a: t.backend.ops.assign_(a, promotion.assign_value(t, src)), False)


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's ``slicePrefix1sSize``: a ``__setitem__`` value loses all its leading 1s."""
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return shape[i:]


def _mask_fill_key(k: tuple[Any, ...], value: Tensor) -> bool:
    """Whether PyTorch's index_put takes its ``masked_fill`` shortcut for the advanced key
    ``k`` (``canDispatchToMaskedFill``): a one-element value on the CPU and exactly one index
    array, a bool mask. The value is then read as a number, so any dtype and any shape of one
    element will do, unlike index_put's own same-dtype, broadcastable value."""
    if value.numel() != 1 or value.backend.name != "cpu":
        return False
    arrays = [item for item in k if not (isinstance(item, (int, slice)) or item is None
                                         or item is Ellipsis)]
    return len(arrays) == 1 and getattr(arrays[0].dtype, "kind", "") == "b"


def setitem(t: Tensor, key: Any, value: Any) -> Tensor:
    """``t[key] = value``, dispatched as PyTorch's ``__setitem__`` does, which decides the
    value's shape, dtype and gradient rules:

    - a basic key (ints, slices, None, ...) writes the view ``t[key]`` with ``copy_`` --
      the value's leading 1s dropped, then broadcast; an integer or bool ``t`` drops the
      value's gradient, as ``copy_`` does -- or, for a 0-d value into a slot of another
      shape, with ``fill_``, which keeps it;
    - an advanced key (index tensors, lists, masks) is an ``index_put``: the value's leading
      1s dropped, then broadcast, and of ``t``'s dtype; one bool mask and a one-element value
      is a ``masked_fill`` with the value's number, cast.
    """
    from .elementwise import add
    from .shape import (
        _index_error,
        _is_basic,
        _norm_key,
        expand,
        expand_shape,
        index_backward,
        index_put,
        index_zero,
        kept_key,
        reshape,
    )

    if not isinstance(t, Tensor):
        raise TypeError(f"__setitem__: expected a Tensor, got {type(t).__name__}")
    value = promotion.setitem_value(t, value)
    if not isinstance(value, (Tensor, int, float)):
        raise TypeError(f"can't assign a {type(value).__name__} to a {t.dtype} tensor "
                        "(__setitem__ takes a Tensor or a number)")
    if type(value) is int and not -(2**63) <= value < 2**63:  # whatever t's dtype, as PyTorch
        raise ValueError(f"Overflow when unpacking long long: __setitem__: the value {value} "
                         "does not fit in int64")
    k = _norm_key(t, key)
    try:
        sub_shape = tuple(t.backend.ops.getitem(t._data, k).shape)
    except IndexError as exc:
        raise _index_error(t, key, k, exc) from None
    basic = _is_basic(k)
    fill: Any = None  # the number a masked_fill writes
    vshape = sub_shape  # the value's shape once its leading 1s are dropped
    if isinstance(value, Tensor):
        if not basic and _mask_fill_key(k, value):
            # checked as PyTorch converts the number (a NaN into an integer dtype raises)
            fill = promotion.assign_value(t, value.item(), False)
            vshape = ()
        elif value.shape != sub_shape:
            vshape = _strip_leading_ones(value.shape)
            if basic:
                expand_shape("__setitem__", vshape, sub_shape)
            elif not expandable_to(vshape, sub_shape):
                raise ShapeError(f"shape mismatch: value tensor of shape {list(value.shape)} "
                                 "cannot be broadcast to indexing result of shape "
                                 f"{list(sub_shape)}")
        if not basic and fill is None and value.dtype is not t.dtype:
            raise RetrogradError(
                f"Index put requires the source and destination dtypes match, got "
                f"{promotion.torch_name(t.dtype)} for the destination and "
                f"{promotion.torch_name(value.dtype)} for the source (__setitem__ with an "
                f"index tensor or list: cast the value with .to({t.dtype}) first)")
        if basic and value._requires_grad and not t.dtype.is_floating_point and not (
                value.ndim == 0 and sub_shape and value.backend.name == "cpu"):
            value = _constant(value)  # a copy_, not a fill_, into an integer or bool tensor

    def out_of_place(old: Tensor) -> Tensor:
        # an advanced key as the recorded nodes keep it: its index tensors are version-checked
        kk = k if basic else kept_key(t, key, k)
        if isinstance(value, Tensor):
            v = value
            if v.shape != sub_shape:
                v = expand(reshape(v, vshape) if vshape != v.shape else v, *sub_shape)
            if not old.dtype.is_floating_point:
                # only a fill keeps a gradient here: the data cast exactly into old's dtype,
                # the value's gradient edge kept, as PyTorch's int tensor then has a grad_fn
                return index_put(old, kk, v)
            if v.dtype is not old.dtype and not basic:  # a masked fill of another dtype
                from .conversion import to

                v = to(v, old.dtype)
            if not basic:  # an index may repeat: the last write wins, as in PyTorch
                return index_put(old, kk, v)
            return add(index_zero(old, k), index_backward(v, t.shape, k))
        zeroed = index_zero(old, kk)
        const = t.backend.ops.zeros(t._data.shape, t._data.dtype)
        t.backend.ops.setitem(const, k, promotion.assign_value(t, value, False))
        return add(zeroed, Tensor(const, t.backend))

    def raw_apply(a: Any) -> None:
        if fill is not None:
            v = fill
        else:
            v = promotion.assign_value(t, value, False)
            if isinstance(value, Tensor) and vshape != value.shape:
                v = t.backend.ops.reshape(v, vshape)
        t.backend.ops.setitem(a, k, v)

    return _inplace("__setitem__", t, (value,), out_of_place, raw_apply, False)

