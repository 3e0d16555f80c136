"""Op-database entries of the selection ops (``retrograd/ops/selection.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

The generated values are distinct, so no sample sits on a tie or a kink: ``cummax``/``cummin``
change their running extreme only at new records, ``kthvalue``/``mode``/``quantile`` pick
distinct values (``q`` is chosen so that no rank lands half-way for ``nearest``). ``mode``
makes its ties on purpose, by concatenating the input with a part of itself: the repeated
values are the most frequent ones, and the smallest of them wins. The NaN-aware reductions
put NaNs in with ``masked_fill`` (whose gradient is zero there), so the gradients stay finite.
``argwhere`` (integer coordinates) rides along in a product with a differentiable op."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]

NAN = float("nan")


def _holes(lib: Any, a: Any) -> Any:
    """``a`` with NaN where it is above 1 (a zero gradient there)."""
    return a.masked_fill(a > 1.0, NAN)


def _weighted(pair: Any) -> Any:
    """The values times (1 + their int64 indices): both outputs in one result."""
    values, indices = pair
    return values * (indices + 1)


def _repeated(lib: Any, a: Any, dim: int, k: int) -> Any:
    """``a`` with its first ``k`` slices along ``dim`` appended again (ties on purpose)."""
    return lib.cat([a, a.narrow(dim, 0, k)], dim)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("nansum", (
        Sample("all", ((2, 3),), lambda lib, a: lib.nansum(a)),
        Sample("dim=1 with NaNs", ((3, 4),), lambda lib, a: lib.nansum(_holes(lib, a), 1)),
        Sample("dim=(0,2),keepdim of 3-d with NaNs", ((2, 3, 2),),
               lambda lib, a: _holes(lib, a).nansum((0, 2), keepdim=True)),
        Sample("dim=-1 of 3-d", ((2, 2, 3),), lambda lib, a: a.nansum(dim=-1)),
        Sample("0-d", ((),), lambda lib, a: lib.nansum(a)),
    )),
    OpInfo("nanmean", (
        Sample("all with NaNs", ((3, 3),), lambda lib, a: lib.nanmean(_holes(lib, a))),
        Sample("dim=0 with NaNs", ((4, 3),), lambda lib, a: _holes(lib, a).nanmean(0)),
        Sample("dim=(1,2),keepdim of 3-d", ((2, 3, 2),),
               lambda lib, a: lib.nanmean(a, (1, 2), keepdim=True)),
        Sample("0-d", ((),), lambda lib, a: a.nanmean()),
    )),
    OpInfo("cummax", (
        Sample("dim=1", ((3, 5),), lambda lib, a: lib.cummax(a, 1).values),
        Sample("dim=0", ((5, 2),), lambda lib, a: a.cummax(0)[0]),
        Sample("dim=-2 of 3-d", ((2, 4, 2),), lambda lib, a: lib.cummax(a, dim=-2).values),
        Sample("values times indices", ((2, 6),), lambda lib, a: _weighted(lib.cummax(a, 1))),
        Sample("0-d", ((),), lambda lib, a: lib.cummax(a, 0).values),
    )),
    OpInfo("cummin", (
        Sample("dim=1", ((3, 5),), lambda lib, a: lib.cummin(a, 1).values),
        Sample("dim=0", ((5, 2),), lambda lib, a: a.cummin(0)[0]),
        Sample("dim=-1 of 3-d", ((2, 2, 4),), lambda lib, a: lib.cummin(a, -1).values),
        Sample("values times indices", ((2, 6),), lambda lib, a: _weighted(a.cummin(1))),
        Sample("0-d", ((),), lambda lib, a: a.cummin(0).values),
    )),
    OpInfo("kthvalue", (
        Sample("k=2", ((5,),), lambda lib, a: lib.kthvalue(a, 2).values),
        Sample("k=3,dim=0", ((4, 3),), lambda lib, a: a.kthvalue(3, 0)[0]),
        Sample("k=1,dim=1,keepdim of 3-d", ((2, 3, 2),),
               lambda lib, a: lib.kthvalue(a, 1, 1, keepdim=True).values),
        Sample("values times indices", ((3, 4),), lambda lib, a: _weighted(lib.kthvalue(a, 4))),
        Sample("0-d", ((),), lambda lib, a: lib.kthvalue(a, 1).values),
    )),
    OpInfo("mode", (
        Sample("distinct values", ((5,),), lambda lib, a: lib.mode(a).values),
        Sample("repeats", ((6,),), lambda lib, a: lib.mode(_repeated(lib, a, 0, 2)).values),
        Sample("dim=0,repeats", ((3, 4),),
               lambda lib, a: _weighted(_repeated(lib, a, 0, 2).mode(0))),
        Sample("dim=1,keepdim", ((2, 3),),
               lambda lib, a: lib.mode(_repeated(lib, a, 1, 1), 1, keepdim=True).values),
        Sample("0-d", ((),), lambda lib, a: a.mode().values),
    )),
    OpInfo("msort", (
        Sample("1-d", ((5,),), lambda lib, a: lib.msort(a)),
        Sample("(4, 3)", ((4, 3),), lambda lib, a: a.msort()),
        Sample("times argwhere", ((3, 2),),
               lambda lib, a: lib.msort(a) * lib.argwhere(a > 0.0).sum()),
        Sample("0-d", ((),), lambda lib, a: lib.msort(a)),
    )),
    OpInfo("quantile", (
        Sample("all,linear", ((3, 4),), lambda lib, a: lib.quantile(a, 0.3)),
        Sample("dim=1,lower", ((2, 5),),
               lambda lib, a: a.quantile(0.6, 1, interpolation="lower")),
        Sample("dim=0,keepdim,higher", ((4, 3),),
               lambda lib, a: lib.quantile(a, 0.4, 0, True, interpolation="higher")),
        Sample("tensor q,dim=-1,midpoint", ((3, 5),),
               lambda lib, a: lib.quantile(a, lib.tensor([0.1, 0.9], dtype=a.dtype), -1,
                                           interpolation="midpoint")),
        Sample("tensor q,nearest", ((2, 6),),
               lambda lib, a: lib.quantile(a, lib.tensor([0.3, 0.75], dtype=a.dtype), 1,
                                           interpolation="nearest")),
        Sample("0-d", ((),), lambda lib, a: lib.quantile(a, 0.5)),
    )),
    OpInfo("nanquantile", (
        Sample("all with NaNs", ((3, 4),), lambda lib, a: lib.nanquantile(_holes(lib, a), 0.3)),
        Sample("dim=1 with NaNs,midpoint", ((3, 5),),
               lambda lib, a: _holes(lib, a).nanquantile(0.6, 1, interpolation="midpoint")),
        Sample("tensor q,dim=0,keepdim", ((4, 3),),
               lambda lib, a: lib.nanquantile(a, lib.tensor([0.2, 0.7], dtype=a.dtype), 0,
                                              keepdim=True)),
        Sample("0-d", ((),), lambda lib, a: lib.nanquantile(a, 0.25)),
    )),
    OpInfo("diff", (
        Sample("1-d", ((5,),), lambda lib, a: lib.diff(a)),
        Sample("n=2,dim=0", ((4, 3),), lambda lib, a: a.diff(2, 0)),
        Sample("prepend and append", ((2, 4), (2, 1), (2, 2)),
               lambda lib, a, p, q: lib.diff(a, 1, -1, p, q)),
        Sample("n=2 of (2, 3)", ((2, 3),), lambda lib, a: lib.diff(a, 2)),
        Sample("dim=1 of 3-d", ((2, 3, 2),), lambda lib, a: lib.diff(a, dim=1)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of the selection ops: over all of a 1-D tensor, the long axis
    of ``(2, n)`` and the strided axis of ``(n, 2)``, at every size of ``SIZES`` (``mode``
    with its first values repeated, so that it has a most frequent value)."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    def nansum_(lib: Any, a: Any, d: Any) -> Any:
        return lib.nansum(_holes(lib, a), d)

    def nanmean_(lib: Any, a: Any, d: Any) -> Any:
        return lib.nanmean(_holes(lib, a), d)

    def cummax_(lib: Any, a: Any, d: Any) -> Any:
        return lib.cummax(a, 0 if d is None else d).values

    def cummin_(lib: Any, a: Any, d: Any) -> Any:
        return a.cummin(0 if d is None else d).values

    def kthvalue_(lib: Any, a: Any, d: Any) -> Any:
        dim = 0 if d is None else d
        return lib.kthvalue(a, max(1, (a.shape[dim] + 1) // 2), dim).values

    def mode_(lib: Any, a: Any, d: Any) -> Any:
        dim = 0 if d is None else d
        k = min(3, a.shape[dim])
        return lib.mode(_repeated(lib, a, dim, k), dim).values

    def msort_(lib: Any, a: Any, d: Any) -> Any:
        return lib.msort(a if d != 1 else a.T)

    def quantile_(lib: Any, a: Any, d: Any) -> Any:
        return lib.quantile(a, 0.25, d)  # q * (n - 1) exact in float32: the weights too

    def nanquantile_(lib: Any, a: Any, d: Any) -> Any:
        return lib.nanquantile(_holes(lib, a), 0.75, d, interpolation="midpoint")

    def diff_(lib: Any, a: Any, d: Any) -> Any:
        return lib.diff(a, 1, 0 if d is None else d)

    calls = {"nansum": nansum_, "nanmean": nanmean_, "cummax": cummax_, "cummin": cummin_,
             "kthvalue": kthvalue_, "mode": mode_, "msort": msort_, "quantile": quantile_,
             "nanquantile": nanquantile_, "diff": diff_}
    tol = {"nansum": "size", "nanmean": "size"}
    rows = []
    for name, fn in calls.items():
        samples = []
        t = tol.get(name, "oracle")
        for n in SIZES:
            samples += [
                SweepSample(f"n={n},all", _pool((n,)),
                            lambda lib, a, fn=fn: fn(lib, a, None), tol=t, n=n),
                SweepSample(f"n={n},dim=1 of (2, n)", _pool((2, n)),
                            lambda lib, a, fn=fn: fn(lib, a, 1), tol=t, n=n),
                SweepSample(f"n={n},dim=0 of (n, 2) (strided)", _pool((n, 2)),
                            lambda lib, a, fn=fn: fn(lib, a, 0), tol=t, n=n),
            ]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

# op -> (forward kernels, backward kernels), as in ``opdb/kernels.py``
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "nansum": (("isnan", "where", "sum"), ("eq", "ones_like", "where", "expand", "mul")),
    "nanmean": (("isnan", "where", "sum", "eq", "astype", "div"),
                ("div", "eq", "ones_like", "where", "expand", "mul")),
    "cummax": (("cummax",), ("gather_backward", "scatter_add")),
    "cummin": (("cummin",), ("gather_backward", "scatter_add")),
    "kthvalue": (("sort_order", "getitem", "take_along", "squeeze"),
                 ("index_mask", "where", "expand")),
    "mode": (("mode", "squeeze"), ("index_mask", "where", "expand")),
    "msort": (("sort_order", "take_along"),
              ("inverse_permutation", "sort_scatter", "take_along")),
    "quantile": (("sort_order", "take_along", "isnan", "any", "where", "mul", "gather", "lerp"),
                 ("gather_backward", "sort_scatter", "lerp")),
    "nanquantile": (("sort_order", "take_along", "eq", "sum", "where", "mul", "gather", "lerp"),
                    ("gather_backward", "sort_scatter", "lerp")),
    "diff": (("getitem", "sub", "concat"), ("index_backward", "neg", "getitem")),
}
