"""Reference kernels of the selection ops (see ``ops/selection.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

The Array API has no running maximum, so ``cummax``/``cummin`` take one: a scan that doubles
its reach each step (``log2(n)`` elementwise steps along the axis). ``mode`` sorts each slice
stably and measures the runs of equal values with the same scan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .kernels_sorting import kernels as _sorting_kernels

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The selection kernels on ``xp``."""
    sorting = _sorting_kernels(xp)
    sort_order = sorting["sort_order"]
    take_along = sorting["take_along"]

    def _part(x: Any, axis: int, start: int, stop: int) -> Any:
        return x[(slice(None),) * axis + (slice(start, stop),) + (Ellipsis,)]

    def _scan(x: Any, axis: int, step: Callable[[Any, Any], Any]) -> Any:
        """The running ``step`` (an associative elementwise op: maximum, minimum) of ``x``
        along ``axis``: each place combined with every place before it."""
        n = x.shape[axis]
        reach = 1
        while reach < n:
            tail = step(_part(x, axis, reach, n), _part(x, axis, 0, n - reach))
            x = xp.concat((_part(x, axis, 0, reach), tail), axis=axis)
            reach *= 2
        return x

    def _positions(shape: tuple[int, ...], axis: int) -> Any:
        """Each place's int64 position along ``axis``, over ``shape``."""
        n = shape[axis]
        pos = xp.reshape(xp.arange(n, dtype=xp.int64),
                         (1,) * axis + (n,) + (1,) * (len(shape) - axis - 1))
        return xp.broadcast_to(pos, shape)

    def _running(x: Any, axis: int, step: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
        """``(values, indices)`` of the running extreme along ``axis``: a NaN stays once
        reached; the index is the last place that set the value (``>=``/``<=``: the last of
        equal values; each NaN sets it anew), as in PyTorch."""
        was_bool = xp.isdtype(x.dtype, "bool")
        work = xp.astype(x, xp.int8) if was_bool else x
        values = _scan(work, axis, step)  # maximum/minimum keep NaN
        hit = work == values
        if xp.isdtype(work.dtype, "real floating"):
            hit = xp.logical_or(hit, xp.isnan(work))
        pos = _positions(tuple(x.shape), axis)
        indices = _scan(xp.where(hit, pos, xp.zeros_like(pos)), axis, xp.maximum)
        if was_bool:
            values = xp.astype(values, xp.bool)
        return values, indices

    def cummax(x: Any, axis: int) -> tuple[Any, Any]:
        """The running maximum along ``axis`` of a non-empty array of at least one
        dimension, and the int64 place each value was taken from."""
        return _running(x, axis, xp.maximum)

    def cummin(x: Any, axis: int) -> tuple[Any, Any]:
        """The running minimum along ``axis`` and the int64 place each value came from."""
        return _running(x, axis, xp.minimum)

    def mode(x: Any, axis: int) -> tuple[Any, Any]:
        """The most frequent value along ``axis`` (the smallest among equally frequent ones;
        NaNs each count once) and the int64 index of its last occurrence, both kept as a
        size-1 ``axis`` (``x`` non-empty along it)."""
        was_bool = xp.isdtype(x.dtype, "bool")
        work = xp.astype(x, xp.int8) if was_bool else x
        order = sort_order(work, axis, False)
        s = take_along(work, order, axis)
        n = x.shape[axis]
        one = xp.ones(tuple(1 if d == axis else k for d, k in enumerate(x.shape)),
                      dtype=xp.bool)
        differs = _part(s, axis, 1, n) != _part(s, axis, 0, n - 1)
        starts = xp.concat((one, differs), axis=axis)
        ends = xp.concat((differs, one), axis=axis)
        pos = _positions(tuple(x.shape), axis)
        start = _scan(xp.where(starts, pos, xp.zeros_like(pos)), axis, xp.maximum)
        count = xp.where(ends, pos - start + 1, xp.zeros_like(pos))
        at = xp.astype(xp.argmax(count, axis=axis, keepdims=True), xp.int64)  # the first
        values = take_along(s, at, axis)
        if was_bool:
            values = xp.astype(values, xp.bool)
        return values, take_along(order, at, axis)

    return {"cummax": cummax, "cummin": cummin, "mode": mode}
