"""In-place ops. Each bumps the tensor's version counter by one, and its rebase epoch, also
under no_grad (``touch``).

With grad mode on, an in-place op on a non-leaf (or on a tensor that then depends on an input
requiring grad) is recorded: the result is computed by the out-of-place op on a stand-in for
the old value and the tensor's history is rebased onto that node. On a leaf that requires
grad it is an error. Through a *view* the base is rebased instead, and the view taken again
from it (``ops.view_inplace``), as in PyTorch; a view PyTorch will not rebase (made in
no_grad mode, an output of a custom Function that aliases an input) is refused with
PyTorch's message.

An op whose node saves its own output (``exp_``, ``tanh_``, ``relu_`` ...) saves what is then
the tensor itself: its node is stamped with the tensor's counter, so that a later in-place
change before the backward raises, as in PyTorch (``_adopt_saved_output``). ``resize_``
bumps the version only when the shape changes; ``write_out`` is the ``out=`` keyword of the
ops that take one.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from .._version import new_counter
from .._writes import write
from ..autograd.commit import expandable_to
from ..autograd.node import formula_node
from ..dtypes import get_default_dtype
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..inference_mode import INFERENCE, INPLACE_ERROR
from ..tensor import Tensor
from . import elementwise as _ew
from . import pointwise as _pw
from . import promotion
from ._core import Scalar, check_device, inplace_result, record, same_device, view_refusal
from .declare import op
from .late_views import wake
from .view_inplace import LEAF_VIEW

__all__ = ["add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "setitem", "exp_", "sin_",
           "cos_", "tanh_", "sigmoid_", "relu_", "sqrt_", "log_", "abs_", "neg_", "log1p_",
           "expm1_", "square_", "reciprocal_", "rsqrt_", "sign_", "floor_", "tan_", "sinh_",
           "cosh_", "asin_", "acos_", "atan_", "erf_", "clamp_", "clip_", "pow_", "atan2_",
           "masked_fill_", "resize_", "resize_as_", "write_out"]


def _inplace(
    name: str,
    t: Tensor,
    operands: tuple[Any, ...],
    out_of_place: Callable[[Tensor], Tensor],
    raw_apply: Callable[[Any], None],
    needs_old: bool,
    adopt: bool = False,
) -> Tensor:
    """Apply an in-place op to ``t``: recorded (``out_of_place`` on a stand-in for the old
    value, ``t`` rebased onto its node) when grad mode is on and something requires grad,
    else ``raw_apply(t's array)``. ``needs_old``: the out-of-place op saves its input, so the
    stand-in gets a copy of the old value. ``adopt``: its node may save its own output, which
    is then ``t`` itself, as in PyTorch (``_adopt_saved_output``)."""
    if adopt and _grad.enabled:
        results: list[Tensor] = []

        def capture(old: Tensor) -> Tensor:
            res = out_of_place(old)
            results.append(res)
            return res

        _inplace(name, t, operands, capture, raw_apply, needs_old)
        if results:
            _adopt_saved_output(results[-1], t)
        return t
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
        if t._requires_grad or any(isinstance(o, Tensor) and o._requires_grad
                                   for o in operands):
            _refuse_view(creation, t)  # as PyTorch: only an op that would be recorded
    if grad and t._requires_grad and t.grad_fn is None:
        if t._base is not None and t._extra is not None and \
                t._extra.view_chain is not None and t._extra.view_epoch != -1:
            raise RetrogradError(f"{name}: {LEAF_VIEW}")  # woken by requires_grad_: late_views
        raise RetrogradError(
            f"{name}: a leaf Variable that requires grad is being used in an in-place "
            f"operation. (a leaf tensor of shape {t.shape} that requires grad: do it under "
            "retrograd.no_grad() or use an out-of-place op)"
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
        write(t, promotion.to_dtype_of(t, res))  # a promoted result: cast
        t.grad_fn = res.grad_fn
        t._output_nr = res._output_nr
        t._requires_grad = res._requires_grad
        t._follow_retain(old.grad_fn, old._output_nr)
        if t._base is None and t._extra is not None and t._extra.plain_views:
            wake(t, stale=True)  # its views taken while it needed no gradient
        touch(vc)
        return t
    try:
        if be.functional:  # immutable arrays: the op out of place, its result written
            write(t, promotion.to_dtype_of(t, out_of_place(Tensor(t._data, be))))
        else:
            raw_apply(t._data)
    except ValueError as exc:
        shapes = [getattr(o, "shape", ()) for o in operands]
        raise ShapeError(
            f"{name}: cannot apply an operand of shape {shapes} in place to a tensor of shape "
            f"{t.shape} ({exc})"
        ) from None
    touch(t._counter())
    return t


def _adopt_saved_output(res: Tensor, t: Tensor) -> None:
    """Stamp the saved output of ``res``'s node (if it saved it, unstamped) with ``t``'s
    counter as it is now."""
    node = res.grad_fn
    sources = getattr(node, "_sources", None)
    if not sources or res._vc is not None or node is None:
        return
    vc = t._vc
    if vc is None or vc is INFERENCE:
        return
    stamps = node._versions
    nr = res._output_nr
    for i, src in enumerate(sources):
        if type(src) is int and src == nr and \
                not any(stamps[k + 2] == i for k in range(0, len(stamps), 3)):
            stamps = stamps + (vc, bytes(vc), i)
    node._versions = stamps


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
    """In place: ``t += alpha * other`` (``other`` broadcast to ``t``'s shape; the result keeps
    ``t``'s dtype, and a result type ``t`` cannot hold is refused, as in PyTorch). Returns ``t``.

    Bumps ``t``'s version counter, so a node that saved ``t`` refuses to backward (E7 in
    docs/semantics.md); ``t``'s history becomes ``AddBackward0`` of its old value."""
    from .elementwise import add, mul

    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    other, raw = promotion.inplace_operand("add_", t, other, "iadd", add)  # dtype rules
    _check_broadcast("add_", t, other)
    return _inplace("add_", t, (other,), lambda old: add(old, other),
                    raw, False)


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """In place: ``t -= alpha * other`` (``other`` broadcast to ``t``'s shape; the result keeps
    ``t``'s dtype, and a result type ``t`` cannot hold is refused, as in PyTorch). Returns ``t``.

    Bumps ``t``'s version counter, so a node that saved ``t`` refuses to backward (E7 in
    docs/semantics.md); ``t``'s history becomes ``SubBackward0`` of its old value."""
    from .elementwise import mul, sub

    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    other, raw = promotion.inplace_operand("sub_", t, other, "isub", sub)  # dtype rules
    _check_broadcast("sub_", t, other)
    return _inplace("sub_", t, (other,), lambda old: sub(old, other),
                    raw, False)


def mul_(t: Tensor, other: Any) -> Tensor:
    """In place: ``t *= other`` (``other`` broadcast to ``t``'s shape; the result keeps ``t``'s
    dtype, and a result type ``t`` cannot hold is refused, as in PyTorch). Returns ``t``.

    Bumps ``t``'s version counter, so a node that saved ``t`` refuses to backward (E7 in
    docs/semantics.md); ``t``'s history becomes ``MulBackward0`` of its old value."""
    from .elementwise import mul

    other, raw = promotion.inplace_operand("mul_", t, other, "imul", mul)  # dtype rules
    _check_broadcast("mul_", t, other)
    return _inplace("mul_", t, (other,), lambda old: mul(old, other),
                    raw, True)


def div_(t: Tensor, other: Any, *, rounding_mode: Any = None) -> Tensor:
    """In place: ``t /= other`` (``other`` broadcast to ``t``'s shape; the result keeps ``t``'s
    dtype, and a result type ``t`` cannot hold is refused, as in PyTorch). Returns ``t``.
    ``rounding_mode="trunc"``/``"floor"`` writes the rounded quotient (integer tensors too).

    Bumps ``t``'s version counter, so a node that saved ``t`` refuses to backward (E7 in
    docs/semantics.md); ``t``'s history becomes ``DivBackward0`` of its old value."""
    from .elementwise import div

    if rounding_mode is not None:
        from .division import rounded_div
        from .inplace_forms import rounded_div_

        return rounded_div_(t, other, rounding_mode, rounded_div)

    other, raw = promotion.inplace_operand("div_", t, other, "itruediv", div)  # dtype rules
    _check_broadcast("div_", t, other)
    return _inplace("div_", t, (other,), lambda old: div(old, other),
                    raw, True)


# -- fill_, zero_, copy_: one node each, PyTorch's ----------------------------------------------
def _zeros_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    return (F.zeros_like(g),)  # every old value was overwritten


def _grad_of_value(F: Any, g: Any, attrs: Any) -> Any:
    """``g`` as the gradient of the value written (a ``fill_`` tensor, a ``copy_`` source):
    summed to its shape (it was broadcast), in its dtype (it was cast). ``attrs``: its shape,
    dtype and raw dtype."""
    shape, dtype, raw = attrs
    if tuple(g.shape) != shape:
        g = F.reduce_to(g, shape)
    if isinstance(g, Tensor):  # under create_graph: a differentiable cast
        from .conversion import to

        return g if g.dtype is dtype else to(g, dtype)
    return g if g.dtype == raw else F.astype(g, raw)


def _written_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    return (F.zeros_like(g) if needs[0] else None,
            _grad_of_value(F, g, attrs) if needs[1] else None)


FillBackward2 = formula_node("FillBackward2", _zeros_rule, arity=1)  # fill_(number)
ZeroBackward0 = formula_node("ZeroBackward0", _zeros_rule, arity=1)
FillBackward3 = formula_node("FillBackward3", _written_rule, arity=2)  # fill_(0-d tensor)
CopyBackwards = formula_node("CopyBackwards", _written_rule, arity=2)


def _written(old: Tensor, value: Any, cls: Any) -> Tensor:
    """The result of writing ``value`` (a number, or a tensor broadcast to ``old``'s shape and
    cast to its dtype) over every element of ``old``, recorded as one ``cls`` node: ``old``
    gets zero gradient, a tensor value the gradient summed to its shape."""
    be = old.backend
    shape, raw = old._data.shape, old._data.dtype
    if isinstance(value, Tensor):
        data = be.ops.astype(be.ops.expand(value._data, tuple(shape)), raw)
        out = Tensor(data if type(data) is be.array_type else be.asarray(data), be)
        record(cls, out, (old, value), (), (), (value.shape, value.dtype, value._data.dtype))
    else:
        out = Tensor(be.ops.full(tuple(shape), promotion.assign_value(old, value), raw), be)
        record(cls, out, (old,))
    return out


def fill_(t: Tensor, value: Any) -> Tensor:
    """In place: every element of ``t`` set to ``value`` (a number or a 0-d tensor, through which
    the gradient flows); ``t``'s old value gets zero gradient. Returns ``t`` and bumps its
    version counter (E7 in docs/semantics.md)."""
    if not isinstance(value, Tensor) and promotion.is_number(promotion.scalar_value(value)):
        value = promotion.scalar_value(value)  # a NumPy scalar as the Python number it is
    if isinstance(value, Tensor) and value.ndim != 0:
        raise ShapeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                         f"{value.ndim} dimensions (shape {value.shape})")
    cls = FillBackward3 if isinstance(value, Tensor) else FillBackward2
    return _inplace("fill_", t, (value,), lambda old: _written(old, value, cls),
                    lambda a: t.backend.ops.assign_(a, promotion.assign_value(t, value)), False)


def zero_(t: Tensor) -> Tensor:
    """In place: every element of ``t`` set to 0 (``ZeroBackward0``). Returns ``t`` and bumps
    its version counter (E7 in docs/semantics.md)."""
    return _inplace("zero_", t, (), lambda old: _written(old, 0, ZeroBackward0),
                    lambda a: t.backend.ops.assign_(a, promotion.assign_value(t, 0)), False)


def _constant(t: Tensor) -> Tensor:
    """``t``'s data as a tensor without history: a value whose gradient PyTorch ignores."""
    return Tensor(t._data, t.backend)


def copy_(t: Tensor, src: Any) -> Tensor:
    """In place: ``src``'s values copied into ``t`` (broadcast to ``t``'s shape, cast to its dtype,
    from any device); differentiable in ``src``, ``t``'s old value gets zero gradient. Returns
    ``t`` and bumps its version counter (E7 in docs/semantics.md)."""
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
    return _inplace("copy_", t, (src,), lambda old: _written(old, src, CopyBackwards),
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
        const = t.backend.ops.put(const, k, promotion.assign_value(t, value, False))
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


# -- in-place forms of the unary ops -------------------------------------------------------------
def _unary_(name: str, t: Any, fn: Callable[[Tensor], Tensor], floating: bool,
            save: str | None) -> Tensor:
    """``t`` replaced by ``fn(t)`` in place. ``floating``: ``fn`` computes an integer or bool
    input in the default float dtype, which cannot be written back (PyTorch's "result type
    Float can't be cast to the desired output type Long"). ``save``: what ``fn``'s node
    saves -- "in" (the old value, copied first), "out" (the result, which is ``t``: see
    ``_adopt_saved_output``) or None."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    if floating and not t.dtype.is_floating_point:
        promotion.check_cast(get_default_dtype(), t.dtype)
    be = t.backend

    def raw(a: Any) -> None:
        res = fn(Tensor(a, be))
        be.ops.assign_(a, promotion.to_dtype_of(t, res))

    return _inplace(name, t, (), fn, raw, save == "in", adopt=save == "out")


def _declare_unary_(name: str, fn: Callable[[Tensor], Tensor], floating: bool,
                    save: str | None, function: bool = True) -> Callable[[Tensor], Tensor]:
    def inplace_op(t: Tensor) -> Tensor:
        return _unary_(name, t, fn, floating, save)

    inplace_op.__name__ = inplace_op.__qualname__ = name
    inplace_op.__doc__ = (f"``{name[:-1]}(t)`` written into ``t`` (its version bumped, its "
                          "history rebased when recorded); returns ``t``.")
    return op(name, function=function, differentiable=False)(inplace_op)


exp_ = _declare_unary_("exp_", _ew.exp, True, "out")
sin_ = _declare_unary_("sin_", _ew.sin, True, "in")
cos_ = _declare_unary_("cos_", _ew.cos, True, "in")
tanh_ = _declare_unary_("tanh_", _ew.tanh, True, "out")
sigmoid_ = _declare_unary_("sigmoid_", _ew.sigmoid, True, "out")
relu_ = _declare_unary_("relu_", _ew.relu, False, "out")
sqrt_ = _declare_unary_("sqrt_", _ew.sqrt, True, "out")
log_ = _declare_unary_("log_", _ew.log, True, "in")
abs_ = _declare_unary_("abs_", _ew.abs, False, "in")
neg_ = _declare_unary_("neg_", _ew.neg, False, None)
log1p_ = _declare_unary_("log1p_", _pw.log1p, True, "in")
expm1_ = _declare_unary_("expm1_", _pw.expm1, True, "out")
square_ = _declare_unary_("square_", _pw.square, False, "in")
reciprocal_ = _declare_unary_("reciprocal_", _pw.reciprocal, True, "out")
rsqrt_ = _declare_unary_("rsqrt_", _pw.rsqrt, True, "out")
sign_ = _declare_unary_("sign_", _pw.sign, False, None, function=False)
floor_ = _declare_unary_("floor_", _pw.floor, False, None)
tan_ = _declare_unary_("tan_", _pw.tan, True, "out")
sinh_ = _declare_unary_("sinh_", _pw.sinh, True, "in")
cosh_ = _declare_unary_("cosh_", _pw.cosh, True, "in")
asin_ = _declare_unary_("asin_", _pw.asin, True, "in")
acos_ = _declare_unary_("acos_", _pw.acos, True, "in")
atan_ = _declare_unary_("atan_", _pw.atan, True, "in")
erf_ = _declare_unary_("erf_", _pw.erf, True, "in")


def _clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """``clamp(t, min, max)`` written into ``t``; the bounds (numbers, or tensors that
    broadcast to ``t``'s shape) may not promote ``t``'s dtype (an integer tensor takes no
    float bound)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"clamp_(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    tensors = tuple(b for b in (min, max) if isinstance(b, Tensor))
    for b in tensors:
        _check_broadcast("clamp_", t, b)
    bounds = [b if isinstance(b, Tensor) else promotion.scalar_value(b)
              for b in (min, max) if b is not None]
    if bounds and all(isinstance(b, Tensor) or promotion.is_number(b) for b in bounds):
        r = promotion.operands_result_type(t, *bounds)
        if tensors:
            promotion.check_cast(r, t.dtype)
        elif not promotion.can_cast(r, t.dtype):
            raise DTypeError(f"result type {promotion.torch_name(r)} can't be cast to the "
                             f"desired output type {promotion.c_name(t.dtype)}")
    be = t.backend

    def fn(x: Tensor) -> Tensor:
        return _ew.clamp(x, min, max)

    def raw(a: Any) -> None:
        be.ops.assign_(a, promotion.to_dtype_of(t, fn(Tensor(a, be))))

    return _inplace("clamp_", t, tensors, fn, raw, True)


clamp_ = op("clamp_", differentiable=False)(_clamp_)
clip_ = op("clip_", differentiable=False)(_clamp_)


@op("pow_", function=False, differentiable=False)
def pow_(t: Tensor, exponent: Any) -> Tensor:
    """``t ** exponent`` written into ``t`` (``exponent`` a number or a tensor that broadcasts
    to ``t``); the result dtype may not be above ``t``'s."""
    if not isinstance(t, Tensor):
        raise TypeError(f"pow_(): expected a Tensor, got {type(t).__name__}")
    v = exponent if isinstance(exponent, Tensor) else promotion.scalar_value(exponent)
    if isinstance(v, Tensor) or promotion.is_number(v):
        _check_broadcast("pow_", t, v)
        promotion.check_cast(promotion.operands_result_type(t, v), t.dtype)
    be = t.backend

    def fn(x: Tensor) -> Tensor:
        return _ew.pow(x, v)

    def raw(a: Any) -> None:
        be.ops.assign_(a, promotion.to_dtype_of(t, fn(Tensor(a, be))))

    return _inplace("pow_", t, (v,), fn, raw, True, adopt=True)


@op("atan2_", function=False, differentiable=False)
def atan2_(t: Tensor, other: Tensor) -> Tensor:
    """``atan2(t, other)`` written into ``t`` (a floating tensor; ``other`` broadcasts to
    it)."""
    if not isinstance(t, Tensor) or not isinstance(other, Tensor):
        bad = other if isinstance(t, Tensor) else t
        raise TypeError(f"atan2_(): argument 'other' must be Tensor, not {type(bad).__name__}")
    _check_broadcast("atan2_", t, other)
    r = promotion.operands_result_type(t, other)
    promotion.check_cast(r if r.is_floating_point else get_default_dtype(), t.dtype)
    be = t.backend

    def fn(x: Tensor) -> Tensor:
        return _pw.atan2(x, other)

    def raw(a: Any) -> None:
        be.ops.assign_(a, promotion.to_dtype_of(t, fn(Tensor(a, be))))

    return _inplace("atan2_", t, (other,), fn, raw, True)


@op("masked_fill_", function=False, differentiable=False)
def masked_fill_(t: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` (a number or a 0-d tensor) written into ``t`` where the bool ``mask`` (which
    broadcasts to ``t``) is True; returns ``t``."""
    value = _pw.masked_fill_value("masked_fill_", t, mask, value)
    _check_broadcast("masked_fill_", t, mask)
    be = t.backend

    def fn(x: Tensor) -> Tensor:
        return _pw.masked_fill(x, mask, value)

    def raw(a: Any) -> None:
        be.ops.assign_(a, fn(Tensor(a, be))._data)

    return _inplace("masked_fill_", t, (mask, value), fn, raw, False)


# -- resize_ -------------------------------------------------------------------------------------
@op("resize_", function=False, differentiable=False)
def resize_(t: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``t`` the shape ``sizes``, keeping its first elements in order (new ones are
    zeros here; PyTorch leaves them uninitialized). A change of shape bumps the version; the
    same shape changes nothing. A tensor that requires grad cannot be resized, nor (here) a
    view to another shape (outside inference mode)."""
    from .creation import _size

    if not isinstance(t, Tensor):
        raise TypeError(f"resize_(): expected a Tensor, got {type(t).__name__}")
    shape = _size("resize_", sizes)
    if t._requires_grad and not _grad.inference:  # inference mode skips the check, as PyTorch
        raise RetrogradError("cannot resize variables that require grad")
    if shape == t.shape:
        return t
    if t._vc is INFERENCE and not _grad.inference:
        raise RetrogradError(INPLACE_ERROR)
    if t._base is not None:
        raise ShapeError(f"resize_: cannot resize a view of shape {t.shape} to {shape} "
                         "(retrograd resizes only a tensor that owns its memory: clone() it)")
    be = t.backend
    F = be.ops
    n = math.prod(shape)
    flat = F.reshape(t._data, (-1,))
    have = flat.shape[0]
    if n <= have:
        data = F.copy(F.getitem(flat, slice(0, n)))
    else:
        data = F.concat((flat, F.zeros((n - have,), flat.dtype)), 0)
    t._data = F.reshape(data, shape)
    touch(t._counter())
    return t


@op("resize_as_", differentiable=False)
def resize_as_(t: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``t.resize_(the_template.shape)``."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' must be Tensor, not "
                        f"{type(the_template).__name__}")
    return resize_(t, the_template.shape)


# -- out= ----------------------------------------------------------------------------------------
def write_out(name: str, out: Any, inputs: tuple[Any, ...],
              compute: Callable[[], Tensor]) -> Tensor:
    """``compute()`` written into ``out``, for the ``out=`` keyword of an op: refused with
    PyTorch's error when autograd is on and an input or ``out`` requires grad, or when
    ``out`` is an inference tensor outside inference mode. ``out`` is resized to the result's
    shape (with PyTorch's deprecation warning when it had elements); the result's dtype may
    not be above ``out``'s. ``out``'s version is bumped; it is returned."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _grad.enabled and (out._requires_grad or any(
            isinstance(i, Tensor) and i._requires_grad for i in inputs)):
        raise RetrogradError(f"{name}(): functions with out=... arguments don't support "
                             "automatic differentiation, but one of the arguments requires "
                             "grad.")
    if out._vc is INFERENCE and not _grad.inference:
        raise RetrogradError(INPLACE_ERROR)
    for i in inputs:
        if isinstance(i, Tensor):
            check_device(name, out, i)
    from ..grad_mode import no_grad

    with no_grad():
        res = compute()
    promotion.check_cast(res.dtype, out.dtype)
    if res.shape != out.shape:
        if out._base is not None:
            raise ShapeError(f"{name}(): out= a view of shape {out.shape} cannot be resized to "
                             f"the result's shape {res.shape} (pass an out= tensor of that "
                             "shape)")
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(res.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=3)
        be = out.backend
        out._data = be.ops.empty(res.shape, out._data.dtype)
    write(out, promotion.to_dtype_of(out, res))
    touch(out._counter())
    return out
