"""Op-database entries of the views ops (``retrograd/ops/views.py``).

The ops with several outputs (``unbind``, ``split``, ``chunk``) are checked through one
tensor made of their outputs, each weighted by its position (so a gradient sent to the wrong
output shows), and through one output alone (the others get no gradient: zeros in the
input's gradient)."""

from __future__ import annotations

from .base import OpInfo, Sample


def _weighted(lib, outs, dim=0):
    """The outputs of a split, each times its position + 1, concatenated along ``dim``."""
    return lib.cat([o * (i + 1) for i, o in enumerate(outs)], dim)


def _stacked(lib, outs, dim=0):
    """The outputs of an unbind, each times its position + 1, stacked along ``dim``."""
    return lib.stack([o * (i + 1) for i, o in enumerate(outs)], dim)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("narrow", (
        Sample("dim=1", ((3, 4),), lambda lib, a: a.narrow(1, 1, 2)),
        Sample("dim=0,function", ((3, 4),), lambda lib, a: lib.narrow(a, 0, 0, 2)),
        Sample("negative start", ((3, 4),), lambda lib, a: a.narrow(-1, -3, 3)),
        Sample("1-d", ((5,),), lambda lib, a: a.narrow(0, 2, 3)),
        Sample("batched", ((2, 3, 4),), lambda lib, a: a.narrow(2, 1, 2)),
    )),
    OpInfo("select", (
        Sample("dim=0", ((3, 4),), lambda lib, a: a.select(0, 1)),
        Sample("dim=-1,function", ((3, 4),), lambda lib, a: lib.select(a, -1, -1)),
        Sample("1-d->0-d", ((4,),), lambda lib, a: a.select(0, 2)),
        Sample("batched", ((2, 3, 4),), lambda lib, a: a.select(1, 2)),
    )),
    OpInfo("unbind", (
        Sample("dim=0", ((3, 4),), lambda lib, a: _stacked(lib, a.unbind())),
        Sample("dim=1,function", ((3, 4),), lambda lib, a: _stacked(lib, lib.unbind(a, 1), 1)),
        Sample("one output used", ((3, 4),), lambda lib, a: a.unbind(0)[1]),
        Sample("1-d", ((3,),), lambda lib, a: _stacked(lib, a.unbind())),
        Sample("batched", ((2, 3, 2),), lambda lib, a: _stacked(lib, a.unbind(-1), -1)),
    )),
    OpInfo("split", (
        Sample("size 2", ((5, 3),), lambda lib, a: _weighted(lib, a.split(2))),
        Sample("size 2,dim=1,function", ((3, 4),),
               lambda lib, a: _weighted(lib, lib.split(a, 2, 1), 1)),
        Sample("sizes list", ((3, 4),), lambda lib, a: _weighted(lib, a.split([1, 3], 1), 1)),
        Sample("one output used", ((4, 3),), lambda lib, a: a.split(3)[1]),
        Sample("1-d", ((5,),), lambda lib, a: _weighted(lib, a.split(3))),
    )),
    OpInfo("split_with_sizes", (
        Sample("dim=0", ((4, 3),), lambda lib, a: _weighted(lib, a.split_with_sizes([1, 3]))),
        Sample("dim=1,function", ((3, 4),),
               lambda lib, a: _weighted(lib, lib.split_with_sizes(a, [2, 0, 2], 1), 1)),
    )),
    OpInfo("unsafe_split", (
        Sample("size 2", ((5, 3),), lambda lib, a: _weighted(lib, a.unsafe_split(2))),
        Sample("dim=1,function", ((3, 4),),
               lambda lib, a: _weighted(lib, lib.unsafe_split(a, 3, 1), 1)),
    )),
    OpInfo("unsafe_split_with_sizes", (
        Sample("dim=0", ((4, 3),),
               lambda lib, a: _weighted(lib, a.unsafe_split_with_sizes([3, 1]))),
    )),
    OpInfo("chunk", (
        Sample("2 chunks", ((5, 3),), lambda lib, a: _weighted(lib, a.chunk(2))),
        Sample("3 chunks,dim=1,function", ((2, 6),),
               lambda lib, a: _weighted(lib, lib.chunk(a, 3, 1), 1)),
        Sample("one output used", ((4, 3),), lambda lib, a: a.chunk(2)[0]),
    )),
    OpInfo("unsafe_chunk", (
        Sample("2 chunks", ((5, 3),), lambda lib, a: _weighted(lib, a.unsafe_chunk(2))),
    )),
    OpInfo("tensor_split", (
        Sample("sections", ((7, 2),), lambda lib, a: _weighted(lib, a.tensor_split(3))),
        Sample("indices,dim=1,function", ((2, 5),),
               lambda lib, a: _weighted(lib, lib.tensor_split(a, [1, 3], 1), 1)),
    )),
    OpInfo("diagonal", (
        Sample("square", ((3, 3),), lambda lib, a: a.diagonal()),
        Sample("offset=1", ((3, 4),), lambda lib, a: a.diagonal(1)),
        Sample("offset=-1,function", ((4, 3),), lambda lib, a: lib.diagonal(a, -1)),
        Sample("batched,dims", ((2, 3, 3),), lambda lib, a: a.diagonal(0, 1, 2)),
        Sample("dims swapped", ((3, 4),), lambda lib, a: a.diagonal(1, 1, 0)),
    )),
    OpInfo("as_strided", (
        Sample("overlapping windows", ((6,),), lambda lib, a: a.as_strided((3, 2), (1, 1))),
        Sample("transpose with offset", ((3, 4),),
               lambda lib, a: lib.as_strided(a, (2, 2), (1, 4), 1)),
    )),
)
