"""Filling part of a new array, on libraries whose arrays can be written and on those whose
arrays cannot.

Several reference kernels build their result by writing parts of a fresh array
(``out[key] = value``, ``out[key] += value``): a padded copy, the adjoint of a diagonal, a
scatter. That is the standard's ``__setitem__``, but an immutable library (JAX) refuses it
with a TypeError and offers a functional update instead (``out.at[key].set(value)``,
https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html). ``put`` and
``put_add`` return the filled array either way, so each kernel is written once. The
library's kind is learned from its first refusal and remembered by array type.
"""

from __future__ import annotations

from typing import Any

__all__ = ["put", "put_add", "put_via", "add_at"]

_FUNCTIONAL: set[type] = set()


def _empty(out: Any, key: Any, value: Any) -> bool:
    """Whether the write selects nothing and writes nothing: a no-op, which Dask refuses to
    make (``__setitem__`` fails on size 0: dask/dask#11800)."""
    shape = getattr(value, "shape", None)
    return shape is not None and 0 in tuple(shape) and 0 in tuple(out[key].shape)


def _either(out: Any, in_place: Any, functional: Any,
            refusals: tuple[type[BaseException], ...] = (TypeError,)) -> Any:
    """``in_place(out)`` and ``out``; on an array type that refuses it (one of ``refusals``)
    and offers JAX's ``.at``, ``functional(out.at)`` from then on, remembered by type."""
    if type(out) not in _FUNCTIONAL:
        try:
            in_place(out)
            return out
        except refusals:
            if getattr(out, "at", None) is None:
                raise
            _FUNCTIONAL.add(type(out))
    return functional(out.at)


def put(out: Any, key: Any, value: Any) -> Any:
    """``out`` with ``out[key] = value``: written in place and returned, or, on an immutable
    array, a new array from the library's functional update."""
    return put_via(_setitem, out, key, value)


def _setitem(out: Any, key: Any, value: Any) -> None:
    out[key] = value


def put_via(setitem: Any, out: Any, key: Any, value: Any) -> Any:
    """``put`` whose in-place write is a backend's own ``setitem`` kernel (the ``put``
    kernel of the table: a backend that overrides ``setitem`` keeps it in use)."""
    if _empty(out, key, value):
        return out
    return _either(out, lambda o: setitem(o, key, value), lambda at: at[key].set(value))


def put_add(out: Any, key: Any, value: Any) -> Any:
    """``out`` with ``out[key] += value`` (each selected element once: a basic key), in
    place or functionally as ``put``."""
    if _empty(out, key, value):
        return out

    def in_place(o: Any) -> None:
        o[key] += value

    return _either(out, in_place, lambda at: at[key].add(value))


def add_at(out: Any, positions: Any, values: Any, native: Any) -> Any:
    """``out`` with each of ``values`` added at its index in ``positions`` (an integer array
    that may repeat an index: the values add up), through the library's ``add.at``
    (``native``: ``numpy.add.at``), or, on an immutable array, its functional ``.at[].add``."""
    return _either(out, lambda o: native(o, positions, values),
                   lambda at: at[positions].add(values),
                   (TypeError, NotImplementedError))  # JAX: "cannot operate inplace"
