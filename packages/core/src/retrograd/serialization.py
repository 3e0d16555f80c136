"""``rg.save``/``rg.load``: tensor mappings on disk in the safetensors format.

No pickle is involved, so loading a file runs no code, and the files are exchangeable with
PyTorch: ``safetensors.torch.load_file`` reads what ``rg.save`` writes, and ``rg.load`` reads
what ``safetensors.torch.save_file(model.state_dict(), path)`` writes (the result goes
straight into ``Module.load_state_dict``).

Only a mapping of ``str`` to ``Tensor`` (a state dict) can be saved. The safetensors header
keeps its entries sorted by name; ``rg.save`` records the mapping's own order in the header's
metadata (``"retrograd.order"``) and ``rg.load`` returns an ``OrderedDict`` in that order. A
file written by another program has no such record: its tensors come back sorted by name.
Tensors are written as dense, contiguous copies (views and non-contiguous tensors are fine;
two entries sharing storage are stored twice), and loaded as independent tensors that do not
require grad.

Dtypes: the file keeps each tensor's dtype (float16 is stored as ``F16`` and comes back as
float16, on both sides). A file holding a dtype retrograd does not have -- ``BF16`` (bfloat16),
the 8-bit floats, ``U8``/``I8``/``I16`` and the other small integers -- is refused by
``rg.load`` with a ``DTypeError`` naming the tensor and its stored dtype, before anything is
read (convert such tensors, for instance ``{k: v.float() ...}`` in PyTorch, before saving).
"""

from __future__ import annotations

import io
import json
import os
import struct
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from .errors import DTypeError, RetrogradError
from .tensor import Tensor

__all__ = ["save", "load"]

_ORDER_KEY = "retrograd.order"

# the safetensors dtype codes with a retrograd dtype (the rest, BF16 first, are refused)
_READABLE_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "I64": "int64",
                    "I32": "int32", "BOOL": "bool"}


def _safetensors_numpy() -> Any:
    try:
        import safetensors.numpy as st_numpy
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ImportError(
            "retrograd.save/retrograd.load need the 'safetensors' package: pip install safetensors"
        ) from exc
    return st_numpy


def _arrays(obj: Any) -> OrderedDict[str, Any]:
    import numpy as np

    if not isinstance(obj, Mapping):
        raise TypeError(
            "retrograd.save writes a mapping of str to Tensor (such as a state_dict) in the "
            f"safetensors format; got {type(obj).__name__}"
        )
    out: OrderedDict[str, Any] = OrderedDict()
    for key, value in obj.items():
        if not isinstance(key, str):
            raise TypeError(
                "retrograd.save writes a mapping of str to Tensor; found a key of type "
                f"{type(key).__name__}: {key!r}"
            )
        if not isinstance(value, Tensor):
            raise TypeError(
                "retrograd.save writes a mapping of str to Tensor; the value of "
                f"{key!r} is a {type(value).__name__}"
            )
        if key == "__metadata__":
            raise ValueError("retrograd.save: '__metadata__' is reserved by the safetensors format")
        # np.asarray keeps 0-d arrays 0-d (np.ascontiguousarray would make them 1-d)
        out[key] = np.asarray(value.detach().cpu().numpy(), order="C")
    return out


def save(obj: Mapping[str, Tensor], f: str | os.PathLike[str] | io.IOBase | Any) -> None:
    """Write ``obj``, a mapping of names to tensors (a state dict), to ``f`` -- a path or a
    binary file object -- in the safetensors format. Anything else is refused with a
    ``TypeError`` naming what was found."""
    st_numpy = _safetensors_numpy()
    arrays = _arrays(obj)
    metadata = {"format": "pt", _ORDER_KEY: json.dumps(list(arrays))}
    data: bytes = st_numpy.save(dict(arrays), metadata=metadata)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            handle.write(data)
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(
            f"retrograd.save: f must be a path or a binary file object, got {type(f).__name__}"
        )


def _header(data: bytes, name: str) -> dict[str, Any]:
    """The JSON header of a safetensors file (8-byte little-endian length, then JSON)."""
    problem = f"{name} is not a safetensors file (retrograd.load reads only that format)"
    if len(data) < 8:
        raise RetrogradError(problem)
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise RetrogradError(problem)
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RetrogradError(problem) from None
    if not isinstance(header, dict):
        raise RetrogradError(problem)
    return header


def _check_dtypes(header: dict[str, Any], name: str) -> None:
    """Refuse a file with a tensor whose stored dtype retrograd has no counterpart for."""
    for key, entry in header.items():
        if key == "__metadata__" or not isinstance(entry, dict):
            continue
        code = entry.get("dtype")
        if code not in _READABLE_DTYPES:
            hint = " (bfloat16)" if code == "BF16" else ""
            raise DTypeError(
                f"retrograd.load: tensor {key!r} in {name} is stored as {code}{hint}, which "
                "retrograd has no dtype for; it reads "
                + ", ".join(f"{c} ({d})" for c, d in _READABLE_DTYPES.items())
                + ". Convert the tensor (for instance to float32) before saving it."
            )


def load(
    f: str | os.PathLike[str] | io.IOBase | Any, map_location: Any = None, *,
    weights_only: bool | None = None, mmap: bool | None = None,
) -> OrderedDict[str, Tensor]:
    """Read a safetensors file (a path or a binary file object) into an ``OrderedDict`` of
    name -> Tensor, on ``map_location`` (a device or device string; default: the CPU).
    Files in any other format (such as pickles from ``torch.save``) are refused.
    ``weights_only`` and ``mmap`` are accepted for PyTorch's spelling and change nothing: a
    safetensors file holds weights only, and it is read whole."""
    from . import tensor as make_tensor

    st_numpy = _safetensors_numpy()
    if isinstance(f, (str, os.PathLike)):
        name = repr(os.fspath(f))
        with open(f, "rb") as handle:
            data = handle.read()
    elif hasattr(f, "read"):
        name = "the file object"
        data = f.read()
    else:
        raise TypeError(
            f"retrograd.load: f must be a path or a binary file object, got {type(f).__name__}"
        )
    if isinstance(map_location, Mapping) or callable(map_location):
        raise TypeError("retrograd.load: map_location must be a device or a device string")
    header = _header(bytes(data), name)
    _check_dtypes(header, name)
    try:
        arrays = st_numpy.load(bytes(data))
    except Exception as exc:  # safetensors' own error class; reported as ours
        raise RetrogradError(f"{name} is not a valid safetensors file: {exc}") from None
    meta = header.get("__metadata__") or {}
    names = sorted(arrays)
    if isinstance(meta, dict) and _ORDER_KEY in meta:
        try:
            recorded = json.loads(meta[_ORDER_KEY])
        except ValueError:
            recorded = None
        if isinstance(recorded, list) and sorted(recorded) == names:
            names = recorded
    device = "cpu" if map_location is None else map_location
    return OrderedDict((key, make_tensor(arrays[key], device=device)) for key in names)
