"""matmul (1-D, 2-D, batched with broadcasting) and linear."""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import formula_node
from ..errors import DTypeError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record
from .declare import op
from .promotion import c_name, is_numpy_array, torch_name

__all__ = ["matmul", "linear", "mm", "mv", "dot", "outer"]


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


# PyTorch's names for the kernel its matmul runs: ``dot`` (1-D @ 1-D), ``mv`` (2-D @ 1-D), ``mm``
# (retrograd says MmBackward0 for every other case too; PyTorch wraps those in views of mm/bmm)
MmBackward = formula_node("MmBackward0", _matmul_rule, arity=2)
MvBackward = formula_node("MvBackward0", _matmul_rule, arity=2)
DotBackward = formula_node("DotBackward0", _matmul_rule, arity=2)


def _mm_message(m1: tuple[int, int], m2: tuple[int, int]) -> str:
    return (f"mat1 and mat2 shapes cannot be multiplied ({m1[0]}x{m1[1]} and "
            f"{m2[0]}x{m2[1]})")


def _mv_message(mat: tuple[int, int], n: int) -> str:
    return f"size mismatch, got input ({mat[0]}), mat ({mat[0]}x{mat[1]}), vec ({n})"


def matmul_mismatch(sa: tuple[int, ...], sb: tuple[int, ...],
                    a_grad: bool = False) -> ShapeError | None:
    """ShapeError with PyTorch's words for ``a @ b`` of shapes ``sa`` and ``sb`` (both at least
    1-D) that do not fit, None when they do. The message is the one of the kernel PyTorch's
    matmul picks -- dot, mv, mm, or bmm after broadcasting the batch dimensions (checked
    first) -- after folding an operand of more than two dimensions against one of one or two
    into a matrix, as it does for contiguous operands (``a @ b`` with a 1-D or 2-D ``a`` and a
    batched ``b`` is folded only when ``a`` requires grad: ``a_grad``)."""
    from .elementwise import broadcast_mismatch, broadcast_shape

    da, db = len(sa), len(sb)
    where = f" (shapes {tuple(sa)} and {tuple(sb)})"
    batched = not (da >= 3 and db <= 2) and not (da <= 2 and a_grad) and max(da, db) >= 3
    batch_a, batch_b = sa[:-2], sb[:-2]
    what = f"batch dimensions of the operands of shapes {tuple(sa)} and {tuple(sb)}:"
    if batched and (err := broadcast_mismatch("matmul", batch_a, batch_b, what=what)) is not None:
        return err
    if sa[-1] == (sb[-2] if db >= 2 else sb[0]):
        return None
    if da == 1 and db == 1:
        return ShapeError(f"matmul: inconsistent tensor size, expected tensor [{sa[0]}] and src "
                          f"[{sb[0]}] to have the same number of elements, but got {sa[0]} and "
                          f"{sb[0]} elements respectively")
    if da <= 2 and db <= 2:
        if db == 1:
            return ShapeError(f"matmul: {_mv_message((sa[0], sa[1]), sb[0])}{where}")
        m1 = (1, sa[0]) if da == 1 else (sa[0], sa[1])
        return ShapeError(f"matmul: {_mm_message(m1, (sb[0], sb[1]))}{where}")
    if da >= 3 and db <= 2:  # a folded into a matrix
        m1 = (math.prod(sa[:-1]), sa[-1])
        msg = _mv_message(m1, sb[0]) if db == 1 else _mm_message(m1, (sb[0], sb[1]))
        return ShapeError(f"matmul: {msg}{where}")
    if da <= 2 and a_grad:  # (a @ b).mT = b.mT @ a.mT, b.mT folded into a matrix
        m1 = (math.prod(sb[:-2]) * sb[-1], sb[-2])
        msg = _mv_message(m1, sa[0]) if da == 1 else _mm_message(m1, (sa[1], sa[0]))
        return ShapeError(f"matmul: {msg}{where}")
    n = math.prod(broadcast_shape(batch_a, batch_b))
    k, kb = sa[-1], sb[-2] if db >= 2 else sb[0]
    return ShapeError(f"matmul: Expected size for first two dimensions of batch2 tensor to be: "
                      f"[{n}, {k}] but got: [{n}, {kb}].{where}")


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


def matmul(a: Tensor, b: Tensor, *, out: Any = None) -> Tensor:
    """``a @ b`` (1-D, 2-D or batched). Both operands must have one dtype: PyTorch does not
    promote here, and neither does retrograd (DTypeError with PyTorch's message).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:
        from .aliases import EXACT, out_one, out_same_dtype

        if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype:
            out_same_dtype("matmul", out, a.dtype, EXACT)
        return out_one("matmul", out, (a, b), lambda: matmul(a, b))
    if isinstance(a, Tensor) and is_numpy_array(b):
        from .elementwise import _numpy_matmul

        return _numpy_matmul(a, b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(
            f"matmul: expected two Tensors, got {type(a).__name__} and {type(b).__name__}"
        )
    check_device("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: both arguments to matmul need to be at least 1D, but they are "
                         f"{a.ndim}D and {b.ndim}D")
    if a._data.dtype is not b._data.dtype and a.dtype is not b.dtype:
        raise DTypeError(_matmul_dtype_message(a, b))
    be = a.backend
    try:
        data = be.ops.matmul(a._data, b._data)
    except ValueError as exc:
        err = matmul_mismatch(tuple(a._data.shape), tuple(b._data.shape), a._requires_grad)
        raise (err or ValueError(f"matmul: shapes {a.shape} and {b.shape}: {exc}")) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (a._requires_grad or b._requires_grad):
        # each input's gradient needs only the other input: save only what will be used, so
        # an in-place change to an operand whose gradient is not needed stays legal
        ra, rb = a._requires_grad, b._requires_grad
        nda, ndb = a._data.ndim, b._data.ndim
        cls = MmBackward if ndb != 1 else MvBackward if nda == 2 else DotBackward \
            if nda == 1 else MmBackward
        record(cls, out, (a, b), (a._data if rb else None, b._data if ra else None),
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
    "mat1 and mat2 must have the same dtype"). A bias of shape (out,) -- the common case -- is
    part of the one LinearBackward0 node; any other that broadcasts as PyTorch's allows (a 0-d
    or one-element bias ...) is added after it. A 1-D weight is a matrix-vector product."""
    for name, t in (("input", x), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear: {name} must be a Tensor, got {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"linear: bias must be a Tensor or None, got {type(bias).__name__}")
    xshape, wshape = x.shape, weight.shape
    if len(xshape) == 0 or len(wshape) == 0:
        raise ShapeError(f"linear: both arguments to linear need to be at least 1D, but they "
                         f"are {len(xshape)}D and {len(wshape)}D")
    if len(wshape) > 2:
        raise ShapeError(f"linear: t() expects a tensor with <= 2 dimensions, but self is "
                         f"{len(wshape)}D (the weight, of shape {tuple(wshape)}, must be "
                         "(out_features, in_features))")
    if len(wshape) == 2 and xshape[-1] != wshape[1]:
        raise ShapeError(
            f"linear: mat1 and mat2 shapes cannot be multiplied ({math.prod(xshape[:-1])}x"
            f"{xshape[-1]} and {wshape[1]}x{wshape[0]}) (input of shape {tuple(xshape)}, weight "
            f"of shape {tuple(wshape)}: the input's last dimension must be in_features)")
    for other in (weight, bias):
        if other is not None:
            check_device("linear", x, other)
    if x._data.dtype is not weight._data.dtype or (
            bias is not None and bias._data.dtype is not weight._data.dtype):
        _linear_dtype_check(x, weight, bias)
    if (bias is not None and bias.shape != wshape[:1]) or len(wshape) == 1:
        return _linear_composite(x, weight, bias)
    be = x.backend
    F = be.ops
    data = F.linear_forward(x._data, weight._data, None if bias is None else bias._data)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (x._requires_grad or weight._requires_grad or
                          (bias is not None and bias._requires_grad)):
        inputs = (x, weight) if bias is None else (x, weight, bias)
        # d/dx needs the weight, d/dW needs x: save each only when the other needs a gradient
        rx, rw = x._requires_grad, weight._requires_grad
        record(LinearBackward, out, inputs, (x._data if rw else None, weight._data if rx else None),
               (x if rw else None, weight if rx else None),
               (tuple(x._data.shape), bias is not None))
    return out


def _linear_composite(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``linear`` with a 1-D weight (a matrix-vector or dot product) or a bias of another shape
    than (out,), checked as PyTorch checks it: a 1-D weight takes no bias but a 0-d one; with
    a 2-D input (or a bias of at most one dimension) the bias must expand to (N, out), N the
    input's rows (PyTorch's addmm); otherwise it is added in place to the output, whose shape
    it may not change."""
    from .elementwise import add, broadcast_mismatch, broadcast_shape
    from .shape import expand_shape

    wshape = weight.shape
    if len(wshape) == 1:
        if bias is not None and bias.ndim:
            raise ShapeError(f"linear: mat2 must be a matrix, got 1-D tensor (a 1-D weight, of "
                             f"shape {tuple(wshape)}, takes no bias but a 0-d one; the bias has "
                             f"shape {tuple(bias.shape)})")
        out = matmul(x, weight)
        return out if bias is None else add(out, bias)
    assert bias is not None
    oshape = x.shape[:-1] + wshape[:1]
    if x.ndim == 2 or bias.ndim <= 1:
        expand_shape("linear", bias.shape, (math.prod(x.shape[:-1]), wshape[0]))
    else:
        err = broadcast_mismatch("linear", oshape, bias.shape)
        if err is not None:
            raise err
        if (bshape := broadcast_shape(oshape, bias.shape)) != oshape:
            raise ShapeError(f"linear: output with shape {list(oshape)} doesn't match the "
                             f"broadcast shape {list(bshape)} (the bias, of shape "
                             f"{tuple(bias.shape)}, is added in place to the output)")
    return add(linear(x, weight, None), bias)


def _two_tensors(name: str, a: Any, b: Any, second: str) -> None:
    for arg, v in (("'input' (position 1)", a), (f"'{second}' (position 2)", b)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument {arg} must be Tensor, not {type(v).__name__}")
    check_device(name, a, b)


@op("mm")
def mm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The matrix product of two 2-D tensors of one dtype (no broadcasting: see ``matmul``).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:  # ``out=``: ops.inplace.write_out
        from .inplace import write_out

        return write_out("mm", out, (input, mat2), lambda: mm(input, mat2))
    _two_tensors("mm", input, mat2, "mat2")
    if input.ndim != 2:
        raise ShapeError(f"self must be a matrix (mm: got a {input.ndim}-D tensor of shape "
                         f"{input.shape})")
    if mat2.ndim != 2:
        raise ShapeError(f"mat2 must be a matrix (mm: got a {mat2.ndim}-D tensor of shape "
                         f"{mat2.shape})")
    sa, sb = input.shape, mat2.shape
    if sa[1] != sb[0]:
        raise ShapeError(f"{_mm_message((sa[0], sa[1]), (sb[0], sb[1]))} (mm)")
    return matmul(input, mat2)


@op("mv")
def mv(input: Tensor, vec: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The product of the 2-D ``input`` and the 1-D ``vec`` (one dtype).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:  # ``out=``: ops.inplace.write_out
        from .inplace import write_out

        return write_out("mv", out, (input, vec), lambda: mv(input, vec))
    _two_tensors("mv", input, vec, "vec")
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    sa = input.shape
    if sa[1] != vec.shape[0]:
        raise ShapeError(f"{_mv_message((sa[0], sa[1]), vec.shape[0])} (mv)")
    return matmul(input, vec)


@op("dot")
def dot(input: Tensor, tensor: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The inner product of two 1-D tensors of one size and dtype (a 0-d tensor).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:  # ``out=``: ops.inplace.write_out
        from .inplace import write_out

        return write_out("dot", out, (input, tensor), lambda: dot(input, tensor))
    _two_tensors("dot", input, tensor, "tensor")
    if input.ndim != 1 or tensor.ndim != 1:
        raise ShapeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                         "tensors")
    n, k = input.shape[0], tensor.shape[0]
    if n != k:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{n}] and src [{k}] to "
                         f"have the same number of elements, but got {n} and {k} elements "
                         "respectively")
    return matmul(input, tensor)


@op("outer")
def outer(input: Tensor, vec2: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The outer product of two 1-D tensors: ``input[i] * vec2[j]``, as PyTorch computes it
    (``input.reshape(-1, 1) * vec2``: dtypes promote, MulBackward0).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:  # ``out=``: ops.inplace.write_out
        from .inplace import write_out

        return write_out("outer", out, (input, vec2), lambda: outer(input, vec2))
    from .elementwise import mul
    from .shape import reshape

    _two_tensors("outer", input, vec2, "vec2")
    for arg, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise ShapeError(f"outer: Expected 1-D argument {arg}, but got {t.ndim}-D")
    return mul(reshape(input, (-1, 1)), vec2)
