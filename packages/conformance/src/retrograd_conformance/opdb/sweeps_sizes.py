"""The ``<op>/sizes`` rows of the views, statistics, pointwise, matrix and tiling ops
(``entries_views``, ``entries_statistics``, ``entries_pointwise``): each op at every size of
:data:`~.sweeps.SIZES`, as :mod:`.sweeps` does for the first ops.

- elementwise ops: a 1-D input of ``n`` elements (in the op's domain: ``asin``/``acos`` within
  (-1, 1), ``log1p`` above -1, ``rsqrt`` positive ...), and the binary ones broadcast against a
  ``(1,)`` operand, whose gradient sums ``n`` terms;
- reductions (``var`` ... ``median``) and running reductions (``cumsum`` ...): over a whole 1-D
  tensor, the long axis of ``(2, n)`` and the strided axis of ``(n, 2)``; a sum of ``n`` terms
  is compared under the tolerance that grows with ``n``. ``prod`` and ``cumprod`` take values
  within 2^-10 of 1 (float32-exact), whose product stays finite at 10^5 terms;
  ``logcumsumexp``'s kernel takes one step per place of its axis, so at the largest size only
  the 1-D sample runs along the long axis (and one along the short axis of ``(n, 2)``);
- views: slices, selections and splits of ``(n,)``, ``(2, n)`` and ``(n, 2)`` (the outputs of a
  split combined, each weighted by its position, as in the op entries), diagonals of
  ``(n, 3)`` and of the planes of ``(2, n, 2)``, and overlapping ``as_strided`` windows;
- matrix products with ``n`` as the inner and as an outer dimension; ``repeat`` and ``tile``
  of ``(n,)`` and ``(2, n)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .entries_views import _stacked, _weighted
from .sweeps import (
    KNOWN_CORE_BUGS,
    SIZES,
    SweepInfo,
    SweepSample,
    _bools,
    _chain,
    _ones_plus,
    _pool,
    _row,
    _split,
)

Make = Callable[[np.random.Generator], list[np.ndarray]]

#: The samples of these rows core still gets wrong (merged into ``sweeps.KNOWN_CORE_BUGS``,
#: which reports them as skipped with the reason; a test checks that each still fails).
CORE_BUGS: dict[tuple[str, str], str] = {}


def _near_one(*shapes: tuple[int, ...]) -> Make:
    """1 + [-2^-10, 2^-10) in steps of 2^-20 (float32-exact): a product of 10^5 of them stays
    within a few units of 1 (no overflow, no underflow, and no zero)."""
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        total = sum(math.prod(s) for s in shapes)
        return _split(1.0 + rng.integers(-2**10, 2**10, total) * 2.0**-20, *shapes)
    return make


# ---- elementwise ------------------------------------------------------------------------------

# name: (call, pool keywords)
UNARY: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "log1p": (lambda lib, a: lib.log1p(a), {"lo": 0.05, "hi": 0.9}),  # x > -1
    "expm1": (lambda lib, a: a.expm1(), {}),
    "square": (lambda lib, a: lib.square(a), {}),
    "reciprocal": (lambda lib, a: lib.reciprocal(a), {}),
    "rsqrt": (lambda lib, a: a.rsqrt(), {"positive": True}),
    "sign": (lambda lib, a: lib.sign(a), {}),
    "floor": (lambda lib, a: lib.floor(a), {"hi": 3.5}),
    "tan": (lambda lib, a: lib.tan(a), {"hi": 1.2}),
    "sinh": (lambda lib, a: lib.sinh(a), {}),
    "cosh": (lambda lib, a: a.cosh(), {}),
    "asin": (lambda lib, a: lib.asin(a), {"lo": 0.05, "hi": 0.9}),
    "acos": (lambda lib, a: lib.acos(a), {"lo": 0.05, "hi": 0.9}),
    "atan": (lambda lib, a: lib.atan(a), {"hi": 3.0}),
    "erf": (lambda lib, a: lib.erf(a), {"lo": 0.05, "hi": 2.5}),
}


def _elementwise_rows() -> list[SweepInfo]:
    rows = [_row(name, "sizes", [SweepSample(f"n={n}", _pool((n,), **kw), fn, n=n)
                                 for n in SIZES])
            for name, (fn, kw) in UNARY.items()]
    big = (1025, SIZES[-1])

    def atan2(lib: Any, a: Any, b: Any) -> Any:
        return lib.atan2(a, b)

    rows.append(_row("atan2", "sizes", [
        SweepSample(f"n={n}", _pool((n,), (n,)), atan2, n=n) for n in SIZES] + [
        SweepSample(f"n={n},broadcast (n,) with (1,)", _pool((n,), (1,), positive=True),
                    atan2, tol="size", n=n) for n in big]))
    rows.append(_row("masked_fill", "sizes", [
        SweepSample(f"n={n}", _chain(_bools((n,)), _pool((n,))),
                    lambda lib, m, a: a.masked_fill(m, 0.5), kinds=("bool", "f"), n=n)
        for n in SIZES] + [
        SweepSample(f"n={n},0-d tensor value", _chain(_bools((n,)), _pool((n,), ())),
                    lambda lib, m, a, v: lib.masked_fill(a, m, v), kinds=("bool", "f", "f"),
                    tol="size", n=n) for n in SIZES]))
    return rows


# ---- reductions and running reductions --------------------------------------------------------


def _reductions(name: str, fn: Callable[..., Any], make: Callable[..., Make],
                sizes: Sequence[int] = SIZES, extra: Sequence[SweepSample] = ()) -> SweepInfo:
    """``fn(lib, a, dim)`` over all of a 1-D ``a`` (dim None), the long axis of ``(2, n)``
    (dim 1) and the strided axis of ``(n, 2)`` (dim 0), at each of ``sizes``."""
    samples: list[SweepSample] = []
    for n in sizes:
        samples += [
            SweepSample(f"n={n},all", make((n,)), lambda lib, a: fn(lib, a, None), tol="size",
                        n=n),
            SweepSample(f"n={n},dim=1 of (2, n)", make((2, n)), lambda lib, a: fn(lib, a, 1),
                        tol="size", n=n),
            SweepSample(f"n={n},dim=0 of (n, 2) (strided)", make((n, 2)),
                        lambda lib, a: fn(lib, a, 0), tol="size", n=n),
        ]
    return _row(name, "sizes", samples + list(extra))


def _positive(*shapes: tuple[int, ...]) -> Make:
    """Distinct values in [0.2, 1.8]: a mean without cancellation, deviations of order 1."""
    return _pool(*shapes, positive=True)


def _signed(*shapes: tuple[int, ...]) -> Make:
    return _pool(*shapes)


def _statistics_rows() -> list[SweepInfo]:
    rows = [
        _reductions("var", lambda lib, a, d: a.var() if d is None else lib.var(a, d),
                    _positive),
        _reductions("std", lambda lib, a, d: lib.std(a) if d is None
                    else a.std(d, correction=0), _positive),
        _reductions("var_mean", lambda lib, a, d: (lambda v, m: v * m)(
            *(lib.var_mean(a) if d is None else lib.var_mean(a, d))), _positive),
        _reductions("std_mean", lambda lib, a, d: (lambda s, m: s + m * m)(
            *(lib.std_mean(a) if d is None else lib.std_mean(a, d, keepdim=True))),
            _positive),
        _reductions("prod", lambda lib, a, d: a.prod() if d is None else lib.prod(a, d),
                    _near_one),
        _reductions("max", lambda lib, a, d: a.max() if d is None else lib.max(a, d).values,
                    _signed),
        _reductions("min", lambda lib, a, d: lib.min(a) if d is None else a.min(d)[0],
                    _signed),
        _reductions("amin", lambda lib, a, d: lib.amin(a) if d is None else lib.amin(a, d),
                    _signed),
        _reductions("median", lambda lib, a, d: a.median() if d is None
                    else lib.median(a, d).values, _signed),
        _reductions("nanmedian", lambda lib, a, d: lib.nanmedian(a) if d is None
                    else a.nanmedian(d)[0], _signed),
        _reductions("cumsum", lambda lib, a, d: lib.cumsum(a, 0 if d is None else d),
                    _ones_plus),
        _reductions("cumprod", lambda lib, a, d: a.cumprod(0 if d is None else d),
                    _near_one),
    ]
    rows.append(_row("trace", "sizes", [
        s for n in SIZES for s in (
            SweepSample(f"n={n},(n, 3)", _signed((n, 3)), lambda lib, a: a.trace(), n=n),
            SweepSample(f"n={n},(3, n)", _signed((3, n)), lambda lib, a: lib.trace(a), n=n))]))

    def lcse(lib: Any, a: Any, d: Any) -> Any:
        return lib.logcumsumexp(a, 0 if d is None else d)

    # one kernel step per place along the axis (three walks with the backward): at the
    # largest size the long axis once, in float32, and the short axis of (n, 2)
    *small, largest = SIZES
    short_axis = [SweepSample(f"n={n},dim=1 of (n, 2)", _signed((n, 2)),
                              lambda lib, a: a.logcumsumexp(1), tol="size", n=n) for n in SIZES]
    rows.append(_reductions("logcumsumexp", lcse, _signed, small, [
        SweepSample(f"n={largest},all", _signed((largest,)),
                    lambda lib, a: lcse(lib, a, None), tol="size", n=largest,
                    dtypes=("float32",))] + short_axis))
    return rows


# ---- views ------------------------------------------------------------------------------------


def _third(n: int) -> int:
    """A split size that cuts ``n`` into three or four pieces (1 for the smallest sizes)."""
    return max(1, n // 3)


def _views_rows() -> list[SweepInfo]:
    def sample(label: str, shape: tuple[int, ...], call: Callable[..., Any],
               n: int) -> SweepSample:
        return SweepSample(f"n={n},{label}", _signed(shape), call, n=n)

    def each(*specs: tuple[str, Callable[[int], tuple[int, ...]],
                           Callable[[int], Callable[..., Any]]]) -> list[SweepSample]:
        return [sample(label, shape(n), call(n), n) for n in SIZES
                for label, shape, call in specs]

    one = lambda n: (n,)  # noqa: E731
    wide = lambda n: (2, n)  # noqa: E731
    tall = lambda n: (n, 2)  # noqa: E731
    rows = [
        _row("narrow", "sizes", each(
            ("(n,) middle half", one, lambda n: lambda lib, a: a.narrow(0, n // 4, n // 2)),
            ("dim=1 of (2, n)", wide,
             lambda n: lambda lib, a: lib.narrow(a, 1, n // 3, n - n // 3)))),
        _row("select", "sizes", each(
            ("dim=0 of (2, n)", wide, lambda n: lambda lib, a: a.select(0, 1)),
            ("dim=1 of (n, 2) (strided)", tall, lambda n: lambda lib, a: lib.select(a, 1, 0)))),
        _row("unbind", "sizes", each(
            ("dim=0 of (2, n)", wide, lambda n: lambda lib, a: _stacked(lib, a.unbind(0))),
            ("dim=1 of (n, 2) (strided)", tall,
             lambda n: lambda lib, a: _stacked(lib, lib.unbind(a, 1), 1)))),
        _row("split", "sizes", each(
            ("(n,) in thirds", one, lambda n: lambda lib, a: _weighted(lib, a.split(_third(n)))),
            ("dim=1 of (2, n)", wide,
             lambda n: lambda lib, a: _weighted(lib, lib.split(a, _third(n), 1), 1)),
            ("(n,) sizes list", one,
             lambda n: lambda lib, a: _weighted(lib, a.split([n // 2, n - n // 2]))))),
        _row("split_with_sizes", "sizes", each(
            ("(n,)", one, lambda n: lambda lib, a: _weighted(
                lib, a.split_with_sizes([n // 3, 0, n - n // 3]))),
            ("dim=0 of (n, 2)", tall, lambda n: lambda lib, a: _weighted(
                lib, lib.split_with_sizes(a, [n - n // 2, n // 2], 0))))),
        _row("unsafe_split", "sizes", each(
            ("(n,) in thirds", one,
             lambda n: lambda lib, a: _weighted(lib, a.unsafe_split(_third(n)))),
            ("dim=1 of (2, n)", wide,
             lambda n: lambda lib, a: _weighted(lib, lib.unsafe_split(a, _third(n), 1), 1)))),
        _row("unsafe_split_with_sizes", "sizes", each(
            ("(n,)", one, lambda n: lambda lib, a: _weighted(
                lib, a.unsafe_split_with_sizes([n - n // 2, n // 2]))))),
        _row("chunk", "sizes", each(
            ("(n,) in 3", one, lambda n: lambda lib, a: _weighted(lib, a.chunk(3))),
            ("dim=1 of (2, n) in 4", wide,
             lambda n: lambda lib, a: _weighted(lib, lib.chunk(a, 4, 1), 1)))),
        _row("unsafe_chunk", "sizes", each(
            ("(n,) in 3", one, lambda n: lambda lib, a: _weighted(lib, a.unsafe_chunk(3))))),
        _row("tensor_split", "sizes", each(
            ("(n,) in 3 sections", one,
             lambda n: lambda lib, a: _weighted(lib, a.tensor_split(3))),
            ("dim=1 of (2, n) at indices", wide, lambda n: lambda lib, a: _weighted(
                lib, lib.tensor_split(a, [n // 3, 2 * n // 3], 1), 1)))),
        _row("diagonal", "sizes", each(
            ("(n, 3),offset=-1", lambda n: (n, 3), lambda n: lambda lib, a: a.diagonal(-1)),
            ("dims 0, 2 of (2, n, 2)", lambda n: (2, n, 2),
             lambda n: lambda lib, a: lib.diagonal(a, 0, 0, 2)))),
        _row("as_strided", "sizes", [
            # every element read (twice): the backward scatters 2n values, which a backend
            # without a scatter-add does as a one-hot product, O(n^2): up to 1025 only
            s for n in SIZES if n <= 1025 for s in (
                sample("(n,) overlapping windows of 2", (n,), (lambda k: lambda lib, a: (
                    a.as_strided((max(k - 1, 0), 2), (1, 1))))(n), n),
                sample("(2, n) transposed, offset 1", (2, n), (lambda k: lambda lib, a: (
                    lib.as_strided(a, (max(k - 1, 0), 2), (1, k), 1)))(n), n))] + [
            # a few windows spread over the whole input
            s for n in SIZES if n >= 2 for s in (
                sample("(n,) 4 windows of 2 spread over it", (n,), (lambda k: lambda lib, a: (
                    a.as_strided((4, 2), ((k - 2) // 3, 1))))(n), n),
                sample("(2, n) 3 transposed windows, offset 1", (2, n),
                       (lambda k: lambda lib, a: (
                           lib.as_strided(a, (3, 2), ((k - 2) // 2, k), 1)))(n), n))]),
    ]
    return rows


# ---- matrix products and tiling ---------------------------------------------------------------


def _matrix_rows() -> list[SweepInfo]:
    def pos(*shapes: tuple[int, ...]) -> Make:
        return _pool(*shapes, positive=True)

    def products(name: str, specs: Sequence[tuple[str, Callable[[int], tuple[tuple[int, ...],
                                                                          ...]]]],
                 call: Callable[..., Any]) -> SweepInfo:
        return _row(name, "sizes", [
            SweepSample(f"n={n},{label}", pos(*shapes(n)), call, tol="size", n=max(n, 3))
            for n in SIZES for label, shapes in specs])

    return [
        products("mm", [("(3, n)@(n, 2)", lambda n: ((3, n), (n, 2))),
                        ("(n, 3)@(3, 2)", lambda n: ((n, 3), (3, 2)))],
                 lambda lib, a, b: lib.mm(a, b)),
        products("mv", [("(3, n)@(n,)", lambda n: ((3, n), (n,))),
                        ("(n, 3)@(3,)", lambda n: ((n, 3), (3,)))],
                 lambda lib, a, b: a.mv(b)),
        products("dot", [("(n,).(n,)", lambda n: ((n,), (n,)))],
                 lambda lib, a, b: lib.dot(a, b)),
        products("outer", [("(n,) x (3,)", lambda n: ((n,), (3,)))],
                 lambda lib, a, b: lib.outer(a, b)),
        _row("repeat", "sizes", [
            s for n in SIZES for s in (
                SweepSample(f"n={n},(n,).repeat(2)", _signed((n,)),
                            lambda lib, a: a.repeat(2), n=n),
                SweepSample(f"n={n},(2, n).repeat(3, 1, 2)", _signed((2, n)),
                            lambda lib, a: a.repeat(3, 1, 2), n=n))]),
        _row("tile", "sizes", [
            s for n in SIZES for s in (
                SweepSample(f"n={n},(n,) tiled (3,)", _signed((n,)),
                            lambda lib, a: lib.tile(a, (3,)), n=n),
                SweepSample(f"n={n},(2, n) tiled (2, 1)", _signed((2, n)),
                            lambda lib, a: a.tile((2, 1)), n=n))]),
    ]


def sizes_rows() -> list[SweepInfo]:
    """The ``<op>/sizes`` rows of the ops of ``entries_views``, ``entries_statistics`` and
    ``entries_pointwise``."""
    KNOWN_CORE_BUGS.update(CORE_BUGS)
    return _elementwise_rows() + _statistics_rows() + _views_rows() + _matrix_rows()
