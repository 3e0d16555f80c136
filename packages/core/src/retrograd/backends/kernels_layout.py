"""Reference kernels of the layout ops (see ``ops/layout.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

The padding modes that repeat elements (``reflect``, ``replicate``) concatenate mirrored or
repeated edge slices along each padded axis; their adjoint adds the padded slices of the
gradient back (flipped, or summed) onto the edges, so no scatter-add kernel is needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .put import put

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The layout kernels on ``xp``."""

    def contiguous(x: Any) -> Any:
        """A row-major copy of ``x`` (``Tensor.contiguous`` of a strided view)."""
        to_rows = getattr(xp, "ascontiguousarray", None)
        if to_rows is not None:
            return to_rows(x)
        return xp.reshape(xp.asarray(x, copy=True), x.shape)

    def flip(x: Any, dims: tuple[int, ...]) -> Any:
        """``x`` reversed along every axis of ``dims`` (a new array)."""
        if not dims:
            return xp.asarray(x, copy=True)
        return xp.asarray(xp.flip(x, axis=tuple(dims)), copy=True)

    def roll(x: Any, shifts: tuple[int, ...], dims: tuple[int, ...] | None) -> Any:
        """``x`` rolled by ``shifts`` along ``dims`` (None: the flattened array, reshaped)."""
        if dims is None:
            flat = xp.reshape(x, (-1,))
            return xp.reshape(xp.roll(flat, shift=int(shifts[0])), x.shape)
        if x.ndim == 0:
            return xp.asarray(x, copy=True)
        return xp.roll(x, shift=tuple(shifts), axis=tuple(dims))

    def tril(x: Any, k: int) -> Any:
        """The lower triangle (at and below diagonal ``k``) of the last two axes of ``x``."""
        return xp.tril(x, k=k)

    def triu(x: Any, k: int) -> Any:
        """The upper triangle (at and above diagonal ``k``) of the last two axes of ``x``."""
        return xp.triu(x, k=k)

    def pad_constant(x: Any, pad: tuple[int, ...], value: Any) -> Any:
        """``x`` padded by ``pad`` (pairs (before, after) from the last axis backwards;
        negative entries crop) with ``value``."""
        shape = list(x.shape)
        src: list[Any] = [slice(None)] * x.ndim
        dst: list[Any] = [slice(None)] * x.ndim
        for i in range(len(pad) // 2):
            ax = x.ndim - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            n = shape[ax]
            s0, s1 = max(-lo, 0), max(n - max(-hi, 0), max(-lo, 0))
            d0 = max(lo, 0)
            shape[ax] = n + lo + hi
            src[ax] = slice(s0, s1)
            dst[ax] = slice(d0, d0 + (s1 - s0))
        out = xp.full(tuple(shape), value, dtype=x.dtype)
        if all(s > 0 for s in shape) and all(
                (sl.stop - sl.start) > 0 for sl in src if sl.start is not None):
            out = put(out, tuple(dst), x[tuple(src)])
        return out

    def _sl(x: Any, axis: int, a: int, b: int) -> Any:
        key = [slice(None)] * x.ndim
        key[axis] = slice(a, b)
        return x[tuple(key)]

    def _zeros(like: Any, axis: int, n: int) -> Any:
        shp = list(like.shape)
        shp[axis] = n
        return xp.zeros(tuple(shp), dtype=like.dtype)

    def _rep(x: Any, axis: int, k: int) -> Any:
        shp = list(x.shape)
        shp[axis] = k
        return xp.broadcast_to(x, tuple(shp))

    def pad_take(x: Any, axis: int, mode: str, lo: int, hi: int) -> Any:
        """``x`` padded along ``axis`` by ``lo`` and ``hi`` elements mirrored about the edges
        (``reflect``), repeating them (``replicate``) or wrapped around (``circular``, at most
        ``n`` on each side)."""
        n = x.shape[axis]
        if mode == "circular":  # wrapped around: the last ``lo`` and the first ``hi`` elements
            return xp.concat((_sl(x, axis, n - lo, n), x, _sl(x, axis, 0, hi)), axis=axis)
        if mode == "reflect":
            left = xp.flip(_sl(x, axis, 1, lo + 1), axis=axis) if lo else _sl(x, axis, 0, 0)
            right = (xp.flip(_sl(x, axis, n - 1 - hi, n - 1), axis=axis) if hi
                     else _sl(x, axis, 0, 0))
        else:
            left = _rep(_sl(x, axis, 0, 1), axis, lo)
            right = _rep(_sl(x, axis, n - 1, n), axis, hi)
        return xp.concat((left, x, right), axis=axis)

    def pad_take_backward(g: Any, axis: int, mode: str, lo: int, hi: int, n: int) -> Any:
        """The adjoint of ``pad_take``: the padded parts of ``g`` summed back onto the ``n``
        elements they repeat."""
        out = _sl(g, axis, lo, lo + n)
        left = _sl(g, axis, 0, lo)
        right = _sl(g, axis, lo + n, lo + n + hi)
        if mode == "circular":
            if lo:
                out = out + xp.concat((_zeros(g, axis, n - lo), left), axis=axis)
            if hi:
                out = out + xp.concat((right, _zeros(g, axis, n - hi)), axis=axis)
            return out
        if mode == "reflect":
            if lo:
                out = out + xp.concat((_zeros(g, axis, 1), xp.flip(left, axis=axis),
                                       _zeros(g, axis, n - 1 - lo)), axis=axis)
            if hi:
                out = out + xp.concat((_zeros(g, axis, n - 1 - hi), xp.flip(right, axis=axis),
                                       _zeros(g, axis, 1)), axis=axis)
            return out
        if lo:
            out = out + xp.concat((xp.sum(left, axis=axis, keepdims=True),
                                   _zeros(g, axis, n - 1)), axis=axis)
        if hi:
            out = out + xp.concat((_zeros(g, axis, n - 1),
                                   xp.sum(right, axis=axis, keepdims=True)), axis=axis)
        return out

    return {"contiguous": contiguous, "flip": flip, "roll": roll, "tril": tril, "triu": triu,
            "pad_constant": pad_constant, "pad_take": pad_take,
            "pad_take_backward": pad_take_backward}
