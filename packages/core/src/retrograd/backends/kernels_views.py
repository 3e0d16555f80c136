"""Reference kernels of the views ops (see ``ops/views.py``), written in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table.

Where the array library can make a view (NumPy's and CuPy's ``diagonal`` and
``lib.stride_tricks.as_strided``) the kernels return one, so that writes through the result
reach its base as in PyTorch; elsewhere they fall back to Array-API calls that copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .put import put

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The views kernels on ``xp``."""

    def diagonal_view(a: Any, offset: int, d1: int, d2: int) -> Any:
        """``diagonal`` as a writable view of ``a``; None where ``xp`` makes none."""
        native = getattr(xp, "diagonal", None)
        if native is None or getattr(a, "strides", None) is None:
            return None
        out = native(a, offset, d1, d2)
        flags = getattr(out, "flags", None)
        if flags is not None and not flags.writeable:
            try:  # NumPy's diagonal is read-only only by convention: a view all the same
                flags.writeable = True
            except ValueError:
                return None
        return out

    def diagonal(a: Any, offset: int, d1: int, d2: int) -> Any:
        """The diagonal ``offset`` of the planes (``d1``, ``d2``) of ``a``, as a new last
        dimension (PyTorch's and NumPy's layout): a writable view where ``xp`` has one, a
        copy otherwise."""
        out = diagonal_view(a, offset, d1, d2)
        if out is not None:
            return out
        nd = a.ndim
        rest = [d for d in range(nd) if d not in (d1, d2)]
        p = xp.permute_dims(a, tuple(rest) + (d1, d2))
        n1, n2 = p.shape[-2], p.shape[-1]
        length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
        i64 = xp.int64
        rows = xp.arange(length, dtype=i64) + (max(-offset, 0))
        cols = xp.arange(length, dtype=i64) + (max(offset, 0))
        lead = tuple(p.shape[:-2])
        flat = xp.reshape(p, lead + (n1 * n2,))
        return xp.take(flat, rows * n2 + cols, axis=len(lead))

    def diagonal_backward(g: Any, shape: tuple[int, ...], offset: int, d1: int,
                          d2: int) -> Any:
        """Zeros of ``shape`` with ``g`` written on the diagonal ``diagonal`` reads (its
        adjoint: no element of the diagonal repeats, so a write, no scatter-add)."""
        out = xp.zeros(tuple(shape), dtype=g.dtype)
        d = diagonal(out, offset, d1, d2)
        if getattr(d, "base", None) is not None and getattr(d, "flags", None) is not None \
                and d.flags.writeable:
            d[...] = g  # a view of ``out``: written through
            return out
        length = g.shape[-1] if g.ndim else 0
        for i in range(length):
            key: list[Any] = [slice(None)] * len(shape)
            key[d1] = i + max(-offset, 0)
            key[d2] = i + max(offset, 0)
            out = put(out, tuple(key), g[..., i])
        return out

    def as_strided_view(storage: Any, shape: tuple[int, ...], strides: tuple[int, ...],
                        offset: int) -> Any:
        """``as_strided`` as a view of ``storage``; None where ``xp`` makes none."""
        lib = getattr(getattr(xp, "lib", None), "stride_tricks", None)
        item = getattr(getattr(storage, "dtype", None), "itemsize", None)
        if lib is None or item is None or getattr(storage, "strides", None) is None:
            return None
        start = storage[offset:]
        return lib.as_strided(start, tuple(shape), tuple(s * item for s in strides))

    def as_strided(storage: Any, shape: tuple[int, ...], strides: tuple[int, ...],
                   offset: int) -> Any:
        """The elements of the 1-d contiguous ``storage`` at ``offset + sum(i_k * strides[k])``
        for each index ``i`` of ``shape``: a view where ``xp`` can make one (strides in
        elements, as PyTorch's), a copy otherwise."""
        out = as_strided_view(storage, shape, strides, offset)
        if out is not None:
            return out
        pos = flat_positions(shape, strides, offset)
        return xp.reshape(xp.take(storage, xp.reshape(pos, (-1,))), tuple(shape))

    def flat_positions(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Any:
        """``offset + sum(i_k * strides[k])`` for each index ``i`` of ``shape`` (int64)."""
        i64 = xp.int64
        out = xp.full(tuple(shape), offset, dtype=i64)
        for d, (n, s) in enumerate(zip(shape, strides)):
            step = [1] * len(shape)
            step[d] = n
            out = out + xp.reshape(xp.arange(n, dtype=i64) * s, tuple(step))
        return out

    return {"diagonal": diagonal, "diagonal_view": diagonal_view,
            "diagonal_backward": diagonal_backward, "as_strided": as_strided,
            "as_strided_view": as_strided_view, "flat_positions": flat_positions}
