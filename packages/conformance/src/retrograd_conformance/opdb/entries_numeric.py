"""Op-database entries of the numeric ops (``retrograd/ops/numeric.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

``logit`` samples lie in (0, 1) (its domain); ``fmax``/``fmin`` samples hold distinct values,
so no tie decides a gradient; ``copysign``'s input is nonzero. The logical, bitwise and
floor-division ops (not differentiable) ride along in products with the values."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "sizes_rows"]


def _gate(lib: Any, a: Any) -> Any:
    """``a`` times a 0/1 mask made of the logical, bitwise, floor-division and ``heaviside`` ops
    (all non-differentiable), so that each of them is checked through the values."""
    m = lib.logical_or(a > 0.5, lib.logical_not(a < -0.5)) & ~lib.logical_xor(a > 0, a > 1.0)
    k = (a * 4).floor().to(lib.int64) // 3 | 1
    d = a.detach()
    h = lib.heaviside(d - 0.25, lib.zeros_like(d))
    return a * m * h + (k ^ 1).to(a.dtype)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("logit", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.logit(a), domain=(0.1, 0.9), positive=True),
        Sample("eps, method", ((4,),), lambda lib, a: a.logit(eps=0.05), domain=(0.1, 0.9),
               positive=True),
        Sample("0-d", ((),), lambda lib, a: lib.logit(a), domain=(0.1, 0.9), positive=True),
    )),
    OpInfo("fmax", (
        Sample("same shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.fmax(a, b)),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.fmax(a, b)),
        Sample("method, NaN other", ((3,),),
               lambda lib, a: a.fmax(lib.where(a > 10.0, a, a.detach() * float("nan")))),
    )),
    OpInfo("fmin", (
        Sample("same shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.fmin(a, b)),
        Sample("broadcast, method", ((3, 1), (2,)), lambda lib, a, b: a.fmin(b)),
    )),
    OpInfo("copysign", (
        Sample("tensor sign", ((2, 3), (2, 3)), lambda lib, a, b: lib.copysign(a, b)),
        Sample("number sign, method", ((4,),), lambda lib, a: a.copysign(-1.0)),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.copysign(a, b)),
    )),
    OpInfo("deg2rad", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.deg2rad(a * 90.0)),
        Sample("method", ((3,),), lambda lib, a: a.deg2rad()),
    )),
    OpInfo("rad2deg", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.rad2deg(a)),
        Sample("method, logical gate", ((5,),), lambda lib, a: _gate(lib, a).rad2deg()),
    )),
    OpInfo("float_power", (
        Sample("number exponent", ((2, 3),), lambda lib, a: lib.float_power(a, 2),
               positive=True),
        Sample("tensor exponent, method", ((3,), (3,)), lambda lib, a, b: a.float_power(b),
               positive=True),
    )),
)

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "logit": (("logit", "clip"), ("mul", "div", "where", "logical_or")),
    "fmax": (("fmax",), ("ge", "ne", "logical_or", "where", "reduce_to")),
    "fmin": (("fmin",), ("le", "ne", "logical_or", "where", "reduce_to")),
    "copysign": (("copysign",), ("eq", "div", "where", "mul", "reduce_to")),
    "deg2rad": (("mul",), ("mul",)),
    "rad2deg": (("mul", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "bitwise_invert", "floor_divide", "heaviside"), ("mul",)),
    "float_power": (("pow",), ("pow", "mul", "log")),
}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of the numeric ops, each over ``n`` elements at every size of
    ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    unary: dict[str, Any] = {
        "logit": (lambda lib, a: lib.logit(a * 0.5), True),
        "deg2rad": (lambda lib, a: lib.deg2rad(a), False),
        "rad2deg": (lambda lib, a: lib.rad2deg(a), False),
        "float_power": (lambda lib, a: lib.float_power(a, 3), True),
        "copysign": (lambda lib, a: lib.copysign(a, -1.0), False),
    }
    rows = []
    for name, (fn, positive) in unary.items():
        rows.append(_row(name, "sizes", [
            SweepSample(f"n={n}", _pool((n,), positive=positive),
                        lambda lib, a, fn=fn: fn(lib, a), n=n) for n in SIZES]))
    for name in ("fmax", "fmin"):
        rows.append(_row(name, "sizes", [
            SweepSample(f"n={n}", _pool((n,), (n,)),
                        lambda lib, a, b, name=name: getattr(lib, name)(a, b), n=n)
            for n in SIZES]))
    return rows
