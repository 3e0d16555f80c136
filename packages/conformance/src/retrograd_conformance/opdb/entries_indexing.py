"""Op-database entries of the indexing ops (``retrograd/ops/indexing.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

The index tensors are fixed integer tensors built inside each call; repeated indices appear
where the op sums them (``gather``, ``scatter_add``, ``index_select``, ``index_add``) and not
where the winner of a repeated write is unspecified (``scatter``). ``nonzero`` is not
differentiable; it rides along in a ``masked_select`` sample."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _i(lib: Any, data: Any) -> Any:
    return lib.tensor(data, dtype=lib.int64)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("gather", (
        Sample("dim=1 of (3, 4)", ((3, 4),),
               lambda lib, a: lib.gather(a, 1, _i(lib, [[0, 1, 1], [3, 0, 3]]))),
        Sample("dim=0,method", ((3, 2),),
               lambda lib, a: a.gather(0, _i(lib, [[2, 0], [2, 2], [1, 0]]))),
        Sample("dim=-1 of (2, 2, 3)", ((2, 2, 3),),
               lambda lib, a: lib.gather(a, -1, _i(lib, [[[2], [0]], [[1], [1]]]))),
        Sample("0-d", ((),), lambda lib, a: lib.gather(a, 0, _i(lib, 0))),
    )),
    OpInfo("scatter", (
        Sample("src,dim=1", ((3, 4), (2, 3)),
               lambda lib, a, s: lib.scatter(a, 1, _i(lib, [[0, 1, 3], [2, 0, 1]]), s)),
        Sample("dim=0,method", ((3, 2), (1, 2)),
               lambda lib, a, s: a.scatter(0, _i(lib, [[2, 0]]), s)),
        Sample("value", ((3, 4),),
               lambda lib, a: lib.scatter(a, 1, _i(lib, [[0, 2], [3, 1]]), 0.5)),
    )),
    OpInfo("scatter_add", (
        Sample("dim=1,repeated", ((3, 4), (2, 3)),
               lambda lib, a, s: lib.scatter_add(a, 1, _i(lib, [[0, 0, 3], [2, 2, 2]]), s)),
        Sample("dim=0,method", ((3, 3), (2, 3)),
               lambda lib, a, s: a.scatter_add(0, _i(lib, [[2, 2, 0], [2, 1, 0]]), s)),
    )),
    OpInfo("index_select", (
        Sample("dim=1,repeated", ((3, 4),),
               lambda lib, a: lib.index_select(a, 1, _i(lib, [3, 0, 3]))),
        Sample("dim=0,method", ((4, 2),), lambda lib, a: a.index_select(0, _i(lib, [2, 1]))),
        Sample("0-d", ((),), lambda lib, a: lib.index_select(a, 0, _i(lib, [0]))),
    )),
    OpInfo("take_along_dim", (
        Sample("dim=1", ((3, 4),),
               lambda lib, a: lib.take_along_dim(a, _i(lib, [[1, 1], [0, 3], [2, 2]]), 1)),
        Sample("broadcast,method", ((3, 4),),
               lambda lib, a: a.take_along_dim(_i(lib, [[1], [0], [2]]), dim=1)),
        Sample("flattened", ((3, 4),),
               lambda lib, a: lib.take_along_dim(a, _i(lib, [5, 0, 11, 5]))),
    )),
    OpInfo("index_add", (
        Sample("dim=1,repeated", ((2, 4), (2, 3)),
               lambda lib, a, s: lib.index_add(a, 1, _i(lib, [3, 0, 3]), s)),
        Sample("dim=0,alpha,method", ((3, 3), (2, 3)),
               lambda lib, a, s: a.index_add(0, _i(lib, [2, 0]), s, alpha=-1.5)),
    )),
    OpInfo("masked_select", (
        Sample("mask of the values", ((3, 4),), lambda lib, a: lib.masked_select(a, a > 1.0)),
        Sample("broadcast mask,method", ((3, 4),),
               lambda lib, a: a.masked_select(a[0] > 1.0)),
        Sample("times nonzero", ((2, 3),),
               lambda lib, a: lib.masked_select(a, a > 1.0)
               * (lib.nonzero(a > 1.0)[:, 1] + 1)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of the differentiable indexing ops: on a 1-D tensor of every
    size of ``SIZES``, with the reversing permutation (``scatter``) or every index taken
    twice (the others), so the scatters' repeated additions run at every size."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    def rev(lib: Any, n: int) -> Any:
        return _i(lib, list(range(n - 1, -1, -1)))

    def twice(lib: Any, n: int) -> Any:
        return _i(lib, [i // 2 for i in range(2 * n)])

    def halves(lib: Any, n: int) -> Any:
        return _i(lib, [i // 2 for i in range(n)])

    calls: dict[str, tuple[int, Any]] = {
        "gather": (1, lambda lib, a: lib.gather(a, 0, twice(lib, a.shape[0]))),
        "scatter": (2, lambda lib, a, s: lib.scatter(a, 0, rev(lib, a.shape[0]), s)),
        "scatter_add": (2, lambda lib, a, s: lib.scatter_add(
            a, 0, halves(lib, a.shape[0]), s)),
        "index_select": (1, lambda lib, a: lib.index_select(a, 0, twice(lib, a.shape[0]))),
        "take_along_dim": (1, lambda lib, a: lib.take_along_dim(a, rev(lib, a.shape[0]),
                                                                0)),
        "index_add": (2, lambda lib, a, s: lib.index_add(
            a, 0, halves(lib, a.shape[0]), s, alpha=2.0)),
        "masked_select": (1, lambda lib, a: lib.masked_select(a, a > 1.0)),
    }
    rows = []
    for name, (k, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*([(n,)] * k)), fn, n=n) for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gather": (("gather",), ("gather_backward", "scatter_add")),
    "scatter": (("scatter",), ("scatter_zero", "gather")),
    "scatter_add": (("scatter_add",), ("gather",)),
    "index_select": (("index_select",), ("index_select_backward", "index_add")),
    "take_along_dim": (("expand", "gather"), ("gather_backward", "reduce_to")),
    "index_add": (("index_add",), ("index_select", "mul")),
    "masked_select": (("expand", "masked_select", "nonzero"),
                      ("masked_scatter_zero", "reduce_to")),
}
