"""Writing new values into a tensor: in place, or by replacing arrays where arrays are
immutable.

Why: retrograd promises PyTorch's in-place semantics -- ``p.add_(g)``, ``x[0] = 1``, a
``.grad`` accumulated by a second backward, a write through a view seen by its base and by
every other view of it. On NumPy, CuPy or torch storage that is a write into shared memory
(the backend's ``assign_`` kernel). JAX arrays cannot be written at all, and Dask's views
are separate graphs: there ``dst += src`` rebinds a local name and silently changes nothing.
A backend says which kind it is once (``Capabilities.inplace``, read into
``Backend.functional``), and every write of a tensor's values goes through ``write`` here,
which takes the in-place or the functional path accordingly -- never a silent no-op.

The functional path emulates shared memory. On such a backend every view or alias (view
ops, ``detach()``, ``.data``) records, besides its root base, the steps that derive it from
the root (``_Extra.data_chain``, the kinds of ``ops.view_inplace``), and the root keeps its
live views weakly (``_Extra.data_views``). Writing a tensor then

1. makes the root's new array: the written values themselves when the tensor is the root
   (or a detached alias of it); otherwise the root's array with the view's elements
   replaced, at the view's flat positions (the chain replayed on the root's positions;
   the ``put_flat`` kernel);
2. gives the root that array, and every live view and alias its chain replayed on it.

So ``v = x[1]; v.mul_(2)`` changes ``x`` and every other view of ``x`` as in PyTorch, at the
cost of one array per write and one replay per live view. A view whose derivation is not
known (an output of a custom Function that aliases its input) cannot be written: refused
with ``NotImplementedError`` rather than left stale.
"""

from __future__ import annotations

import weakref
from typing import Any

from .tensor import Tensor

__all__ = ["write", "add_into", "adopt_view", "is_functional", "reshape_is_view"]

_ref = weakref.ref


def is_functional(t: Tensor) -> bool:
    """Whether ``t``'s backend writes by replacing arrays (immutable arrays)."""
    return bool(t.backend.functional)


def write(t: Tensor, values: Any) -> None:
    """Give ``t`` the values ``values`` (an array, or a number, broadcast to ``t``'s shape and
    cast to its dtype): into its memory, or -- on a functional backend -- as new arrays for
    ``t``, its base and every view of the base. The version counter is the caller's."""
    be = t.backend
    if not be.functional:
        be.ops.assign_(t._data, values)
        return
    ops = be.ops
    shape, dtype = tuple(t._data.shape), t._data.dtype
    if isinstance(values, (bool, int, float)):
        new = ops.full(shape, values, dtype)
    else:
        new = values if values.dtype == dtype else ops.astype(values, dtype)
        if tuple(new.shape) != shape:
            new = ops.expand(new, shape)
    _replace(t, new)


def add_into(t: Tensor, g: Any) -> None:
    """``t += g`` for a ``.grad`` (``g`` an array broadcast to ``t``'s shape): the backend's
    ``accumulate_`` kernel, or a new array on a functional backend."""
    be = t.backend
    if not be.functional:
        be.ops.accumulate_(t._data, g)
        return
    write(t, be.ops.add(t._data, g))


def adopt_view(view: Tensor, parent: Tensor, step: tuple[str, Any] | None) -> None:
    """On a functional backend, remember how ``view`` (a view or alias just made of
    ``parent``) derives from its root base: ``parent``'s steps, then ``step`` (None: an
    alias with the same elements, as ``detach()``). A parent whose derivation is unknown
    passes that on."""
    root = view._base
    if root is None:
        return
    if parent._base is None:
        chain: tuple[tuple[str, Any], ...] | None = ()
    else:
        chain = parent._extra.data_chain if parent._extra is not None else None
    if chain is not None and step is not None:
        chain = chain + (step,)
    view._x().data_chain = chain
    ex = root._x()
    if ex.data_views is None:
        ex.data_views = {}
    views = ex.data_views
    views[id(view)] = _ref(view)
    if len(views) > 64 and (len(views) & (len(views) - 1)) == 0:  # amortised pruning
        for k, r in list(views.items()):
            if r() is None:
                del views[k]


def _replace(t: Tensor, new: Any) -> None:
    """The functional write: ``new`` (an array of ``t``'s shape and dtype) becomes ``t``'s
    values; the root base and every live view of it follow (see the module docstring)."""
    from .ops.view_inplace import replay

    root = t._base
    if root is None:
        t._data = new
        _refresh(t, new)
        return
    chain = t._extra.data_chain if t._extra is not None else None
    if chain is None:
        raise NotImplementedError(
            f"backend {t.backend.name!r} has immutable arrays (capabilities.inplace=False), "
            f"and this tensor (shape {tuple(t.shape)}) is a view of a tensor of shape "
            f"{tuple(root.shape)} whose derivation from it retrograd does not know (an "
            "output of a custom Function that returns a view of its input?): writing it in "
            "place would leave its base unchanged; clone() it first")
    ops = t.backend.ops
    if not chain:  # a detached alias: the root's own elements
        data = new
    else:
        n = 1
        for d in root._data.shape:
            n *= d
        positions = ops.reshape(ops.arange(0, n, 1, t.backend.xp_dtype("int64")),
                                tuple(root._data.shape))
        data = ops.put_flat(root._data, replay(ops, positions, chain), new)
    root._data = data
    _refresh(root, data)
    t._data = replay(ops, data, chain) if chain else data


def _refresh(root: Tensor, data: Any) -> None:
    """Every live view and alias of ``root`` taken again from its new array ``data``."""
    from .ops.view_inplace import replay

    ex = root._extra
    views = None if ex is None else ex.data_views
    if not views:
        return
    ops = root.backend.ops
    for key, r in list(views.items()):
        v = r()
        if v is None:
            views.pop(key, None)
            continue
        chain = v._extra.data_chain if v._extra is not None else None
        if chain is None:
            continue  # cannot follow: such a view refuses its own writes (``_replace``)
        v._data = replay(ops, data, chain) if chain else data


def reshape_is_view(x: Tensor, shape: tuple[int, ...]) -> bool:
    """Whether PyTorch's ``reshape`` of ``x`` to ``shape`` would be a view, on a backend
    with immutable arrays, which keep no strides: ``x``'s strides are those of its recorded
    steps from its root base (contiguous at the root), and the test is NumPy's no-copy
    reshape -- the rule PyTorch's ``computeStride`` shares. Without it ``x.t().reshape(-1)``
    would be a view there, and a write to it would reach ``x``, unlike PyTorch's copy."""
    from .backends.host import xp as numpy

    if x._base is None:
        return True  # contiguous
    chain = x._extra.data_chain if x._extra is not None else None
    if chain is None:
        return False
    root = x._base
    shape0 = tuple(root._data.shape)
    strides, step = [], 1
    for n in reversed(shape0):
        strides.append(step)
        step *= max(n, 1)
    # a stand-in with the root's layout over one byte: only views of it are taken, never read
    v = numpy.lib.stride_tricks.as_strided(numpy.zeros(1, dtype=numpy.int8), shape=shape0,
                                           strides=tuple(reversed(strides)))
    try:
        for kind, arg in chain:
            if kind == "getitem":
                v = v[arg if Ellipsis in arg else arg + (Ellipsis,)]
            elif kind == "reshape":
                v = numpy.reshape(v, arg, copy=False)
            elif kind == "permute":
                v = numpy.transpose(v, arg)
            elif kind == "expand":
                v = numpy.broadcast_to(v, arg)
            elif kind == "diagonal":
                v = numpy.diagonal(v, *arg)
            else:
                return False
        numpy.reshape(v, shape, copy=False)
    except ValueError:
        return False
    return True
