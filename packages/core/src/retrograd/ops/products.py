"""The products ops: ``bmm``, ``addmm``, ``baddbmm``, ``einsum``, ``tensordot``, ``kron`` and
the vector norms (``norm``; ``linalg.vector_norm`` in ``retrograd/linalg.py``)."""

from __future__ import annotations

import math
import string
from typing import Any

from ..autograd.node import formula_node
from ..errors import DTypeError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import check_device, record
from .declare import op
from .linalg import _matmul_rule, _mm_message
from .promotion import torch_name

__all__ = ["bmm", "addmm", "baddbmm", "einsum", "tensordot", "kron", "norm", "vector_norm"]


def _need_tensor(name: str, arg: str, pos: int, v: Any) -> None:
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


def _wrap(be: Any, data: Any) -> Tensor:
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


# -- bmm ----------------------------------------------------------------------------------
BmmBackward = formula_node("BmmBackward0", _matmul_rule, arity=2)


def _check_bmm(b1: Tensor, b2: Tensor) -> None:
    for arg, t in (("batch1", b1), ("batch2", b2)):
        if t.ndim != 3:
            raise ShapeError(f"{arg} must be a 3D tensor (got a {t.ndim}-D tensor of shape "
                             f"{tuple(t.shape)})")
    s1, s2 = b1.shape, b2.shape
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                         f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}].")
    if b1.dtype is not b2.dtype:
        raise DTypeError(f"expected scalar type {torch_name(b1.dtype)} but found "
                         f"{torch_name(b2.dtype)}")


@op("bmm")
def bmm(input: Tensor, mat2: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The batched matrix product of two 3-D tensors (b, n, m) @ (b, m, p) -> (b, n, p), one
    dtype, no broadcasting (see ``matmul``).
    ``out``: the result written into that tensor (``ops.inplace.write_out``)."""
    if out is not None:
        from .aliases import EXACT, out_one, out_same_dtype

        if isinstance(input, Tensor) and isinstance(mat2, Tensor) and \
                input.dtype is mat2.dtype:
            out_same_dtype("bmm", out, input.dtype, EXACT)
        return out_one("bmm", out, (input, mat2), lambda: bmm(input, mat2))
    _need_tensor("bmm", "input", 1, input)
    _need_tensor("bmm", "mat2", 2, mat2)
    check_device("bmm", input, mat2)
    _check_bmm(input, mat2)
    be = input.backend
    out = _wrap(be, be.ops.matmul(input._data, mat2._data))
    if _grad.enabled and (input._requires_grad or mat2._requires_grad):
        ra, rb = input._requires_grad, mat2._requires_grad
        record(BmmBackward, out, (input, mat2),
               (input._data if rb else None, mat2._data if ra else None),
               (input if rb else None, mat2 if ra else None),
               (tuple(input.shape), tuple(mat2.shape)))
    return out


# -- addmm / baddbmm ----------------------------------------------------------------------
def _addmm_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any, Any]:
    m1, m2 = saved
    sin, beta, alpha = attrs
    gi = g1 = g2 = None
    if needs[0]:
        gi = F.reduce_to(g if beta == 1 else F.mul(g, beta), sin)
    ga = g if alpha == 1 else F.mul(g, alpha)
    if needs[1]:
        g1 = F.matmul(ga, F.matrix_transpose(m2))
    if needs[2]:
        g2 = F.matmul(F.matrix_transpose(m1), ga)
    return gi, g1, g2


AddmmBackward = formula_node("AddmmBackward0", _addmm_rule, arity=3)
BaddbmmBackward = formula_node("BaddbmmBackward0", _addmm_rule, arity=3)


def _addmm_common(cls: Any, name: str, input: Tensor, m1: Tensor, m2: Tensor,  # noqa: A002
                  beta: Any, alpha: Any) -> Tensor:
    from .shape import expand_shape

    check_device(name, input, m1)
    check_device(name, m1, m2)
    oshape = tuple(m1.shape[:-1]) + (m2.shape[-1],)
    expand_shape(name, tuple(input.shape), oshape)
    be = input.backend
    F = be.ops
    data = F.matmul(m1._data, m2._data)
    if alpha != 1:
        data = F.mul(data, alpha)
    if beta != 0:
        data = F.add(data, input._data if beta == 1 else F.mul(input._data, beta))
    out = _wrap(be, F.expand(data, oshape) if tuple(data.shape) != oshape else data)
    if _grad.enabled and (input._requires_grad or m1._requires_grad or m2._requires_grad):
        r1, r2 = m1._requires_grad, m2._requires_grad
        record(cls, out, (input, m1, m2), (m1._data if r2 else None, m2._data if r1 else None),
               (m1 if r2 else None, m2 if r1 else None), (tuple(input.shape), beta, alpha))
    return out


@op("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,  # noqa: A002
          alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``, ``mat2`` and an ``input``
    that expands to the product's shape; all of one dtype. With ``beta=0`` the input is
    ignored (its nan and inf do not propagate)."""
    for i, (arg, t) in enumerate((("input", input), ("mat1", mat1), ("mat2", mat2))):
        _need_tensor("addmm", arg, i + 1, t)
    for arg, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise ShapeError(f"{arg} must be a matrix, got {t.ndim}-D tensor")
    s1, s2 = mat1.shape, mat2.shape
    if s1[1] != s2[0]:
        raise ShapeError(f"{_mm_message((s1[0], s1[1]), (s2[0], s2[1]))} (addmm)")
    for a, b in ((input, mat2), (mat1, mat2)):
        if a.dtype is not b.dtype:
            what = "self" if a is input else "mat1"
            raise DTypeError(f"{what} and mat2 must have the same dtype, but got "
                             f"{torch_name(a.dtype)} and {torch_name(b.dtype)}")
    return _addmm_common(AddmmBackward, "addmm", input, mat1, mat2, beta, alpha)


@op("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)`` for 3-D batches and an ``input`` that
    expands to the product's shape; all of one dtype (``beta=0`` ignores the input)."""
    for i, (arg, t) in enumerate((("input", input), ("batch1", batch1), ("batch2", batch2))):
        _need_tensor("baddbmm", arg, i + 1, t)
    _check_bmm(batch1, batch2)
    if input.dtype is not batch1.dtype:
        raise DTypeError(f"Input dtypes must be the same, got: input "
                         f"{torch_name(input.dtype).lower()}, batch1: "
                         f"{torch_name(batch1.dtype).lower()}, batch2: "
                         f"{torch_name(batch2.dtype).lower()}")
    return _addmm_common(BaddbmmBackward, "baddbmm", input, batch1, batch2, beta, alpha)


# -- einsum -------------------------------------------------------------------------------
def _einsum_error(msg: str) -> ShapeError:
    return ShapeError(f"einsum(): {msg}")


def _parse_einsum(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """The equation made explicit: one subscript string per operand (``...`` replaced by
    fresh letters, right-aligned) and the output's, checked as PyTorch checks them."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) > len(shapes):
        raise _einsum_error("fewer operands were provided than specified in the equation")
    if len(subs) < len(shapes):
        raise _einsum_error("more operands were provided than specified in the equation")
    for i, c in enumerate(eq):
        if not (c in string.ascii_letters or c in ".,->"):
            raise _einsum_error(f"invalid subscript given at index {i} in the equation string, "
                                "subscripts must be in [a-zA-Z]")
    fresh = (c for c in string.ascii_letters if c not in eq)
    counts = []
    for i, (s, shape) in enumerate(zip(subs, shapes)):
        n = len(s.replace("...", ""))
        if "..." in s:
            if len(shape) < n:
                raise _einsum_error(f"the number of subscripts in the equation ({n}) is more "
                                    f"than the number of dimensions ({len(shape)}) for operand "
                                    f"{i}")
            counts.append(len(shape) - n)
        elif n != len(shape):
            raise _einsum_error(f"the number of subscripts in the equation ({n}) does not match "
                                f"the number of dimensions ({len(shape)}) for operand {i} and no "
                                "ellipsis was given")
        else:
            counts.append(-1)
    ell = "".join(next(fresh) for _ in range(max(counts + [0])))
    subs = [s.replace("...", ell[len(ell) - k:] if k else "") if k >= 0 else s
            for s, k in zip(subs, counts)]
    if arrow:
        out = out.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise _einsum_error(f"output subscript {c} appears more than once in the "
                                    "output")
            if not any(c in s for s in subs):
                raise _einsum_error(f"output subscript {c} does not appear in the equation for "
                                    "any input operand")
    else:
        once = [c for c in set("".join(subs)) if c not in ell and "".join(subs).count(c) == 1]
        out = ell + "".join(sorted(once))
    return subs, out


def _einsum_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    """d/d operand i: an einsum of the output's gradient with the other operands into the
    operand's subscripts -- a repeated subscript through an identity, one the operand alone
    has through a vector of ones."""
    subs, out, sizes = attrs
    graph = isinstance(g, Tensor)
    be: Any = g.backend if graph else None
    grads: list[Any] = []
    for i, s in enumerate(subs):
        if not needs[i]:
            grads.append(None)
            continue
        terms, arrays = [out], [g]
        for j, (sj, a) in enumerate(zip(subs, saved)):
            if j != i:
                terms.append(sj)
                arrays.append(a)
        used = set("".join(subs) + out)
        fresh = (c for c in string.ascii_letters if c not in used)
        target = ""
        consts: list[tuple[str, Any]] = []
        for c in s:
            if c in target:
                d = next(fresh)
                target += d
                consts.append((c + d, ("eye", sizes[c])))
            else:
                target += c
        have = set("".join(terms))
        for c in dict.fromkeys(s):
            if c not in have:
                consts.append((c, ("ones", sizes[c])))
        like = g._data if graph else g
        kernels = be.ops if graph else F
        for sub, (kind, n) in consts:
            make = kernels.eye_like if kind == "eye" else kernels.ones_vector_like
            arr = make(n, like)
            terms.append(sub)
            arrays.append(Tensor(arr, be) if graph else arr)
        eq = ",".join(terms) + "->" + target
        grads.append(_einsum_explicit(eq, arrays) if graph else F.einsum(eq, *arrays))
    return tuple(grads)


EinsumBackward = formula_node("EinsumBackward0", _einsum_rule)


def _einsum_explicit(equation: str, operands: list[Tensor]) -> Tensor:
    subs, out = _parse_einsum(equation, [tuple(t.shape) for t in operands])
    return _einsum_core(subs, out, operands)


def _einsum_core(subs: list[str], out: str, operands: list[Tensor]) -> Tensor:
    from .shape import expand_to

    sizes: dict[str, int] = {}
    for i, (s, t) in enumerate(zip(subs, operands)):
        for c, n in zip(s, t.shape):
            m = sizes.get(c)
            if m is None or m == 1:
                sizes[c] = n
            elif n != 1 and n != m:
                raise _einsum_error(f"subscript {c} has size {n} for operand {i} which does not "
                                    f"broadcast with previously seen size {m}")
    ops = []
    for s, t in zip(subs, operands):
        full = tuple(sizes[c] for c in s)
        ops.append(expand_to(t, full) if tuple(t.shape) != full else t)
    be = ops[0].backend
    eq = ",".join(subs) + "->" + out
    out_t = _wrap(be, be.ops.einsum(eq, *(t._data for t in ops)))
    if _grad.enabled and any(t._requires_grad for t in ops):
        record(EinsumBackward, out_t, tuple(ops), tuple(t._data for t in ops), tuple(ops),
               (subs, out, sizes))
    return out_t


@op("einsum", method=False)
def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over ``operands`` as ``equation`` says (``'ij,jk->ik'``; ``...``
    for broadcast dimensions; without ``->`` the output is the subscripts seen once, in
    alphabetical order). The operands may also be given as one list. One dtype."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not "
                        f"{type(equation).__name__}")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {i} must be Tensor, not {type(t).__name__}")
    if not operands:
        raise _einsum_error("must provide at least one operand")
    for t in operands[1:]:
        check_device("einsum", operands[0], t)
        if t.dtype is not operands[0].dtype:
            raise DTypeError(f"expected scalar type {torch_name(operands[0].dtype)} but found "
                             f"{torch_name(t.dtype)}")
    return _einsum_explicit(equation, list(operands))


# -- tensordot / kron ---------------------------------------------------------------------
@op("tensordot", method=False)
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """The sum of products of ``a``'s and ``b``'s dimensions ``dims``: an int ``n`` pairs
    ``a``'s last ``n`` with ``b``'s first ``n``; a pair of lists names them."""
    from .shape import wrap_dim

    _need_tensor("tensordot", "a", 1, a)
    _need_tensor("tensordot", "b", 2, b)
    if isinstance(dims, int):
        if dims < 0:
            raise ShapeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise ShapeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise ShapeError("both dimension lists should have same length")
    da = [wrap_dim("tensordot", d, a.ndim) for d in da]
    db = [wrap_dim("tensordot", d, b.ndim) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(f"contracted dimensions need to match, but first has size "
                             f"{a.shape[x]} in dim {x - a.ndim if x < a.ndim else x} and second "
                             f"has size {b.shape[y]} in dim {y}")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out = [c for i, c in enumerate(sa) if i not in da] + \
        [c for i, c in enumerate(sb) if i not in db]
    if a.dtype is not b.dtype:
        raise DTypeError(f"expected scalar type {torch_name(a.dtype)} but found "
                         f"{torch_name(b.dtype)}")
    check_device("tensordot", a, b)
    return _einsum_core(["".join(sa), "".join(sb)], "".join(out), [a, b])


@op("kron")
def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product: the operands padded with leading ones to one rank, and
    ``out[i * other.shape + j] = input[i] * other[j]`` along every dimension (dtypes
    promote)."""
    from .elementwise import mul
    from .shape import reshape

    _need_tensor("kron", "input", 1, input)
    _need_tensor("kron", "other", 2, other)
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    ia = tuple(x for n in sa for x in (n, 1))
    ib = tuple(x for n in sb for x in (1, n))
    prod = mul(reshape(input, ia), reshape(other, ib))
    return reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


# -- vector norms -------------------------------------------------------------------------
def _norm_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    x, nrm = saved
    ordv, axes, keepdim, xshape = attrs
    if not keepdim:
        kshape = tuple(1 if i in axes else n for i, n in enumerate(xshape))
        g = F.reshape(g, kshape)
        nrm = F.reshape(nrm, kshape)
    if ordv == 0:
        return (F.mul(F.zeros_like(x), g),)
    if ordv == 1:
        return (F.mul(F.sign(x), g),)
    if ordv == 2:
        # PyTorch's masked quotient: 0 where the norm is 0 (its derivative there is nan)
        return (F.mul(x, F.where(F.eq(nrm, 0), F.zeros_like(nrm), F.div(g, nrm))),)
    if math.isinf(ordv):
        mask = F.where(F.eq(F.abs(x), nrm), F.ones_like(x), F.zeros_like(x))
        count = F.sum(mask, axes, True)
        return (F.mul(F.mul(F.sign(x), mask), F.div(g, count)),)
    scaled = F.mul(F.sign(x), F.pow(F.abs(x), ordv - 1))
    denom = F.pow(nrm, ordv - 1)
    zero = F.eq(nrm, 0)
    scale = F.where(zero, F.zeros_like(nrm), F.div(g, F.where(zero, F.ones_like(nrm), denom)))
    return (F.mul(scaled, scale),)


NormBackward = formula_node("LinalgVectorNormBackward0", _norm_rule, arity=1)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002
                *, dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (None: all elements): ``ord`` in 1, 2,
    inf, -inf, 0 or any p >= 1; a floating tensor. The gradient of the 2-norm at 0 is 0."""
    from .shape import wrap_dim

    _need_tensor("linalg.vector_norm", "input", 1, x)
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                         f"input. Got {torch_name(x.dtype)}")
    ordv = float(ord)
    if not (ordv in (0.0, 1.0, 2.0) or math.isinf(ordv) or ordv >= 1):
        raise NotImplementedError(f"linalg.vector_norm: ord={ord} (0 < ord < 1 or a negative "
                                  "finite ord) is not supported by retrograd")
    if dim is None:
        axes: tuple[int, ...] = tuple(range(x.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        axes = tuple(sorted({wrap_dim("linalg.vector_norm", d, x.ndim) for d in dims}))
    if ordv < 0 and any(x.shape[a] == 0 for a in axes) or (
            math.isinf(ordv) and x.numel() == 0):
        raise ShapeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                         "tensor because the operation does not have an identity")
    be = x.backend
    F = be.ops
    a = x._data
    ax = axes
    if ordv == 2:
        data = F.sqrt(F.sum(F.mul(a, a), ax, keepdim))
    elif ordv == 1:
        data = F.sum(F.abs(a), ax, keepdim)
    elif ordv == 0:
        data = F.sum(F.where(F.ne(a, 0), F.ones_like(a), F.zeros_like(a)), ax, keepdim)
    elif ordv == math.inf:
        data = F.amax(F.abs(a), tuple(ax), keepdim)
    elif ordv == -math.inf:
        data = F.neg(F.amax(F.neg(F.abs(a)), tuple(ax), keepdim))
    else:
        data = F.pow(F.sum(F.pow(F.abs(a), ordv), ax, keepdim), 1.0 / ordv)
    out = _wrap(be, data)
    if _grad.enabled and x._requires_grad:
        record(NormBackward, out, (x,), (a, out._data), (x, 0),
               (ordv, axes, keepdim, tuple(x.shape)))
    return out


@op("norm")
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """The ``p``-norm of ``input`` over ``dim`` (None: all): ``'fro'`` is the 2-norm; numbers
    as ``linalg.vector_norm``'s ``ord`` (``'nuc'`` is not supported).
    ``dtype``: the input cast to it first."""
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(f"norm: p={p!r} (a matrix norm) is not supported by "
                                  "retrograd")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)
