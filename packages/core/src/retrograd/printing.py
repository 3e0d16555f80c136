"""How a tensor prints: PyTorch's layout, so that a program's output reads the same on both.

Floats print with four decimals; as integers with a trailing point when every finite nonzero
value is whole (``tensor([1., 2.])``); in scientific notation when the finite nonzero
magnitudes span more than a factor of 1000, exceed 1e8, or (not whole) fall below 1e-4. All
values of one tensor share a width, rows wrap at 80 columns, and a tensor of more than 1000
elements shows the first and last three items of each dimension around ``...``. Only the
values reach this module, as nested Python lists of the host copy.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["tensor_body"]

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    """One tensor's number format: chosen from all the values it will show."""

    def __init__(self, values: list[Any], floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            self.width = max([1] + [len(f"{v}") for v in values])
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        mags = [abs(v) for v in finite]
        lo, hi = min(mags), max(mags)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        wide = hi / lo > 1000.0 or hi > 1.0e8
        self.sci_mode = wide if self.int_mode else (wide or lo < 1.0e-4)
        if self.sci_mode:
            self.width = max(len(f"{v:.{PRECISION}e}") for v in finite)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite)
        else:
            self.width = max(len(f"{v:.{PRECISION}f}") for v in finite)

    def format(self, v: Any) -> str:
        if not self.floating:
            s = f"{v}"
        elif self.sci_mode:
            s = f"{v:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            s = f"{v:.{PRECISION}f}"
        return s.rjust(self.width)


def _flat(values: Any, summarize: bool) -> list[Any]:
    """The values the printout will show (the edges only when summarized), flattened."""
    if not isinstance(values, list):
        return [values]
    items = values
    if summarize and len(values) > 2 * EDGEITEMS:
        items = values[:EDGEITEMS] + values[-EDGEITEMS:]
    out: list[Any] = []
    for v in items:
        out.extend(_flat(v, summarize))
    return out


def _vector(values: list[Any], indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    if summarize and len(values) > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in values[:EDGEITEMS]] + [" ..."]
                + [fmt.format(v) for v in values[-EDGEITEMS:]])
    else:
        data = [fmt.format(v) for v in values]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: Any, ndim: int, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if ndim == 0:
        return fmt.format(values)
    if ndim == 1:
        return _vector(values, indent, summarize, fmt)
    if summarize and len(values) > 2 * EDGEITEMS:
        parts = ([_nested(v, ndim - 1, indent + 1, summarize, fmt) for v in values[:EDGEITEMS]]
                 + ["..."]
                 + [_nested(v, ndim - 1, indent + 1, summarize, fmt)
                    for v in values[-EDGEITEMS:]])
    else:
        parts = [_nested(v, ndim - 1, indent + 1, summarize, fmt) for v in values]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_body(values: Any, shape: tuple[int, ...], floating: bool, indent: int) -> str:
    """The bracketed values of a tensor as PyTorch prints them after ``tensor(``
    (``values``: its ``tolist()``; ``indent``: the prefix's length)."""
    numel = math.prod(shape)
    if numel == 0:
        return "[]"
    summarize = numel > THRESHOLD
    fmt = _Formatter(_flat(values, summarize), floating)
    return _nested(values, len(shape), indent, summarize, fmt)


def add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` with ``, suffix`` each, on a new line where the line would pass 80 columns,
    and the closing parenthesis."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
