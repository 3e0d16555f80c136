"""Elementwise ops: each forward next to its derivative rule.

A rule is ``rule(F, g, saved, attrs, needs) -> grads``: ``F`` is the op namespace (raw kernels
in the fast walk, differentiable ops under create_graph), ``needs[i]`` is falsy where input i
needs no gradient. Python scalars are operands with a None edge (``x * 2``), as in PyTorch;
where PyTorch's node has no slot for the number, neither has retrograd's: ``2 - x``
(RsubBackward1), ``1 / x`` (ReciprocalBackward0), ``x ** 2`` (PowBackward0), ``2 ** x``
(PowBackward2) have one edge, the tensor's.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..backends.host import quiet_call
from ..dtypes import bool_, float16, float32, get_default_dtype, int64
from ..errors import DTypeError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import promotion
from ._core import (
    OUTPUT,
    check_device,
    record,
)
from .promotion import FLOATING
from .promotion import HOST_F32 as _F32
from .promotion import HOST_F64 as _F64

__all__ = [
    "add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "where", "maximum", "minimum",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "allclose",
]


def broadcast_mismatch(name: str, *shapes: Any, what: str = "operand shapes") -> ShapeError | None:
    """ShapeError with PyTorch's words for operand shapes that do not broadcast together, or
    None when they do. As PyTorch's ``infer_size``, the operands are taken from the left, each
    new one against the broadcast shape so far, from the trailing dimension: the first
    mismatch is the one reported. ``what`` names the shapes in the message."""
    acc = tuple(shapes[0])
    for other in shapes[1:]:
        b = tuple(other)
        nd = max(len(acc), len(b))
        out = [1] * nd
        for i in range(nd - 1, -1, -1):
            sa = acc[i - nd + len(acc)] if i >= nd - len(acc) else 1
            sb = b[i - nd + len(b)] if i >= nd - len(b) else 1
            if sa != sb and sa != 1 and sb != 1:
                listed = " and ".join(str(tuple(s)) for s in shapes)
                return ShapeError(
                    f"{name}: The size of tensor a ({sa}) must match the size of tensor b "
                    f"({sb}) at non-singleton dimension {i} ({what} {listed})")
            out[i] = sb if sa == 1 else sa
        acc = tuple(out)
    return None


def broadcast_shape(*shapes: Any) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to (they must broadcast: see ``broadcast_mismatch``)."""
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for shp in shapes:
        for i, n in enumerate(shp, nd - len(shp)):
            if n != 1:
                out[i] = n
    return tuple(out)


def _broadcast_error(name: str, *operands_and_exc: Any) -> Exception:
    """The error for a kernel's ValueError (the last argument) on ``operands`` (arrays or
    numbers): the broadcast mismatch in PyTorch's words, or -- when the shapes do broadcast --
    the kernel's own reason."""
    *operands, exc = operands_and_exc
    err = broadcast_mismatch(name, *(tuple(getattr(o, "shape", ())) for o in operands))
    return err if err is not None else ValueError(f"{name}: {exc}")


def _binary(name: str, cls: Any, a: Any, b: Any, save: str | None,
            any_dtype: bool = False) -> Tensor:
    """A broadcasting binary op. ``save``: None (the rule needs no values), "cross" (each
    input's gradient needs only the *other* input, as for mul) or "both" (pow: both inputs,
    and the output when the exponent needs a gradient). ``any_dtype``: two
    tensors of one dtype need no promotion whatever the dtype (add, mul; not sub, div, pow).

    The operand checks are ``_core.binary_operands`` written inline: this is the hottest op
    path, and the call measured 3-5% of a small ``x * 1.0001``. The fast path is the common
    case of PyTorch's type promotion where nothing is promoted: two tensors of one (floating,
    unless ``any_dtype``) dtype, or a float32/float64 tensor and a Python ``float``/``int``:
    identity tests of the arrays' dtypes (against the host's float32 and float64 first, then
    the ``id`` of another backend's in ``promotion.FLOATING``). Everything else -- mixed
    dtypes, integer, bool or float16 tensors, NumPy scalars and arrays, bools -- goes to
    ``_binary_promoted``."""
    if isinstance(a, Tensor):
        ta = a
        ad = a._data
        be = a.backend
        if isinstance(b, Tensor):
            tb = b
            bd = b._data
            if b.backend is not be or be.multi_device:
                check_device(name, a, b)  # raises only when the two devices differ
            if (dt := ad.dtype) is not bd.dtype or (not any_dtype and dt is not _F32 and
                                                    dt is not _F64 and id(dt) not in FLOATING):
                return _binary_promoted(name, cls, a, b, save)
        elif (type(b) is float or type(b) is int) and (
                (dt := ad.dtype) is _F32 or dt is _F64 or id(dt) in FLOATING):
            tb = None
            bd = b
        else:
            return _binary_promoted(name, cls, a, b, save)
    elif isinstance(b, Tensor) and (type(a) is float or type(a) is int) and (
            (dt := b._data.dtype) is _F32 or dt is _F64 or id(dt) in FLOATING):
        ta = None
        ad = a
        tb = b
        bd = b._data
        be = b.backend
    else:
        return _binary_promoted(name, cls, a, b, save)
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise _broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled:
        ra = ta is not None and ta._requires_grad
        rb = tb is not None and tb._requires_grad
        if ra or rb:
            # attrs None: no operand was broadcast, so no gradient needs reducing (the common
            # case; it keeps one long-lived tuple per node away from the garbage collector)
            oshape = data.shape
            sa = None if ta is None else ad.shape
            sb = None if tb is None else bd.shape
            attrs = None if (sa is None or sa == oshape) and (sb is None or sb == oshape) \
                else (sa, sb)
            if save is None:
                if ta is None and cls is SubBackward:  # number - tensor: rsub, one edge
                    record(RsubBackward, out, (tb,))
                else:
                    record(cls, out, (ta, tb), (), (), attrs)
            elif save == "cross" and tb is None:  # tensor * scalar: d/da needs the scalar
                record(cls, out, (ta, tb),
                       _SCALAR_SAVED.get(id(bd) << 1 | 1) or _scalar_saved(bd, 1), (), attrs)
            elif save == "cross" and ta is None:
                record(cls, out, (ta, tb),
                       _SCALAR_SAVED.get(id(ad) << 1) or _scalar_saved(ad, 0), (), attrs)
            elif save == "cross":
                sa_src = ta if rb else None
                sb_src = tb if ra else None
                srcs = () if sa_src is None and sb_src is None else (sa_src, sb_src)
                record(cls, out, (ta, tb), (ad if rb else None, bd if ra else None), srcs, attrs)
            elif save == "div" and ta is None:  # 1 / tensor: reciprocal, one edge
                record(cls, out, (tb,), (data,), OUTPUT)
            elif save == "div":  # a/b: d/da needs only b; d/db needs a and b
                record(cls, out, (ta, tb), (ad if rb else None, bd),
                       (ta if rb else None, tb), attrs)
            else:
                _record_pow(out, ta, tb, ad, bd, data, attrs, cls)
    return out


_SCALAR_SAVED: dict[int, tuple[Any, Any]] = {}


def _scalar_saved(c: Any, pos: int) -> tuple[Any, Any]:
    """The saved pair of ``tensor * c`` -- ``(None, c)``, or ``(c, None)`` for ``c * tensor``
    -- one shared tuple per scalar object instead of one per node: a loop multiplying by the
    same constant keeps no per-node tuple alive for the garbage collector to scan (W1).
    Keyed by the object's identity (exact: 0.0 and -0.0, nan), which the cached tuple keeps
    alive; the cache is bounded. Called on a miss (``_binary`` looks the key up inline)."""
    if len(_SCALAR_SAVED) >= 256:
        _SCALAR_SAVED.clear()
    pair = _SCALAR_SAVED[id(c) << 1 | pos] = (None, c) if pos else (c, None)
    return pair


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")
_NEG_INT_POW = "Integers to negative integer powers are not allowed."


def _operands(name: str, a: Any, b: Any) -> tuple[Any, Any, Any]:
    """``a`` and ``b`` as Tensors or Python numbers (NumPy scalars read as PyTorch reads
    them), and their backend; a TypeError for anything else."""
    av = a if isinstance(a, Tensor) else promotion.scalar_value(a)
    bv = b if isinstance(b, Tensor) else promotion.scalar_value(b)
    if isinstance(av, Tensor):
        if isinstance(bv, Tensor):
            check_device(name, av, bv)
        elif not promotion.is_number(bv):
            raise TypeError(f"{name}: unsupported operand type {type(b).__name__} (expected a "
                            "Tensor or a number)")
        return av, bv, av.backend
    if isinstance(bv, Tensor) and promotion.is_number(av):
        return av, bv, bv.backend
    raise TypeError(f"{name}: unsupported operand types {type(a).__name__} and "
                    f"{type(b).__name__}")


def _common_operands(av: Any, bv: Any) -> tuple[Any, Any, Any]:
    """``(r, a, b)``: the two operands as the kernel gets them -- arrays or numbers of one
    dtype -- and the result dtype they were cast to (None when no cast was needed)."""
    if _no_promotion(av, bv):
        return (None, av._data if isinstance(av, Tensor) else av,
                bv._data if isinstance(bv, Tensor) else bv)
    r = promotion.operands_result_type(av, bv)
    return r, _cast(av, r), _cast(bv, r)


def _no_promotion(av: Any, bv: Any) -> bool:
    """Whether two operands (Tensors or Python numbers) need no cast: two tensors of one array
    dtype, or a float32/float64 tensor and a Python ``float`` or ``int``."""
    if isinstance(av, Tensor):
        if isinstance(bv, Tensor):
            return av._data.dtype is bv._data.dtype
        t, n = av, bv
    elif isinstance(bv, Tensor):
        t, n = bv, av
    else:
        return False
    dt = t._data.dtype
    return (type(n) is float or type(n) is int) and (
        dt is _F32 or dt is _F64 or id(dt) in FLOATING)


def _cast(v: Any, dt: Any) -> Any:
    """A Tensor's array, or a number, as the kernel gets it in computation dtype ``dt``."""
    return promotion.cast_data(v, dt) if isinstance(v, Tensor) else \
        promotion.cast_scalar(v, dt)


# NumPy arrays as operands: PyTorch hands ``tensor <op> ndarray`` to NumPy (through
# ``Tensor.__array__``, so never for a tensor that requires grad), which computes with its own
# promotion and wraps the result as a tensor without history. retrograd does the same.
_NUMPY_UFUNC = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "true_divide",
                "pow": "power", "eq": "equal", "ne": "not_equal"}


def _numpy_operand(name: str, a: Any, b: Any) -> Tensor:
    t = a if isinstance(a, Tensor) else b
    ufunc = _NUMPY_UFUNC.get(name)
    if not isinstance(t, Tensor) or ufunc is None:
        raise TypeError(f"{name}: unsupported operand types {type(a).__name__} and "
                        f"{type(b).__name__} (a NumPy array is accepted only by the arithmetic "
                        "operators and ==)")
    if t._requires_grad:
        raise RetrogradError("Can't call numpy() on Tensor that requires grad. Use "
                             "tensor.detach().numpy() instead.")
    host = promotion.host_array
    ha = host(a)
    hb = host(b)
    data = promotion.numpy_ufunc(ufunc)(ha, hb)
    be = t.backend
    out = Tensor(be.asarray(data), be)
    out.dtype  # noqa: B018 - a dtype retrograd does not have raises TypeError here
    return out


def _numpy_matmul(a: Tensor, b: Any) -> Tensor:
    """``tensor @ ndarray``: NumPy computes it, as in PyTorch (see ``_numpy_operand``)."""
    if a._requires_grad:
        raise RetrogradError("Can't call numpy() on Tensor that requires grad. Use "
                             "tensor.detach().numpy() instead.")
    be = a.backend
    out = Tensor(be.asarray(promotion.numpy_ufunc("matmul")(promotion.host_array(a), b)), be)
    out.dtype  # noqa: B018 - a dtype retrograd does not have raises TypeError here
    return out


def _binary_promoted(name: str, cls: Any, a: Any, b: Any, save: str | None) -> Tensor:
    """``_binary`` for operands that need PyTorch's promotion (see ``ops.promotion``): the
    tensors are cast to the result dtype and the numbers converted, so the kernel gets one
    dtype; the node casts each gradient back to its input's dtype."""
    if promotion.is_numpy_array(a) or promotion.is_numpy_array(b):
        return _numpy_operand(name, a, b)
    av, bv, be = _operands(name, a, b)
    if name == "sub":
        promotion.check_sub(av, bv)
    r = promotion.operands_result_type(av, bv)
    if not r.is_floating_point:
        if name == "div":
            r = get_default_dtype()  # true division
        elif name == "pow":
            return _integer_pow(be, av, bv, r)
    ta = av if isinstance(av, Tensor) else None
    tb = bv if isinstance(bv, Tensor) else None
    work = r
    if r is float16 and (name == "mul" or name == "div") and (tb is None or not tb._data.shape):
        # PyTorch's CPU kernels multiply and divide a float16 tensor by a scalar operand
        # (a number, or a 0-d tensor) in float32 with the scalar's own value, then round
        work = float32
    elif r is float16 and name == "pow" and tb is None:
        promotion.check_half_exponent(bv)
    ad = _cast(av, work)
    bd = _cast(bv, work)
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise _broadcast_error(name, ad, bd, exc) from None
    data = promotion.fix_result(be, data, r)
    if work is not r:  # what the node saves is in the computation dtype r
        ad = _cast(av, r)
        bd = _cast(bv, r)
    out = Tensor(data, be)
    ra = ta is not None and ta._requires_grad
    rb = tb is not None and tb._requires_grad
    if _grad.enabled and (ra or rb):
        oshape = data.shape
        sa = None if ta is None else ad.shape
        sb = None if tb is None else bd.shape
        attrs: Any = None if (sa is None or sa == oshape) and (sb is None or sb == oshape) \
            else (sa, sb)
        casts = promotion.grad_casts(be, r, ta, tb)
        if casts is not None:
            cls = promotion.promoted_class(cls)
            attrs = (attrs, casts)
        # a number operand never needs a cast (a tensor that requires grad is floating, and a
        # number does not promote it): the one-edge nodes below get no casting twin
        if save is None:
            if ta is None and cls is SubBackward:
                record(RsubBackward, out, (tb,))
            else:
                record(cls, out, (ta, tb), (), (), attrs)
        elif save == "cross":
            record(cls, out, (ta, tb), (ad if rb else None, bd if ra else None),
                   (ta if rb else None, tb if ra else None), attrs)
        elif save == "div" and ta is None:
            record(cls, out, (tb,), (out._data,), OUTPUT)
        elif save == "div":
            record(cls, out, (ta, tb), (ad if rb else None, bd), (ta if rb else None, tb),
                   attrs)
        else:
            _record_pow(out, ta, tb, ad, bd, out._data, attrs, cls)
    return out


def _record_pow(out: Tensor, ta: Any, tb: Any, ad: Any, bd: Any, data: Any, attrs: Any,
                cls: Any) -> None:
    """PyTorch's three pow nodes: ``tensor ** number`` (PowBackward0, one edge, saves the
    base), ``tensor ** tensor`` (``cls``: PowBackward1, or its casting twin; two edges; saves
    both, and the output when the exponent needs a gradient), ``number ** tensor``
    (PowBackward2, one edge, saves the exponent and the output)."""
    if tb is None:
        record(PowBackward0, out, (ta,), (ad,), (ta,), bd)
    elif ta is None:
        record(PowBackward2, out, (tb,), (bd, data), (tb, 0), ad)
    else:
        rb = tb._requires_grad
        record(cls, out, (ta, tb), (ad, bd, data if rb else None), (ta, tb, 0 if rb else None),
               attrs)


def _integer_pow(be: Any, av: Any, bv: Any, r: Any) -> Tensor:
    """``a ** b`` in an integer or bool dtype ``r``, as PyTorch computes it: a negative number
    exponent is an error; a negative entry of a tensor exponent gives 1 for base 1, +-1 for
    base -1 and 0 otherwise (NumPy refuses both). Bools are computed as int64 (PyTorch has no
    bool kernel: only a bool tensor to a number exponent works). Nothing here can require
    grad."""
    if not isinstance(bv, Tensor) and type(bv) is int and bv < 0:
        raise RetrogradError(_NEG_INT_POW)
    if r is bool_ and isinstance(bv, Tensor):  # a bool tensor to a number is computed
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    work = int64 if r is bool_ else r
    F = be.ops
    ad = _cast(av, work)
    bd = _cast(bv, work)
    try:
        if isinstance(bv, Tensor):
            negative = F.lt(bd, 0)
            data = F.pow(ad, F.where(negative, F.neg(bd), bd))  # |b|: right for bases +-1
            if isinstance(av, Tensor):
                data = F.where(F.logical_and(negative, F.ne(F.abs(ad), 1)), 0, data)
            elif ad not in (1, -1):
                data = F.where(negative, 0, data)
        else:
            data = F.pow(ad, bd)
    except ValueError as exc:
        raise _broadcast_error("pow", ad, bd, exc) from None
    return Tensor(promotion.fix_result(be, data, r), be)


# -- add / sub ---------------------------------------------------------------------------------
def _add_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    if attrs is None:
        return (g if needs[0] else None, g if needs[1] else None)
    sa, sb = attrs
    return (F.reduce_to(g, sa) if needs[0] else None, F.reduce_to(g, sb) if needs[1] else None)


def _sub_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    if attrs is None:
        return (g if needs[0] else None, F.neg(g) if needs[1] else None)
    sa, sb = attrs
    return (F.reduce_to(g, sa) if needs[0] else None,
            F.neg(F.reduce_to(g, sb)) if needs[1] else None)


def _reduced(F: Any, g: Any, attrs: Any, i: int) -> Any:
    return g if attrs is None else F.reduce_to(g, attrs[i])


AddBackward = formula_node("AddBackward0", _add_rule, arity=2)
SubBackward = formula_node("SubBackward0", _sub_rule, arity=2)
# ``number - tensor``: PyTorch's rsub, whose one edge is the tensor's (no broadcasting)
RsubBackward = formula_node("RsubBackward1", lambda F, g, s, a, n: (F.neg(g),), arity=1)


def add(a: Any, b: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``a + alpha * b`` elementwise, broadcasting, in the promoted dtype (``AddBackward0``; each
    gradient is summed back to its input's shape).

    ``alpha`` scales ``b`` before the addition; ``out=`` writes the result into that tensor instead
    (PyTorch's out variant, refused where it would need grad)."""
    if out is not None:  # ``out=``: ops.inplace.write_out
        return _write_out("add", out, (a, b), lambda: add(a, b, alpha=alpha))
    if alpha != 1:
        b = mul(b, alpha) if isinstance(b, Tensor) else b * alpha  # a number: scaled as one
    return _binary("add", AddBackward, a, b, None, True)


def sub(a: Any, b: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``a - alpha * b`` elementwise, broadcasting, in the promoted dtype (``SubBackward0``);
    ``alpha`` and ``out=`` as in ``add``."""
    if out is not None:
        return _write_out("sub", out, (a, b), lambda: sub(a, b, alpha=alpha))
    if alpha != 1:
        b = mul(b, alpha) if isinstance(b, Tensor) else b * alpha  # a number: scaled as one
    return _binary("sub", SubBackward, a, b, None)


def _write_out(name: str, out: Any, inputs: tuple[Any, ...], compute: Any) -> Tensor:
    """The ``out=`` form of ``name``: ``ops.inplace.write_out`` (imported on first use)."""
    from .inplace import write_out

    return write_out(name, out, inputs, compute)


# -- mul / div ---------------------------------------------------------------------------------
def _mul_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    a, b = saved
    return (_reduced(F, F.mul(g, b), attrs, 0) if needs[0] else None,
            _reduced(F, F.mul(g, a), attrs, 1) if needs[1] else None)


def _div_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's ``div_tensor_self_backward`` (g / b) and ``div_tensor_other_backward``
    (-g * ((a / b) / b)), op for op."""
    a, b = saved
    ga = _reduced(F, F.div(g, b), attrs, 0) if needs[0] else None
    gb = _reduced(F, F.mul(F.neg(g), F.div(F.div(a, b), b)), attrs, 1) if needs[1] else None
    return ga, gb


def _reciprocal_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``1 / x`` (one edge, x's): d/dx = -g * out**2; only the output is kept."""
    return (F.mul(F.neg(g), F.mul(saved[0], saved[0])),)


MulBackward = formula_node("MulBackward0", _mul_rule, arity=2)
DivBackward = formula_node("DivBackward0", _div_rule, arity=2)
ReciprocalBackward = formula_node("ReciprocalBackward0", _reciprocal_rule, arity=1)


def mul(a: Any, b: Any, *, out: Any = None) -> Tensor:
    """The elementwise product ``a * b``, broadcasting, in the promoted dtype (``MulBackward0``,
    which saves both operands); ``out=`` as in ``add``."""
    if out is not None:
        return _write_out("mul", out, (a, b), lambda: mul(a, b))
    return _binary("mul", MulBackward, a, b, "cross", True)


#: the default of a keyword whose explicit ``None`` means something else (``rounding_mode``)
UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>"})()


def div(a: Any, b: Any, *, rounding_mode: Any = UNSET, out: Any = None) -> Tensor:
    """True division (integers divide as the default float dtype); ``rounding_mode="trunc"``
    or ``"floor"`` rounds the quotient (integers stay integers; zero gradients), as
    ``ops.division`` computes it."""
    if out is not None:
        return _write_out("div", out, (a, b), lambda: div(a, b, rounding_mode=rounding_mode))
    if rounding_mode is not UNSET:
        from .division import rounded_div

        return rounded_div(a, b, rounding_mode)
    if not isinstance(a, Tensor) and isinstance(b, Tensor) and \
            promotion.is_number(a := promotion.scalar_value(a)):
        # ``c / x`` is PyTorch's ``x.reciprocal() * c``: the same values to the bit, and the
        # same two nodes. The reciprocal saves its own output, an array no user holds, so
        # changing ``c / x`` in place before the backward is legal, as in PyTorch.
        return mul(_binary("div", ReciprocalBackward, 1.0, b, "div"), a)
    return _binary("div", DivBackward, a, b, "div")


# The operators (``x + y``, ``x - y``, ``x * y``, ``x / y``): the functions above without
# their keywords (``alpha``, ``out``), which an operator never passes -- the hottest calls of a
# forward do not pay for them (W1's ``y * 1.0001 + 0.001``). ``x / y`` has a tensor ``x``.
def add_operator(a: Any, b: Any) -> Tensor:
    """``a + b`` (``Tensor.__add__`` / ``__radd__``)."""
    return _binary("add", AddBackward, a, b, None, True)


def sub_operator(a: Any, b: Any) -> Tensor:
    """``a - b`` (``Tensor.__sub__``)."""
    return _binary("sub", SubBackward, a, b, None)


def mul_operator(a: Any, b: Any) -> Tensor:
    """``a * b`` (``Tensor.__mul__`` / ``__rmul__``)."""
    return _binary("mul", MulBackward, a, b, "cross", True)


def div_operator(a: Tensor, b: Any) -> Tensor:
    """``a / b`` for a tensor ``a`` (``Tensor.__truediv__``)."""
    return _binary("div", DivBackward, a, b, "div")


# -- pow -----------------------------------------------------------------------------------------
def _pow_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """``tensor ** tensor`` (PowBackward1): PyTorch's ``pow_backward_self`` and
    ``pow_backward_exponent`` (FunctionsManual.cpp), op for op, so that the values -- and,
    through ``F``, the second derivatives -- are PyTorch's, also at a zero base:

    * d/da = where(b == 0, 0, g * (b * a ** (b - 1)));
    * d/db = g * where((a == 0) & (b >= 0), 0, a ** b * log(a)): at a = 0 the limit for
      b >= 0, and -inf (times g) for b < 0."""
    a, b, result = saved  # result: the output, saved when the exponent needs a gradient
    ga = gb = None
    if needs[0]:
        term = F.mul(g, F.mul(b, F.pow(a, F.sub(b, 1.0))))
        ga = _reduced(F, F.where(F.eq(b, 0.0), 0.0, term), attrs, 0)
    if needs[1]:
        zero = F.logical_and(F.eq(a, 0.0), F.ge(b, 0.0))
        log_a = F.log(_in_dtype_of(a, result))  # PyTorch: self.to(promoted dtype).log()
        gb = _reduced(F, F.mul(g, F.where(zero, 0.0, F.mul(result, log_a))), attrs, 1)
    return ga, gb


def _pow_exp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``tensor ** b`` for a number b (PowBackward0): PyTorch's ``pow_backward``, one op."""
    return (F.pow_backward(g, saved[0], attrs),)


def _pow_base_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """``a ** tensor`` for a number a (PowBackward2): ``pow_backward_exponent`` with a number
    base, whose log is a number: g * (out * log(a)); at a = 0, 0 for b >= 0 and -inf (times
    g) for b < 0."""
    b, result = saved
    a = attrs
    if a == 0:
        return (F.mul(g, F.where(F.ge(b, 0.0), 0.0, F.mul(result, float("-inf")))),)
    return (F.mul(g, F.mul(result, _log_scalar(a))),)


def _in_dtype_of(a: Any, like: Any) -> Any:
    """``a`` in ``like``'s dtype. Only a saved tensor under create_graph can differ (the fast
    walk saves the inputs already cast): a differentiable cast then."""
    if isinstance(a, Tensor) and a.dtype is not like.dtype:
        from .conversion import to

        return to(a, like.dtype)
    return a


def _log_scalar(a: float) -> float:
    """``log`` of a number base as PyTorch's ``Scalar::log``: nan below zero, -inf at 0."""
    import math

    if a > 0:
        return math.log(a)
    return float("-inf") if a == 0 else float("nan")


PowBackward0 = formula_node("PowBackward0", _pow_exp_rule, arity=1)
PowBackward = formula_node("PowBackward1", _pow_rule, arity=2)
PowBackward2 = formula_node("PowBackward2", _pow_base_rule, arity=1)


# ``pow_backward(g, a, b) = g * b * a**(b-1)`` (b a Python number) as one differentiable op,
# with its own derivative -- as PyTorch gives ``tanh_backward`` and friends theirs. The fast
# walk runs the composite of the same name on raw arrays (``backends.reference``); under
# create_graph, PowBackward's gradient is then one recorded node instead of three (pow, mul,
# mul), and a second backward walks one node instead of three.
def _pow_backward_rule(F: Any, gg: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    g, a = saved
    b = attrs
    dg = F.pow_backward(gg, a, b) if needs[0] else None
    # d/da (g * b * a**(b-1)) = g * b * (b-1) * a**(b-2): the same composite one power down
    da = F.pow_backward(F.mul(F.mul(gg, g), b), a, b - 1) if needs[1] and b != 0 else (
        F.mul(gg, 0.0) if needs[1] else None)
    return dg, da


PowBackwardBackward = formula_node("PowBackwardBackward0", _pow_backward_rule, arity=2)


def pow_backward(g: Tensor, a: Tensor, b: float) -> Tensor:
    """The gradient ``g * b * a**(b-1)`` of ``a ** b`` for a number ``b``, differentiable in
    ``g`` and ``a`` (``g`` and ``a`` have one shape: a number exponent broadcasts nothing)."""
    be = a.backend
    data = be.ops.pow_backward(g._data, a._data, b)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (g._requires_grad or a._requires_grad):
        record(PowBackwardBackward, out, (g, a), (g._data, a._data), (g, a), b)
    return out


def pow(a: Any, b: Any) -> Tensor:
    """``a ** b`` with PyTorch's promotion: an integer tensor to a negative integer number is
    an error, to a float number gives the default float dtype."""
    return _binary("pow", PowBackward, a, b, "both")


# -- unary ---------------------------------------------------------------------------------------
def _unary(name: str, cls: Any, x: Any, save: str | None, floating: bool = False,
           no_bool: Any = None) -> Tensor:
    """An elementwise op of one tensor. ``floating``: the op is defined on floats only, and
    an integer or bool input is computed in the default float dtype (PyTorch's promotion of
    ``exp(int_tensor)``); the kernel then gets the cast array. ``no_bool``: PyTorch refuses a
    bool input; ``no_bool(x)`` is the error. Both are looked at only for an array that is
    not float32 or float64."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
    if (dt := x._data.dtype) is not _F32 and dt is not _F64 and id(dt) not in FLOATING:
        if floating and not promotion.is_floating(x):
            x = Tensor(promotion.cast_data(x, get_default_dtype()), x.backend)  # no grad
        elif no_bool is not None and x.dtype is bool_:
            raise no_bool(x)
    be = x.backend
    data = getattr(be.ops, name)(x._data)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        if save == "out":
            record(cls, out, (x,), (data,), OUTPUT)
        elif save == "in":
            record(cls, out, (x,), (x._data,), (x,))
        else:
            record(cls, out, (x,))
    return out


NegBackward = formula_node("NegBackward0", lambda F, g, s, a, n: (F.neg(g),))
def _sgn(F: Any, x: Any) -> Any:
    """PyTorch's ``sgn`` of a real ``x``: -1, 0 or 1, and 0 at NaN (NumPy's sign gives NaN)."""
    return F.where(F.ne(x, x), 0.0, F.sign(x))


# d|x|/dx = sgn(x): 0 at 0 and at NaN, as in PyTorch
AbsBackward = formula_node("AbsBackward0", lambda F, g, s, a, n: (F.mul(g, _sgn(F, s[0])),))
ExpBackward = formula_node("ExpBackward0", lambda F, g, s, a, n: (F.mul(g, s[0]),))
LogBackward = formula_node("LogBackward0", lambda F, g, s, a, n: (F.div(g, s[0]),))
SqrtBackward = formula_node(
    "SqrtBackward0", lambda F, g, s, a, n: (F.div(g, F.mul(s[0], 2.0)),)
)
SinBackward = formula_node("SinBackward0", lambda F, g, s, a, n: (F.mul(g, F.cos(s[0])),))
CosBackward = formula_node(
    "CosBackward0", lambda F, g, s, a, n: (F.neg(F.mul(g, F.sin(s[0]))),)
)
TanhBackward = formula_node("TanhBackward0", lambda F, g, s, a, n: (F.tanh_backward(g, s[0]),))
SigmoidBackward = formula_node(
    "SigmoidBackward0", lambda F, g, s, a, n: (F.sigmoid_backward(g, s[0]),)
)
ReluBackward = formula_node("ReluBackward0", lambda F, g, s, a, n: (F.relu_backward(g, s[0]),))


def _neg_bool(x: Tensor) -> Exception:
    return DTypeError(_NEG_BOOL)


def _abs_bool(x: Tensor) -> Exception:
    return NotImplementedError(f"\"abs_{x.device.type}\" not implemented for 'Bool' (abs of a "
                               "bool tensor: use it as it is, or convert it first)")


def _relu_bool(x: Tensor) -> Exception:
    return DTypeError("Boolean inputs not supported for relu (convert the bool tensor to a "
                      "number dtype first)")


def neg(x: Tensor) -> Tensor:
    """``-x`` elementwise (``NegBackward0``); a bool tensor is refused, as in PyTorch."""
    return _unary("neg", NegBackward, x, None, no_bool=_neg_bool)


def abs(x: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """``|x|`` elementwise (``AbsBackward0``: ``g * sign(x)``); a bool tensor is refused, as in
    PyTorch."""
    return _unary("abs", AbsBackward, x, "in", no_bool=_abs_bool)


def exp(x: Tensor) -> Tensor:
    """``e ** x`` elementwise (``ExpBackward0``, which saves the output); an integer or bool tensor
    is computed in the default float dtype."""
    return _unary("exp", ExpBackward, x, "out", True)


def log(x: Tensor) -> Tensor:
    """The natural logarithm elementwise (``LogBackward0``: ``g / x``); an integer or bool tensor is
    computed in the default float dtype."""
    return _unary("log", LogBackward, x, "in", True)


def sqrt(x: Tensor) -> Tensor:
    """The square root elementwise (``SqrtBackward0``, which saves the output); an integer or bool
    tensor is computed in the default float dtype."""
    return _unary("sqrt", SqrtBackward, x, "out", True)


def sin(x: Tensor) -> Tensor:
    """The sine elementwise (``SinBackward0``: ``g * cos(x)``); an integer or bool tensor is
    computed in the default float dtype."""
    return _unary("sin", SinBackward, x, "in", True)


def cos(x: Tensor) -> Tensor:
    """The cosine elementwise (``CosBackward0``: ``-g * sin(x)``); an integer or bool tensor is
    computed in the default float dtype."""
    return _unary("cos", CosBackward, x, "in", True)


def tanh(x: Tensor) -> Tensor:
    """The hyperbolic tangent elementwise (``TanhBackward0``, which saves the output); an integer or
    bool tensor is computed in the default float dtype."""
    return _unary("tanh", TanhBackward, x, "out", True)


def sigmoid(x: Tensor) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))`` elementwise (``SigmoidBackward0``, which saves
    the output); an integer or bool tensor is computed in the default float dtype."""
    return _unary("sigmoid", SigmoidBackward, x, "out", True)


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)`` elementwise, keeping the dtype (``ReluBackward0``, which saves the output: the
    gradient is 0 where the output is 0); a bool tensor is refused."""
    return _unary("relu", ReluBackward, x, "out", no_bool=_relu_bool)


# -- clamp ---------------------------------------------------------------------------------------
def _clamp_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    (x,) = saved
    lo, hi = attrs
    if lo is not None and hi is not None:
        mask = F.logical_and(F.ge(x, lo), F.le(x, hi))
    elif lo is not None:
        mask = F.ge(x, lo)
    else:
        mask = F.le(x, hi)
    return (F.where(mask, g, 0.0),)


ClampBackward = formula_node("ClampBackward1", _clamp_rule)
ClampMinBackward0 = formula_node("ClampMinBackward0", _clamp_rule)
ClampMaxBackward0 = formula_node("ClampMaxBackward0", _clamp_rule)


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit ``x`` to ``[min, max]``: numbers (NumPy scalars included; ClampBackward1) or
    tensors that broadcast with ``x`` (ClampBackward0, whose gradients reach the bounds too:
    ``min``'s where ``x < min``, ``max``'s where ``x > max``). The result dtype is PyTorch's
    ``result_type(x, min, max)``: ``int_tensor.clamp(0.5)`` is a float tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"clamp: expected a Tensor, got {type(x).__name__}")
    if min is None and max is None:
        raise RetrogradError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        from .arithmetic import clamp_tensors

        if not all(v is None or isinstance(v, Tensor) for v in (min, max)):
            got = ", ".join(f"{k}={_type_name(v)}" for k, v in (("max", max), ("min", min))
                            if v is not None)
            raise TypeError(f"clamp() received an invalid combination of arguments - got "
                            f"(Tensor, {got}), but expected (Tensor input, Tensor min = None, "
                            "Tensor max = None) or (Tensor input, Number min = None, Number "
                            "max = None)")
        return clamp_tensors("clamp", x, min, max)
    return _clamp_scalar(x, min, max, ClampBackward)


def _clamp_scalar(x: Tensor, min: Any, max: Any, cls: Any) -> Tensor:  # noqa: A002
    """``clamp`` with number bounds, recorded as ``cls`` (ClampBackward1, or ClampMin/Max
    Backward0 for ``clamp_min``/``clamp_max``)."""
    bounds = []
    for name, v in (("min", min), ("max", max)):
        if v is not None:
            v = promotion.scalar_value(v)
            if not promotion.is_number(v):
                raise TypeError(f"clamp: {name} must be a number, got {type(v).__name__}")
            bounds.append(v)
        else:
            bounds.append(None)
    lo, hi = bounds
    for v in bounds:  # PyTorch converts a bound to the computation dtype, checked
        if v is not None and not -65504.0 <= v <= 65504.0:
            r = promotion.operands_result_type(x, *(b for b in bounds if b is not None))
            if r is not bool_:
                promotion.number_as(v, r)
    be = x.backend
    F = be.ops
    data = x._data
    if id(data.dtype) not in FLOATING or type(lo) not in (float, int, type(None)) or \
            type(hi) not in (float, int, type(None)):
        r = promotion.operands_result_type(x, *(v for v in (lo, hi) if v is not None))
        if r is bool_:  # PyTorch has no bool clamp kernel (a bool tensor and bool bounds)
            kernel = "clamp" if lo is not None and hi is not None else \
                "clamp_min" if lo is not None else "clamp_max"
            raise NotImplementedError(f"\"{kernel}_scalar_{x.device.type}\" not implemented for "
                                      "'Bool' (clamp of a bool tensor to bool bounds)")
        data = promotion.cast_data(x, r)
        lo = None if lo is None else promotion.cast_scalar(lo, r)
        hi = None if hi is None else promotion.cast_scalar(hi, r)
    if lo is not None and hi is not None:
        data = F.clip(data, lo, hi)  # min > max gives max everywhere, as PyTorch
    elif lo is not None:
        data = F.maximum(data, lo)
    else:
        data = F.minimum(data, hi)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(cls, out, (x,), (x._data,), (x,), (lo, hi))
    return out


# -- where / maximum / minimum ------------------------------------------------------------------
def _where_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    (cond,) = saved
    sa, sb = attrs
    ga = F.reduce_to(F.where(cond, g, 0.0), sa) if needs[0] else None
    gb = F.reduce_to(F.where(cond, 0.0, g), sb) if needs[1] else None
    return ga, gb


WhereBackward = formula_node("WhereBackward0", _where_rule, arity=2)


def where(cond: Tensor, a: Any = UNSET, b: Any = UNSET) -> Any:
    """``a`` where ``cond`` holds, else ``b``; ``a`` and ``b`` (Tensors or numbers) promote
    to ``result_type(a, b)``. ``where(cond)`` alone is ``nonzero(cond, as_tuple=True)``."""
    if a is UNSET and b is UNSET:
        from .indexing import nonzero

        return nonzero(cond, as_tuple=True)
    if a is UNSET or b is UNSET:
        raise TypeError("where() received an invalid combination of arguments - expected "
                        "(Tensor condition) or (Tensor condition, Tensor input, Tensor other)")
    if not isinstance(cond, Tensor):
        raise TypeError(f"where: condition must be a bool Tensor, got {type(cond).__name__}")
    if cond.dtype is not bool_:
        raise DTypeError("where expected condition to be a boolean tensor, but got a tensor "
                         f"with dtype {promotion.torch_name(cond.dtype)}")
    av = a if isinstance(a, Tensor) else promotion.scalar_value(a)
    bv = b if isinstance(b, Tensor) else promotion.scalar_value(b)
    for v, raw in ((av, a), (bv, b)):
        if isinstance(v, Tensor):
            check_device("where", cond, v)
        elif not promotion.is_number(v):
            raise TypeError(f"where: values must be Tensors or numbers, got "
                            f"{type(raw).__name__}")
    ta = av if isinstance(av, Tensor) else None
    tb = bv if isinstance(bv, Tensor) else None
    be = cond.backend
    r, ad, bd = _common_operands(av, bv)
    if r is not None:
        if ta is None and tb is None:  # two numbers: one as a 0-d array of the result dtype
            ad = be.asarray(ad, r)
    try:
        data = be.ops.where(cond._data, ad, bd)
    except ValueError as exc:
        raise _broadcast_error("where", cond._data, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and any(t is not None and t._requires_grad for t in (ta, tb)):
        attrs: Any = (None if ta is None else ad.shape, None if tb is None else bd.shape)
        cls = WhereBackward
        casts = None if r is None else promotion.grad_casts(be, r, ta, tb)
        if casts is not None:
            cls = promotion.promoted_class(cls)
            attrs = (attrs, casts)
        # the condition is saved with its tensor as source: changing it in place before the
        # backward raises VersionMismatch, as in PyTorch (a bool tensor is checked too)
        record(cls, out, (ta, tb), (cond._data,), (cond,), attrs)
    return out


def _maxmin_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    """PyTorch's formula, op for op: ``t = where(a == b, g / 2, g)``; for maximum, a's gradient
    is t but 0 where a < b, b's is t but 0 where a > b (minimum: the other way round). At a
    NaN neither comparison holds: both inputs get all of g, as in PyTorch."""
    a, b = saved
    sa, sb, is_max = attrs
    t = F.where(F.eq(a, b), F.mul(g, 0.5), g)
    ga = F.reduce_to(F.where(F.lt(a, b) if is_max else F.gt(a, b), 0.0, t), sa) \
        if needs[0] else None
    gb = F.reduce_to(F.where(F.gt(a, b) if is_max else F.lt(a, b), 0.0, t), sb) \
        if needs[1] else None
    return ga, gb


MaximumBackward = formula_node("MaximumBackward0", _maxmin_rule, arity=2)
MinimumBackward = formula_node("MinimumBackward0", _maxmin_rule, arity=2)


def _type_name(v: Any) -> str:
    """A type's name as PyTorch's argument errors write it (``float``, ``numpy.float64``)."""
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _maxmin(name: str, a: Any, b: Any, is_max: bool) -> Tensor:
    """``maximum``/``minimum`` of two tensors: PyTorch takes no number here (TypeError)."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        bad, arg = (a, "'input' (position 1)") if not isinstance(a, Tensor) else \
            (b, "'other' (position 2)")
        raise TypeError(f"{name}(): argument {arg} must be Tensor, not {_type_name(bad)}")
    if a.backend is not b.backend or a.backend.multi_device:
        check_device(name, a, b)
    be = a.backend
    r, ad, bd = _common_operands(a, b)
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise _broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and (a._requires_grad or b._requires_grad):
        attrs: Any = (ad.shape, bd.shape, is_max)
        cls = MaximumBackward if is_max else MinimumBackward
        casts = None if r is None else promotion.grad_casts(be, r, a, b)
        if casts is not None:
            cls = promotion.promoted_class(cls)
            attrs = (attrs, casts)
        record(cls, out, (a, b), (ad, bd), (a, b), attrs)
    return out


def maximum(a: Any, b: Any) -> Tensor:
    """The elementwise maximum of ``a`` and ``b``, broadcasting; NaN propagates
    (``MaximumBackward0``: where ``a == b`` each input gets half of the gradient, as in PyTorch)."""
    return _maxmin("maximum", a, b, True)


def minimum(a: Any, b: Any) -> Tensor:
    """The elementwise minimum of ``a`` and ``b``, broadcasting; NaN propagates
    (``MinimumBackward0``: where ``a == b`` each input gets half of the gradient, as in PyTorch)."""
    return _maxmin("minimum", a, b, False)


# -- comparisons: bool tensors that never require grad -----------------------------------------
def _compare(name: str, a: Any, b: Any) -> Tensor:
    """A comparison in the operands' common dtype (``int_tensor == 1.5`` compares as floats);
    the fast path is the one of ``_binary``."""
    if isinstance(a, Tensor):
        be = a.backend
        ad = a._data
        if isinstance(b, Tensor):
            bd = b._data
            if b.backend is not be or be.multi_device:
                check_device(name, a, b)
            if ad.dtype is not bd.dtype:
                return _compare_promoted(name, a, b)
        elif (type(b) is float or type(b) is int) and (
                (dt := ad.dtype) is _F32 or dt is _F64 or id(dt) in FLOATING):
            bd = b
        else:
            return _compare_promoted(name, a, b)
    else:
        return _compare_promoted(name, a, b)
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise _broadcast_error(name, ad, bd, exc) from None
    if type(data) is not be.array_type:
        data = be.asarray(data)
    return Tensor(data, be)


def _compare_promoted(name: str, a: Any, b: Any) -> Tensor:
    if promotion.is_numpy_array(a) or promotion.is_numpy_array(b):
        return _numpy_operand(name, a, b)
    av, bv, be = _operands(name, a, b)
    r = bool_ if name == "logical_and" else promotion.operands_result_type(av, bv)
    ad = _cast(av, r)
    bd = _cast(bv, r)
    try:
        data = getattr(be.ops, name)(ad, bd)
    except ValueError as exc:
        raise _broadcast_error(name, ad, bd, exc) from None
    return Tensor(promotion.fix_result(be, data, bool_), be)


def eq(a: Any, b: Any) -> Tensor:
    """Elementwise ``a == b``, broadcasting, compared in the operands' promoted dtype (``int_tensor
    == 1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("eq", a, b)


def ne(a: Any, b: Any) -> Tensor:
    """Elementwise ``a != b``, broadcasting, compared in the operands' promoted dtype (``int_tensor
    != 1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("ne", a, b)


def lt(a: Any, b: Any) -> Tensor:
    """Elementwise ``a < b``, broadcasting, compared in the operands' promoted dtype (``int_tensor <
    1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("lt", a, b)


def le(a: Any, b: Any) -> Tensor:
    """Elementwise ``a <= b``, broadcasting, compared in the operands' promoted dtype (``int_tensor
    <= 1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("le", a, b)


def gt(a: Any, b: Any) -> Tensor:
    """Elementwise ``a > b``, broadcasting, compared in the operands' promoted dtype (``int_tensor >
    1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("gt", a, b)


def ge(a: Any, b: Any) -> Tensor:
    """Elementwise ``a >= b``, broadcasting, compared in the operands' promoted dtype (``int_tensor
    >= 1.5`` compares as floats): a bool tensor, which never requires grad."""
    return _compare("ge", a, b)


def logical_and(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise ``a and b`` of any dtypes (nonzero is true); a bool tensor. The kernel
    gets bool arrays."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype is b._data.dtype \
            and a.dtype is bool_:
        return _compare("logical_and", a, b)
    return _compare_promoted("logical_and", a, b)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 (0 at NaN, as PyTorch's); no gradient."""
    be = x.backend
    return Tensor(be.asarray(_sgn(be.ops, x._data)), be)


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (``a`` and ``b`` broadcast; equal
    infinities are close; NaNs only with ``equal_nan``), as ``torch.allclose``: the two must
    share one dtype. Not differentiable: a Python bool."""
    for name, t in (("input", a), ("other", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"allclose(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    check_device("allclose", a, b)
    if a.dtype is not b.dtype:
        raise RetrogradError(f"{promotion.torch_name(a.dtype)} did not match "
                             f"{promotion.torch_name(b.dtype)}")
    err = broadcast_mismatch("allclose", a.shape, b.shape)
    if err is not None:
        raise err
    xp = a.backend.xp

    def all_close(x: Any, y: Any) -> bool:
        if not a.dtype.is_floating_point:  # exact: no float rounding of large integers
            x = xp.astype(x, xp.float64)
            y = xp.astype(y, xp.float64)
        near = xp.abs(x - y) <= atol + rtol * xp.abs(y)
        finite = xp.logical_and(xp.isfinite(x), xp.isfinite(y))
        close = xp.logical_or(xp.logical_and(finite, near), x == y)  # equal infinities
        if equal_nan:
            close = xp.logical_or(close, xp.logical_and(xp.isnan(x), xp.isnan(y)))
        return bool(xp.all(close))

    return bool(quiet_call(all_close, a._data, b._data))  # inf - inf: no NumPy warning
