"""Saved-tensor hooks: ``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``.

As in PyTorch (``torch.autograd.graph``): inside ``saved_tensors_hooks(pack_hook,
unpack_hook)`` every op that saves a tensor for its backward calls ``pack_hook(tensor)`` -- with
the input tensor it saves, or with its own output when it saves that (``exp``, ``tanh``,
``relu``) -- and keeps whatever the hook returns *instead of* the tensor. The backward calls
``unpack_hook(packed)`` each time it needs the value (every backward of a retained graph, and
under ``create_graph=True`` too) and uses the tensor it returns. Ops that save nothing (``add``,
``sum``, ``x * 2.0``) call no hook; neither do leaves. The hooks are a thread-local stack: the
innermost pair wins, and other threads are not affected.

Design (no cost in the walk, one check in ``record``)
-----------------------------------------------------
``ops._core.record`` -- the forward's hottest path -- tests one module-level list, ``_LIVE``,
which holds an entry per hook context currently entered in any thread; it is empty unless
someone uses hooks. When it is not, ``pack_node`` (below) runs after the node is built: it
calls the pack hook on each saved array and turns the node into a *packed* node by assigning
its class to ``packed_class(cls)``, a subclass made once per node class (same name, same slots,
so ``grad_fn.name()`` and ``isinstance`` are unchanged) that

* sets ``_formula = False``: the walk already runs non-formula nodes through ``node.apply``
  (and ``apply_for_graph`` under ``create_graph``) -- the path custom Functions take -- so it
  needs no new branch and no per-node test. The subclass's ``apply`` unpacks (calling the
  unpack hooks) into locals and calls the op's own ``rule``; ``unpack_saved`` does the same for
  the differentiable ``graph_rule``. Unpacked values are never stored on the node, so a
  retained graph keeps only the packed objects (``save_on_cpu`` keeps device memory free
  between two backwards).
* keeps the node's ``_versions`` stamps as they were: version checks (E7) run exactly as for
  an unpacked node, before ``apply``. This is stricter than PyTorch, which skips the version
  check for a tensor saved through hooks: retrograd still refuses a backward through a value
  modified in place after it was saved.
* is not a fusion candidate (the fusion pass matches exact node classes).

A saved input tensor is not referenced by a packed node (only the packed object and the edge
its gradient takes, which the node already holds), so an unpacked value that is a copy still
carries the gradient to the original tensor under ``create_graph=True`` -- through a
``SavedTensorAliasBackward`` node when the unpacked tensor is not the original itself.

Custom Functions (``ctx.save_for_backward``) go through ``pack_saved_tensors`` /
``unpack_saved_tensors``: the same packing, for a node that is not a formula node.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..errors import GraphFreedError, RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from .gradient_edge import GradientEdge, get_gradient_edge
from .multi_grad_hooks import register_multi_grad_hook
from .node import (
    FormulaNode,
    MultiOutputFormulaNode,
    Node,
    edge_pair,
    formula_node,
    next_entries,
)

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "increment_version",
           "pack_saved_tensors", "unpack_saved_tensors", "current_saved_tensors_hooks", "Node",
           "allow_mutation_on_saved_tensors", "GradientEdge", "get_gradient_edge",
           "register_multi_grad_hook"]


class _HookState(threading.local):
    """This thread's stack of (pack, unpack) pairs, and the message of an enclosing
    ``disable_saved_tensors_hooks`` (None when hooks are allowed)."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Tensor], Any], Callable[[Any], Tensor]]] = []
        self.disabled: str | None = None


_state = _HookState()

# One entry per hook context entered, in any thread: ``record``'s only test. Appending and
# removing are atomic under the GIL.
_LIVE: list[object] = []


def current_saved_tensors_hooks() -> tuple[Callable[[Tensor], Any],
                                           Callable[[Any], Tensor]] | None:
    """The (pack_hook, unpack_hook) pair in effect in this thread, or None."""
    stack = _state.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are stored as
    ``pack_hook(tensor)`` and given back to the backward as ``unpack_hook(packed)``.

    ``pack_hook(tensor) -> Any`` may return any object; ``unpack_hook(packed) -> Tensor`` must
    return a tensor of the saved tensor's shape (its dtype is cast back if it differs). The
    hooks apply to the ops run in this thread while the context is active; nested contexts:
    the innermost pair wins. ``pack_hook`` runs under ``no_grad`` and must not modify its input
    in place; ``unpack_hook`` runs in the backward's grad mode (enabled under
    ``create_graph=True``).
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _state.disabled is not None:
            raise RetrogradError(_state.disabled)
        for what, fn in (("pack_hook", self.pack_hook), ("unpack_hook", self.unpack_hook)):
            if not callable(fn):
                raise TypeError(f"saved_tensors_hooks: {what} must be callable, got "
                                f"{type(fn).__name__}")
        _state.stack.append((self.pack_hook, self.unpack_hook))
        _LIVE.append(self)

    def __exit__(self, *exc: object) -> None:
        _state.stack.pop()
        _LIVE.remove(self)


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are stored on the ``cpu`` backend and moved back to their original device
    when the backward needs them (trading transfers for device memory).

    A tensor already on the cpu backend is kept as it is (no copy), but still goes through the
    hooks. ``pin_memory`` and ``device_type`` are accepted for PyTorch compatibility; retrograd
    has no pinned host memory, so the copy is an ordinary one.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory
        self.device_type = device_type

        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if tensor.backend.name == "cpu":
                # no copy: a plain alias of the array (not ``tensor`` itself, which may be the
                # op's output and would make the node hold its own output)
                return (tensor.device, Tensor(tensor._data, tensor.backend))
            return (tensor.device, tensor.to("cpu"))

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class _AllowMutationState(threading.local):
    active: Any = None  # the allow_mutation_on_saved_tensors context entered in this thread


_allow_mutation = _AllowMutationState()


class _OutsideContextError(RetrogradError, AssertionError):
    """A backward through a graph recorded inside ``allow_mutation_on_saved_tensors`` after
    the context closed: PyTorch raises an AssertionError; this is also a RuntimeError."""


class _AllowMutationContext:
    """What ``allow_mutation_on_saved_tensors`` yields: the copies saved inside it, held
    while the context is open."""

    def __init__(self) -> None:
        self.closed = False
        self.saved = 0

    def clear(self) -> None:
        """Forget the count of saved copies (the copies themselves belong to the graph)."""
        self.saved = 0


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationContext]:
    """Inside it, a tensor saved for backward may be changed in place afterwards: the
    backward uses the value it had when it was saved, instead of refusing the graph (E7).

    As in PyTorch it works through saved-tensor hooks; retrograd's hooks copy each saved
    tensor when it is saved (PyTorch copies it when it is first modified, so retrograd holds
    more memory inside the context; the values are the same). A backward through the graph
    after the context is closed is refused, and the contexts do not nest."""
    if _allow_mutation.active is not None:
        raise RetrogradError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationContext()

    def pack(t: Tensor) -> Tensor:
        ctx.saved += 1
        from ..ops.conversion import clone

        return clone(t.detach())

    def unpack(copy: Tensor) -> Tensor:
        if ctx.closed:
            raise _OutsideContextError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context "
                "in which the graph was originally recorded.")
        return copy

    pack._unversioned = True  # type: ignore[attr-defined]  # read by pack_node: no E7 stamps
    _allow_mutation.active = ctx
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        ctx.closed = True
        _allow_mutation.active = None


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside it, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``;
    entering it while hooks are active raises the same."""
    prev = _state.disabled
    _state.disabled = error_message
    try:
        if _state.stack:
            raise RetrogradError(error_message)
        yield
    finally:
        _state.disabled = prev


# ------------------------------------------------------------------------------------------
# packing
# ------------------------------------------------------------------------------------------
_PACK_IN_PLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects."
)


class SavedPacked:
    """One saved tensor as its pack hook left it: the packed object, the unpack hook bound
    when it was packed, the metadata the unpacked tensor is checked against, and how the
    unpacked value rejoins the graph under ``create_graph=True``: ``output_nr`` (>= 0: it is
    that output of the owning node) or ``edge`` (the gradient edge of the saved input; None
    when the value is a constant)."""

    __slots__ = ("packed", "unpack_hook", "shape", "dtype", "output_nr", "edge")

    def __init__(self, packed: Any, unpack_hook: Callable[[Any], Tensor], shape: tuple[int, ...],
                 dtype: Any, output_nr: int, edge: Any) -> None:
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.shape = shape
        self.dtype = dtype
        self.output_nr = output_nr
        self.edge = edge

    def _unpacked(self, backend: Any) -> tuple[Tensor, Any]:
        """The unpack hook's tensor, checked, and its array (cast to the saved dtype)."""
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if t.shape != self.shape:
            raise RetrogradError(
                f"saved tensor unpack_hook returned a tensor of shape {t.shape}, but the tensor "
                f"saved had shape {self.shape}: the unpacked tensor must match the size of the "
                "saved tensor"
            )
        if t.backend is not backend:
            raise RetrogradError(
                "Expected all tensors to be on the same device, but found at least two devices: "
                f"saved tensor unpack_hook returned a tensor on {t.device}, the backward runs "
                f"on the {backend.name} backend"
            )
        data = t._data
        if t.dtype is not self.dtype:
            data = backend.ops.astype(data, backend.xp_dtype(self.dtype))
        return t, data

    def array(self, backend: Any) -> Any:
        """The value as a raw array (the fast walk)."""
        return self._unpacked(backend)[1]

    def tensor(self, owner: Node, backend: Any, index: int | None = None) -> Tensor:
        """The value as a tensor that differentiates like the one saved: ``owner``'s output
        ``output_nr``, or a tensor whose gradient goes where the saved input's went."""
        t, data = self._unpacked(backend)
        if self.output_nr >= 0:
            out = Tensor(data, backend, True, owner, self.output_nr)
            if index is not None and isinstance(owner, FormulaNode):
                out._vc = owner._counter_of_saved(index)
            return out
        edge = self.edge
        if edge is None:
            return Tensor(data, backend)
        if data is t._data and _edge_is(t, edge):
            return t  # the unpack hook gave back the saved tensor itself
        out = Tensor(data, backend)
        alias = SavedTensorAliasBackward(backend, (edge,), (), (), (), None)
        out.grad_fn = alias
        out._requires_grad = True
        return out


def _edge_is(t: Tensor, edge: Any) -> bool:
    node, nr = edge_pair(edge)
    if t.grad_fn is not None:
        return t.grad_fn is node and t._output_nr == nr
    return t._requires_grad and getattr(node, "variable", None) is t


SavedTensorAliasBackward = formula_node("SavedTensorAliasBackward",
                                        lambda F, g, saved, attrs, needs: (g,), arity=1)


def _pack_one(pack: Callable[[Tensor], Any], unpack: Callable[[Any], Tensor], t: Tensor,
              output_nr: int, edge: Any) -> SavedPacked:
    before = t._version
    prev = _grad.enabled
    _grad.enabled = False
    try:
        packed = pack(t)
    finally:
        _grad.enabled = prev
    if t._version != before:
        raise RetrogradError(_PACK_IN_PLACE)
    return SavedPacked(packed, unpack, t.shape, t.dtype, output_nr, edge)


def pack_node(node: Any, out: Tensor) -> None:
    """``record``'s slow path, run only while some thread has hooks: pack the saved arrays of
    the formula node ``node`` (just attached to ``out``) with this thread's innermost hooks
    and make it a packed node. A node that saves no array is left as it is."""
    hooks = current_saved_tensors_hooks()
    saved = node._saved
    if hooks is None or not saved:
        return
    be = node._backend
    array_type = be.array_type
    if not any(isinstance(e, array_type) for e in saved):
        return  # scalars only (``x * 2.0``): nothing is a tensor
    from ..ops._core import edge_of

    pack, unpack = hooks
    sources = node._sources or (None,) * len(saved)
    new_saved: list[Any] = list(saved)
    new_sources: list[Any] = list(sources)
    for i, (e, src) in enumerate(zip(saved, sources)):
        if not isinstance(e, array_type):
            continue
        if isinstance(src, Tensor):
            t = src if src._data is e else Tensor(e, be)
            edge = edge_of(src) if src._requires_grad else None
            new_saved[i] = _pack_one(pack, unpack, t, -1, edge)
            new_sources[i] = None  # the node keeps no reference to the input tensor
        elif type(src) is int:
            t = out if src == out._output_nr and out._data is e else Tensor(e, be, True, node,
                                                                           src)
            new_saved[i] = _pack_one(pack, unpack, t, src, None)
        else:
            new_saved[i] = _pack_one(pack, unpack, Tensor(e, be), -1, None)
    node._saved = tuple(new_saved)
    node._sources = tuple(new_sources)
    node.__class__ = packed_class(type(node))
    if getattr(pack, "_unversioned", False):  # copies: a later in-place change is harmless
        node._versions = ()


class PackedFormulaNode(FormulaNode):
    """The methods of a formula node whose saved values went through pack hooks (mixed in
    front of the op's node class by ``packed_class``). ``_saved`` holds ``SavedPacked`` entries
    where the plain node holds arrays; ``_formula = False`` routes the node through ``apply``
    / ``apply_for_graph``, which unpack and then run the op's ``rule``."""

    __slots__ = ()
    _formula = False

    def _check_alive(self) -> tuple[Any, ...]:
        saved = self._saved
        if saved is None:
            raise GraphFreedError(
                f"{self.name()}: Trying to backward through the graph a second time (or directly "
                "access saved tensors after they have already been freed); specify "
                "retain_graph=True on the earlier backward"
            )
        return saved

    def apply(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        saved = self._check_alive()
        be = self._backend
        arrays = tuple(e.array(be) if type(e) is SavedPacked else e for e in saved)
        # a node of several outputs gets all their gradients, as unpacked (``node.py``)
        g = tuple(grad_outputs) if isinstance(self, MultiOutputFormulaNode) else grad_outputs[0]
        return self.rule(be.ops, g, arrays, self._attrs, next_entries(self))

    def unpack_saved(self) -> tuple[Any, ...]:
        """Saved values as tensors (unpack hooks called): outputs with this node as grad_fn,
        inputs linked to the gradient edge of the tensor saved."""
        saved = self._check_alive()
        be = self._backend
        return tuple(e.tensor(self, be, i) if type(e) is SavedPacked else e
                     for i, e in enumerate(saved))

    def saved_arrays(self) -> list[Any]:
        """The arrays the node holds: the tensors found in its packed objects (directly, or in
        a tuple/list as ``save_on_cpu`` packs them)."""
        out: list[Any] = []
        for e in self._saved or ():
            if type(e) is not SavedPacked:
                continue
            obj = e.packed
            for item in obj if isinstance(obj, (tuple, list)) else (obj,):
                if isinstance(item, Tensor):
                    out.append(item._data)
        return out


_PACKED_CLASSES: dict[type, type] = {}


def packed_class(cls: type) -> type:
    """The packed variant of the formula node class ``cls`` (made once, cached)."""
    sub = _PACKED_CLASSES.get(cls)
    if sub is None:
        if issubclass(cls, PackedFormulaNode):
            return cls
        sub = type(cls.__name__, (PackedFormulaNode, cls),
                   {"__slots__": (), "__module__": cls.__module__,
                    "__qualname__": cls.__qualname__})
        _PACKED_CLASSES[cls] = sub
    return sub


# ------------------------------------------------------------------------------------------
# custom Functions
# ------------------------------------------------------------------------------------------
def pack_saved_tensors(owner: Node, tensors: Sequence[Tensor | None]
                       ) -> tuple[SavedPacked | None, ...] | None:
    """Pack what a custom Function saved (``ctx.save_for_backward``) with this thread's
    innermost hooks; None when no hooks are active (keep the tensors as they are).

    Call it once the forward's outputs have ``owner`` (the ctx) as their grad_fn, as PyTorch
    packs after the forward: a saved output is then recognised (``t.grad_fn is owner``) and
    its unpacked value rejoins the graph as that output."""
    if not _LIVE:
        return None
    hooks = current_saved_tensors_hooks()
    if hooks is None:
        return None
    from ..ops._core import edge_of

    pack, unpack = hooks
    out: list[SavedPacked | None] = []
    for t in tensors:
        if t is None:
            out.append(None)
        elif t.grad_fn is owner:
            out.append(_pack_one(pack, unpack, t, t._output_nr, None))
        else:
            out.append(_pack_one(pack, unpack, t, -1, edge_of(t) if t._requires_grad else None))
    return tuple(out)


def unpack_saved_tensors(owner: Node, packed: Sequence[SavedPacked | None]
                         ) -> tuple[Tensor | None, ...]:
    """The tensors ``pack_saved_tensors`` packed, unpacked (the unpack hooks run on each call).
    With grad mode on (a ``create_graph=True`` backward) they carry history: a saved output as
    ``owner``'s output, a saved input with a gradient edge to the original; otherwise they are
    plain tensors."""
    graph = _grad.enabled
    out: list[Tensor | None] = []
    for p in packed:
        if p is None:
            out.append(None)
            continue
        be = getattr(owner, "_backend", None)
        if be is None:
            raise RetrogradError(f"{owner.name()}: the saved tensors have no backend")
        if graph:
            out.append(p.tensor(owner, be))
        else:
            out.append(Tensor(p.array(be), be))
    return tuple(out)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Count an in-place change made behind retrograd's back (e.g. through ``t.numpy()``):
    bumps the version of ``tensor`` (or of each tensor of an iterable), so that a node that
    saved it refuses it in backward (E7) and its views are taken again, as PyTorch's."""
    from ..ops.inplace import touch

    tensors = [tensor] if isinstance(tensor, Tensor) else tensor
    try:
        items = list(tensors)
    except TypeError:
        raise RetrogradError("increment_version expect a Iterable[Tensor] as input") from None
    for t in items:
        if not isinstance(t, Tensor):
            raise RetrogradError("increment_version expect a Iterable[Tensor] as input")
    for t in items:
        touch(t._counter())
