"""Committing a walk's results to ``.grad`` (E8, E13).

Nothing is written while the walk runs: leaf gradients are staged and committed here, under
one lock, only after the whole walk succeeded. The first write stores the gradient (copying
anything that may be shared with the caller or another leaf), later writes add in place (out
of place under create_graph). Post-accumulate hooks run after the commit; if one raises, the
whole commit is rolled back.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .._version import bump
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor

__all__ = ["commit", "commit_leaf_grad"]

_commit_lock = threading.Lock()


def commit(staged: dict[Any, Any], retained: list[tuple[Any, Any]], seeds: list[Any],
           create_graph: bool, tracer: Any, after_commit: Sequence[tuple[Any, Any]] = ()) -> None:
    """Write the staged gradients, then run, leaf by leaf in walk order, the post-accumulate
    hooks and the AccumulateGrad node's post-hooks (``after_commit``), with grad mode as
    during the walk (on only under create_graph), as PyTorch does. If a hook raises, every
    ``.grad`` is rolled back (E13)."""
    shared = {id(s) for s in seeds if s is not None}
    shared.update(id(g) for _t, g in retained)
    hooked = [leaf for leaf in staged
              if leaf._extra is not None and leaf._extra.post_hooks]
    backup = (_backup_grads(list(staged) + [t for t, _ in retained])
              if hooked or after_commit else None)
    with _commit_lock:
        for leaf, g in staged.items():
            if g is None:
                continue
            commit_leaf_grad(leaf, g, create_graph, shared)
            if tracer is not None:
                tracer.event("grad_written", tensor=leaf, value=leaf._grad._data)
        for t, g in retained:
            commit_leaf_grad(t, g, create_graph, None)
            if tracer is not None:
                tracer.event("grad_written", tensor=t, value=t._grad._data)
    if backup is None:
        return
    node_post = {node.variable: (node, buf) for node, buf in after_commit}
    prev = _grad.enabled
    _grad.enabled = create_graph
    try:
        for leaf in staged:
            ex = leaf._extra
            if ex is not None and ex.post_hooks:
                for fn in list(ex.post_hooks.values()):
                    res = fn(leaf)
                    if res is not None:
                        raise TypeError(f"expected Variable, but hook returned "
                                        f"'{type(res).__name__}' (a post accumulate grad hook "
                                        "must return None)")
            entry = node_post.pop(leaf, None)
            if entry is not None:
                _node_post_hooks(*entry, create_graph)
        for entry in node_post.values():  # a leaf whose gradient all hooks dropped
            _node_post_hooks(*entry, create_graph)
    except BaseException:
        _restore_grads(backup)  # E13 read strictly: a failing hook undoes the whole commit
        raise
    finally:
        _grad.enabled = prev


def _node_post_hooks(node: Any, buf: list[Any], create_graph: bool) -> None:
    from .hooks import post_hooks

    try:
        post_hooks(node, (), buf, create_graph)
    except Exception as exc:  # name the node, as the walk does for the nodes it runs
        exc.add_note(f"(raised while running a post-hook of {node.name()} of the leaf of "
                     f"shape {node.variable.shape})")
        raise


def _backup_grads(tensors: list[Any]) -> list[tuple[Any, Any, Any]]:
    out = []
    for t in tensors:
        g = t._grad
        out.append((t, g, None if g is None else g.backend.ops.copy(g._data)))
    return out


def _restore_grads(backup: Any) -> None:
    for t, g, data in reversed(backup):
        t._grad = g
        if g is not None:
            g.backend.ops.assign_(g._data, data)


def commit_leaf_grad(leaf: Any, g: Any, create_graph: bool, shared: set[int] | None) -> None:
    """E8: reduce to the leaf's shape; first write stores (copying anything that may be
    shared), later writes add -- in place, or out of place when create_graph=True."""
    be = leaf.backend
    shape = leaf._data.shape
    if create_graph or isinstance(g, Tensor):
        gt = g if isinstance(g, Tensor) else Tensor(g, be)
        if gt.shape != tuple(shape):
            from ..ops.shape import sum_to

            gt = sum_to(gt, tuple(shape))
        cur = leaf._grad
        if cur is None:
            if shared is None or id(gt) in shared:
                from ..ops.conversion import clone

                gt = clone(gt)
            leaf._grad = gt
            if shared is not None:
                shared.add(id(gt))
        else:
            leaf._grad = cur + gt
        return
    if g.shape != shape:
        try:
            g = be.ops.reduce_to(g, tuple(shape))
        except ValueError:
            raise RetrogradError(
                f"gradient of shape {tuple(g.shape)} cannot be reduced to the shape {tuple(shape)} "
                "of the tensor it accumulates into"
            ) from None
    if type(g) is not be.array_type:
        g = be.asarray(g)
    cur = leaf._grad
    if cur is None:
        if g.dtype != leaf._data.dtype:
            g = be.ops.astype(g, leaf._data.dtype)
        elif shared is None or id(g) in shared or be.ops.may_alias(g):
            g = be.ops.copy(g)
        leaf._grad = Tensor(g, be)
        if shared is not None:
            shared.add(id(g))
    elif cur._requires_grad or cur.grad_fn is not None:
        leaf._grad = Tensor(be.ops.add(cur._data, g), be)
    else:
        be.ops.accumulate_(cur._data, g)
        bump(cur._counter())
