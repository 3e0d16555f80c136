"""Op-database entries of the sorting and searching ops (``retrograd/ops/sorting.py``).

Only ``sort`` and ``topk`` are differentiable (their values; the indices, ``argsort``,
``searchsorted``, ``bucketize`` are integers, and ``unique``'s derivative is not implemented
in PyTorch either). The generated values are distinct, so no sample has ties; the indices
and the integer ops ride along in products with the values.

``sizes_rows()`` gives the ``<op>/sizes`` sweep rows of these ops and ``KERNEL_ROWS`` their
kernels (forward, backward), as ``opdb/sweeps.py`` and ``opdb/kernels.py`` list them."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _weighted(lib: Any, pair: Any) -> Any:
    """The values times (1 + their int64 indices): both outputs in one result."""
    values, indices = pair
    return values * (indices + 1)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("sort", (
        Sample("1-d values", ((5,),), lambda lib, a: lib.sort(a).values),
        Sample("descending", ((5,),), lambda lib, a: a.sort(descending=True)[0]),
        Sample("dim=0 of (3, 2)", ((3, 2),), lambda lib, a: lib.sort(a, 0).values),
        Sample("dim=1,stable", ((2, 4),), lambda lib, a: a.sort(dim=1, stable=True).values),
        Sample("dim=1 of (2, 3, 2),descending", ((2, 3, 2),),
               lambda lib, a: lib.sort(a, dim=1, descending=True).values),
        Sample("values times indices", ((2, 4),), lambda lib, a: _weighted(lib, lib.sort(a))),
        Sample("times argsort", ((4,),),
               lambda lib, a: lib.sort(a).values * lib.argsort(a, descending=True)),
        Sample("0-d", ((),), lambda lib, a: lib.sort(a).values),
    )),
    OpInfo("topk", (
        Sample("k=2", ((5,),), lambda lib, a: lib.topk(a, 2).values),
        Sample("k=3,smallest", ((5,),), lambda lib, a: a.topk(3, largest=False)[0]),
        Sample("k=n", ((4,),), lambda lib, a: lib.topk(a, 4).values),
        Sample("dim=0 of (4, 2)", ((4, 2),), lambda lib, a: a.topk(2, dim=0).values),
        Sample("dim=1 of (2, 3, 2)", ((2, 3, 2),), lambda lib, a: lib.topk(a, 1, 1).values),
        Sample("values times indices", ((3, 4),), lambda lib, a: _weighted(lib, a.topk(2))),
        Sample("times searchsorted/bucketize", ((5,),),
               lambda lib, a: lib.topk(a, 3).values
               * lib.searchsorted(lib.sort(a).values, a[:3])
               + lib.bucketize(a[:3], lib.tensor([-1.0, 0.0, 1.0], dtype=a.dtype))),
        Sample("0-d", ((),), lambda lib, a: lib.topk(a, 1).values),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of ``sort`` and ``topk``: over all of a 1-D tensor, the long
    axis of ``(2, n)`` and the strided axis of ``(n, 2)``, at every size of ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    def sort_(lib: Any, a: Any, d: int, desc: bool) -> Any:
        return lib.sort(a, d, descending=desc).values

    def topk_(lib: Any, a: Any, d: int, largest: bool) -> Any:
        return lib.topk(a, min(3, a.shape[d]), d, largest).values

    rows = []
    for name, fn in (("sort", sort_), ("topk", topk_)):
        samples = []
        for n in SIZES:
            samples += [
                SweepSample(f"n={n},all", _pool((n,)),
                            lambda lib, a, fn=fn: fn(lib, a, 0, False), n=n),
                SweepSample(f"n={n},dim=1 of (2, n)", _pool((2, n)),
                            lambda lib, a, fn=fn: fn(lib, a, 1, True), n=n),
                SweepSample(f"n={n},dim=0 of (n, 2) (strided)", _pool((n, 2)),
                            lambda lib, a, fn=fn: fn(lib, a, 0, True), n=n),
            ]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

# op -> (forward kernels, backward kernels), as in ``opdb/kernels.py``
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "sort": (("sort_order", "take_along"),
             ("inverse_permutation", "sort_scatter", "sort_gather", "take_along")),
    "topk": (("sort_order", "getitem", "take_along"),
             ("inverse_permutation", "sort_scatter", "sort_gather", "take_along")),
}
