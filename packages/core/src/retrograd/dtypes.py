"""Dtypes and devices: small interned objects that name what a backend array holds and where."""

from __future__ import annotations

from typing import Any

from .errors import DeviceError

__all__ = ["DType", "Device", "float16", "float32", "float64", "int32", "int64", "bool_",
           "as_dtype", "as_device", "get_default_dtype", "set_default_dtype"]


class DType:
    """A dtype by name ("float32", ...); a backend maps the name onto its own array dtype."""

    __slots__ = ("name", "is_floating_point", "itemsize")

    def __init__(self, name: str, is_floating_point: bool, itemsize: int) -> None:
        self.name = name
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize

    def __repr__(self) -> str:
        return f"retrograd.{self.name}"

    def __reduce__(self) -> Any:
        return (as_dtype, (self.name,))


float16 = DType("float16", True, 2)
float32 = DType("float32", True, 4)
float64 = DType("float64", True, 8)
int32 = DType("int32", False, 4)
int64 = DType("int64", False, 8)
bool_ = DType("bool", False, 1)

_BY_NAME = {d.name: d for d in (float16, float32, float64, int32, int64, bool_)}

# The dtype a Python float (and a creation function given no dtype) becomes; PyTorch keeps it
# per process, not per thread, and so does retrograd.
_default_dtype: list[DType] = [float32]


def get_default_dtype() -> DType:
    """The default floating dtype: what ``tensor(1.5)``, ``zeros(2)``, ``randn(2)``,
    ``arange(3.0)`` and ``int_tensor * 0.5`` produce (float32 unless changed)."""
    return _default_dtype[0]


def set_default_dtype(d: DType) -> None:
    """Set the default floating dtype, as ``torch.set_default_dtype``: ``float16``, ``float32``
    or ``float64``. Anything else raises ``TypeError`` with PyTorch's message. Tensors that
    already exist keep their dtype."""
    if not isinstance(d, DType):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype[0] = d


def as_dtype(dtype: Any) -> DType:
    """Accept a DType, its name, a NumPy-like dtype or a torch-like spelling ("torch.float32").
    The Python types map as in PyTorch: ``float`` is float64, ``int`` int64, ``bool`` bool."""
    if isinstance(dtype, DType):
        return dtype
    if dtype is bool:
        return bool_
    if dtype is float:
        return float64
    if dtype is int:
        return int64
    name = getattr(dtype, "name", None) if not isinstance(dtype, str) else dtype
    if name is None:
        name = str(dtype)
    name = str(name).rsplit(".", 1)[-1]
    found = _BY_NAME.get(name)
    if found is None:
        raise TypeError(
            f"unsupported dtype {dtype!r}; retrograd supports {', '.join(sorted(_BY_NAME))}"
        )
    return found


class Device:
    """A device: a backend name plus an optional index ("cpu", "cuda:0"). Compares equal to its
    string form, so ``t.device == "cpu"`` works."""

    __slots__ = ("type", "index")

    type: str
    index: int | None
    _interned: dict[tuple[str, int | None], Device] = {}

    def __new__(cls, type: str, index: int | None = None) -> Device:
        key = (type, index)
        dev = cls._interned.get(key)
        if dev is None:
            dev = object.__new__(cls)
            dev.type = type
            dev.index = index
            cls._interned[key] = dev
        return dev

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type={self.type!r}" + (
            ")" if self.index is None else f", index={self.index})"
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            return self is other or (self.type == other.type and self.index == other.index)
        if isinstance(other, str):
            return str(self) == other or (
                ":" not in other and other == self.type and self.index in (None, 0)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> Any:
        return (Device, (self.type, self.index))


def as_device(device: Any) -> Device:
    """Parse "cpu", "cuda", "cuda:1", a Device, or a torch.device-like object. A string that
    does not parse -- an index that is not a non-negative integer written without leading
    zeros, as PyTorch requires -- raises ``DeviceError`` (a RuntimeError, as in PyTorch, and a
    ValueError). Surrounding spaces are ignored."""
    if isinstance(device, Device):
        return device
    if not isinstance(device, str):
        if hasattr(device, "type"):
            return Device(str(device.type), getattr(device, "index", None))
        raise TypeError(f"device must be a string like 'cpu' or 'cuda:0', got {device!r}")
    text = device.strip()
    name, sep, idx = text.partition(":")
    if not name or (sep and not (idx.isascii() and idx.isdigit() and
                                 (idx == "0" or idx[0] != "0"))):
        raise DeviceError(f"invalid device string {device!r}: expected 'name' or "
                          "'name:index', the index a non-negative integer without leading "
                          "zeros")
    return Device(name, int(idx) if sep else None)
