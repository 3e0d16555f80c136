"""Device indices for ``cuda:N``: validation with messages that name what exists.

Kept free of CuPy so the rules are tested on machines without a GPU. Parsing the string
("cuda", "cuda:1") is the core's job (``retrograd.dtypes.as_device``); this module checks
what the backend receives from it.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["check_index", "device_name"]


def device_name(index: int | None) -> str:
    return "cuda" if index is None else f"cuda:{index}"


def check_index(index: Any, device_count: int) -> int:
    """``index`` as an int in ``range(device_count)``; ``TypeError``/``ValueError`` otherwise."""
    if isinstance(index, bool):
        raise TypeError(f"a CUDA device index must be an int, got {index!r}")
    try:
        index = operator.index(index)  # ints and numpy integers; not floats or strings
    except TypeError:
        raise TypeError(f"a CUDA device index must be an int, got {index!r}") from None
    if index < 0:
        raise ValueError(f"invalid CUDA device index {index}: indices start at 0")
    if index >= device_count:
        have = (
            "no CUDA device"
            if device_count == 0
            else f"{device_count} CUDA device(s): cuda:0..cuda:{device_count - 1}"
        )
        raise ValueError(f"device cuda:{index} does not exist: this machine has {have}")
    return index
