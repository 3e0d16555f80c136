"""Committing a walk's results to ``.grad`` (E8, E13): all or nothing.

Nothing is written while the walk runs: leaf gradients are staged, and committed here, under
one lock, only once the whole walk has succeeded. The commit itself has two phases:

1. *prepare* computes every new ``.grad`` and checks every write it will make (the gradient
   reduced to the tensor's shape, a first ``.grad`` cast to its dtype; an existing ``.grad``
   that will be added to in place must be on the tensor's device, writable, and of a shape
   the gradient broadcasts to), and copies the current values of each ``.grad`` about to be
   added to in place. Nothing visible changes: whatever raises here leaves every ``.grad`` as
   it was. (The addition stays in place, as in PyTorch, so that views of a ``.grad`` and the
   arrays ``.numpy()`` gave see it; undoing it then needs that copy: the price of E13 is one
   copy of each such ``.grad`` for the length of the commit.)
2. *publish* makes the writes: reference assignments (a first ``.grad``, a ``.grad`` replaced
   out of place) and in-place additions into existing ``.grad`` arrays (the same object as
   before, its version bumped, as PyTorch does). If anything raises part-way -- a kernel, a
   MemoryError, a KeyboardInterrupt -- every write is undone from what phase 1 kept: the
   references put back, the arrays restored bitwise, the version counters reset. On the main
   thread SIGINT is held back while the publish or an undo runs (a Ctrl-C arriving then is
   delivered when it ends, and undoes the commit), so an undo cannot itself be cut short.

Post-accumulate hooks and AccumulateGrad post-hooks run after the publish; if one raises (or a
Ctrl-C lands in one), the whole commit is undone the same way.
"""

from __future__ import annotations

import _signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from .._version import bump
from .._writes import add_into, write
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import OWN_DTYPE, Tensor
from .node import formula_node

__all__ = ["commit", "commit_leaf_grad", "grad_dtype_of", "run_callbacks"]

_commit_lock = threading.Lock()

# One planned write: (tensor, .grad before, .grad after, gradient added in place, copy of
# the values before, version counter, its bytes before, the backend's ops). A reference write
# has None for the last five; an in-place one has ``before is after``; a ``.grad`` only kept
# for the hooks' sake (``_keep_unwritten``) has the gradient False.
_Write = tuple[Any, Any, Any, Any, Any, Any, Any, Any]

_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
            "a single memory location. Please clone() the tensor before performing the "
            "operation.")


def commit(staged: dict[Any, Any], retained: list[tuple[Any, Any]], seeds: list[Any],
           create_graph: bool, tracer: Any, after_commit: Sequence[tuple[Any, Any]] = (),
           callbacks: list[Any] | None = None) -> None:
    """Write the staged gradients, all or nothing; then run, leaf by leaf in walk order, the
    post-accumulate hooks and the AccumulateGrad node's post-hooks (``after_commit``), with
    grad mode as during the walk (on only under create_graph), as PyTorch does. If a hook
    raises, every ``.grad`` is rolled back (E13)."""
    shared = {id(s) for s in seeds if s is not None}
    shared.update(id(g) for _t, g in retained)
    plan: list[_Write] = []
    done = [False]  # set by _publish once every write is made, cleared by an undo
    hooked = False
    for leaf in staged:
        ex = leaf._extra
        if ex is not None and ex.post_hooks:
            hooked = True
            break
    prev = _grad.enabled
    try:
        with _commit_lock:
            for leaf, g in staged.items():  # one entry per leaf: each is planned once
                if g is not None:
                    _prepare(plan, leaf, g, leaf._grad, create_graph, shared)
            if retained:
                planned: dict[int, Any] = {}  # a tensor planned twice builds on its first write
                for t, g in retained:
                    planned[id(t)] = _prepare(plan, t, g, planned.get(id(t), t._grad),
                                              create_graph, None)
            if hooked or after_commit:
                # a hook may change a .grad this commit does not write: kept too, as an undo
                _keep_unwritten(plan, staged)
            _publish(plan, done)
        if tracer is not None:
            for t, _b, _a, g, *_ in plan:
                if g is not False:
                    tracer.event("grad_written", tensor=t, value=t._grad._data)
        if hooked or after_commit:
            _grad.enabled = create_graph
            _run_hooks(staged, after_commit, create_graph)
        if callbacks:
            run_callbacks(callbacks, create_graph)
    except BaseException:
        if done[0]:  # a hook (or a Ctrl-C after the publish) failed: E13 read strictly
            _undo_held(plan, done)
        raise
    finally:
        _grad.enabled = prev


def run_callbacks(callbacks: list[Any], create_graph: bool) -> None:
    """The callbacks queued during a walk (``Engine.queue_callback``), in order, with grad
    mode as during the walk; one may queue more, which run after it."""
    prev = _grad.enabled
    _grad.enabled = create_graph
    try:
        i = 0
        while i < len(callbacks):
            callbacks[i]()
            i += 1
    finally:
        _grad.enabled = prev


def commit_leaf_grad(leaf: Any, g: Any, create_graph: bool, shared: set[int] | None) -> None:
    """E8 for one tensor (``AccumulateGrad.apply``): reduce to the leaf's shape; the first
    write stores (copying anything that may be shared), later writes add -- in place, or out
    of place when create_graph=True or the ``.grad`` requires grad. All or nothing."""
    plan: list[_Write] = []
    with _commit_lock:
        _prepare(plan, leaf, g, leaf._grad, create_graph, shared)
        _publish(plan, [False])


# ------------------------------------------------------------------------------------------
# phase 1: prepare (nothing visible changes)
# ------------------------------------------------------------------------------------------
def _prepare(plan: list[_Write], t: Any, g: Any, cur: Any, create_graph: bool,
             shared: set[int] | None) -> Any:
    """Plan the write of ``g`` into ``t.grad``, currently ``cur``: compute the new ``.grad``
    (or check the in-place addition and keep the current values), append it to ``plan``;
    return the ``.grad`` the plan leaves."""
    be = t.backend
    shape = t._data.shape
    want = grad_dtype_of(t)  # the raw dtype the .grad gets; None: the gradient's own
    if create_graph or isinstance(g, Tensor):
        gt = g if isinstance(g, Tensor) else Tensor(g, be)
        if want is not None and gt._data.dtype != want:
            from ..ops.conversion import to

            gt = to(gt, t._grad_dtype() if t.grad_fn is None else t.dtype)
        if gt.shape != tuple(shape):
            from ..ops.shape import sum_to

            gt = sum_to(gt, tuple(shape))
        if cur is None:
            if create_graph:
                gt = _copy_as_grad(gt)
            elif shared is None or id(gt) in shared:
                from ..ops.conversion import clone

                gt = clone(gt)
            new = gt
            if shared is not None:
                shared.add(id(gt))
        else:
            new = cur + gt
        plan.append((t, cur, new, None, None, None, None, None))
        return new
    if g.shape != shape:
        try:
            if not expandable_to(tuple(shape), tuple(g.shape)):
                raise ValueError  # no sum undoes a broadcast from ``shape`` to ``g.shape``
            g = be.ops.reduce_to(g, tuple(shape))
        except ValueError:
            raise RetrogradError(
                f"gradient of shape {tuple(g.shape)} cannot be reduced to the shape {tuple(shape)} "
                "of the tensor it accumulates into"
            ) from None
    if type(g) is not be.array_type:
        g = be.asarray(g)
    if want is not None and g.dtype != want:
        g = be.ops.astype(g, want)
    if cur is None:
        if want is not None and g.dtype != want:
            g = be.ops.astype(g, want)
        elif shared is None or id(g) in shared or be.ops.may_alias(g):
            g = be.ops.copy(g)
        new = Tensor(g, be)
        if shared is not None:
            shared.add(id(g))
    elif cur._requires_grad or cur.grad_fn is not None:
        new = Tensor(be.ops.add(cur._data, g), be)
    else:
        data = cur._data
        if cur.backend is not be:
            raise RetrogradError(
                f"backward cannot accumulate a gradient on device {t.device} into the .grad "
                f"of the tensor of shape {tuple(shape)}, which is on device {cur.device}"
            )
        if not getattr(getattr(data, "flags", None), "writeable", True):
            _raise_read_only(data, tuple(shape))
        if data.shape != g.shape:
            _check_adds_into(tuple(data.shape), tuple(g.shape), tuple(shape))
        vc = cur._counter()
        ops = be.ops
        plan.append((t, cur, cur, g, ops.copy(data), vc, bytes(vc), ops))
        return cur
    plan.append((t, cur, new, None, None, None, None, None))
    return new


def _copy_grad_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    return (None, g)  # the destination was a fresh tensor: only the source gets g


CopyBackwards = formula_node("CopyBackwards", _copy_grad_rule, arity=2)


def _copy_as_grad(g: Tensor) -> Tensor:
    """The first ``.grad`` of a leaf under create_graph, as PyTorch's AccumulateGrad makes it:
    a copy of the gradient into a new tensor (``empty_strided(...).copy_(g)``), recorded as
    ``CopyBackwards`` -- edges (None, g's) -- when ``g`` has history."""
    from ..ops._core import record

    out = Tensor(g.backend.ops.copy(g._data), g.backend)
    if g._requires_grad:
        record(CopyBackwards, out, (None, g))
    return out


def grad_dtype_of(t: Any) -> Any:
    """The raw dtype of ``t``'s ``.grad``: its own, or a leaf's ``grad_dtype`` when set
    (None: any, the gradient keeps its dtype)."""
    ex = t._extra
    if ex is None or ex.grad_dtype is OWN_DTYPE or t.grad_fn is not None:
        return t._data.dtype
    want = ex.grad_dtype
    return None if want is None else t.backend.xp_dtype(want)


def _keep_unwritten(plan: list[_Write], staged: dict[Any, Any]) -> None:
    """For the hooks: the ``.grad`` of each staged leaf this commit does not write (its hooks
    dropped the gradient) is kept as well, as a no-op write (marked ``False``) that an undo
    restores."""
    for leaf, g in staged.items():
        if g is not None:
            continue
        cur = leaf._grad
        if cur is None:
            plan.append((leaf, None, None, False, None, None, None, None))
            continue
        vc = cur._counter()
        ops = cur.backend.ops
        plan.append((leaf, cur, cur, False, ops.copy(cur._data), vc, bytes(vc), ops))


def expandable_to(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """Whether shape ``src`` expands to ``dst`` (PyTorch's ``is_expandable_to``)."""
    if len(src) > len(dst):
        return False
    return all(s == d or s == 1 for s, d in zip(reversed(src), reversed(dst)))


def _check_adds_into(dst: tuple[int, ...], src: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """``dst += src`` in place, checked as PyTorch checks it (its messages): the shapes must
    broadcast, to ``dst``'s shape. Only a leaf whose ``.data`` was replaced by one of another
    shape after its ``.grad`` was set gets here."""
    ndim = max(len(dst), len(src))
    for i in range(ndim - 1, -1, -1):
        a = dst[i - ndim + len(dst)] if i - ndim + len(dst) >= 0 else 1
        b = src[i - ndim + len(src)] if i - ndim + len(src) >= 0 else 1
        if a != b and a != 1 and b != 1:
            raise RetrogradError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {i} (backward adding a gradient of shape {src} into "
                f"the .grad of shape {dst} of a tensor of shape {shape}: was its .data replaced?)"
            )
    if not expandable_to(src, dst):
        out = [max(a, b) for a, b in zip((1,) * (ndim - len(dst)) + dst,
                                          (1,) * (ndim - len(src)) + src)]
        raise RetrogradError(
            f"output with shape {list(dst)} doesn't match the broadcast shape {out} (backward "
            f"adding a gradient of shape {src} into the .grad of a tensor of shape {shape}: was "
            "its .data replaced?)"
        )


def _raise_read_only(data: Any, shape: tuple[int, ...]) -> None:
    strides = getattr(data, "strides", ())
    if any(s == 0 and n > 1 for s, n in zip(strides, data.shape)):
        raise RetrogradError(f"{_OVERLAP} (backward adding into the .grad of the tensor of "
                             f"shape {shape}: it is an expanded view)")
    raise RetrogradError(
        f"backward cannot add into the .grad of the tensor of shape {shape}: its array is "
        "read-only. Set .grad to a writable tensor (e.g. .grad.clone()) or to None first."
    )


# ------------------------------------------------------------------------------------------
# phase 2: publish, all or nothing
# ------------------------------------------------------------------------------------------
def _publish(plan: list[_Write], done: list[bool]) -> None:
    """Make every planned write; on any exception undo them all and re-raise. ``done[0]`` is
    True exactly while every write stands. A Ctrl-C arriving meanwhile is held back, then
    delivered (undoing the writes if it raises)."""
    if not plan:
        done[0] = True
        return
    prev = _hold_sigint()
    try:
        try:
            for t, _before, after, g, _copy, vc, _stamp, _ops in plan:
                if g is None:
                    t._grad = after
                elif g is not False:
                    add_into(after, g)
                    bump(vc)
            done[0] = True
            if prev is not None and _held:
                _deliver(prev)
        except BaseException:
            _undo(plan, done)
            raise
    finally:
        if prev is not None:
            _let_go(prev)


def _undo(plan: list[_Write], done: list[bool]) -> None:
    """Put every ``.grad`` back as phase 1 found it (idempotent; in reverse order, so a tensor
    planned twice ends at its first 'before'). Every write is undone even if one fails."""
    error: BaseException | None = None
    for t, before, _after, _g, copy, vc, stamp, _ops in reversed(plan):
        try:
            t._grad = before
            if copy is not None:
                write(before, copy)
                vc[:] = stamp
        except BaseException as exc:  # noqa: BLE001 - re-raised once the others are undone
            error = error or exc
    done[0] = False
    if error is not None:
        raise error


def _undo_held(plan: list[_Write], done: list[bool]) -> None:
    prev = _hold_sigint()
    try:
        with _commit_lock:
            _undo(plan, done)
    finally:
        if prev is not None:
            _let_go(prev)


def _run_hooks(staged: dict[Any, Any], after_commit: Sequence[tuple[Any, Any]],
               create_graph: bool) -> None:
    node_post = {node.variable: (node, buf) for node, buf in after_commit}
    for leaf in staged:
        ex = leaf._extra
        if ex is not None and ex.post_hooks:
            _leaf_post_hooks(leaf, list(ex.post_hooks.values()))
        entry = node_post.pop(leaf, None)
        if entry is not None:
            _node_post_hooks(*entry, create_graph)
    for entry in node_post.values():  # a leaf whose gradient all hooks dropped
        _node_post_hooks(*entry, create_graph)


def _leaf_post_hooks(leaf: Any, fns: list[Any]) -> None:
    """PyTorch's ``_call_hooks`` for post-accumulate-grad hooks: a hook returning None or the
    tensor it was given changes nothing; anything else is checked as a gradient would be (a
    non-tensor is a TypeError, a new size or dtype a RuntimeError), replaces the argument of
    the hooks after it, and once all have run is refused ("should return None")."""
    from .hooks import _from_hook

    arg, modified = leaf, False
    for fn in fns:
        res = fn(arg)
        if res is None or res is arg:
            continue
        if not isinstance(res, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}' (a "
                            "post accumulate grad hook must return None)")
        arg = _from_hook(res, arg, "a post accumulate grad hook", True, fn)
        modified = True
    if modified:
        raise RetrogradError("Tensor post accumulate grad hooks should return None. (a "
                             "hook returned a new tensor; read and change tensor.grad "
                             "in place instead)")


def _node_post_hooks(node: Any, buf: list[Any], create_graph: bool) -> None:
    from .hooks import post_hooks

    try:
        post_hooks(node, (), buf, create_graph)
    except Exception as exc:  # name the node, as the walk does for the nodes it runs
        exc.add_note(f"(raised while running a post-hook of {node.name()} of the leaf of "
                     f"shape {node.variable.shape})")
        raise


# ------------------------------------------------------------------------------------------
# SIGINT held back on the main thread
# ------------------------------------------------------------------------------------------
# Python runs a signal's handler between two bytecodes of the main thread; while ``_hold`` is
# the handler, a Ctrl-C (or ``_thread.interrupt_main()``) only records itself here. Installing
# and restoring a handler is one C call each (``_signal``, not ``signal``, whose Python
# wrappers cost 4-7 us): a Ctrl-C pending when the handler is swapped runs the old handler
# first, so none is lost and none escapes between the swap and the ``try`` that restores it.
_held: list[int] = []
_SIGINT = 2


def _hold(signum: int, frame: Any) -> None:
    _held.append(signum)


def _hold_sigint() -> Any:
    """Install ``_hold`` as the SIGINT handler; the handler it replaced, or None when nothing
    was installed (not the main thread, or SIGINT not handled in Python)."""
    if threading.get_ident() != threading.main_thread().ident:
        return None
    try:
        current = _signal.getsignal(_SIGINT)
        if current is _hold or not callable(current):
            return None
        _held.clear()
        prev = _signal.signal(_SIGINT, _hold)
    except ValueError:  # signals unusable here (a subinterpreter)
        return None
    return prev


def _deliver(prev: Any) -> None:
    """Run the replaced handler once for the held Ctrl-C (Python's raises KeyboardInterrupt)."""
    _held.clear()
    prev(_SIGINT, sys._getframe(1))


def _let_go(prev: Any) -> None:
    _signal.signal(_SIGINT, prev)
    if _held:  # arrived during an undo, or after the last check
        _deliver(prev)
