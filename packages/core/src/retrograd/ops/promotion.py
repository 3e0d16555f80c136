"""PyTorch's type promotion, done in the core so that kernels never have to know it.

The rules (``docs/semantics.md``, "Type promotion"):

* dtypes fall in three categories, bool < integer < floating; within a category the wider
  dtype wins (int32 < int64, float16 < float32 < float64), and across categories the higher
  category wins whatever the widths (int64 with float16 is float16);
* operands come in three priorities: dimensioned tensors, 0-d tensors, and numbers (Python
  ``bool``/``int``/``float`` and NumPy scalars, which count as the number of their category:
  ``np.float64(2.)`` is a float like ``2.0``, and ``np.bool_`` is a float, as PyTorch reads
  it). A lower-priority operand changes the result only if its category is higher than that
  of every higher-priority operand; it then contributes its own dtype (a 0-d tensor) or the
  default dtype of its category (a number: bool, int64, or ``get_default_dtype()``);
* true division of integers gives the default float dtype; an in-place op fails when the
  result's category is above the destination's ("result type Float can't be cast to the
  desired output type Long").

What kernels receive (the vendor contract): the operands of ``add sub mul div pow maximum
minimum where eq ne lt le gt ge`` are either two arrays of one dtype (the result's, or for a
comparison the common dtype) or one array and a Python ``bool``/``int``/``float`` whose kind
is not above the array's (a ``float`` only with a floating array, an ``int`` with an integer
or floating array, a ``bool`` only with a bool array); ``logical_and`` gets bool arrays;
``assign_``/``setitem`` and the in-place kernels (``iadd`` ...) get a value of the
destination's dtype or kind; ``matmul`` and ``linear_forward`` get operands of one dtype
(mixed dtypes are refused before, as in PyTorch). The casts happen here, with ``astype``.
Gradients flow back in the dtype of the input they reach: the node of a promoted op casts
them (``promoted_class``), so a rule's kernels also get one dtype.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import formula_node
from ..backends.host import xp as _np
from ..dtypes import DType, bool_, float16, float32, float64, get_default_dtype, int32, int64
from ..errors import DTypeError, RetrogradError
from ..tensor import Tensor

__all__ = ["category", "promote_types", "result_type", "scalar_value", "is_floating",
           "can_cast", "torch_name", "c_name", "cast_scalar", "cast_data", "promoted_class",
           "grad_casts", "FLOATING", "HOST_F32", "HOST_F64", "DIM", "ZERO_DIM", "NUMBER"]

DIM, ZERO_DIM, NUMBER = 0, 1, 2  # operand priorities, highest first

# The array dtypes (backend objects) of float32 and float64, by identity: what the hot paths
# test, ``id(array.dtype) in FLOATING`` -- an op on these and a Python float or int needs no
# promotion. Keyed by ``id`` (the dict keeps each object alive, so an id is never reused)
# rather than by the objects themselves: dtype objects of two array libraries may hash alike,
# and comparing them can warn (array-api-strict does). Filled for the host library here and
# for any other backend's dtypes on first sight. float16 is left out: PyTorch computes a
# float16 product or quotient with a number in float32, which the slow path does.
HOST_F32 = _np.dtype("float32")  # the host library's, tested by identity before FLOATING:
HOST_F64 = _np.dtype("float64")  # cheaper than ``id()`` for the common case
FLOATING: dict[int, Any] = {id(d): d for d in (HOST_F32, HOST_F64)}


def _remember(t: Tensor, dt: DType) -> None:
    """Note ``t``'s array dtype in ``FLOATING`` if it is float32 or float64."""
    if dt is float32 or dt is float64:
        arr_dt = t._data.dtype
        FLOATING[id(arr_dt)] = arr_dt


_CATEGORY = {bool_: 0, int32: 1, int64: 1, float16: 2, float32: 2, float64: 2}
_TORCH_NAME = {bool_: "Bool", int32: "Int", int64: "Long", float16: "Half", float32: "Float",
               float64: "Double"}
_C_NAME = {bool_: "bool", int32: "int", int64: "long int", float16: "c10::Half",
           float32: "float", float64: "double"}
_INT_RANGE = {int32: (-(2**31), 2**32), int64: (-(2**63), 2**64)}  # (lowest, span)
_NOT_A_NUMBER = object()


def category(dt: DType) -> int:
    """0 for bool, 1 for the integer dtypes, 2 for the floating ones."""
    return _CATEGORY[dt]


def torch_name(dt: DType) -> str:
    """PyTorch's ScalarType name ("Float", "Long" ...), as its messages spell dtypes."""
    return _TORCH_NAME[dt]


def c_name(dt: DType) -> str:
    """The C type name PyTorch's matmul messages use ("float", "long int" ...)."""
    return _C_NAME[dt]


def promote_types(a: DType, b: DType) -> DType:
    """``torch.promote_types`` on retrograd's dtypes: the higher category wins, then the
    wider dtype."""
    if a is b:
        return a
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:
        return a if ca > cb else b
    return a if a.itemsize >= b.itemsize else b


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    """PyTorch's ``combine_categories``: a lower-priority dtype counts only when its category
    is above the higher-priority one's (and a bool result takes any integer)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def number_dtype(v: Any) -> DType:
    """The dtype a Python number stands for in promotion: bool, int64 or the default float."""
    if type(v) is bool:
        return bool_
    if type(v) is int:
        return int64
    return get_default_dtype()


def operand_dtype(v: Any) -> tuple[DType, int]:
    """(dtype, priority) of a Tensor or a (normalized) Python number."""
    if isinstance(v, Tensor):
        dt = v.dtype
        _remember(v, dt)  # the next op on this backend's dtype takes the fast path
        return dt, (DIM if v._data.shape else ZERO_DIM)
    return number_dtype(v), NUMBER


def result_type(*operands: Any) -> DType:
    """``torch.result_type`` over Tensors and numbers (Python or NumPy scalars): the dtype an
    arithmetic op of these operands produces. ``result_type(int_tensor, 0.5)`` is the default
    float dtype; ``result_type(float32_tensor, float64_0d_tensor)`` is float32."""
    for v in operands:
        if not isinstance(v, Tensor) and type(v) not in (bool, int, float):
            return operands_result_type(*(_checked_number(w) for w in operands))
    return operands_result_type(*operands)


def _checked_number(v: Any) -> Any:
    if isinstance(v, Tensor):
        return v
    n = scalar_value(v)
    if n is _NOT_A_NUMBER:
        raise TypeError(f"result_type: expected Tensors or numbers, got {type(v).__name__}")
    return n


def operands_result_type(*operands: Any) -> DType:
    """``result_type`` of Tensors and Python numbers already normalized (the ops' path)."""
    state: list[DType | None] = [None, None, None]
    for v in operands:
        dt, tier = operand_dtype(v)
        cur = state[tier]
        state[tier] = dt if cur is None else promote_types(cur, dt)
    out = _combine(state[DIM], _combine(state[ZERO_DIM], state[NUMBER]))
    assert out is not None
    return out


def scalar_value(v: Any) -> Any:
    """``v`` as a Python number if it is one (``bool``, ``int``, ``float``, or a NumPy scalar,
    read as PyTorch reads it: a NumPy integer is an ``int``, a NumPy floating or ``np.bool_``
    a ``float``); ``_NOT_A_NUMBER`` otherwise."""
    t = type(v)
    if t is float or t is int or t is bool:
        return v
    if isinstance(v, _np.generic):
        if isinstance(v, _np.integer):
            return int(v)
        if isinstance(v, (_np.floating, _np.bool_)):
            return float(v)
        return _NOT_A_NUMBER
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    return _NOT_A_NUMBER


def is_number(v: Any) -> bool:
    return v is not _NOT_A_NUMBER


def is_numpy_array(v: Any) -> bool:
    return isinstance(v, _np.ndarray)


def host_array(v: Any) -> Any:
    """A Tensor as a host NumPy array (as ``Tensor.numpy``, cpu only); other values as
    they are."""
    if isinstance(v, Tensor):
        if v.backend.name != "cpu":
            raise TypeError(f"can't convert a {v.device} tensor to numpy: use .cpu() first to "
                            "copy it to host memory")
        return _np.asarray(v.backend.to_numpy(v._data))
    return v


def numpy_ufunc(name: str) -> Any:
    """The host library's ufunc ``name`` (``add``, ``true_divide`` ...)."""
    return getattr(_np, name)


def is_floating(t: Tensor) -> bool:
    """Whether ``t`` is floating, remembering its array dtype in ``FLOATING`` for the hot
    paths' one-lookup test."""
    dt = t.dtype
    _remember(t, dt)
    return dt.is_floating_point


def can_cast(src: DType, dst: DType) -> bool:
    """PyTorch's ``canCast`` for an op's output: no floating -> integral, no non-bool ->
    bool."""
    return _CATEGORY[src] <= _CATEGORY[dst]


def check_cast(src: DType, dst: DType) -> None:
    if not can_cast(src, dst):
        raise DTypeError(f"result type {torch_name(src)} can't be cast to the desired output "
                         f"type {torch_name(dst)}")


def cast_scalar(v: Any, dt: DType) -> Any:
    """A Python number as the kernel should get it next to an array of dtype ``dt``: a float
    stays a float, an int is wrapped into ``dt``'s range (PyTorch converts a number to the
    computation dtype that way; one outside the 64-bit range raises ``OverflowError``), a
    bool becomes an int or float for a numeric array."""
    if type(v) is float:
        return v
    if type(v) is int:
        if not -(2**63) <= v < 2**64:
            raise OverflowError("int too big to convert")
        if dt.is_floating_point:
            return v
        wrap = _INT_RANGE.get(dt)
        if wrap is None:  # bool destination (an in-place op already refused the cast)
            return bool(v)
        lo, span = wrap
        return (v - lo) % span + lo
    # bool
    if dt is bool_:
        return v
    return float(v) if dt.is_floating_point else int(v)


def cast_data(t: Tensor, dt: DType) -> Any:
    """``t``'s array in dtype ``dt`` (the array itself when it already is)."""
    if t.dtype is dt:
        return t._data
    be = t.backend
    return be.ops.astype(t._data, be.xp_dtype(dt))


def fix_result(be: Any, data: Any, dt: DType) -> Any:
    """A kernel result in dtype ``dt`` (a library may widen, e.g. NumPy's bool power)."""
    if type(data) is not be.array_type:
        data = be.asarray(data)
    if be.dtype_of(data) is not dt:
        data = be.ops.astype(data, be.xp_dtype(dt))
    return data


HALF_OVERFLOW = "value cannot be converted to type c10::Half without overflow"
_HALF_MAX = 65504.0


def check_half_exponent(v: Any) -> None:
    """PyTorch converts a number exponent of a float16 ``pow`` to float16, checked."""
    if type(v) in (int, float) and abs(v) > _HALF_MAX and abs(v) != float("inf"):
        raise RetrogradError(HALF_OVERFLOW)


# -- gradients of promoted ops ----------------------------------------------------------------
# An op whose inputs were cast records the node class of its op ("MulBackward0"), in a twin
# that keeps PyTorch's graph (no cast node) and casts at its edges: the incoming gradient to
# the computation dtype (an in-place op on a narrower tensor sends its own dtype), and each
# outgoing gradient to the dtype of the input it reaches. ``attrs`` is then
# ``(the op's own attrs, (computation, dtype of input 0, dtype of input 1))``, each a
# ``(DType, backend dtype)`` pair or None where no cast is needed.
_TWINS: dict[Any, Any] = {}


def _cast_grad(F: Any, g: Any, pair: Any) -> Any:
    if g is None or pair is None:
        return g
    if isinstance(g, Tensor):  # under create_graph: a differentiable cast
        if g.dtype is pair[0]:
            return g
        from .conversion import to

        return to(g, pair[0])
    if g.dtype == pair[1]:
        return g
    return F.astype(g, pair[1])


def promoted_class(cls: Any) -> Any:
    """The twin of a binary node class that casts its gradients (see above)."""
    twin = _TWINS.get(cls)
    if twin is None:
        rule = cls.rule

        def promoted_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> Any:
            inner, (r, da, db) = attrs
            grads = rule(F, _cast_grad(F, g, r), saved, inner, needs)
            return (_cast_grad(F, grads[0], da), _cast_grad(F, grads[1], db))

        twin = _TWINS[cls] = formula_node(cls.__name__, promoted_rule, arity=cls._arity)
    return twin


def promoted_class_n(cls: Any) -> Any:
    """The twin of an n-ary node class (cat, stack) that casts its gradients: its attrs are
    ``(the op's own attrs, ((computation dtype pair), (one cast pair or None per input)))``."""
    twin = _TWINS.get((cls, "n"))
    if twin is None:
        rule = cls.rule

        def promoted_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> Any:
            inner, (r, pairs) = attrs
            grads = rule(F, _cast_grad(F, g, r), saved, inner, needs)
            return tuple(_cast_grad(F, gi, p) for gi, p in zip(grads, pairs))

        twin = _TWINS[(cls, "n")] = formula_node(cls.__name__, promoted_rule, arity=cls._arity)
    return twin


def promoted_operands(be: Any, ts: Any) -> tuple[Any, list[Any], Any]:
    """For an n-ary op over the tensors ``ts`` (cat, stack): the result dtype (PyTorch's
    promotion), the arrays cast to it, and the cast pairs of ``promoted_class_n`` (None when
    no input that requires grad was cast)."""
    r = ts[0].dtype
    for t in ts[1:]:
        r = promote_types(r, t.dtype)
    datas = [t._data if t.dtype is r else cast_data(t, r) for t in ts]
    pairs = tuple(_pair(be, t, r) for t in ts)
    casts = ((r, be.xp_dtype(r)), pairs) if any(p is not None for p in pairs) else None
    return r, datas, casts


def grad_casts(be: Any, r: DType, a: Any, b: Any) -> Any:
    """The cast pairs of a promoted node whose computation dtype is ``r`` and whose inputs are
    ``a`` and ``b`` (Tensors, or None/numbers: no gradient); None when nothing needs a
    cast."""
    da = _pair(be, a, r)
    db = _pair(be, b, r)
    if da is None and db is None:
        return None
    return ((r, be.xp_dtype(r)), da, db)


def _pair(be: Any, t: Any, r: DType) -> Any:
    if not isinstance(t, Tensor) or not t._requires_grad:
        return None
    dt = t.dtype
    return None if dt is r else (dt, be.xp_dtype(dt))


# -- in-place ops ----------------------------------------------------------------------------
SUB_BOOL = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead.")
SUB_ONE_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _is_bool(v: Any) -> bool:
    return v.dtype is bool_ if isinstance(v, Tensor) else type(v) is bool


def check_sub(a: Any, b: Any) -> None:
    """PyTorch refuses a subtraction with a bool operand (a tensor or a Python ``bool``; a
    ``np.bool_`` counts as a float)."""
    ba, bb = _is_bool(a), _is_bool(b)
    if ba and bb:
        raise DTypeError(SUB_BOOL)
    if ba or bb:
        raise DTypeError(SUB_ONE_BOOL)


def inplace_operand(name: str, t: Tensor, other: Any, kernel: str,
                    op: Any) -> tuple[Any, Any]:
    """The operand of ``t.add_(other)`` (``sub_``, ``mul_``, ``div_``), and the raw
    ``apply(array)`` that performs the op outside autograd (``kernel``: "iadd" ...; ``op``:
    the out-of-place op, for a promoted operand: see ``inplace_kernel``).

    The operand comes back as a Tensor or Python number, after PyTorch's check that the
    result dtype can be written into ``t``: ``int_tensor.add_(0.5)`` raises DTypeError
    "result type Float can't be cast to the desired output type Long" (after the shape
    check, as in PyTorch). Anything else is returned as it is (the op then raises its
    TypeError)."""
    if isinstance(t, Tensor):  # the common case first (optimizer steps): nothing to check
        dt = t._data.dtype
        if dt is HOST_F32 or dt is HOST_F64 or id(dt) in FLOATING:
            be = t.backend
            if type(other) is float or type(other) is int:
                return other, lambda a: getattr(be.ops, kernel)(a, other)
            if isinstance(other, Tensor) and other._data.dtype is dt:
                return other, lambda a: getattr(be.ops, kernel)(a, other._data)
    v = other if isinstance(other, Tensor) else scalar_value(other)
    if v is _NOT_A_NUMBER or not isinstance(t, Tensor):
        return other, None
    if name == "sub_":
        check_sub(t, v)
    from .inplace import _check_broadcast

    _check_broadcast(name, t, v)  # PyTorch checks the shapes before the dtypes
    r = operands_result_type(t, v)
    if name == "div_" and not r.is_floating_point:
        r = get_default_dtype()
    check_cast(r, t.dtype)
    return v, inplace_kernel(t, v, kernel, op)


def inplace_kernel(t: Tensor, other: Any, kernel: str, op: Any) -> Any:
    """The raw ``apply(array)`` of ``t <op>= other`` outside autograd, giving the kernel one
    dtype: a number is converted to ``t``'s kind; a tensor of another dtype makes the op run
    out of place in the promoted dtype (as PyTorch computes it), the result then being cast
    into ``t`` by ``assign_``."""
    be = t.backend
    half_scalar = t.dtype is float16 and kernel in ("imul", "itruediv") and (
        not isinstance(other, Tensor) or not other._data.shape)  # in float32: see _binary
    if not isinstance(other, Tensor) and not half_scalar:
        value = cast_scalar(other, t.dtype) if type(other) in (bool, int, float) else other
        return lambda a: getattr(be.ops, kernel)(a, value)
    if isinstance(other, Tensor) and other._data.dtype is t._data.dtype and not half_scalar:
        return lambda a: getattr(be.ops, kernel)(a, other._data)

    def apply(a: Any) -> None:
        from ..grad_mode import no_grad

        with no_grad():
            res = op(Tensor(a, be), other)
        be.ops.assign_(a, cast_data(res, t.dtype))

    return apply


_LIMITS = {int32: (-(2**31), 2**31 - 1, "int"), int64: (-(2**63), 2**63 - 1, "int64_t"),
           float16: (-65504.0, 65504.0, "c10::Half"),
           float32: (-3.4028234663852886e38, 3.4028234663852886e38, "float")}


def number_as(v: Any, dt: DType, check_half: bool = True) -> Any:
    """A Python number written into dtype ``dt`` (``fill_``, ``full``, ``setitem``), as
    PyTorch's checked conversion: a float truncates into an integer dtype; a value outside
    the dtype's range (or a non-finite one into an integer dtype) raises RetrogradError
    "value cannot be converted to type int without overflow". PyTorch leaves float16
    unchecked in places (a one-element ``fill_``, ``setitem``): ``check_half`` False."""
    limits = _LIMITS.get(dt)
    if limits is not None and (check_half or dt is not float16):
        lo, hi, cname = limits
        finite = v == v and v not in (float("inf"), float("-inf"))
        if (finite and not lo <= v <= hi) or (not finite and not dt.is_floating_point):
            raise RetrogradError(f"value cannot be converted to type {cname} without overflow")
    if dt.is_floating_point:
        return float(v)
    if dt is bool_:
        return bool(v)
    return int(v)


def assign_value(t: Tensor, value: Any, check_half: bool | None = None) -> Any:
    """``value`` (a Tensor or a number) as ``assign_``/``setitem`` get it for ``t``: an array of
    ``t``'s dtype, or a number of ``t``'s kind (see ``number_as``; ``check_half`` defaults to
    ``fill_``'s rule: checked unless ``t`` has one element)."""
    if isinstance(value, Tensor):
        return cast_data(value, t.dtype)
    v = scalar_value(value)
    if v is _NOT_A_NUMBER:
        return value
    return number_as(v, t.dtype, t.numel() != 1 if check_half is None else check_half)


def setitem_value(t: Tensor, value: Any) -> Any:
    """A ``t[key] = value`` value as PyTorch takes it: a NumPy integer as the Python int it is;
    other NumPy scalars (but ``np.float64``, a Python float) are refused with a TypeError."""
    if isinstance(value, _np.integer):
        return int(value)
    if isinstance(value, _np.generic) and not isinstance(value, float):
        raise TypeError(f"can't assign a numpy.{type(value).__name__} to a {t.dtype.name} "
                        "tensor")
    return value


def to_dtype_of(t: Tensor, res: Tensor) -> Any:
    """``res``'s array in ``t``'s dtype: what an in-place op writes into ``t``."""
    if res._data.dtype is t._data.dtype:
        return res._data
    return cast_data(res, t.dtype)
