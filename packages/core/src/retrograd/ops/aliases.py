"""PyTorch's NumPy-style keyword aliases (``axis`` for ``dim``, ``keepdims`` for ``keepdim``)
and the ``dtype=``/``out=`` keywords of the reductions, resolved in one place.

An op takes them as keyword-only parameters defaulting to None and calls in here only when
one is given (one cheap test on its hot path): the alias is mapped to PyTorch's own name, and
passing both spellings is refused with the TypeError PyTorch's argument parser raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor

__all__ = ["MISSING", "dim_alias", "keepdim_alias", "required", "cast_to", "out_one",
           "out_pair", "out_same_dtype", "EXACT"]


class _Missing:
    """The default of a ``dim`` PyTorch requires but that ``axis`` may give instead."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


MISSING: Any = _Missing()

# ops whose PyTorch binding has several overloads: a doubled keyword is "an invalid
# combination" there, "an unexpected keyword argument" elsewhere
_OVERLOADED = frozenset({"mean", "max", "min", "all", "any", "var", "std", "var_mean",
                         "std_mean", "sort", "argsort", "squeeze", "count_nonzero", "median",
                         "nanmedian", "chunk", "tensor_split", "unsafe_chunk"})


def _both(name: str, alias: str) -> TypeError:
    if name in _OVERLOADED:
        return TypeError(f"{name}() received an invalid combination of arguments - got both "
                         f"the keyword '{alias}' and the argument it aliases")
    return TypeError(f"{name}() got an unexpected keyword argument '{alias}'")


def dim_alias(name: str, dim: Any, axis: Any, unset: Any = None) -> Any:
    """``dim``, or ``axis`` where it is given instead (``unset``: ``dim``'s default, which
    says that it was not given); both given: PyTorch's TypeError."""
    if axis is None:
        return dim
    if dim is not unset:
        raise _both(name, "axis")
    return axis


def keepdim_alias(name: str, keepdim: Any, keepdims: Any) -> Any:
    """``keepdim``, or ``keepdims`` where it is given instead; both given: PyTorch's
    TypeError (a ``keepdim`` left at its default False cannot be told from one not given)."""
    if keepdims is None:
        return keepdim
    if keepdim is not False:
        raise _both(name, "keepdims")
    return keepdims


def required(name: str, value: Any, arg: str = "dim") -> Any:
    """``value``, or PyTorch's TypeError for a required argument given neither by its name
    nor by its alias."""
    if value is MISSING:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{arg}"')
    return value


def cast_to(x: Tensor, dtype: Any) -> Tensor:
    """``x`` cast to ``dtype`` before a reduction (``dtype=``): a recorded copy
    (``ToCopyBackward0``) through which the gradient flows back in ``x``'s dtype."""
    from ..dtypes import as_dtype
    from .conversion import to

    dt = as_dtype(dtype)
    return x if dt is x.dtype else to(x, dt)


def out_one(name: str, out: Any, inputs: tuple[Any, ...], compute: Callable[[], Tensor]
            ) -> Tensor:
    """``compute()`` written into the one tensor ``out`` (``ops.inplace.write_out``)."""
    from .inplace import write_out

    if isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    return write_out(name, out, inputs, compute)


def out_same_dtype(name: str, out: Any, dtype: Any, message: str) -> None:
    """PyTorch's refusal of an ``out`` whose dtype is not the result's ``dtype`` (the ops
    that do not cast into ``out``); ``message`` is PyTorch's, with ``{out}``/``{res}`` for
    the two dtypes' names."""
    from .promotion import torch_name

    if isinstance(out, Tensor) and out.dtype is not dtype:
        from ..errors import DTypeError

        raise DTypeError(message.format(out=_c_name(torch_name(out.dtype)),
                                        res=_c_name(torch_name(dtype)),
                                        Out=torch_name(out.dtype), Res=torch_name(dtype)))


#: PyTorch's refusal of an ``out`` of another dtype than the result (``out_same_dtype``)
EXACT = "Expected out tensor to have dtype {res}, but got {out} instead"

_C_NAMES = {"Float": "float", "Double": "double", "Half": "c10::Half", "Long": "long int",
            "Int": "int", "Bool": "bool", "Short": "short int", "Char": "signed char",
            "Byte": "unsigned char", "BFloat16": "c10::BFloat16"}


def _c_name(name: str) -> str:
    return _C_NAMES.get(name, name)


def out_pair(name: str, out: Any, inputs: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()`` -- a (values, indices) pair -- written into the pair of tensors ``out``
    (``out=(values, indices)``, as PyTorch's ``max(dim)``, ``sort``, ``topk``); the indices
    tensor must be int64. Returns the pair of ``out`` tensors, as the result's type."""
    from ..dtypes import int64
    from ..errors import DTypeError
    from .inplace import write_out
    from .promotion import torch_name

    if not isinstance(out, (tuple, list)) or len(out) != 2 or \
            not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}() received an invalid combination of arguments - got out="
                        f"{type(out).__name__}, but expected one of: (..., tuple of Tensors "
                        "out)")
    values, indices = out
    if indices.dtype is not int64:
        raise DTypeError("Expected out tensor to have dtype long int, but got "
                         f"{_c_name(torch_name(indices.dtype))} instead")
    box: list[Any] = []

    def first() -> Tensor:
        box.append(compute())
        return box[0][0]

    write_out(name, values, inputs, first)  # refuses with PyTorch's message first
    write_out(name, indices, inputs, lambda: box[0][1])
    res = box[0]
    kind = type(res)
    return kind(values, indices) if kind is not tuple else (values, indices)
