"""Op-database entries of the statistics ops (``retrograd/ops/statistics.py``).

The generated values are distinct and away from zero; the samples about zeros (``prod``,
``cumprod``) and ties (``max``, ``median``) make them on purpose, from a constant mask or
by repeating the input."""

from __future__ import annotations

from .base import OpInfo, Sample

# zeros in a (2, 3) input: one in the first row, two in the second
Z1 = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
# one zero in the whole (2, 3) input
Z_ONE = [[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]]


def _masked(lib, a, mask):
    return a * lib.tensor(mask, dtype=a.dtype)


def _first(pair):
    return pair[0]


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("var", (
        Sample("all", ((2, 3),), lambda lib, a: a.var()),
        Sample("dim=1", ((2, 3),), lambda lib, a: lib.var(a, 1)),
        Sample("dim=0,keepdim", ((3, 2),), lambda lib, a: a.var(0, keepdim=True)),
        Sample("dim=(0,2)", ((2, 3, 2),), lambda lib, a: lib.var(a, dim=(0, 2))),
        Sample("unbiased=False", ((4,),), lambda lib, a: a.var(unbiased=False)),
        Sample("correction=0.5,dim=-1", ((2, 3),), lambda lib, a: a.var(-1, correction=0.5)),
        Sample("correction=2", ((2, 4),), lambda lib, a: lib.var(a, 1, correction=2)),
        # the truth reductions and counts have no entries of their own (no gradient): here
        Sample("times all/any", ((2, 3),),
               lambda lib, a: (a.var(1) * (a > -5.0).all(1)).sum()
               + (a.std(0) * lib.any(a > 0.0, 0)).sum()),
        Sample("times count_nonzero", ((2, 3),),
               lambda lib, a: lib.var(a, 0) * lib.count_nonzero(a > 0.0, 0)),
    )),
    OpInfo("std", (
        Sample("all", ((2, 3),), lambda lib, a: a.std()),
        Sample("dim=1", ((2, 3),), lambda lib, a: lib.std(a, 1)),
        Sample("dim=0,keepdim,unbiased=False", ((3, 2),),
               lambda lib, a: a.std(0, unbiased=False, keepdim=True)),
        Sample("dim=(1,2)", ((2, 2, 3),), lambda lib, a: lib.std(a, (1, 2))),
    )),
    OpInfo("var_mean", (
        Sample("all,product", ((2, 3),), lambda lib, a: (lambda v, m: v * m)(*lib.var_mean(a))),
        Sample("dim=0,sum", ((3, 2),), lambda lib, a: (lambda v, m: v + 2.0 * m)(
            *lib.var_mean(a, 0))),
        Sample("dims,keepdim", ((2, 3, 2),), lambda lib, a: (lambda v, m: v * m * m)(
            *lib.var_mean(a, dim=(0, 2), keepdim=True))),
        Sample("var only", ((2, 3),), lambda lib, a: _first(lib.var_mean(a, 1, correction=0))),
        Sample("mean only", ((2, 3),), lambda lib, a: lib.var_mean(a, 1)[1]),
    )),
    OpInfo("std_mean", (
        Sample("all,product", ((2, 3),), lambda lib, a: (lambda s, m: s * m)(*lib.std_mean(a))),
        Sample("dim=1,sum", ((2, 3),), lambda lib, a: (lambda s, m: s + m * m)(
            *lib.std_mean(a, 1, unbiased=False))),
        Sample("std only", ((3, 2),), lambda lib, a: _first(lib.std_mean(a, 0, keepdim=True))),
    )),
    OpInfo("prod", (
        Sample("all", ((2, 3),), lambda lib, a: a.prod()),
        Sample("dim=1", ((2, 3),), lambda lib, a: lib.prod(a, 1)),
        Sample("dim=0,keepdim", ((3, 2),), lambda lib, a: a.prod(0, keepdim=True)),
        Sample("0-d", ((),), lambda lib, a: a.prod()),
        Sample("1-d,dim=-1", ((4,),), lambda lib, a: lib.prod(a, -1)),
        Sample("all,one zero", ((2, 3),), lambda lib, a: _masked(lib, a, Z_ONE).prod()),
        Sample("all,several zeros", ((2, 3),), lambda lib, a: _masked(lib, a, Z1).prod()),
        Sample("dim=1,zeros", ((2, 3),), lambda lib, a: _masked(lib, a, Z1).prod(1)),
        Sample("dim=0,zeros", ((2, 3),), lambda lib, a: lib.prod(_masked(lib, a, Z1), 0)),
        Sample("dtype=float64", ((2, 3),), lambda lib, a: a.prod(1, dtype=lib.float64)),
    )),
    OpInfo("max", (
        Sample("all", ((2, 3),), lambda lib, a: a.max()),
        Sample("all,ties", ((3,),), lambda lib, a: lib.stack([a, a]).max()),
        Sample("dim=1 values", ((2, 3),), lambda lib, a: lib.max(a, 1).values),
        Sample("dim=0,keepdim", ((3, 2),), lambda lib, a: a.max(0, keepdim=True)[0]),
        Sample("0-d,dim=0", ((),), lambda lib, a: a.max(0)[0]),
        Sample("binary", ((2, 3), (2, 3)), lambda lib, a, b: lib.max(a, b)),
    )),
    OpInfo("min", (
        Sample("all", ((2, 3),), lambda lib, a: a.min()),
        Sample("all,ties", ((3,),), lambda lib, a: lib.stack([a, a]).min()),
        Sample("dim=-1 values", ((2, 3),), lambda lib, a: lib.min(a, -1).values),
        Sample("dim=0,keepdim", ((3, 2),), lambda lib, a: a.min(0, True)[0]),
        Sample("binary", ((2, 3), (3,)), lambda lib, a, b: lib.min(a, b)),
    )),
    OpInfo("amin", (
        Sample("all", ((2, 3),), lambda lib, a: a.amin()),
        Sample("dim=1", ((2, 3),), lambda lib, a: lib.amin(a, 1)),
        Sample("dim=(0,2),keepdim", ((2, 3, 2),),
               lambda lib, a: lib.amin(a, dim=(0, 2), keepdim=True)),
        Sample("ties", ((3,),), lambda lib, a: lib.amin(lib.stack([a, a]), 0)),
        Sample("0-d", ((),), lambda lib, a: a.amin()),
    )),
    OpInfo("median", (
        Sample("all,odd", ((3, 3),), lambda lib, a: a.median()),
        Sample("all,even", ((2, 3),), lambda lib, a: lib.median(a)),
        Sample("dim=1 values", ((2, 5),), lambda lib, a: lib.median(a, 1).values),
        Sample("dim=0,keepdim", ((4, 2),), lambda lib, a: a.median(0, keepdim=True)[0]),
        Sample("0-d", ((),), lambda lib, a: a.median()),
    )),
    OpInfo("nanmedian", (
        Sample("all", ((3, 3),), lambda lib, a: a.nanmedian()),
        Sample("dim=1 values", ((2, 5),), lambda lib, a: lib.nanmedian(a, 1).values),
    )),
    OpInfo("trace", (
        Sample("square", ((3, 3),), lambda lib, a: a.trace()),
        Sample("tall", ((4, 2),), lambda lib, a: lib.trace(a)),
        Sample("wide", ((2, 5),), lambda lib, a: lib.trace(a)),
    )),
    OpInfo("cumsum", (
        Sample("dim=1", ((2, 3),), lambda lib, a: a.cumsum(1)),
        Sample("dim=0", ((3, 2),), lambda lib, a: lib.cumsum(a, 0)),
        Sample("dim=-2 of 3-d", ((2, 3, 2),), lambda lib, a: lib.cumsum(a, dim=-2)),
        Sample("0-d", ((),), lambda lib, a: a.cumsum(0)),
    )),
    OpInfo("cumprod", (
        Sample("dim=1", ((2, 3),), lambda lib, a: a.cumprod(1)),
        Sample("dim=0", ((3, 2),), lambda lib, a: lib.cumprod(a, 0)),
        Sample("0-d", ((),), lambda lib, a: a.cumprod(0)),
        Sample("zeros,dim=1", ((2, 3),), lambda lib, a: _masked(lib, a, Z1).cumprod(1)),
        Sample("zeros,dim=0", ((2, 3),), lambda lib, a: lib.cumprod(_masked(lib, a, Z1), 0)),
    )),
    OpInfo("logcumsumexp", (
        Sample("dim=1", ((2, 3),), lambda lib, a: a.logcumsumexp(1)),
        Sample("dim=0", ((3, 2),), lambda lib, a: lib.logcumsumexp(a, 0)),
        Sample("dim=-1 of 3-d", ((2, 2, 3),), lambda lib, a: lib.logcumsumexp(a, dim=-1)),
        Sample("0-d", ((),), lambda lib, a: a.logcumsumexp(0)),
        Sample("signed cotangent", ((2, 3),),
               lambda lib, a: lib.logcumsumexp(a, 1) * lib.tensor([1.0, -2.0, 0.5],
                                                                  dtype=a.dtype)),
    )),
)
