"""Reference kernels of the sorting and searching ops (see ``ops/sorting.py``), in Array-API
calls on ``xp``; ``reference_kernels`` merges them into every backend's table.

Orders are stable and put NaN last ascending, first descending (PyTorch's order): a
descending order is the ascending stable order of the reversed slice, reversed. The scatter a
gradient needs is a gather by the inverse permutation, so no scatter kernel is required."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The sorting kernels on ``xp``."""

    def _argsort_asc(x: Any, axis: int) -> Any:
        try:
            return xp.argsort(x, axis=axis, stable=True)
        except TypeError:  # a library without the Array API's ``stable`` (its sort is)
            return xp.argsort(x, axis=axis)

    def _flip(x: Any, axis: int) -> Any:
        return xp.flip(x, axis=axis)

    def _cumsum(x: Any) -> Any:
        fn = getattr(xp, "cumulative_sum", None)
        return fn(x, axis=0) if fn is not None else xp.cumsum(x, axis=0)

    def take_along(x: Any, idx: Any, axis: int) -> Any:
        """``x`` gathered at ``idx`` along ``axis`` (``idx`` has ``x``'s shape elsewhere)."""
        fn = getattr(xp, "take_along_axis", None)
        if fn is not None:
            return fn(x, idx, axis=axis)
        nd = x.ndim  # compose: flat positions into the flattened array, then ``take``
        flat = xp.zeros(idx.shape, dtype=xp.int64)
        stride = 1
        for d in range(nd - 1, -1, -1):
            if d == axis:
                coord = xp.astype(idx, xp.int64)
            else:
                shp = [1] * nd
                shp[d] = idx.shape[d]
                coord = xp.reshape(xp.arange(idx.shape[d], dtype=xp.int64), tuple(shp))
            flat = flat + coord * stride
            stride *= x.shape[d]
        out = xp.take(xp.reshape(x, (-1,)), xp.reshape(flat, (-1,)), axis=0)
        return xp.reshape(out, idx.shape)

    def sort_order(x: Any, axis: int, descending: bool) -> Any:
        """The int64 stable sorting permutation of ``x`` along ``axis``; NaN as largest."""
        if not descending:
            return xp.astype(_argsort_asc(x, axis), xp.int64)
        n = x.shape[axis]
        o = _flip(xp.astype(_argsort_asc(_flip(x, axis), axis), xp.int64), axis)
        return (n - 1) - o

    def inverse_permutation(order: Any, axis: int) -> Any:
        """The permutation ``inv`` with ``take_along(order, inv) == arange`` along ``axis``."""
        return xp.astype(_argsort_asc(order, axis), xp.int64)

    def sort_scatter(g: Any, inv: Any, idx: Any, axis: int, n: int) -> Any:
        """zeros of ``inv``'s shape with ``g`` (the first ``k`` sorted places) put back at the
        places ``idx`` they were taken from: ``g`` padded to ``n`` along ``axis`` with zeros,
        gathered by the inverse permutation ``inv``."""
        k = g.shape[axis]
        if k < n:
            shp = list(g.shape)
            shp[axis] = n - k
            g = xp.concat((g, xp.zeros(tuple(shp), dtype=g.dtype)), axis=axis)
        return take_along(g, inv, axis)

    def sort_gather(y: Any, idx: Any, inv: Any, axis: int, n: int) -> Any:
        """``y`` gathered at ``idx`` along ``axis`` (the adjoint of ``sort_scatter``)."""
        return take_along(y, idx, axis)

    def searchsorted(seq: Any, values: Any, right: bool, sorter: Any = None) -> Any:
        """Insertion places of ``values`` into the sorted last axis of ``seq`` (1-d: every
        value; N-d: row by row, ``values`` sharing the leading dims), as int64."""
        side = "right" if right else "left"
        if seq.ndim <= 1:
            return xp.astype(xp.searchsorted(seq, values, side=side, sorter=sorter), xp.int64)
        lead = seq.shape[:-1]
        rows = 1
        for s in lead:
            rows *= s
        s2 = xp.reshape(seq, (rows, seq.shape[-1]))
        v2 = xp.reshape(values, (rows, values.shape[-1]))
        o2 = None if sorter is None else xp.reshape(sorter, (rows, seq.shape[-1]))
        out = [xp.astype(xp.searchsorted(s2[i, ...], v2[i, ...], side=side,
                                         sorter=None if o2 is None else o2[i, ...]), xp.int64)
               for i in range(rows)]
        if not out:
            return xp.zeros(values.shape, dtype=xp.int64)
        return xp.reshape(xp.stack(out, axis=0), values.shape)

    def _distinct_starts(rows: Any) -> Any:
        """Whether each row (a 2-d ``rows``) differs from the one before (the first: True).
        NaN differs from everything, itself included."""
        n = rows.shape[0]
        first = xp.ones((min(n, 1),), dtype=xp.bool)
        if n <= 1:
            return first
        ne = rows[1:, ...] != rows[:-1, ...]
        return xp.concat((first, xp.any(ne, axis=1)), axis=0)

    def _lex_order(rows: Any) -> Any:
        """The stable lexicographic order of the rows of the 2-d ``rows``."""
        n, m = rows.shape
        order = xp.arange(n, dtype=xp.int64)
        for c in range(m - 1, -1, -1):
            key = xp.take(rows[:, c], order, axis=0)
            order = xp.take(order, xp.astype(_argsort_asc(key, 0), xp.int64), axis=0)
        return order

    def unique(x: Any, axis: Any, sort: bool) -> tuple[Any, Any, Any]:
        """``(values, inverse, counts)``: the distinct elements of ``x`` (``axis`` None) or
        its distinct slices along ``axis``, sorted (``sort``) or merged where consecutive
        only; ``inverse`` maps each element (slice) to its place in ``values``."""
        if axis is None:
            shape = x.shape
            rows = xp.reshape(x, (-1, 1))
        else:
            moved = xp.moveaxis(x, axis, 0)
            rest = moved.shape[1:]
            m = 1
            for s in rest:
                m *= s
            rows = xp.reshape(moved, (moved.shape[0], m))
        n = rows.shape[0]
        if sort and n:
            order = _lex_order(rows)
            srows = xp.take(rows, order, axis=0)
        else:
            order = xp.arange(n, dtype=xp.int64)
            srows = rows
        flags = _distinct_starts(srows)
        group = _cumsum(xp.astype(flags, xp.int64)) - 1
        inverse = xp.take(group, inverse_permutation(order, 0), axis=0) if n else group
        starts = xp.astype(xp.nonzero(flags)[0], xp.int64)
        ends = xp.concat((starts[1:], xp.asarray([n], dtype=xp.int64)), axis=0)
        counts = ends - starts
        vals = xp.take(srows, starts, axis=0)
        if axis is None:
            return xp.reshape(vals, (-1,)), xp.reshape(inverse, shape), counts
        vals = xp.reshape(vals, (vals.shape[0],) + tuple(rest))
        return xp.moveaxis(vals, 0, axis), inverse, counts

    return {"take_along": take_along, "sort_order": sort_order,
            "inverse_permutation": inverse_permutation, "sort_scatter": sort_scatter,
            "sort_gather": sort_gather, "searchsorted_": searchsorted, "unique_": unique}
