"""Op-database entries of the layout ops (``retrograd/ops/layout.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

``pad`` is ``nn.functional.pad`` in PyTorch; a retrograd without it there is reached through
``retrograd.ops.layout.pad``. The views (``movedim``, ``swapaxes``, ``unflatten``,
``reshape_as``) run ``permute``, ``transpose`` and ``reshape``'s kernels."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _pad(lib: Any) -> Any:
    fn = getattr(lib.nn.functional, "pad", None)
    if fn is None:
        from retrograd.ops.layout import pad
        return pad
    return fn


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("flip", (
        Sample("dims=(0,)", ((3, 2),), lambda lib, a: lib.flip(a, (0,))),
        Sample("dims=(-1, 0) method", ((2, 3, 2),), lambda lib, a: a.flip([-1, 0])),
        Sample("1-d", ((5,),), lambda lib, a: lib.flip(a, [0])),
        Sample("0-d", ((),), lambda lib, a: lib.flip(a, [0])),
    )),
    OpInfo("roll", (
        Sample("flat", ((3, 2),), lambda lib, a: lib.roll(a, 2)),
        Sample("dim=1", ((2, 3),), lambda lib, a: a.roll(-1, 1)),
        Sample("two dims", ((2, 3, 2),), lambda lib, a: lib.roll(a, (1, 4), (0, -1))),
        Sample("0-d", ((),), lambda lib, a: lib.roll(a, 3)),
    )),
    OpInfo("tril", (
        Sample("square", ((3, 3),), lambda lib, a: lib.tril(a)),
        Sample("k=1 wide", ((2, 4),), lambda lib, a: a.tril(1)),
        Sample("k=-1 batched", ((2, 3, 3),), lambda lib, a: lib.tril(a, -1)),
    )),
    OpInfo("triu", (
        Sample("square", ((3, 3),), lambda lib, a: lib.triu(a)),
        Sample("k=-1 tall", ((4, 2),), lambda lib, a: a.triu(-1)),
        Sample("k=2 batched", ((2, 3, 4),), lambda lib, a: lib.triu(a, 2)),
    )),
    OpInfo("movedim", (
        Sample("0 -> 2", ((2, 3, 2),), lambda lib, a: lib.movedim(a, 0, 2)),
        Sample("seq method", ((2, 3, 4),), lambda lib, a: a.movedim((0, -1), (1, 0))),
        Sample("0-d", ((),), lambda lib, a: lib.movedim(a, 0, 0)),
    ), aliases=("moveaxis",)),
    OpInfo("moveaxis", (
        Sample("-1 -> 0", ((2, 3, 2),), lambda lib, a: lib.moveaxis(a, -1, 0) * 2),
    )),
    OpInfo("swapaxes", (
        Sample("0, 1", ((2, 3),), lambda lib, a: lib.swapaxes(a, 0, 1)),
        Sample("method", ((2, 3, 2),), lambda lib, a: a.swapaxes(-1, 0)),
    )),
    OpInfo("swapdims", (
        Sample("0, 2", ((2, 3, 2),), lambda lib, a: lib.swapdims(a, 0, 2)),
        Sample("method", ((2, 3),), lambda lib, a: a.swapdims(1, 0)),
    )),
    OpInfo("unflatten", (
        Sample("dim=1", ((2, 6),), lambda lib, a: lib.unflatten(a, 1, (2, 3))),
        Sample("-1 inferred, method", ((4, 3),), lambda lib, a: a.unflatten(0, (-1, 2))),
        Sample("of a transpose", ((3, 4),), lambda lib, a: a.t().unflatten(0, (2, 1, 2))),
    )),
    OpInfo("reshape_as", (
        Sample("(2, 3) as (3, 2)", ((2, 3),), lambda lib, a: a.reshape_as(lib.zeros(3, 2))),
        Sample("of a transpose", ((2, 3),), lambda lib, a: a.t().reshape_as(lib.zeros(6))),
    )),
    OpInfo("diag", (
        Sample("1-d", ((3,),), lambda lib, a: lib.diag(a)),
        Sample("1-d k=1", ((3,),), lambda lib, a: a.diag(1)),
        Sample("1-d k=-2", ((2,),), lambda lib, a: lib.diag(a, -2)),
        Sample("2-d", ((3, 3),), lambda lib, a: lib.diag(a)),
        Sample("2-d k=1 wide", ((2, 4),), lambda lib, a: a.diag(1)),
        Sample("2-d k=-1 tall", ((4, 2),), lambda lib, a: lib.diag(a, -1)),
    )),
    OpInfo("t", (
        Sample("matrix", ((2, 3),), lambda lib, a: lib.t(a)),
        Sample("vector", ((4,),), lambda lib, a: lib.t(a) * 2.0),
        Sample("0-d", ((),), lambda lib, a: lib.t(a) * 2.0),
    )),
    OpInfo("contiguous", (
        Sample("of a transpose", ((2, 3),), lambda lib, a: a.t().contiguous()),
        Sample("of a step slice", ((5, 2),), lambda lib, a: a[::2].contiguous()),
        Sample("already contiguous", ((2, 3),), lambda lib, a: a.contiguous() * 2.0),
    )),
    OpInfo("pad", (
        Sample("constant", ((2, 3),), lambda lib, a: _pad(lib)(a, (1, 2))),
        Sample("constant value, crop", ((3, 4),),
               lambda lib, a: _pad(lib)(a, (-1, 1, 2, 0), value=0.5)),
        Sample("reflect 1d", ((2, 4),), lambda lib, a: _pad(lib)(a, (2, 3), mode="reflect")),
        Sample("reflect 2d", ((1, 3, 4),),
               lambda lib, a: _pad(lib)(a, (1, 2, 2, 1), mode="reflect")),
        Sample("replicate 1d", ((2, 3),),
               lambda lib, a: _pad(lib)(a, (3, 1), mode="replicate")),
        Sample("replicate 3d", ((1, 2, 2, 3),),
               lambda lib, a: _pad(lib)(a, (1, 0, 0, 1, 2, 1), mode="replicate")),
        Sample("circular 1d", ((2, 4),), lambda lib, a: _pad(lib)(a, (3, 1), mode="circular")),
        Sample("circular 1d, a full wrap", ((1, 2, 3),),
               lambda lib, a: _pad(lib)(a, (3, 2), mode="circular")),
        Sample("circular 2d", ((1, 3, 4),),
               lambda lib, a: _pad(lib)(a, (1, 2, 2, 1), mode="circular")),
        Sample("circular 2d, crop", ((2, 1, 3, 4),),
               lambda lib, a: _pad(lib)(a, (-1, 2, 1, -1), mode="circular")),
        Sample("circular 3d", ((1, 2, 2, 3),),
               lambda lib, a: _pad(lib)(a, (1, 0, 0, 1, 2, 1), mode="circular")),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of the layout ops: each over a tensor of ``n`` elements (a
    1-D ``(n,)``, or ``(1, n)`` / ``(2, n)`` where the op wants matrices), at every size of
    ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    calls: dict[str, tuple[Any, Any]] = {
        "flip": (lambda n: (n,), lambda lib, a: lib.flip(a, [0])),
        "roll": (lambda n: (n,), lambda lib, a: lib.roll(a, 3)),
        "tril": (lambda n: (2, n), lambda lib, a: lib.tril(a, 1)),
        "triu": (lambda n: (2, n), lambda lib, a: lib.triu(a)),
        "movedim": (lambda n: (2, n), lambda lib, a: lib.movedim(a, 0, 1)),
        "moveaxis": (lambda n: (n, 2), lambda lib, a: lib.moveaxis(a, 1, 0)),
        "swapaxes": (lambda n: (2, n), lambda lib, a: lib.swapaxes(a, 0, 1)),
        "swapdims": (lambda n: (n, 2), lambda lib, a: lib.swapdims(a, 0, 1)),
        "unflatten": (lambda n: (n,), lambda lib, a: lib.unflatten(a, 0, (1, -1))),
        "reshape_as": (lambda n: (2, n), lambda lib, a: a.t().reshape_as(a.t().reshape(-1, 2))),
        "diag": (lambda n: (2, n), lambda lib, a: lib.diag(a, 0)),
        "pad": (lambda n: (n,), lambda lib, a: _pad(lib)(a, (1, 2))),
        "t": (lambda n: (2, n), lambda lib, a: lib.t(a)),
        "contiguous": (lambda n: (2, n), lambda lib, a: a.t().contiguous()),
    }
    rows = []
    for name, (shape, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(shape(n)), lambda lib, a, fn=fn: fn(lib, a),
                               n=n) for n in SIZES]
        if name == "pad":
            samples += [SweepSample(f"n={n},reflect (1, n)", _pool((1, n)),
                                    lambda lib, a: _pad(lib)(a, (2, 1), mode="reflect"), n=n)
                        for n in SIZES if n >= 3]
            samples += [SweepSample(f"n={n},replicate (1, n)", _pool((1, n)),
                                    lambda lib, a: _pad(lib)(a, (1, 2), mode="replicate"),
                                    n=n) for n in SIZES if n >= 1]
            samples += [SweepSample(f"n={n},circular (1, n)", _pool((1, n)),
                                    lambda lib, a: _pad(lib)(a, (1, 1), mode="circular"),
                                    n=n) for n in SIZES if n >= 1]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "flip": (("flip",), ("flip",)),
    "t": (("permute",), ("permute",)),
    "contiguous": (("memory_layout", "contiguous"), ()),
    "roll": (("roll",), ("roll",)),
    "tril": (("tril",), ("tril",)),
    "triu": (("triu",), ("triu",)),
    "movedim": (("permute",), ("permute",)),
    "moveaxis": (("permute",), ("permute",)),
    "swapaxes": (("permute",), ("permute",)),
    "swapdims": (("permute",), ("permute",)),
    "unflatten": (("reshape",), ("reshape",)),
    "reshape_as": (("reshape",), ("reshape",)),
    "diag": (("diagonal", "diagonal_backward", "copy"), ("diagonal", "diagonal_backward")),
    "pad": (("pad_constant", "pad_take"), ("pad_constant", "pad_take_backward")),
}
