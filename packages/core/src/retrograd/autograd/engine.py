"""The backward engine (docs/engine.md). Stateless: all per-call state lives in the call.

    order   = reverse of an iterative DFS post-order from the roots   (E1; no recursion)
    prune   = keep only nodes on a path to a requested input          (grad / inputs=)
              (and a lone root off it, for its hooks: PyTorch's exec_info rule)
    fuse    = substitute fused nodes for this walk only                (E12)
    walk    = per node: pending -> hooks -> validate_versions -> apply -> release_saved,
              contributions summed per input slot in ``pending``       (E2, E5, E7)
    commit  = leaf .grad written only after the whole walk succeeded   (E13)

Each node is claimed by the walk using it; meeting another live walk's claim raises (E14).
"""

from __future__ import annotations

import gc
import itertools
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from ..backends.host import quiet_add, quiet_enter, quiet_exit
from ..errors import GRAPH_FREED, GraphFreedError, RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ..warn_always import _state as _warn_always
from .accumulate import AccumulateGrad, accumulator_of
from .anomaly import _state as _anomaly
from .anomaly import check_outputs, warn_error_in
from .commit import commit, grad_dtype_of, run_callbacks
from .gradient_edge import GradientEdge, edge_target
from .hooks import arr, leaf_hooks, node_pre_hooks, post_hooks, pre_hooks, tensor_pre_hooks
from .node import FIRST_ONLY, Node, edge_node, next_entries

__all__ = ["Engine", "set_tracer", "get_tracer", "set_fusion", "is_fusion_enabled",
           "topo_order", "current_graph_task_id", "will_engine_execute_node"]


# An RLock for ``_is_owned()``: the pause and the release take it inside a ``try`` whose
# ``finally`` lets it go if (and only if) this thread still holds it, so an exception at any
# bytecode -- even between ``acquire`` returning and the next one -- cannot leave it held.
_gc_lock = threading.RLock()
_gc_state = {"was_enabled": False}
# The walks holding the pause (the depth is its size). Membership is the only record of a
# walk's pause, so the record and the count cannot disagree.
_gc_holders: set[Any] = set()


# A walk over fewer nodes allocates too little for a collection to matter: it does not pay
# for the lock (W5's two small walks per call).
_GC_PAUSE_MIN_NODES = 64

# A walk over fewer nodes does not take NumPy's quiet state (``_walk_ops``): taking and
# giving it back costs about as much as 6-8 nodes' kernel wrappers (W5's walks of 3 nodes
# were 3% slower with it; a chain of 16 nodes is 1% faster, of 64 3%).
_QUIET_MIN_NODES = 16


def _pause_gc(walk: Any) -> None:
    """The walk builds no reference cycles (nodes never point back at their consumers, and the
    pending map is dropped at the end), so the cyclic collector has nothing to find in it;
    pausing it stops a deep walk from rescanning the whole graph on every collection.

    Safe against an exception (a Ctrl-C) at any bytecode, here or in the walk around it: the
    pause is recorded by ``_gc_holders.add`` itself, and every state between two steps is one
    that ``_resume_gc(walk)`` -- which the walk calls whatever happened -- puts right: before
    ``add`` nothing was taken; after it, the release re-enables the collector if it was on,
    whether or not ``disable`` ran."""
    try:
        _gc_lock.acquire()
        if walk not in _gc_holders:
            if not _gc_holders:
                _gc_state["was_enabled"] = gc.isenabled()
            _gc_holders.add(walk)
            gc.disable()
        _gc_lock.release()
    finally:
        if _gc_lock._is_owned():  # type: ignore[attr-defined]
            _gc_lock.release()


def _resume_gc(walk: Any) -> None:
    """Release ``walk``'s pause; idempotent (nothing when it holds none). The last holder
    re-enables the collector (if it was on) *before* leaving the set: interrupted between the
    two, the walk still holds the pause and a second call finishes the release. The walk
    calls this at the end of its ``try`` and again in its ``finally``: whichever of the two an
    exception interrupts, the other completes it."""
    try:
        _gc_lock.acquire()
        if walk in _gc_holders:
            if len(_gc_holders) == 1 and _gc_state["was_enabled"]:
                gc.enable()
            _gc_holders.discard(walk)
        _gc_lock.release()
    finally:
        if _gc_lock._is_owned():  # type: ignore[attr-defined]
            _gc_lock.release()


class _TracerState(threading.local):
    tracer: Any = None


_tracer_state = _TracerState()


def set_tracer(tracer: Any) -> None:
    """Install (or clear, with None) this thread's walk tracer: ``tracer.event(kind, **data)``."""
    _tracer_state.tracer = tracer


def get_tracer() -> Any:
    return _tracer_state.tracer


class _Fusion:
    enabled = True


_fusion = _Fusion()


def set_fusion(enabled: bool) -> None:
    """Turn the fusion pass on or off globally (the default for ``fuse=None``)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_fusion expects a bool, got {type(enabled).__name__}")
    _fusion.enabled = enabled


def is_fusion_enabled() -> bool:
    """Whether the fusion pass is on globally (``set_fusion``; E12 in docs/semantics.md)."""
    return _fusion.enabled


_FUSE: list[Any] = []


def _fusion_pass() -> Any:
    if not _FUSE:  # fusion imports the op node classes: bind it on first use
        from .fusion import fuse_order

        _FUSE.append(fuse_order)
    return _FUSE[0]


class _Walk:
    """The claim a walk puts on the nodes it uses (E14)."""

    __slots__ = ("live", "thread")

    def __init__(self) -> None:
        self.live = True
        self.thread = threading.get_ident()


# ------------------------------------------------------------------------------------------
# order
# ------------------------------------------------------------------------------------------
def _claim(node: Node, walk: _Walk) -> None:
    other = node._walk
    if other is not None and other is not walk and other.live:
        raise RetrogradError(
            f"concurrent backward: {node.name()} is already being used by another backward "
            f"pass (thread {other.thread}); two backward calls on one graph at once are "
            "refused. Run them one after the other (with retain_graph=True)."
        )
    node._walk = walk


_EXHAUSTED = iter(())  # an iterator with nothing left: shared, it holds no state


def topo_order(roots: Sequence[Node], walk: _Walk | None = None) -> list[Node]:
    """Reverse DFS post-order over ``next_edges`` from ``roots``, with an explicit stack.

    The stack holds *runs*: a node, then the chain of bare nodes below it (one edge each,
    see ``autograd.node.next_entries``) down to the first node with several edges. A run
    enters and leaves the stack once, whatever its length, and its nodes join the post-order
    together (deepest first) when the last one's edges are done: a long chain costs one set
    insertion and one append per node.

    Each node met is claimed for ``walk`` (E14); leaf accumulators are shared between
    graphs and hold no per-walk state, so they are not claimed."""
    order: list[Node] = []
    seen: set[Node] = set()
    acc_type = AccumulateGrad
    for root in roots:
        if root in seen:
            continue
        runs: list[list[Node]] = []
        iters: list[Any] = []
        child: Any = root
        while True:
            # descend from ``child`` (unseen): its run, down to a node with a tuple _next
            run = []
            while True:
                seen.add(child)
                if walk is not None and type(child) is not acc_type:
                    other = child._walk
                    if other is not None and other is not walk and other.live:
                        _claim(child, walk)  # raises, naming the node
                    child._walk = walk
                run.append(child)
                nx = child._next
                if type(nx) is tuple:
                    iters.append(iter(nx))
                    break
                if nx in seen:  # bare, its only child already placed
                    iters.append(_EXHAUSTED)
                    break
                child = nx
            runs.append(run)
            # climb: the next unseen child of the deepest open run, finishing runs on the way
            child = None
            while iters:
                for edge in iters[-1]:
                    if edge is not None:
                        c = edge[0] if type(edge) is tuple else edge
                        if c not in seen:
                            child = c
                            break
                if child is not None:
                    break
                iters.pop()
                run = runs.pop()
                run.reverse()
                order += run
            if child is None:
                break
    order.reverse()
    return order


def _prune(order: list[Node], targets: dict[Node, Any], captures: dict[Node, Any] | None,
           lone_root: Node | None
           ) -> tuple[list[Node], dict[Node, tuple[Any, ...]], dict[Node, Any]]:
    """For ``grad``/``inputs=``, PyTorch's rule (its ``exec_info``): a node *runs* when an
    edge of it reaches a node that runs or is a target; a target runs when it is needed that
    way, and always for ``backward(inputs=)`` (``captures`` None: the walk accumulates).

    Returns the nodes that reach a target (in order), ``masks``: for a running node with
    an edge that reaches no target, the ``needs`` its rule gets (that edge masked to None, so
    its gradient is never computed), and ``marks``: per node of the order that needs a look
    before it runs, its ``captures`` entry (``autograd.grad``: the slots it is requested by,
    else None) and whether it is *idle*: a target that does not run, or the lone root (a
    single root, as PyTorch's engine starts at that root itself) on no path to a target.
    An idle node gets its tensors' hooks and ``retain_grad``, then its captures, and stops
    there (no pre-hooks, no rule)."""
    reach: set[Node] = set()
    masks: dict[Node, tuple[Any, ...]] = {}
    marks: dict[Node, Any] = {}
    for node in reversed(order):  # children before parents
        nx = node._next
        if type(nx) is not tuple:  # bare: one edge (autograd.node.next_entries)
            hit = nx in reach
        else:
            hit = miss = False
            for edge in nx:
                if edge is not None:
                    if (edge[0] if type(edge) is tuple else edge) in reach:
                        hit = True
                    else:
                        miss = True
            if hit and miss:
                masks[node] = tuple(e if e is not None and edge_node(e) in reach else None
                                    for e in nx)
        if hit:  # it runs
            reach.add(node)
        if node in targets:
            reach.add(node)
            if captures is not None:
                marks[node] = (not hit, captures[node])
            elif not hit and nx:  # backward(inputs=): it runs, its gradients go nowhere
                masks[node] = (None,) * len(next_entries(node))
    pruned = [n for n in order if n in reach]
    if lone_root is not None and lone_root not in reach:
        pruned.insert(0, lone_root)  # the first of the order: nothing runs before it
        marks[lone_root] = (True, None)
    return pruned, masks, marks


# ------------------------------------------------------------------------------------------
# the engine
# ------------------------------------------------------------------------------------------
class Engine:
    """Reverse-mode driver. Never instantiated: use ``Engine.backward`` / ``Engine.grad``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Engine:
        raise TypeError("Engine is stateless and never instantiated; call Engine.backward(...) "
                        "or Engine.grad(...)")

    @staticmethod
    def backward(root: Any, grad_seed: Any = None, retain_graph: bool = False,
                 create_graph: bool = False, *, fuse: bool | None = None) -> None:
        """Differentiate ``root`` (a tensor, or a sequence of tensors) and accumulate into the
        ``.grad`` of every leaf reached."""
        roots, seeds = _roots_and_seeds(root, grad_seed)
        _walk(roots, seeds, retain_graph, create_graph, fuse, None, accumulate=True,
              implicit_seed=True)

    @staticmethod
    def queue_callback(callback: Any) -> None:
        """Run ``callback()`` once the backward running in this thread has finished: after
        the ``.grad`` writes and the post-accumulate hooks, in the order queued (a callback
        may queue more). Only during a backward (from a hook or a custom backward), as
        PyTorch's ``Variable._execution_engine.queue_callback``. One that raises undoes the
        backward's ``.grad`` writes (E13)."""
        st = _reentry.current
        if st is None:
            raise RetrogradError("Final callbacks can only be installed during backward pass.")
        if st.callbacks is None:
            st.callbacks = []
        st.callbacks.append(callback)

    @staticmethod
    def grad(root: Any, inputs: Sequence[Any], grad_seed: Any = None, retain_graph: bool = False,
             create_graph: bool = False, *, fuse: bool | None = None) -> list[Any]:
        """Gradients of ``root`` w.r.t. ``inputs``, one entry per input (None where an input
        lies outside the graph). Reads and writes no leaf's ``.grad``; a non-leaf tensor that
        ``retain_grad()``-s gets its gradient in ``.grad`` when the walk reaches it, as in
        PyTorch (committed with E13's all-or-nothing)."""
        roots, seeds = _roots_and_seeds(root, grad_seed)
        if inputs is None:
            raise RetrogradError("Engine.grad: inputs is None")
        inputs = list(inputs)
        for i, t in enumerate(inputs):
            if t is None:
                raise RetrogradError(f"Engine.grad: input {i} is None")
        return _walk(roots, seeds, retain_graph, create_graph, fuse, inputs, accumulate=False,
                     implicit_seed=True)


def _roots_and_seeds(root: Any, grad_seed: Any) -> tuple[list[Any], list[Any]]:
    if root is None:
        raise RetrogradError("Engine: root is None")
    roots = [root] if isinstance(root, Tensor) else list(root)
    for i, r in enumerate(roots):
        if r is None:
            raise RetrogradError(f"Engine: root {i} is None")
        if not isinstance(r, Tensor):
            raise TypeError(f"Engine: root {i} must be a Tensor, got {type(r).__name__}")
    if grad_seed is None or isinstance(grad_seed, Tensor):
        seeds = [grad_seed] * len(roots) if len(roots) == 1 or grad_seed is None else None
        if seeds is None:
            raise ValueError("Engine: one seed given for several roots; pass one per root")
    else:
        seeds = list(grad_seed)
        if len(seeds) != len(roots):
            raise ValueError(f"Engine: got {len(seeds)} seeds for {len(roots)} roots")
    return roots, seeds


def _make_seed(i: int, root: Any, seed: Any, create_graph: bool, implicit: bool = False) -> Any:
    """E3: None -> ones of the root's shape/dtype/device (only for a one-element root unless
    ``implicit``: ``Engine.backward`` seeds any root with ones); otherwise checked, and cast
    to the root's dtype as PyTorch does."""
    be = root.backend
    if seed is None:
        if root.numel() != 1 and not implicit:
            raise RetrogradError(
                f"grad can be implicitly created only for scalar outputs: root {i} has shape "
                f"{root.shape}; pass gradient= (a tensor of that shape)"
            )
        data = be.ops.ones(root._data.shape, root._data.dtype)
        return Tensor(data, be) if create_graph else data
    if not isinstance(seed, Tensor):
        raise TypeError(f"gradients can be either Tensors or None, but got "
                        f"{type(seed).__name__} (the gradient for root {i})")
    if seed.backend is not be or seed.device != root.device:
        raise RetrogradError(
            f"gradient for root {i} is on device {seed.device} but the root is on "
            f"{root.device}"
        )
    if seed.shape != root.shape:
        raise ShapeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {_size(seed.shape)} and "
            f"output[{i}] has a shape of {_size(root.shape)}."
        )
    if seed._data.dtype != root._data.dtype:
        from ..ops.conversion import to

        seed = to(seed, root.dtype)  # PyTorch casts the seed (differentiably)
    return seed if create_graph else seed._data


def _size(shape: Sequence[int]) -> str:
    """A shape as ``Tensor.shape`` prints it, as PyTorch's message prints ``torch.Size``: a
    program that builds the expected message from the tensors' ``.shape`` matches it."""
    return str(tuple(int(s) for s in shape))


def _fresh(t: Any) -> None:
    """A view whose base was changed in place by a recorded op is taken again from the
    base's history before the walk reads its grad_fn (``ops._core._check_view_fresh``)."""
    if t._base is not None and t._extra is not None:
        from ..ops._core import _check_view_fresh

        _check_view_fresh(t)


def _root_edge(i: int, root: Any) -> tuple[Node, int]:
    """Where the seed of root ``i`` goes: its grad_fn, or a leaf's accumulator. A root with
    neither -- one that does not require grad, or a view made under no_grad of a tensor that
    does (it requires grad but has no accumulator, as in PyTorch) -- is refused."""
    _fresh(root)
    if root.grad_fn is not None:
        if not root.dtype.is_floating_point:
            # an integer or bool tensor given history by an in-place write: PyTorch's engine
            # stops on an internal assert here; refused with words that say why
            raise RetrogradError(
                f"element {i} of tensors is a {root.dtype} tensor with a grad_fn "
                f"({root.grad_fn.name()}): only floating-point tensors can be differentiated"
            )
        return (root.grad_fn, root._output_nr)
    acc = accumulator_of(root) if root._requires_grad else None
    if acc is not None:
        return (acc, 0)
    raise RetrogradError(
        f"element {i} of tensors does not require grad and does not have a grad_fn "
        f"(shape {root.shape}): nothing to differentiate"
    )


def run_backward(roots: list[Any], seeds: list[Any], *, retain_graph: bool | None,
                 create_graph: bool, inputs: list[Any] | None, fuse: bool | None) -> None:
    _walk(roots, seeds, retain_graph, create_graph, fuse, inputs, accumulate=True)


def run_grad(roots: list[Any], seeds: list[Any], inputs: list[Any], *,
             retain_graph: bool | None, create_graph: bool, fuse: bool | None,
             unused_check: Any = None) -> list[Any]:
    """``autograd.grad``'s walk. ``unused_check(captured)``, when given, runs on the captured
    gradients before the commit of retained ``.grad``s, so that an input found unused raises
    with every ``.grad`` as it was (E13)."""
    return _walk(roots, seeds, retain_graph, create_graph, fuse, inputs, accumulate=False,
                 unused_check=unused_check)


def _capture_targets(inputs: list[Any], accumulate: bool) -> dict[Node, dict[int, list[int]]]:
    """Map each requested input to the node slot where its total gradient arrives:
    a leaf by its AccumulateGrad, an interior tensor by its grad_fn and output slot.

    For ``backward(inputs=)`` (``accumulate``) each input is made to ``retain_grad()`` first,
    for good, as PyTorch does: that is what fills an interior input's ``.grad`` (a leaf's
    is filled anyway), and it refuses an input that does not require grad."""
    captures: dict[Node, dict[int, list[int]]] = {}
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            if isinstance(t, GradientEdge):  # a node and slot given directly: no tensor
                node, slot = edge_target(t)
                captures.setdefault(node, {}).setdefault(slot, []).append(i)
                continue
            raise TypeError(f"inputs[{i}] must be a Tensor, got {type(t).__name__}")
        _fresh(t)
        if accumulate:
            t.retain_grad()
        if not t._requires_grad:
            raise RetrogradError(
                f"One of the differentiated Tensors does not require grad: inputs[{i}] (shape "
                f"{t.shape}) cannot receive a gradient"
            )
        if t.grad_fn is not None:
            node, slot = t.grad_fn, t._output_nr
        else:
            ex = t._extra
            acc = ex.acc() if ex is not None and ex.acc is not None else None
            if acc is None:
                continue  # a leaf with no accumulator is in no graph: its entry stays None
            node, slot = acc, 0
        captures.setdefault(node, {}).setdefault(slot, []).append(i)
    return captures


_cycle_warned = False


def _warned_of_cycle() -> None:
    """The create_graph reference-cycle warning is given once per process (PyTorch's
    TORCH_WARN_ONCE)."""
    global _cycle_warned
    _cycle_warned = True


class _Reentry(threading.local):
    depth = 0
    current: Any = None  # the _WalkState of this thread's innermost walk, or None


_reentry = _Reentry()

# A backward started inside a node's backward (a custom Function calling backward) nests a
# whole walk in the caller's Python stack. Past this many nested walks in one thread, the next
# one runs on a fresh thread (whose stack starts empty) while the caller waits, as PyTorch's
# engine does: a 2,000-deep re-entrant backward works whatever the recursion limit.
_MAX_REENTRANT_DEPTH = 24


def _walk(roots: list[Any], seeds: list[Any], retain_graph: bool | None, create_graph: bool,
          fuse: bool | None, inputs: list[Any] | None, accumulate: bool,
          implicit_seed: bool = False, unused_check: Any = None) -> Any:
    if _reentry.depth >= _MAX_REENTRANT_DEPTH:
        return _walk_on_fresh_thread(roots, seeds, retain_graph, create_graph, fuse, inputs,
                                     accumulate, implicit_seed, unused_check)
    _reentry.depth += 1
    try:
        return _walk_here(roots, seeds, retain_graph, create_graph, fuse, inputs, accumulate,
                          implicit_seed, unused_check)
    finally:
        _reentry.depth -= 1


def _walk_on_fresh_thread(*args: Any) -> Any:
    """Run ``_walk`` on a new thread carrying this thread's grad mode and tracer; re-raise
    what it raised here."""
    result: list[Any] = []
    error: list[BaseException] = []
    mode, tracer = _grad.enabled, _tracer_state.tracer

    def run() -> None:
        _grad.enabled = mode
        _tracer_state.tracer = tracer
        try:
            result.append(_walk(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            error.append(exc)

    worker = threading.Thread(target=run, name="retrograd-reentrant-backward")
    worker.start()
    worker.join()
    if error:
        raise error[0]
    return result[0]


_task_ids = itertools.count(1)


def current_graph_task_id() -> int:
    """An id of the walk running in this thread (PyTorch's graph task id): -1 outside a
    backward. Hooks use it to tell two backward calls apart (``register_multi_grad_hook``)."""
    st = _reentry.current
    if st is None:
        return -1
    if not st.task_id:
        st.task_id = next(_task_ids)
    return st.task_id


def current_node() -> Any:
    """The node whose backward is running in this thread (slow walk only: ``_run_order``,
    which anomaly mode always takes), or None."""
    st = _reentry.current
    return None if st is None else st.current


def will_engine_execute_node(node: Any) -> bool:
    """Whether the walk running in this thread runs ``node`` (a grad_fn or a leaf's
    accumulator): it is on the walk's order -- reached from the roots and, for ``grad`` or
    ``inputs=``, on a path to a requested input. RuntimeError outside a backward."""
    st = _reentry.current
    if st is None:
        raise RetrogradError("will_engine_execute_node should only be called during the "
                             "backward pass")
    if st.executes is None:
        st.executes = set(st.order)
    return node in st.executes


def _walk_here(roots: list[Any], seeds: list[Any], retain_graph: bool | None,
               create_graph: bool, fuse: bool | None, inputs: list[Any] | None,
               accumulate: bool, implicit_seed: bool, unused_check: Any = None) -> Any:
    if retain_graph is None:
        retain_graph = create_graph
    retain = bool(retain_graph or create_graph)
    root_edges = []  # plain loops, not comprehensions: one frame fewer each on small walks
    for i, r in enumerate(roots):
        root_edges.append(_root_edge(i, r))
    seed_values = []
    for i, r in enumerate(roots):
        seed_values.append(_make_seed(i, r, seeds[i], create_graph, implicit_seed))
    targets = _capture_targets(inputs, accumulate) if inputs is not None else None
    captures = targets if not accumulate else None  # autograd.grad's: what it returns
    tracer = _tracer_state.tracer
    walk = _Walk()
    prev_grad_mode = _grad.enabled
    state = _WalkState(inputs, captures, accumulate, create_graph, retain, tracer)
    outer = _reentry.current  # the walk this one runs inside of (re-entrant backward)
    ok = False
    try:
        order = topo_order([edge[0] for edge in root_edges], walk)
        if len(order) >= _GC_PAUSE_MIN_NODES:
            _pause_gc(walk)  # recorded by the call itself: released in both places below
        if targets is not None:
            order, state.masks, state.marks = _prune(
                order, targets, captures, root_edges[0][0] if len(root_edges) == 1 else None)
        state.order = order  # before fusion: the nodes as the user's graph has them
        if (_fusion.enabled if fuse is None else fuse) and not create_graph and \
                not _anomaly.enabled:
            order = _fusion_pass()(order, targets, retain)
        pending = state.pending
        for (node, nr), seed in zip(root_edges, seed_values):
            buf = pending.get(node)
            if buf is None:
                buf = pending[node] = [None] * node._nin
            buf[nr] = seed if buf[nr] is None else quiet_add(buf[nr], seed)
        if tracer is not None:
            tracer.event("begin", roots=roots, order=list(order))
            for (node, nr), seed in zip(root_edges, seed_values):
                tracer.event("arrive", node=node, slot=nr, value=arr(seed),
                             total=arr(pending[node][nr]), source=None)
        _grad.enabled = create_graph
        _reentry.current = state
        try:
            if targets is None and tracer is None and not create_graph and \
                    not _anomaly.enabled:
                _run_plain(order, state)
            else:
                _run_order(order, state)
        except Exception as exc:
            failed = state.current
            if failed is not None and _anomaly.enabled and \
                    not getattr(exc, "_retrograd_noted", False):
                warn_error_in(failed)
            if failed is not None and not getattr(exc, "_retrograd_noted", False):
                exc.add_note(f"(raised while running the backward of {failed.name()})")
                try:
                    exc._retrograd_noted = True  # type: ignore[attr-defined]
                except AttributeError:  # pragma: no cover - exceptions with __slots__
                    pass
            raise
        _grad.enabled = prev_grad_mode
        if accumulate and create_graph and state.staged and (
                not _cycle_warned or _warn_always["always"]):
            _warned_of_cycle()
            warnings.warn(
                "Using backward() with create_graph=True will create a reference cycle "
                "between the parameter and its gradient which can cause a memory leak. We "
                "recommend using autograd.grad when creating the graph to avoid this. If you "
                "have to use this function, make sure to reset the .grad fields of your "
                "parameters to None after use to break the cycle and avoid the leak.",
                UserWarning, stacklevel=4)
        if unused_check is not None:
            unused_check(state.captured)  # raises before any .grad is written (E13)
        if roots[0].backend.capabilities.lazy and not create_graph:
            _settle(roots, state)
        if accumulate or state.retained:  # autograd.grad fills retained .grad too (E9)
            commit(state.staged, state.retained, seed_values, create_graph, tracer,
                   state.after_commit, state.callbacks)
        elif state.callbacks:
            run_callbacks(state.callbacks, create_graph)
        ok = True
        _reentry.current = outer  # here and in finally: an interrupt in either leaves none
        if walk in _gc_holders:  # released inside the try, and again (a no-op) in finally
            _resume_gc(walk)
        if not accumulate:
            results = []
            for g, like in zip(state.captured, inputs):  # type: ignore[arg-type]
                results.append(_as_result(g, like, roots[0]))
            return results
        return None
    finally:
        _reentry.current = outer
        if walk in _gc_holders:
            _resume_gc(walk)
        _grad.enabled = prev_grad_mode
        walk.live = False
        if tracer is not None:
            tracer.event("end", ok=ok)


def _settle(roots: list[Any], state: Any) -> None:
    """On a lazy backend (Dask), the roots' values and every gradient the walk made,
    computed together once (the backend's ``settle``): the forward graph they share runs
    once, and reading the loss or a ``.grad`` afterwards computes nothing."""
    be = roots[0].backend
    kind = be.array_type
    staged = [k for k, g in state.staged.items() if type(g) is kind]
    retained = [i for i, (_t, g) in enumerate(state.retained) if type(g) is kind]
    captured = [i for i, g in enumerate(state.captured) if type(g) is kind]
    arrays = [r._data for r in roots]
    arrays += [state.staged[k] for k in staged]
    arrays += [state.retained[i][1] for i in retained]
    arrays += [state.captured[i] for i in captured]
    done = iter(be.ops.settle(arrays))
    for r in roots:
        r._data = next(done)  # the same values: a view of a root still reads right
    for k in staged:
        state.staged[k] = next(done)
    for i in retained:
        state.retained[i] = (state.retained[i][0], next(done))
    for i in captured:
        state.captured[i] = next(done)


class _WalkState:
    """Everything one walk accumulates: pending contributions, staged leaf grads, captures."""

    __slots__ = ("inputs", "captures", "accumulate", "create_graph", "retain", "tracer",
                 "pending", "staged", "retained", "captured", "marks", "masks", "current",
                 "after_commit", "task_id", "order", "executes", "callbacks")

    def __init__(self, inputs: Any, captures: Any, accumulate: bool, create_graph: bool,
                 retain: bool, tracer: Any) -> None:
        self.inputs = inputs
        self.captures = captures
        self.accumulate = accumulate
        self.create_graph = create_graph
        self.retain = retain
        self.tracer = tracer
        self.pending: dict[Node, list[Any]] = {}
        self.staged: dict[Any, Any] = {}
        self.retained: list[tuple[Any, Any]] = []
        self.captured: list[Any] = [None] * len(inputs) if inputs is not None else []
        # from _prune: node -> (idle, captured slots or None), for the few nodes that need it
        self.marks: dict[Node, Any] | None = None
        self.masks: dict[Node, tuple[Any, ...]] = {}
        self.current: Node | None = None
        # AccumulateGrad nodes with post-hooks, and the gradient each got: run after commit
        self.after_commit: list[tuple[Any, list[Any]]] = []
        self.task_id = 0  # numbered when first asked (``current_graph_task_id``)
        self.order: list[Node] = []  # the nodes this walk runs (``will_engine_execute_node``)
        self.executes: set[Node] | None = None  # ``order`` as a set, made when first asked
        self.callbacks: list[Any] | None = None  # ``Engine.queue_callback``: after the commit


def _run_plain(order: list[Node], st: _WalkState) -> None:
    """``_run_order`` for the common call -- ``backward()`` without captures, tracer, anomaly
    mode or create_graph -- with those branches taken out of the per-node path. The node
    being run is recorded (``st.current``, for the error note) only when something raises.

    NumPy's quiet state (see ``_walk_ops``; walks of ``_QUIET_MIN_NODES`` or more) is taken
    before the first rule that gets the backend's unwrapped kernels, given back before
    anything of the user's runs (a hook, a node's ``apply``), taken again at the next such
    rule, and given back at the end."""
    pending = st.pending
    retain = st.retain
    staged = st.staged
    acc_type = AccumulateGrad
    node: Any = None
    quiet = len(order) >= _QUIET_MIN_NODES
    fp: Any = None  # the quiet state's token while the walk holds it
    rule_be: Any = None  # the backend of the last formula node, and its walk kernels
    rule_ops: Any = None
    try:
        for node in order:
            buf = pending.pop(node, None)
            if buf is None:
                continue
            hooks = node._hooks
            if type(node) is acc_type:  # the leaf's hooks, the node's pre-hooks, then staged
                leaf = node.variable
                ex = leaf._extra
                if ex is not None:
                    if fp is not None and ex.hooks:
                        fp = _leave_quiet(fp)
                    buf = leaf_hooks(leaf, buf, False)
                if hooks is not None:
                    if fp is not None:
                        fp = _leave_quiet(fp)
                    _accumulate_hooked(node, buf, st)
                elif buf[0] is not None:
                    staged[leaf] = buf[0]
                elif ex is not None and ex.post_hooks:
                    staged[leaf] = None  # undefined: its post-accumulate hooks still run
                continue
            if hooks is not None:
                if fp is not None:
                    fp = _leave_quiet(fp)
                buf = pre_hooks(node, buf, st.retained, False)
            if node._released:
                _raise_freed(node)
            stamps = node._versions
            if stamps and (stamps[0] != stamps[1] or len(stamps) > 3):
                node.validate_versions()  # also for undefined gradients, as PyTorch's nodes
            undefined = buf[0] is None and _all_undefined(node, buf)
            nexts = node._next
            bare = type(nexts) is not tuple  # one edge, to slot 0 of node ``nexts``
            formula = type(node)._formula
            outs: Any
            if undefined:
                outs = (None,) * len(next_entries(node))  # one per input, as a rule gives
            elif formula:
                if not quiet:
                    outs = node.rule(node._backend.ops, buf[0], node._saved, node._attrs,
                                     FIRST_ONLY if bare else nexts)
                else:
                    be = node._backend
                    if be is not rule_be:
                        rule_be = be
                        rule_ops = _walk_ops(be)
                    if rule_ops is not None:
                        if fp is None:
                            fp = quiet_enter()
                        outs = node.rule(rule_ops, buf[0], node._saved, node._attrs,
                                         FIRST_ONLY if bare else nexts)
                    else:
                        if fp is not None:
                            fp = _leave_quiet(fp)
                        outs = node.rule(be.ops, buf[0], node._saved, node._attrs,
                                         FIRST_ONLY if bare else nexts)
            else:
                if fp is not None:
                    fp = _leave_quiet(fp)
                outs = node.apply(buf)
            if not bare and len(outs) != len(nexts):
                _raise_count(node, outs, nexts)
            if hooks is not None and hooks.post:
                if fp is not None:
                    fp = _leave_quiet(fp)
                outs = post_hooks(node, outs, buf, False)
            if not retain:
                if formula:
                    node._saved = node._sources = None
                    node._versions = ()
                    node._released = True
                else:
                    node.release_saved()
            if bare:
                g = outs[0]
                if g is not None:
                    b = pending.get(nexts)
                    if b is None:
                        b = pending[nexts] = [None] * nexts._nin
                        b[0] = g
                    elif b[0] is None:
                        b[0] = g
                    elif fp is not None:
                        b[0] = b[0] + g
                    else:
                        b[0] = quiet_add(b[0], g)
                elif nexts not in pending:
                    pending[nexts] = [None] * nexts._nin  # undefined: see _all_undefined
            else:
                for edge, g in zip(nexts, outs):
                    if edge is None:
                        continue
                    if g is None:
                        _pend_undefined(pending, edge)
                        continue
                    if type(edge) is tuple:
                        nxt, nr = edge
                    else:
                        nxt, nr = edge, 0
                    b = pending.get(nxt)
                    if b is None:
                        b = pending[nxt] = [None] * nxt._nin
                        b[nr] = g
                    elif b[nr] is None:
                        b[nr] = g
                    elif fp is not None:
                        b[nr] = b[nr] + g
                    else:
                        b[nr] = quiet_add(b[nr], g)
            # drop this frame's references: a pending slot may then be the sole owner of
            # its gradient (the fused nodes work in place in it), and a consumed gradient is
            # freed before the next node allocates
            outs = g = buf = None
    except BaseException:
        st.current = node
        raise
    finally:
        if fp is not None:
            try:
                quiet_exit(fp)
            except RuntimeError:  # spent: an interruption fell after a _leave_quiet's reset
                pass


def _walk_ops(be: Any) -> Any:
    """The kernels a derivative rule of ``be`` gets in the walk, or None.

    NumPy reports a floating-point exception (``log(0)``, ``inf - inf``) as a warning, and
    the NumPy backend's kernels each run with its error handling off (``backends.host``): a
    wrapper per call. The walk takes that state once instead (``quiet_enter``) while it runs
    rules and sums gradients, and gives them ``be.walk_ops``, the same kernels unwrapped.
    Everything of the user's -- hooks, a node's ``apply`` (a custom Function's backward,
    pack/unpack hooks) -- runs in the user's own NumPy state, as before. A backend without
    ``walk_ops`` (None here) has its rules run on ``be.ops``, in the user's state too."""
    return getattr(be, "walk_ops", None)


def _leave_quiet(token: Any) -> Any:
    """Give the user's NumPy error state back (before the user's code runs); the caller
    stores the None this returns as its token. An interruption between the two leaves the
    token spent but stored: the walk's ``finally`` then finds ``reset`` refusing it."""
    quiet_exit(token)
    return None


def _accumulate_hooked(node: Any, buf: list[Any], st: _WalkState) -> None:
    """An AccumulateGrad with hooks, after the leaf's own: its pre-hooks, then the gradient
    is staged; its post-hooks are kept for after the commit."""
    hooks = node._hooks
    if hooks is not None:
        buf = node_pre_hooks(node, buf, st.create_graph)
        if hooks.post:
            st.after_commit.append((node, buf))
    if buf[0] is not None:
        st.staged[node.variable] = buf[0]
    else:
        ex = node.variable._extra
        if ex is not None and ex.post_hooks:
            st.staged.setdefault(node.variable, None)  # undefined: post hooks still run


def _all_undefined(node: Node, buf: list[Any]) -> bool:
    """Whether ``node`` got only undefined gradients (None in every slot) and so computes
    nothing: PyTorch's engine still runs such a node -- its hooks see None, its outputs are
    undefined, and the nodes after it run the same way -- except that a custom Function's
    backward is called (with zeros, or None without materialized grads:
    ``_runs_undefined``)."""
    for g in buf:
        if g is not None:
            return False
    return not type(node)._runs_undefined


def _pend_undefined(pending: dict[Node, list[Any]], edge: Any) -> None:
    """An undefined gradient sent along ``edge``: the next node runs even if nothing else
    reaches it (see ``_all_undefined``)."""
    nxt = edge[0] if type(edge) is tuple else edge
    if nxt not in pending:
        pending[nxt] = [None] * nxt._nin


def _raise_freed(node: Node) -> None:
    raise GraphFreedError(f"{GRAPH_FREED} ({node.name()} was already released by an earlier "
                          "backward)")


def _raise_count(node: Node, outs: Any, nexts: Any) -> None:
    raise RetrogradError(
        f"function {node.name()} returned an incorrect number of gradients (expected "
        f"{len(nexts)}, got {len(outs)}; one per input of its forward)"
    )


def _run_order(order: list[Node], st: _WalkState) -> None:
    """The walk proper: one pass over ``order``; the hot loop of the engine. NumPy's quiet
    state is taken and given back as in ``_run_plain``; not at all under ``create_graph``
    (the rules then run differentiable ops, quiet themselves, and record nodes, which may
    call the user's pack hooks), with a tracer (the user's code, between every step) or in
    a walk under ``_QUIET_MIN_NODES``."""
    pending = st.pending
    marks = st.marks
    captured = st.captured
    masks = st.masks
    create_graph = st.create_graph
    retain = st.retain
    tracer = st.tracer
    anomaly = _anomaly.enabled
    acc_type = AccumulateGrad
    quiet = len(order) >= _QUIET_MIN_NODES and not create_graph and tracer is None
    fp: Any = None  # the quiet state's token while the walk holds it
    rule_be: Any = None  # the backend of the last formula node, and its walk kernels
    rule_ops: Any = None
    node: Any = None
    nexts: Any  # a tuple of entries, or one destination node (a bare edge)
    try:
        for node in order:
            buf = pending.pop(node, None)
            if buf is None:
                continue
            st.current = node  # the node running: a node made meanwhile has it as parent
            is_acc = type(node) is acc_type
            # PyTorch's order: the tensors' hooks (and retain_grad), then the node's own
            # pre-hooks, the node, its post-hooks; an AccumulateGrad's post-hooks run after
            # the commit (they see the new .grad). A node marked by _prune is requested by
            # autograd.grad (captured before the tensors' hooks if it runs, after them if it
            # is idle), or idle: its tensors' hooks only
            mark = marks.get(node) if marks is not None else None
            if mark is not None:
                idle, slots = mark
                if idle:
                    if fp is not None:  # the hooks below: the user's NumPy state
                        fp = _leave_quiet(fp)
                    if is_acc:
                        buf = leaf_hooks(node.variable, buf, create_graph)
                    elif node._hooks is not None:
                        buf = tensor_pre_hooks(node, buf, st.retained, create_graph)
                    if tracer is not None:
                        tracer.event("ready", node=node, grads=[arr(g) for g in buf])
                if slots is not None:
                    for slot, idxs in slots.items():
                        for i in idxs:
                            captured[i] = buf[slot]
                if idle:
                    continue
            if is_acc:
                if fp is not None and (node._hooks is not None or (
                        node.variable._extra is not None and node.variable._extra.hooks)):
                    fp = _leave_quiet(fp)  # the hooks below: the user's NumPy state
                buf = leaf_hooks(node.variable, buf, create_graph)
                if tracer is not None:
                    tracer.event("ready", node=node, grads=[arr(g) for g in buf])
                _accumulate_hooked(node, buf, st)
                continue
            if node._hooks is not None:
                if fp is not None:  # the hooks: the user's NumPy state
                    fp = _leave_quiet(fp)
                buf = tensor_pre_hooks(node, buf, st.retained, create_graph)
            if tracer is not None:
                tracer.event("ready", node=node, grads=[arr(g) for g in buf])
            if node._hooks is not None:
                buf = node_pre_hooks(node, buf, create_graph)
            if node._released:
                _raise_freed(node)
            stamps = node._versions  # flat: (counter, snapshot, saved index) * k
            if stamps and (stamps[0] != stamps[1] or len(stamps) > 3):
                node.validate_versions()  # also for undefined gradients, as PyTorch's nodes
            undefined = buf[0] is None and _all_undefined(node, buf)
            formula = type(node)._formula
            if undefined:
                nexts = next_entries(node)
                bare = False
                outs = (None,) * len(nexts)
            elif create_graph:
                nexts = next_entries(node)
                bare = False
                if formula:
                    outs = node.graph_rule(buf, masks.get(node, nexts))
                else:
                    outs = node.apply_for_graph(buf)
            else:
                nexts = node._next
                bare = type(nexts) is not tuple  # one edge, to slot 0 of node ``nexts``
                if formula:  # the fast path: the rule on raw arrays, no method frames between
                    if not quiet:
                        outs = node.rule(node._backend.ops, buf[0], node._saved, node._attrs,
                                         FIRST_ONLY if bare else masks.get(node, nexts))
                    else:
                        be = node._backend
                        if be is not rule_be:
                            rule_be = be
                            rule_ops = _walk_ops(be)
                        if rule_ops is not None:
                            if fp is None:
                                fp = quiet_enter()
                            outs = node.rule(rule_ops, buf[0], node._saved, node._attrs,
                                             FIRST_ONLY if bare else masks.get(node, nexts))
                        else:
                            if fp is not None:
                                fp = _leave_quiet(fp)
                            outs = node.rule(be.ops, buf[0], node._saved, node._attrs,
                                             FIRST_ONLY if bare else masks.get(node, nexts))
                else:
                    if fp is not None:
                        fp = _leave_quiet(fp)
                    outs = node.apply(buf)
                    if bare:
                        nexts = next_entries(node)
                        bare = False
            if bare:
                nexts = (nexts,)  # its one edge: the hand-off below pairs it with outs[0] only
            elif len(outs) != len(nexts):
                _raise_count(node, outs, nexts)
            if node._hooks is not None and node._hooks.post:
                if fp is not None:
                    fp = _leave_quiet(fp)
                outs = post_hooks(node, outs, buf, create_graph)
            if anomaly:
                check_outputs(node, outs)
            if tracer is not None:
                tracer.event("run", node=node, outputs=[arr(o) for o in outs])
            if not retain:
                if formula:
                    node._saved = node._sources = None
                    node._versions = ()
                    node._released = True
                else:
                    node.release_saved()
                if tracer is not None:
                    tracer.event("release", node=node)
            for edge, g in zip(nexts, outs):
                if edge is None:
                    continue
                if g is None:
                    _pend_undefined(pending, edge)
                    continue
                if type(edge) is tuple:
                    nxt, nr = edge
                else:
                    nxt, nr = edge, 0
                b = pending.get(nxt)
                if b is None:
                    b = pending[nxt] = [None] * nxt._nin
                    b[nr] = g
                elif b[nr] is None:
                    b[nr] = g
                elif fp is not None:
                    b[nr] = b[nr] + g
                else:
                    b[nr] = quiet_add(b[nr], g)
                if tracer is not None:
                    tracer.event("arrive", node=nxt, slot=nr, value=arr(g), total=arr(b[nr]),
                                 source=node)
    except BaseException:
        st.current = node  # the node being run, for the error note: only when one raises
        raise
    finally:
        if fp is not None:
            try:
                quiet_exit(fp)
            except RuntimeError:  # spent: an interruption fell after a _leave_quiet's reset
                pass


def _as_result(g: Any, like: Any, root: Tensor) -> Any:
    """A captured gradient as the tensor ``grad`` returns, in the dtype of the input it is
    for (``like``; a ``GradientEdge`` keeps the gradient's own dtype, on the root's
    backend)."""
    if g is None:
        return None
    if isinstance(g, Tensor):
        return g
    if not isinstance(like, Tensor):
        be = root.backend
        return Tensor(g if type(g) is be.array_type else be.asarray(g), be)
    be = like.backend
    if type(g) is not be.array_type:
        g = be.asarray(g)
    want = grad_dtype_of(like)
    if want is not None and g.dtype != want:
        g = be.ops.astype(g, want)
    return Tensor(g, be)
