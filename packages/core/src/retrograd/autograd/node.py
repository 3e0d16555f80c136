"""Backward graph nodes.

A ``Node`` is one backward function. ``next_edges`` say where its outputs go: one
``(node, input_nr)`` per forward input (``None`` where that input needs no gradient).
Formula nodes carry the arrays their rule needs; nothing points back from a node to its
consumers, and a node saves its output's *array*, never the output tensor, so the graph holds
no reference cycles and is freed by reference counting alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .._version import FRESH, new_counter
from ..errors import DoubleBackwardUnsupported, RetrogradError, VersionMismatch
from ..tensor import Tensor, _create_lock

__all__ = ["Node", "Edge", "FormulaNode", "MultiOutputFormulaNode", "formula_node",
           "edge_node", "edge_pair", "next_entries", "FIRST_ONLY"]

_hook_ids = itertools.count()


def edge_node(edge: Any) -> Any:
    """The destination of an internal edge entry.

    Internally ``_next`` holds, per forward input, None, the destination node itself (for
    its input slot 0, by far the most common) or a ``(node, slot)`` tuple: one long-lived
    object fewer per edge for the garbage collector to scan. ``next_edges`` shows them all
    as ``Edge(node, input_nr)``."""
    return edge[0] if type(edge) is tuple else edge


# The ``needs`` a rule gets for a node whose ``_next`` is bare (see ``next_entries``): input 0
# needs a gradient, the others (at most two more) do not.
FIRST_ONLY: tuple[Any, ...] = (True, None, None)


def next_entries(node: Any) -> tuple[Any, ...]:
    """``node._next`` as one entry per forward input.

    A formula node whose only edge goes to slot 0 of input 0 -- ``tanh(x)``, ``x * 2.0`` --
    stores that destination node *as* ``_next``, not in a 1-tuple (the other inputs, if its
    class has a fixed ``_arity``, are Python scalars with no edge): a tuple holding a node is
    one more object the cyclic garbage collector scans for as long as the graph lives. The
    walk handles the bare form inline; everything else reads the entries here."""
    nx = node._next
    if type(nx) is tuple:
        return nx
    return (nx,) + (None,) * (type(node)._arity - 1 if type(node)._arity > 1 else 0)


def edge_pair(edge: Any) -> tuple[Any, int]:
    if edge is None:
        return (None, 0)
    if type(edge) is tuple:
        return edge
    return (edge, 0)


def _internal_edge(edge: Any) -> Any:
    if edge is None or isinstance(edge, Node):
        return edge
    node, nr = edge
    if node is None:
        return None
    return node if nr == 0 else (node, int(nr))


class Edge(NamedTuple):
    """Where a gradient goes: the destination node and its input slot."""

    node: Node | None
    input_nr: int


class _Hooks:
    """The rarely used per-node state, kept out of the hot object."""

    __slots__ = ("pre", "post", "tensor_pre", "retain")

    def __init__(self) -> None:
        self.pre: dict[int, Callable[..., Any]] = {}
        self.post: dict[int, Callable[..., Any]] = {}
        self.tensor_pre: dict[int, dict[int, Callable[..., Any]]] = {}
        self.retain: dict[int, Any] = {}  # slot -> weakref to the tensor that retains grad

    def empty(self) -> bool:
        return not (self.pre or self.post or self.tensor_pre or self.retain)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_table", "_key")

    def __init__(self, table: dict[int, Any], key: int) -> None:
        self._table = table
        self._key = key

    def remove(self) -> None:
        self._table.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Node:
    """Base class of every backward node.

    ``apply(grads)`` takes the gradients of the forward outputs as raw backend arrays and
    returns one gradient (array or None) per forward input; ``apply_for_graph`` does the same
    with tensors, recording the computation so it can be differentiated again.
    """

    __slots__ = ("_next", "_versions", "_released", "_walk", "_hooks", "_meta", "__weakref__")

    _nin = 1  # number of gradient inputs (= forward outputs)
    _arity = 0  # number of forward inputs when fixed (binary ops: 2); 0 when it varies
    _formula = False  # True for FormulaNode: the engine calls its rule directly
    _runs_undefined = False  # True: run even when every gradient is undefined (engine)
    fused = False

    def __init__(self, next_edges: Sequence[Any] = ()) -> None:
        # entries per forward input; or, for a formula node, bare (see next_entries)
        self._next: Any = tuple(_internal_edge(e) for e in next_edges)
        self._versions: tuple[Any, ...] = ()
        self._released = False
        self._walk: Any = None
        self._hooks: _Hooks | None = None
        self._meta: dict[str, Any] | None = None

    # -- identity ------------------------------------------------------------------------
    def name(self) -> str:
        """PyTorch's name of this node (``MulBackward0``; qualified for the nodes PyTorch
        names so, such as ``torch::autograd::CopySlices``, whose class is ``CopySlices``)."""
        return getattr(type(self), "_torch_name", None) or type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return tuple(tuple(edge_pair(e)) for e in next_entries(self))  # type: ignore[misc]

    @property
    def next_edges(self) -> tuple[Edge, ...]:
        return tuple(Edge(*edge_pair(e)) for e in next_entries(self))

    @property
    def metadata(self) -> dict[str, Any]:
        if self._meta is None:
            self._meta = {}
        return self._meta

    @property
    def released(self) -> bool:
        return self._released

    # -- the backward function ----------------------------------------------------------
    def apply(self, grad_outputs: Sequence[Any]) -> Sequence[Any]:
        raise NotImplementedError(f"{self.name()}.apply is not implemented")

    def apply_for_graph(self, grad_outputs: Sequence[Any]) -> Sequence[Any]:
        raise DoubleBackwardUnsupported(
            f"{self.name()} does not support create_graph=True (double backward): it has no "
            "apply_for_graph"
        )

    def __call__(self, *grad_outputs: Any) -> Any:
        """Call the backward function on tensors (as PyTorch's ``grad_fn(*grads)``)."""
        if len(grad_outputs) != self._nin:
            raise TypeError(f"expected {self._nin} arguments, got {len(grad_outputs)} instead "
                            f"({self.name()} takes one gradient per forward output)")
        arrays = [g._data if isinstance(g, Tensor) else g for g in grad_outputs]
        out = self.apply(arrays)
        backend = next((g.backend for g in grad_outputs if isinstance(g, Tensor)), None)
        wrapped = tuple(
            None if o is None else Tensor._wrap(o, backend) for o in out
        )
        return wrapped[0] if len(wrapped) == 1 else wrapped

    # -- saved tensors ------------------------------------------------------------------
    def save_for_backward(self, *tensors: Any) -> None:
        raise NotImplementedError(f"{self.name()} does not save tensors through this method")

    def saved_arrays(self) -> list[Any]:
        """The arrays this node still holds for its backward (empty once released)."""
        return []

    def release_saved(self) -> None:
        self._versions = ()
        self._released = True

    def validate_versions(self) -> None:
        """E7: every saved tensor must still be at the version stamped when it was saved.
        ``_versions`` is flat -- (counter, snapshot, saved index) repeated -- so that a node
        holds one small tuple rather than one per saved tensor."""
        stamps = self._versions
        for k in range(0, len(stamps), 3):
            if stamps[k] != stamps[k + 1]:
                self._raise_version_mismatch(stamps[k + 2], stamps[k], stamps[k + 1])

    def _raise_version_mismatch(self, index: int, counter: Any, stamp: Any) -> None:
        from .._version import is_detached, version_of

        now, saved = version_of(counter), version_of(stamp)
        if now == saved and is_detached(counter) and not is_detached(stamp):
            # PyTorch checks the version first: a detached tensor then changed in place is
            # reported as changed
            raise RetrogradError(
                f"Trying to use a saved tensor that has been detached in-place, i.e. with "
                f".detach_(): {self.name()} saved tensor #{index}. This is not supported, "
                "please use out-of-place `.detach()` instead"
            )
        shape = self._saved_shape(index)
        raise VersionMismatch(
            f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {self.name()} saved tensor #{index} of shape {shape}, which "
            f"is at version {now}; expected version {saved} instead. Do not modify in place "
            f"(also not under no_grad) a tensor that a later backward needs."
        )

    def _saved_shape(self, index: int) -> tuple[int, ...] | str:
        return "?"

    def _output_counter(self, t: Tensor) -> Any:
        """The version counter ``t`` (an output of this node) must use when it first needs
        one, if this node saved ``t`` without stamping it; None otherwise."""
        return None

    # -- hooks --------------------------------------------------------------------------
    def _hook_table(self) -> _Hooks:
        hooks = self._hooks
        if hooks is None:
            new = _Hooks()
            with _create_lock:  # published once: racing registrations share one table
                hooks = self._hooks
                if hooks is None:
                    hooks = self._hooks = new
        return hooks

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after ``apply``; may return new grad_inputs."""
        table = self._hook_table().post
        key = next(_hook_ids)
        table[key] = fn
        return RemovableHandle(table, key)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before ``apply``; may return new grad_outputs."""
        table = self._hook_table().pre
        key = next(_hook_ids)
        table[key] = fn
        return RemovableHandle(table, key)

    def _register_tensor_prehook(self, slot: int, fn: Callable[..., Any]) -> RemovableHandle:
        table = self._hook_table().tensor_pre.setdefault(slot, {})
        key = next(_hook_ids)
        table[key] = fn
        return RemovableHandle(table, key)


class FormulaNode(Node):
    """A node whose backward is a derivative rule written once against an op namespace ``F``.

    ``rule(F, g, saved, attrs, needs)`` returns one gradient per next edge. The fast walk
    calls it with the backend's raw kernels; ``create_graph=True`` calls it with retrograd's
    differentiable ops on tensors.
    """

    __slots__ = ("_backend", "_saved", "_sources", "_attrs")

    rule: Callable[..., tuple[Any, ...]]
    _formula = True

    def __init__(
        self,
        backend: Any,
        next_edges: tuple[Any, ...],
        saved: tuple[Any, ...],
        sources: tuple[Any, ...],
        versions: tuple[Any, ...],
        attrs: Any,
    ) -> None:
        self._next = next_edges
        self._versions = versions
        self._released = False
        self._walk = None
        self._hooks = None
        self._meta = None
        self._backend = backend
        self._saved: tuple[Any, ...] | None = saved
        self._sources: tuple[Any, ...] | None = sources
        self._attrs = attrs

    def apply(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        return self.rule(self._backend.ops, grad_outputs[0], self._saved, self._attrs,
                         next_entries(self))

    def apply_for_graph(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        return self.graph_rule(grad_outputs, next_entries(self))

    def graph_rule(self, grad_outputs: Sequence[Any], needs: Sequence[Any]) -> tuple[Any, ...]:
        """``apply_for_graph`` with the ``needs`` given: the walk masks the inputs whose
        gradient nobody asked for, so their derivative ops are never recorded."""
        saved = self.unpack_saved()
        outs = self.rule(_GRAPH_F[0] if _GRAPH_F else _graph_ops(), grad_outputs[0], saved,
                         self._attrs, needs)
        return _with_history(outs, saved, grad_outputs)

    def unpack_saved(self) -> tuple[Any, ...]:
        """Saved values as tensors: inputs as the original tensors (so a second derivative
        reaches them), outputs re-wrapped with this node as their grad_fn."""
        if not self._saved:
            if self._saved is not None:
                return ()  # the rule needs no values (sum, add...)
            from ..errors import GraphFreedError

            raise GraphFreedError(
                f"{self.name()}: saved tensors were already freed by an earlier backward; "
                "pass retain_graph=True to the earlier backward to keep them"
            )
        out: list[Any] = []
        sources = self._sources or (None,) * len(self._saved)  # () means "all constants"
        for arr, src in zip(self._saved, sources):
            if isinstance(src, Tensor):
                out.append(src)
            elif isinstance(src, int) and not isinstance(src, bool):
                t = Tensor(arr, self._backend, True, self, src)
                t._vc = _counter_for(self, arr)
                out.append(t)
            elif arr is None or isinstance(arr, (int, float)):
                out.append(arr)
            else:
                out.append(Tensor(arr, self._backend))
        return tuple(out)

    def _output_counter(self, t: Tensor) -> Any:
        """``t``'s first version counter, if this node saved ``t`` (its output ``nr``)
        lazily: see ``ops._core._stamp``. Until now ``t`` had no counter, so it is at version
        0 and the stamp is ``FRESH``; a counter this node already made for the same saved
        value (``_counter_for``, a double backward re-wrapping it) is shared, as the two
        tensors share the array."""
        sources = self._sources
        if not sources or not self._saved:
            return None
        nr = t._output_nr
        i = 0
        for src in sources:
            if type(src) is int and src == nr:
                return self._counter_of_saved(i)
            i += 1
        return None

    def _counter_of_saved(self, index: int) -> Any:
        stamps = self._versions
        for k in range(0, len(stamps), 3):
            if stamps[k + 2] == index:
                return stamps[k]
        vc = new_counter()
        self._versions = stamps + (vc, FRESH, index)
        return vc

    def saved_arrays(self) -> list[Any]:
        if self._saved is None:
            return []
        return [a for a in self._saved if a is not None and not isinstance(a, (int, float))]

    def release_saved(self) -> None:
        self._saved = None
        self._sources = None
        self._versions = ()
        self._released = True

    def _saved_shape(self, index: int) -> Any:
        if self._saved is None:
            return "?"
        return tuple(getattr(self._saved[index], "shape", ()))


_GRAPH_F: list[Any] = []


def _graph_ops() -> Any:
    """retrograd's differentiable op namespace (imported once, on first double backward)."""
    if not _GRAPH_F:
        from ..ops.graph_namespace import GRAPH_F

        _GRAPH_F.append(GRAPH_F)
    return _GRAPH_F[0]


def _zero_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, ...]:
    return tuple(F.zeros_like(s) if n else None for s, n in zip(saved, needs))


def _with_history(outs: Any, saved: Any, grads: Any) -> tuple[Any, ...]:
    """A gradient that depends on differentiable values only through a zero derivative (a
    ReLU mask, a sign) still gets history, as in PyTorch: its derivative is zero, not
    "does not require grad"."""
    for o in outs:  # the common case first: every gradient already has history (or is None)
        if isinstance(o, Tensor) and not o._requires_grad:
            break
    else:
        return outs
    deps = [t for t in (*saved, *grads) if isinstance(t, Tensor) and t._requires_grad]
    if not deps:
        return outs
    fixed = list(outs)
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and not o._requires_grad and o.dtype.is_floating_point:
            from ..ops._core import record

            t = Tensor(o._data, o.backend)
            record(ZeroDerivativeBackward, t, tuple(deps), tuple(d._data for d in deps),
                   (None,) * len(deps))
            fixed[i] = t
    return tuple(fixed)


def _counter_for(node: FormulaNode, arr: Any) -> Any:
    """The counter of the saved output ``arr``, re-wrapped as a tensor by ``unpack_saved``:
    the one the node stamped, made now (and stamped) if the output never needed one."""
    saved = node._saved or ()
    sources = node._sources or ()
    for i, src in enumerate(sources):
        if saved[i] is arr and type(src) is int:
            return node._counter_of_saved(i)
    return new_counter()


class MultiOutputFormulaNode(FormulaNode):
    """A formula node of an op with several differentiable outputs (``unbind``, ``split``):
    one node, each output its own slot (``Tensor._output_nr``), as PyTorch records them.
    Its rule gets the tuple of the outputs' gradients as ``g`` -- None for an output no
    gradient reached -- where a one-output rule gets one value. ``_nin`` (the number of
    outputs) is set per node by the op that records it. The walk runs it through ``apply``
    (``_formula`` False), as it runs a custom Function's node."""

    __slots__ = ("_nin",)
    _formula = False

    def release_saved(self) -> None:
        """Free the saved values after a backward. A node that saved none (the view ops':
        unbind, split) stays usable, as in PyTorch: a backward from one of its outputs must
        not refuse a later backward from another (``a, b = x.unbind(); a.backward();
        b.backward()``)."""
        if self._saved:
            super().release_saved()

    def apply(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        return self.rule(self._backend.ops, tuple(grad_outputs), self._saved, self._attrs,
                         next_entries(self))

    def graph_rule(self, grad_outputs: Sequence[Any], needs: Sequence[Any]) -> tuple[Any, ...]:
        saved = self.unpack_saved()
        outs = self.rule(_GRAPH_F[0] if _GRAPH_F else _graph_ops(), tuple(grad_outputs), saved,
                         self._attrs, needs)
        return _with_history(outs, saved, grad_outputs)


def formula_node(name: str, rule: Callable[..., tuple[Any, ...]],
                 arity: int = 0, multi_output: bool = False) -> type[FormulaNode]:
    """Make the node class of one op: ``formula_node("MulBackward", mul_rule, arity=2)``.
    ``arity``: the number of forward inputs when the op always has that many (0: varies).
    ``multi_output``: the op has several differentiable outputs (``MultiOutputFormulaNode``)."""
    base = MultiOutputFormulaNode if multi_output else FormulaNode
    attrs: dict[str, Any] = {"__slots__": (), "rule": staticmethod(rule), "_arity": arity}
    if "::" in name:  # PyTorch's qualified name() (``torch::autograd::CopySlices``)
        attrs["_torch_name"] = name
        name = name.rpartition("::")[2]
    return type(name, (base,), attrs)


ZeroDerivativeBackward = formula_node("ZeroDerivativeBackward", _zero_rule)
