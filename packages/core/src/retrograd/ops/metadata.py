"""What a tensor says about itself and its memory: strides, contiguity, its address, its type
name; and the predicates that compare or classify tensors (``isclose``, ``equal``,
``is_tensor``, ``numel``).

Strides, ``is_contiguous``, ``data_ptr`` and ``storage_offset`` are read off the array's memory
(the backend's ``memory_layout`` kernel: NumPy's and CuPy's array interfaces), in elements as
PyTorch counts them. A backend whose arrays show no memory layout (array-api-strict) reports
every tensor as a contiguous one of its shape, and refuses ``data_ptr``/``storage_offset``:
there is no address to give.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..backends.host import quiet_call
from ..dtypes import DType, as_dtype
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import promotion
from ._core import check_device, record
from .conversion import CloneBackward
from .declare import op
from .elementwise import broadcast_mismatch
from .shape import t as _t
from .views import wrap_dim

__all__ = ["contiguous", "is_contiguous", "stride", "data_ptr", "storage_offset", "type_",
           "isclose", "equal", "is_tensor", "numel", "t"]


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides (in elements) of a row-major tensor of ``shape``, as PyTorch gives them: a
    dimension of size 0 or 1 steps as if it had size 1."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _layout(x: Tensor) -> tuple[int, tuple[int, ...]] | None:
    """``(address, strides in elements)`` of ``x``'s array, or None where the backend cannot
    say."""
    found = x.backend.ops.memory_layout(x._data)
    if found is None:
        return None
    address, byte_strides = found
    size = x.dtype.itemsize
    return address, tuple(s // size for s in byte_strides)


def _strides(x: Tensor) -> tuple[int, ...]:
    found = _layout(x)
    shape = tuple(x.shape)
    if found is None or x.numel() == 0:  # PyTorch's empty tensors have row-major strides
        return _contiguous_strides(shape)
    strides = list(found[1])
    # NumPy gives an inserted dimension of size 1 (``x[None]``, ``unsqueeze``) the stride 0;
    # PyTorch gives it the extent of the dimension after it (1 at the end)
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] == 1 and strides[d] == 0:
            strides[d] = shape[d + 1] * strides[d + 1] if d + 1 < len(shape) else 1
    return tuple(strides)


@op("stride", function=False, differentiable=False)
def stride(self: Tensor, dim: int | None = None) -> Any:
    """The step in elements between neighbours along each dimension (a tuple), or along
    ``dim``. Read off the array's memory: a transpose or a slice with a step shows it."""
    strides = _strides(self)
    if dim is None:
        return strides
    return strides[wrap_dim("stride", dim, self.ndim)]


@op("is_contiguous", function=False, differentiable=False)
def is_contiguous(self: Tensor, memory_format: Any = None) -> builtins.bool:
    """Whether the elements lie in memory in row-major order with no gaps (PyTorch's rule:
    dimensions of size 1 are ignored, an empty tensor is contiguous). ``memory_format``: only
    the default (None) is supported."""
    if memory_format is not None:
        raise NotImplementedError("is_contiguous: only the default memory format is supported "
                                  f"(got {memory_format!r})")
    if self.numel() == 0:
        return True
    expected = 1
    for n, s in zip(reversed(self.shape), reversed(_strides(self)), strict=True):
        if n == 1:
            continue
        if s != expected:
            return False
        expected *= n
    return True


def _contiguous_rule(F: Any, g: Any, s: Any, a: Any, n: Any) -> tuple[Any]:
    return (g,)


@op("contiguous", function=False)
def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor if it is contiguous, else a row-major copy (recorded as PyTorch's
    ``CloneBackward0``: the gradient passes through)."""
    if memory_format is not None:
        raise NotImplementedError("contiguous: only the default memory format is supported "
                                  f"(got {memory_format!r})")
    if is_contiguous(self):
        return self
    be = self.backend
    out = Tensor(be.ops.contiguous(self._data), be)
    if _grad.enabled and self._requires_grad:
        record(CloneBackward, out, (self,))
    return out


def _address(name: str, x: Tensor) -> int:
    found = _layout(x)
    if found is None:
        raise RetrogradError(f"{name}: the {x.backend.name} backend's arrays show no memory "
                             "address")
    return found[0]


@op("data_ptr", function=False, differentiable=False)
def data_ptr(self: Tensor) -> int:
    """The address of the first element (0 for an empty tensor, as in PyTorch); views of one
    tensor differ by their offset times the element size."""
    if self.numel() == 0:
        return 0
    return _address("data_ptr", self)


@op("storage_offset", function=False, differentiable=False)
def storage_offset(self: Tensor) -> int:
    """How many elements into its base's memory this tensor starts (0 for a tensor that owns
    its memory)."""
    if self.numel() == 0:
        return 0
    root = self._data
    while getattr(root, "base", None) is not None:
        root = root.base
    if root is self._data:
        return 0
    start = _address("storage_offset", self)
    found = self.backend.ops.memory_layout(root)
    if found is None:
        raise RetrogradError(f"storage_offset: the {self.backend.name} backend's arrays show "
                             "no memory address")
    return (start - found[0]) // self.dtype.itemsize


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "bool": "BoolTensor",
}
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def _type_name(x: Tensor) -> str:
    name = _TYPE_NAMES.get(x.dtype.name, f"{x.dtype.name}Tensor")
    return f"retrograd.cuda.{name}" if x.device.type == "cuda" else f"retrograd.{name}"


def _dtype_of_type(value: Any) -> DType:
    if isinstance(value, str):
        parts = value.split(".")
        if len(parts) in (2, 3) and parts[0] in ("retrograd", "torch") and \
                parts[-1] in _BY_TYPE_NAME and (len(parts) == 2 or parts[1] == "cuda"):
            return as_dtype(_BY_TYPE_NAME[parts[-1]])
        raise ValueError(f"invalid type: {value!r}")
    return as_dtype(value)


@op("type", function=False, differentiable=False)
def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """With no ``dtype``: the type name (``'retrograd.FloatTensor'``, PyTorch's names under
    ``retrograd.``). With one (a dtype, or a type name under ``retrograd.`` or ``torch.``):
    this tensor in that dtype (``to``)."""
    if dtype is None:
        return _type_name(self)
    return self.to(_dtype_of_type(dtype))


def _tensor_arg(name: str, arg: str, pos: int, v: Any) -> Tensor:
    if not isinstance(v, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{builtins.type(v).__name__}")
    return v


def close_data(xp: Any, x: Any, y: Any, rtol: float, atol: float, equal_nan: bool,
               exact: bool) -> Any:
    """``|x - y| <= atol + rtol * |y|`` elementwise (equal infinities are close; NaNs only with
    ``equal_nan``); ``exact``: integer arrays, compared in float64 so that large integers are
    not rounded."""
    if exact:
        x = xp.astype(x, xp.float64)
        y = xp.astype(y, xp.float64)
    near = xp.abs(x - y) <= atol + rtol * xp.abs(y)
    finite = xp.logical_and(xp.isfinite(x), xp.isfinite(y))
    close = xp.logical_or(xp.logical_and(finite, near), x == y)
    if equal_nan:
        close = xp.logical_or(close, xp.logical_and(xp.isnan(x), xp.isnan(y)))
    return close


@op("isclose", differentiable=False)
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05,  # noqa: A002
            atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (broadcast; equal infinities
    are close; NaNs only with ``equal_nan``), a bool tensor. The two must share one dtype."""
    a = _tensor_arg("isclose", "input", 1, input)
    b = _tensor_arg("isclose", "other", 2, other)
    check_device("isclose", a, b)
    if a.dtype is not b.dtype:
        raise RetrogradError(f"{promotion.torch_name(a.dtype)} did not match "
                             f"{promotion.torch_name(b.dtype)}")
    err = broadcast_mismatch("isclose", a.shape, b.shape)
    if err is not None:
        raise err
    if rtol < 0:
        raise RetrogradError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RetrogradError(f"atol must be greater than or equal to zero, but got {atol}")
    be = a.backend
    xp = be.xp
    exact = not a.dtype.is_floating_point
    data = quiet_call(close_data, xp, a._data, b._data, rtol, atol, equal_nan, exact)
    if a.dtype.name == "bool":  # PyTorch: bools are close exactly when equal
        data = a._data == b._data
    return Tensor(be.asarray(data) if builtins.type(data) is not be.array_type else data, be)


@op("equal", differentiable=False)
def equal(input: Tensor, other: Tensor) -> builtins.bool:  # noqa: A002
    """Whether the two have the same shape and equal elements (compared after PyTorch's type
    promotion; a NaN equals nothing). A Python bool."""
    a = _tensor_arg("equal", "input", 1, input)
    b = _tensor_arg("equal", "other", 2, other)
    check_device("equal", a, b)
    if tuple(a.shape) != tuple(b.shape):
        return False
    r = promotion.operands_result_type(a, b)
    x, y = promotion.cast_data(a, r), promotion.cast_data(b, r)
    return builtins.bool(a.backend.xp.all(x == y))


@op("is_tensor", method=False, differentiable=False)
def is_tensor(obj: Any) -> builtins.bool:
    """Whether ``obj`` is a retrograd Tensor."""
    return isinstance(obj, Tensor)


@op("numel", method=False, differentiable=False)
def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements of ``input``."""
    return _tensor_arg("numel", "input", 1, input).numel()


@op("t", method=False)
def t(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` transposed if a matrix, itself (a view) if a vector or 0-d (``TBackward0``)."""
    return _t(_tensor_arg("t", "input", 1, input))
