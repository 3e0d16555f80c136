"""matmul (1-D, 2-D, batched with broadcasting) and linear."""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..errors import DTypeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record
from .promotion import c_name, is_numpy_array, torch_name

__all__ = ["matmul", "linear"]


def _matmul_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    sa, sb = attrs
    ga = gb = None
    if len(sa) == 1 and len(sb) == 1:  # dot product
        ga = F.mul(g, b) if needs[0] else None
        gb = F.mul(g, a) if needs[1] else None
        return ga, gb
    if len(sa) == 1:  # (n,) @ (..., n, m) -> (..., m)
        g2 = F.unsqueeze(g, -2)  # (..., 1, m)
        if needs[0]:
            ga = F.reshape(F.reduce_to(F.matmul(g2, F.matrix_transpose(b)), (1, sa[0])), sa)
        if needs[1]:
            gb = F.reduce_to(F.matmul(F.reshape(a, (sa[0], 1)), g2), sb)
        return ga, gb
    if len(sb) == 1:  # (..., n, k) @ (k,) -> (..., n)
        g2 = F.unsqueeze(g, -1)  # (..., n, 1)
        if needs[0]:
            ga = F.reduce_to(F.matmul(g2, F.reshape(b, (1, sb[0]))), sa)
        if needs[1]:
            gb = F.reshape(F.reduce_to(F.matmul(F.matrix_transpose(a), g2), (sb[0], 1)), sb)
        return ga, gb
    if needs[0]:
        ga = F.reduce_to(F.matmul(g, F.matrix_transpose(b)), sa)
    if needs[1]:
        gb = F.reduce_to(F.matmul(F.matrix_transpose(a), g), sb)
    return ga, gb


MmBackward = formula_node("MmBackward0", _matmul_rule, arity=2)


def _matmul_dtype_message(a: Tensor, b: Tensor) -> str:
    """PyTorch's message for operands of two dtypes, which names the kernel it would run."""
    da, db = a.dtype, b.dtype
    if a.ndim == 1 and b.ndim == 1:
        return (f"dot : expected both vectors to have same dtype, but found {torch_name(da)} "
                f"and {torch_name(db)}")
    if b.ndim == 1:
        return (f"addmv input tensors must have the same dtype, but got {torch_name(db)}, "
                f"{torch_name(da)}, and {torch_name(db)}")
    if b.ndim >= 3:
        return f"expected scalar type {torch_name(da)} but found {torch_name(db)}"
    return f"expected m1 and m2 to have the same dtype, but got: {c_name(da)} != {c_name(db)}"


def _linear_dtype_check(x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's refusal of operands of different dtypes (no promotion in linear/matmul)."""
    dw = weight.dtype
    if bias is not None and bias.dtype is not dw:
        raise DTypeError(f"self and mat2 must have the same dtype, but got "
                         f"{torch_name(bias.dtype)} and {torch_name(dw)}")
    dx = x.dtype
    if dx is not dw:
        if bias is not None:
            raise DTypeError(f"mat1 and mat2 must have the same dtype, but got "
                             f"{torch_name(dx)} and {torch_name(dw)}")
        raise DTypeError(f"expected m1 and m2 to have the same dtype, but got: {c_name(dx)} "
                         f"!= {c_name(dw)}")


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` (1-D, 2-D or batched). Both operands must have one dtype: PyTorch does not
    promote here, and neither does retrograd (DTypeError with PyTorch's message)."""
    if isinstance(a, Tensor) and is_numpy_array(b):
        from .elementwise import _numpy_matmul

        return _numpy_matmul(a, b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(
            f"matmul: expected two Tensors, got {type(a).__name__} and {type(b).__name__}"
        )
    check_device("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both arguments need at least 1 dimension, got shapes "
                         f"{a.shape} and {b.shape}")
    if a._data.dtype is not b._data.dtype and a.dtype is not b.dtype:
        raise DTypeError(_matmul_dtype_message(a, b))
    be = a.backend
    try:
        data = be.ops.matmul(a._data, b._data)
    except ValueError as exc:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied ({exc})"
        ) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (a._requires_grad or b._requires_grad):
        # each input's gradient needs only the other input: save only what will be used, so
        # an in-place change to an operand whose gradient is not needed stays legal
        ra, rb = a._requires_grad, b._requires_grad
        record(MmBackward, out, (a, b), (a._data if rb else None, b._data if ra else None),
               (a if rb else None, b if ra else None),
               (tuple(a._data.shape), tuple(b._data.shape)))
    return out


def _linear_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    x, w = saved
    xshape, has_bias = attrs
    nb = bool(has_bias and needs[2])
    if len(xshape) == 2:
        gx, gw, gb = F.linear_backward(g, x, w, bool(needs[0]), bool(needs[1]), nb)
    else:
        x2 = None if x is None else F.reshape(x, (-1, xshape[-1]))
        g2 = F.reshape(g, (-1, g.shape[-1]))
        gx, gw, gb = F.linear_backward(g2, x2, w, bool(needs[0]), bool(needs[1]), nb)
        if gx is not None:
            gx = F.reshape(gx, xshape)
    return (gx, gw, gb) if has_bias else (gx, gw)


LinearBackward = formula_node("LinearBackward0", _linear_rule)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with ``weight`` of shape (out, in), as in PyTorch. The three
    must share one dtype (a float64 input to a float32 layer raises DTypeError, PyTorch's
    "mat1 and mat2 must have the same dtype")."""
    for name, t in (("input", x), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear: {name} must be a Tensor, got {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear: bias must be a Tensor or None, got {type(bias).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out, in), got shape {weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {x.shape} does not match weight of shape {weight.shape} "
            f"(expected input[..., {weight.shape[1]}])"
        )
    if bias is not None and bias.shape not in ((weight.shape[0],), ()):
        raise ValueError(f"linear: bias of shape {bias.shape} does not match weight of shape "
                         f"{weight.shape} (expected ({weight.shape[0]},))")
    for other in (weight, bias):
        if other is not None:
            check_device("linear", x, other)
    if x._data.dtype is not weight._data.dtype or (
            bias is not None and bias._data.dtype is not weight._data.dtype):
        _linear_dtype_check(x, weight, bias)
    be = x.backend
    F = be.ops
    data = F.linear_forward(x._data, weight._data, None if bias is None else bias._data)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (x._requires_grad or weight._requires_grad or
                          (bias is not None and bias._requires_grad)):
        inputs = (x, weight) if bias is None else (x, weight, bias)
        if bias is not None and bias.shape == ():
            # a 0-d bias broadcasts; keep its gradient shape right through a generic add
            from .elementwise import add

            core = linear(x, weight, None)
            return add(core, bias)
        # d/dx needs the weight, d/dW needs x: save each only when the other needs a gradient
        rx, rw = x._requires_grad, weight._requires_grad
        record(LinearBackward, out, inputs, (x._data if rw else None, weight._data if rx else None),
               (x if rw else None, weight if rx else None),
               (tuple(x._data.shape), bias is not None))
    return out
