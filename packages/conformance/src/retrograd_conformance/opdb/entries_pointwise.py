"""Op-database entries of the pointwise ops (``retrograd/ops/pointwise.py``), and of the
matrix (``ops/linalg.py``: ``mm``, ``mv``, ``dot``, ``outer``) and tiling (``ops/tiling.py``:
``repeat``, ``tile``) ops declared with them."""

from __future__ import annotations

from .base import OpInfo, Sample

MASK23 = [[True, False, True], [False, False, True]]


def _unary(name: str, *, domain=(0.2, 1.8), positive: bool = False, avoid=()) -> OpInfo:
    """Samples of ``lib.<name>(a)`` and ``a.<name>()`` over 2-d, 0-d and batched inputs."""

    def fn(lib, a):
        return getattr(lib, name)(a)

    def method(lib, a):
        return getattr(a, name)()

    kw = {"domain": domain, "positive": positive, "avoid": avoid}
    return OpInfo(name, (
        Sample("2-d", ((2, 3),), fn, **kw),
        Sample("0-d", ((),), fn, **kw),
        Sample("batched", ((2, 2, 3),), fn, **kw),
        Sample("method", ((3,),), method, **kw),
    ))


def _mask(lib, shape=(2, 3)):
    """A fixed bool mask of ``shape`` (a slice of ``MASK23``)."""
    m = lib.tensor(MASK23, dtype=lib.bool)
    if shape == ():
        return m[0, 0]
    if len(shape) == 1:
        return m[0, : shape[0]]
    return m


ENTRIES: tuple[OpInfo, ...] = (
    _unary("log1p", positive=True),
    _unary("expm1"),
    _unary("square"),
    _unary("reciprocal"),
    _unary("rsqrt", positive=True),
    _unary("sign"),
    _unary("floor", avoid=(1.0, -1.0)),
    _unary("tan", domain=(0.2, 1.2)),
    _unary("sinh"),
    _unary("cosh"),
    _unary("asin", domain=(0.1, 0.8)),
    _unary("acos", domain=(0.1, 0.8)),
    _unary("atan"),
    _unary("erf", domain=(0.1, 2.5)),
    OpInfo("atan2", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.atan2(a, b)),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.atan2(a, b)),
        Sample("0-d", ((), ()), lambda lib, a, b: lib.atan2(a, b)),
        Sample("method,broadcast-both", ((2, 1), (1, 3)), lambda lib, a, b: a.atan2(b)),
    )),
    OpInfo("masked_fill", (
        Sample("number", ((2, 3),), lambda lib, a: a.masked_fill(_mask(lib), 0.5)),
        Sample("function", ((2, 3),), lambda lib, a: lib.masked_fill(a, _mask(lib), -1.0)),
        Sample("tensor value", ((2, 3), ()), lambda lib, a, v: a.masked_fill(_mask(lib), v)),
        Sample("mask broadcast", ((3,),), lambda lib, a: a.masked_fill(_mask(lib), 2.0)),
        Sample("0-d", ((),), lambda lib, a: a.masked_fill(_mask(lib, ()), 2.0)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: a.masked_fill(_mask(lib, (3,)), 0.0)),
    )),
    OpInfo("mm", (
        Sample("2-d", ((2, 3), (3, 4)), lambda lib, a, b: lib.mm(a, b)),
        Sample("method", ((3, 3), (3, 1)), lambda lib, a, b: a.mm(b)),
    )),
    OpInfo("mv", (
        Sample("2-d,1-d", ((2, 3), (3,)), lambda lib, a, b: lib.mv(a, b)),
        Sample("method", ((4, 2), (2,)), lambda lib, a, b: a.mv(b)),
    )),
    OpInfo("dot", (
        Sample("1-d", ((3,), (3,)), lambda lib, a, b: lib.dot(a, b)),
        Sample("method", ((5,), (5,)), lambda lib, a, b: a.dot(b)),
    )),
    OpInfo("outer", (
        Sample("1-d", ((3,), (4,)), lambda lib, a, b: lib.outer(a, b)),
        Sample("method", ((2,), (2,)), lambda lib, a, b: a.outer(b)),
    )),
    OpInfo("repeat", (
        Sample("2-d", ((2, 3),), lambda lib, a: a.repeat(2, 2)),
        Sample("more dims", ((2, 3),), lambda lib, a: a.repeat(2, 1, 3)),
        Sample("tuple", ((3,),), lambda lib, a: a.repeat((3,))),
        Sample("0-d", ((),), lambda lib, a: a.repeat(4)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: a.repeat(1, 2, 1)),
    )),
    OpInfo("tile", (
        Sample("function", ((2, 3),), lambda lib, a: lib.tile(a, (2,))),
        Sample("more dims", ((2, 3),), lambda lib, a: lib.tile(a, (2, 1, 2))),
        Sample("method", ((3,),), lambda lib, a: a.tile(3)),
        Sample("0-d", ((),), lambda lib, a: a.tile((2, 2))),
    )),
)
