"""Op-database entries of the rearrange ops (``retrograd/ops/rearrange.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

Index tensors are fixed integer tensors built inside each call; repeated places appear where
the op sums them (``take``, ``index_put`` with ``accumulate``, ``scatter_reduce``'s sum, prod
and mean) and not where the winner of a repeated write is unspecified (``index_copy``,
``index_put``). The generated values are distinct and off zero, so the amax/amin samples have
no ties and the prod samples no zero factor (the test file covers those)."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _i(lib: Any, data: Any) -> Any:
    return lib.tensor(data, dtype=lib.int64)


def _sr(reduce: str, include_self: bool = True, dim: int = 0) -> Any:
    def call(lib: Any, a: Any, s: Any) -> Any:
        idx = _i(lib, [[0, 1, 0, 1], [2, 2, 0, 2]]) if dim == 0 else \
            _i(lib, [[3, 3], [0, 1], [1, 1]])
        return lib.scatter_reduce(a, dim, idx, s, reduce, include_self=include_self)
    return call


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("ravel", (
        Sample("(3, 4)", ((3, 4),), lambda lib, a: lib.ravel(a)),
        Sample("transposed,method", ((3, 4),), lambda lib, a: a.t().ravel()),
        Sample("0-d", ((),), lambda lib, a: lib.ravel(a)),
    )),
    OpInfo("take", (
        Sample("(3, 4),repeated,negative", ((3, 4),),
               lambda lib, a: lib.take(a, _i(lib, [[0, -1], [5, 5], [11, 2]]))),
        Sample("method,1-d", ((5,),), lambda lib, a: a.take(_i(lib, [4, 0, 4]))),
        Sample("0-d", ((),), lambda lib, a: lib.take(a, _i(lib, [0, 0]))),
    )),
    OpInfo("rot90", (
        Sample("k=1", ((3, 4),), lambda lib, a: lib.rot90(a)),
        Sample("k=2,method", ((3, 4),), lambda lib, a: a.rot90(2)),
        Sample("k=-1,dims=(2, 0)", ((2, 3, 4),), lambda lib, a: lib.rot90(a, -1, (2, 0))),
        Sample("k=3,dims=(1, 2)", ((2, 3, 2),), lambda lib, a: lib.rot90(a, 3, [1, 2])),
        Sample("k=0", ((2, 3),), lambda lib, a: lib.rot90(a, 0)),
    )),
    OpInfo("repeat_interleave", (
        Sample("int,flattened", ((2, 3),), lambda lib, a: lib.repeat_interleave(a, 2)),
        Sample("int,dim=1,method", ((2, 3),), lambda lib, a: a.repeat_interleave(3, dim=1)),
        Sample("tensor,dim=0", ((3, 2),),
               lambda lib, a: lib.repeat_interleave(a, _i(lib, [2, 0, 1]), dim=0)),
        Sample("0-d tensor,dim=-1", ((2, 3),),
               lambda lib, a: a.repeat_interleave(_i(lib, 2), dim=-1)),
        Sample("0-d input", ((),), lambda lib, a: lib.repeat_interleave(a, 3)),
    )),
    OpInfo("index_fill", (
        Sample("dim=1,number", ((3, 4),),
               lambda lib, a: lib.index_fill(a, 1, _i(lib, [0, 2]), -1.5)),
        Sample("dim=0,negative,method", ((3, 2),),
               lambda lib, a: a.index_fill(0, _i(lib, [-1]), 2.0)),
        Sample("0-d tensor value", ((3, 4), ()),
               lambda lib, a, v: lib.index_fill(a, 1, _i(lib, [3, 1, 3]), v)),
        Sample("0-d index", ((2, 3),), lambda lib, a: a.index_fill(1, _i(lib, 1), 0.5)),
    )),
    OpInfo("index_copy", (
        Sample("dim=1", ((3, 4), (3, 2)),
               lambda lib, a, s: lib.index_copy(a, 1, _i(lib, [3, 0]), s)),
        Sample("dim=0,method", ((4, 2), (2, 2)),
               lambda lib, a, s: a.index_copy(0, _i(lib, [2, 1]), s)),
        Sample("0-d", ((), ()), lambda lib, a, s: lib.index_copy(a, 0, _i(lib, 0), s)),
    )),
    OpInfo("masked_scatter", (
        Sample("mask of the values", ((3, 4), (12,)),
               lambda lib, a, s: lib.masked_scatter(a, a > 0.0, s)),
        Sample("broadcast mask,method", ((3, 4), (3, 3)),
               lambda lib, a, s: a.masked_scatter(_i(lib, [1, 0, 1, 1]) > 0, s)),
        Sample("broadcast self", ((4,), (2, 5)),
               lambda lib, a, s: lib.masked_scatter(a, s[:, :4] > 0.0, s)),
    )),
    OpInfo("unfold", (
        Sample("dim=1,size=2,step=1", ((3, 4),), lambda lib, a: a.unfold(1, 2, 1)),
        Sample("dim=0,size=2,step=2", ((5, 2),), lambda lib, a: a.unfold(0, 2, 2)),
        Sample("dim=-1,size=3,step=2 of (2, 2, 7)", ((2, 2, 7),),
               lambda lib, a: a.unfold(-1, 3, 2)),
        Sample("0-d", ((),), lambda lib, a: a.unfold(0, 1, 1)),
    )),
    OpInfo("scatter_reduce", (
        Sample("sum,exclude self", ((3, 4), (2, 4)), _sr("sum", False)),
        Sample("prod", ((3, 4), (2, 4)), _sr("prod")),
        Sample("prod,exclude self,dim=1", ((3, 4), (3, 2)), _sr("prod", False, 1)),
        Sample("mean,exclude self,dim=1", ((3, 4), (3, 2)), _sr("mean", False, 1)),
        Sample("amax,dim=1", ((3, 4), (3, 2)), _sr("amax", True, 1)),
        Sample("amin,exclude self,method", ((3, 4), (2, 4)),
               lambda lib, a, s: a.scatter_reduce(0, _i(lib, [[0, 1, 0, 1], [2, 2, 0, 2]]), s,
                                                  "amin", include_self=False)),
    )),
    OpInfo("slice_scatter", (
        Sample("dim=1,step=2", ((3, 4), (3, 2)),
               lambda lib, a, s: lib.slice_scatter(a, s, 1, 0, 4, 2)),
        Sample("dim=0,start=-2,method", ((3, 4), (2, 4)),
               lambda lib, a, s: a.slice_scatter(s, start=-2)),
    )),
    OpInfo("select_scatter", (
        Sample("dim=1,index=-1", ((3, 4), (3,)),
               lambda lib, a, s: lib.select_scatter(a, s, 1, -1)),
        Sample("dim=0,method", ((3, 4), (4,)), lambda lib, a, s: a.select_scatter(s, 0, 2)),
    )),
    OpInfo("diagonal_scatter", (
        Sample("main", ((3, 4), (3,)), lambda lib, a, s: lib.diagonal_scatter(a, s)),
        Sample("offset=1,method", ((3, 4), (3,)), lambda lib, a, s: a.diagonal_scatter(s, 1)),
        Sample("offset=-1,dims=(2, 0)", ((3, 2, 3), (2, 2)),
               lambda lib, a, s: lib.diagonal_scatter(a, s, -1, 2, 0)),
    )),
    OpInfo("index_put", (
        Sample("rows", ((3, 4), (2, 4)),
               lambda lib, a, v: a.index_put((_i(lib, [2, 0]),), v)),
        Sample("accumulate,repeated", ((3, 4), (3,)),
               lambda lib, a, v: lib.index_put(a, (_i(lib, [0, 2, 0]), _i(lib, [1, 3, 1])), v,
                                               accumulate=True)),
        Sample("broadcast value,bool mask", ((3, 4), ()),
               lambda lib, a, v: a.index_put((a > 0.0,), v)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of the rearrange ops at every size of ``SIZES``: on a 1-D
    tensor of ``n`` (or a ``(2, n)`` one for the ops of a plane), with the reversing
    permutation or every place taken twice as the index, so the scatters' repeated
    reductions run at every size."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    def rev(lib: Any, n: int) -> Any:
        return _i(lib, list(range(n - 1, -1, -1)))

    def halves(lib: Any, n: int) -> Any:
        return _i(lib, [i // 2 for i in range(n)])

    def few(lib: Any, n: int) -> Any:
        return _i(lib, sorted({0, n // 2, n - 1})) if n else _i(lib, [])

    def sr(reduce: str, include_self: bool) -> Any:
        return lambda lib, a, s: lib.scatter_reduce(a, 0, halves(lib, a.shape[0]), s, reduce,
                                                    include_self=include_self)

    calls: dict[str, tuple[Any, Any]] = {
        "ravel": (lambda n: ((2, n),), lambda lib, a: lib.ravel(a.t())),
        "take": (lambda n: ((n,),), lambda lib, a: lib.take(a, halves(lib, 2 * a.shape[0]))),
        "rot90": (lambda n: ((2, n),), lambda lib, a: lib.rot90(a)),
        "repeat_interleave": (lambda n: ((n,),), lambda lib, a: lib.repeat_interleave(a, 2)),
        "index_fill": (lambda n: ((n,),), lambda lib, a: a.index_fill(0, few(lib, a.shape[0]),
                                                                      0.5)),
        "index_copy": (lambda n: ((n,), (n,)),
                       lambda lib, a, s: a.index_copy(0, rev(lib, a.shape[0]), s)),
        "masked_scatter": (lambda n: ((n,), (n,)),
                           lambda lib, a, s: lib.masked_scatter(a, a > 0.0, s)),
        "unfold": (lambda n: ((n,),), lambda lib, a: a.unfold(0, min(3, a.shape[0]), 2)),
        "scatter_reduce": (lambda n: ((n,), (n,)), sr("sum", True)),
        "slice_scatter": (lambda n: ((2 * n,), (n,)),
                          lambda lib, a, s: lib.slice_scatter(a, s, 0, 1, None, 2)),
        "select_scatter": (lambda n: ((2, n), (n,)),
                           lambda lib, a, s: lib.select_scatter(a, s, 0, 1)),
        "diagonal_scatter": (lambda n: ((2, n), (min(2, n),)),
                             lambda lib, a, s: lib.diagonal_scatter(a, s)),
        "index_put": (lambda n: ((n,), (n,)),
                      lambda lib, a, v: a.index_put((halves(lib, a.shape[0]),), v, True)),
    }
    extra: dict[str, list[Any]] = {
        "scatter_reduce": [(f"{r}{'' if inc else ',exclude self'}", sr(r, inc))
                           for r, inc in (("prod", False), ("amax", True))],
    }
    rows = []
    for name, (shapes, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, n=n) for n in SIZES]
        for label, call in extra.get(name, []):
            samples += [SweepSample(f"n={n},{label}", _pool(*shapes(n)), call, n=n)
                        for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ravel": (("contiguous", "reshape"), ("reshape",)),
    "take": (("take",), ("take_backward",)),
    "rot90": (("rot90",), ("rot90",)),
    "repeat_interleave": (("repeat_index", "index_select", "expand", "contiguous",
                           "reshape"),
                          ("index_select_backward", "reduce_to", "reshape")),
    "index_fill": (("index_fill",), ("index_fill", "index_select", "sum")),
    "index_copy": (("index_copy",), ("index_fill", "index_select")),
    "masked_scatter": (("expand", "masked_scatter"),
                       ("where", "reduce_to", "masked_select", "pad_constant")),
    "unfold": (("unfold",), ("unfold_backward",)),
    "scatter_reduce": (("scatter_reduce",),
                       ("gather", "scatter_reduce", "scatter_zero", "where", "eq", "div",
                        "mul")),
    "slice_scatter": (("basic_scatter",), ("index_zero", "getitem")),
    "select_scatter": (("basic_scatter",), ("index_zero", "getitem")),
    "diagonal_scatter": (("diagonal", "diagonal_scatter"),
                         ("diagonal_scatter", "diagonal_copy")),
    "index_put": (("index_positions", "index_put"), ("scatter_zero", "take", "reshape")),
}
