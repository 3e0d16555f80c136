"""In-place ops through views, recorded as PyTorch records them (its ``CopySlices``).

Why: PyTorch programs write through views all the time -- ``y[0].mul_(2)``,
``y[:, 1].zero_()``, ``y.T.add_(1)``, ``y.view(-1)[3:].copy_(z)`` -- and expect the base
``y`` to carry the change in its history. The forward needs nothing special (a view shares its
base's memory, so writing the view writes the base); the history does:

- the base ``b`` gets a new node, ``CopySlices``, with two edges: ``b``'s previous history,
  which receives the incoming gradient with the view's region zeroed (those values were
  overwritten), and the result of the op applied out of place to the view's old value, which
  receives the incoming gradient read through the view;
- the view's own history becomes the view taken again from ``b``'s new history;
- every other view of ``b`` taken before is now *stale*: its history still derives from
  ``b``'s old one. It is regenerated from ``b``'s current history when it is next used
  (``ops._core.edge_of``), as PyTorch does lazily. PyTorch does so after *any* change of the
  shared data, also one not recorded (under no_grad, through a ``detach()`` alias), so every
  in-place op marks the views stale (``ops.inplace.touch``): a view taken from another view
  then skips that view's node, and its hooks.

For that each view must know how it derives from its base. A view op records, when its input
requires grad (grad mode on) or is itself such a view, the chain of steps from the base in
``_extra.view_chain`` (``ops.shape._view_result``): ``(kind, arg)`` pairs, kind one of
``reshape`` (arg: the result's shape), ``permute`` (dims), ``expand`` (the result's shape),
``getitem`` (a normalized basic key), ``diagonal`` ((offset, dim1, dim2)) or ``gather`` (an
integer array of flat indices into the step's input: a view whose steps were not recorded,
see ``_strided_chain``, or an ``as_strided`` one). A chain replays on raw
arrays (the backend's kernels) and on tensors (retrograd's differentiable ops), so the
``CopySlices`` rule is written once against the op namespace ``F`` and works under
``create_graph=True`` too. Views of tensors that need no gradient record nothing: their view
ops cost what they did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._version import bump, new_counter, rebased_of
from .._writes import write
from ..autograd.node import formula_node
from ..errors import RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import inplace_result, record
from .late_views import LAZY, wake

__all__ = ["CopySlices", "ViewFn", "replay", "regenerate", "inplace_on_view"]

# The kinds of view step (``ops.shape`` writes the same literals when it records a step).
RESHAPE = "reshape"
PERMUTE = "permute"
EXPAND = "expand"
GETITEM = "getitem"
GATHER = "gather"
DIAGONAL = "diagonal"  # arg: (offset, dim1, dim2)

LEAF_VIEW = ("a view of a leaf Variable that requires grad is being used in an in-place "
             "operation.")
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to "
           "a single memory location. Please clone() the tensor before performing the "
           "operation.")


def replay(F: Any, x: Any, chain: tuple[tuple[str, Any], ...]) -> Any:
    """Apply the view steps of ``chain`` to ``x`` with the ops of ``F``: raw arrays with a
    backend's kernels, tensors with retrograd's differentiable ops (``GRAPH_F``)."""
    for kind, arg in chain:
        if kind == GETITEM:  # with a trailing ``...``: an all-int key then gives a 0-d view
            x = F.getitem(x, arg if Ellipsis in arg else arg + (Ellipsis,))
        elif kind == RESHAPE:
            x = F.reshape(x, arg)
        elif kind == PERMUTE:
            x = F.permute(x, arg)
        elif kind == EXPAND:
            x = F.expand(x, arg)
        elif kind == DIAGONAL:
            from .views import _diag

            x = _diag(F, x, *arg)
        elif isinstance(x, Tensor):  # GATHER on a tensor: one node, as PyTorch's
            x = _as_strided(x, arg)
        else:  # GATHER: flat indices into the (flattened) base
            x = F.getitem(F.reshape(x, (-1,)), (arg,))
    return x


def step_shapes(F: Any, base: Any, chain: tuple[tuple[str, Any], ...]) -> tuple[Any, Any]:
    """The input shape of each step of ``chain`` replayed on ``base``, and the view."""
    shapes = []
    x = base
    for step in chain:
        shapes.append(tuple(x.shape))
        x = replay(F, x, (step,))
    return tuple(shapes), x


def adjoint(F: Any, g: Any, chain: tuple[tuple[str, Any], ...],
            shapes: tuple[tuple[int, ...], ...]) -> Any:
    """The chain's adjoint applied to ``g`` (a value of the view's shape): a value of the
    base's shape, each step's adjoint in reverse (``shapes``: each step's input shape)."""
    for (kind, arg), shape in zip(reversed(chain), reversed(shapes)):
        if kind == GETITEM:
            g = F.index_backward(g, shape, arg if Ellipsis in arg else arg + (Ellipsis,))
        elif kind == RESHAPE:
            g = F.reshape(g, shape)
        elif kind == PERMUTE:
            inverse = [0] * len(arg)
            for i, d in enumerate(arg):
                inverse[d] = i
            g = F.permute(g, tuple(inverse))
        elif kind == EXPAND:
            g = F.reduce_to(g, shape)
        elif kind == DIAGONAL:
            from .views import diag_adjoint

            g = diag_adjoint(F, g, shape, *arg)
        else:  # GATHER
            n = 1
            for d in shape:
                n *= d
            g = F.reshape(F.index_backward(g, (n,), (arg,)), shape)
    return g


def _as_strided_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    chain, shapes = attrs
    return (adjoint(F, g, chain, shapes),)


# a view taken again from its base's current history: one node from the base to the view,
# PyTorch's (it does not replay the view ops that made it); attrs: (chain, step shapes)
AsStridedBackward = formula_node("AsStridedBackward0", _as_strided_rule)


def _as_strided(x: Tensor, idx: Any) -> Tensor:
    """``x``'s elements at the flat indices ``idx`` (a raw integer array), as a new tensor
    whose node is ``AsStridedBackward0``."""
    be = x.backend
    out = Tensor(be.asarray(be.ops.getitem(be.ops.reshape(x._data, (-1,)), (idx,))), be)
    if _grad.enabled and x._requires_grad:
        chain = ((GATHER, idx),)
        record(AsStridedBackward, out, (x,), (), (), (chain, (tuple(x.shape),)))
    return out


class ViewFn:
    """How a view derives from its base: the attrs of a ``CopySlices`` node.

    ``view`` reads a base-shaped value through the view; ``zero`` sets the view's region of a
    base-shaped value to zero. Both are written with ``F`` only, so they record themselves
    under ``create_graph=True`` (``getitem``/``where`` are differentiable there)."""

    __slots__ = ("chain", "base_shape", "backend", "_counts", "_flat")

    def __init__(self, chain: tuple[tuple[str, Any], ...], base_shape: tuple[int, ...],
                 backend: Any) -> None:
        self.chain = chain
        self.base_shape = base_shape
        self.backend = backend
        self._counts: Any = None
        self._flat: Any = None

    def view(self, F: Any, g: Any) -> Any:
        return replay(F, g, self.chain)

    def zero(self, F: Any, g: Any) -> Any:
        chain = self.chain
        if len(chain) == 1 and chain[0][0] == GETITEM:  # y[k].op_(): zero the key directly
            key = chain[0][1]
            return F.index_zero(g, key if Ellipsis in key else key + (Ellipsis,))
        # any other chain: zero where the view has elements. ``where`` rather than a product
        # with a 0/1 mask: an inf or nan in the region must become 0, as PyTorch writes it
        region = self.backend.ops.gt(self.counts(), 0)
        if isinstance(g, Tensor):
            region = Tensor(region, g.backend)
        return F.where(region, 0.0, g)

    def counts(self) -> Any:
        """How many elements of the view each element of the base is (a raw array of the
        base's shape): the chain's adjoint applied to ones. Computed on first need, then
        kept with the node."""
        if self._counts is None:
            ops = self.backend.ops
            base = ops.zeros(self.base_shape, self.backend.xp_dtype("float64"))
            shapes, view = step_shapes(ops, base, self.chain)
            self._counts = adjoint(ops, ops.ones_like(view), self.chain, shapes)
        return self._counts

    def flat_index(self) -> Any:
        """The chain replayed on the base's flat positions (a raw integer array of the view's
        shape): where each of the view's elements sits in the flattened base."""
        if self._flat is None:
            ops = self.backend.ops
            n = 1
            for s in self.base_shape:
                n *= s
            positions = ops.arange(0, n, 1, self.backend.xp_dtype("int64"))
            self._flat = replay(ops, ops.reshape(positions, self.base_shape), self.chain)
        return self._flat


def _copy_slices_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any, Any]:
    return (attrs.zero(F, g) if needs[0] else None, attrs.view(F, g) if needs[1] else None)


CopySlices = formula_node("torch::autograd::CopySlices", _copy_slices_rule)


def _graph_ops() -> Any:
    from .graph_namespace import GRAPH_F

    return GRAPH_F


def regenerate(t: Tensor) -> None:
    """Give the view ``t`` a history from its base's *current* one (after an in-place op
    changed the base, directly or through another view, recorded or not): one
    ``AsStridedBackward0`` node whose backward is its chain's adjoint, as PyTorch takes a
    view again. Recorded whatever the grad mode: the history is what a later backward walks.
    ``retain_grad`` follows the new node; hooks stay with the old one, as in PyTorch."""
    ex = t._extra
    b = t._base
    assert ex is not None and ex.view_chain is not None and b is not None
    old_fn, old_nr = t.grad_fn, t._output_nr
    if b._requires_grad:
        chain = chain_of(t)
        shapes, _ = step_shapes(b.backend.ops, b._data, chain)  # views of the raw data
        r = Tensor(t._data, t.backend)
        inplace_result(b, record, AsStridedBackward, r, (b,), (), (), (chain, shapes))
        t.grad_fn, t._output_nr, t._requires_grad = r.grad_fn, 0, True
    else:
        t.grad_fn, t._output_nr, t._requires_grad = None, 0, False
    if t._vc is not None:
        ex.view_epoch = rebased_of(t._vc)
    t._follow_retain(old_fn, old_nr)


def chain_of(t: Tensor) -> tuple[tuple[str, Any], ...]:
    """The view ``t``'s recorded chain; for a view woken after its base came to need
    gradient (``ops.late_views.LAZY``), the steps read off the memory layout, kept."""
    ex = t._extra
    assert ex is not None and ex.view_chain is not None and t._base is not None
    chain = ex.view_chain
    if chain is LAZY:
        # on a backend with immutable arrays the view's steps were kept for its writes
        read = ex.data_chain if ex.data_chain is not None else _strided_chain(t, t._base)
        if read is None:
            raise RetrogradError(
                f"a view (shape {t.shape}) taken before its base (shape {t._base.shape}) "
                "needed gradient is used after the base was given history, on a backend "
                "whose memory layout retrograd cannot read: take the view again from the "
                "base (refused rather than a silently wrong gradient)"
            )
        chain = ex.view_chain = read
    return chain


def _replayed(b: Tensor, chain: tuple[tuple[str, Any], ...]) -> Tensor:
    """The view ``chain`` of ``b`` taken again on ``b``'s current history, with fresh nodes
    (recorded whatever the grad mode)."""
    enabled = _grad.enabled
    _grad.enabled = True
    try:
        return replay(_graph_ops(), b, chain)
    finally:
        _grad.enabled = enabled


def _strided_chain(t: Tensor, b: Tensor) -> tuple[tuple[str, Any], ...] | None:
    """A ``gather`` chain for a view whose steps were not recorded (it was taken from a tensor
    that did not require grad: recording costs every plain view op). It is read off the
    arrays' memory layout -- where each element of ``t`` sits among ``b``'s, by address --
    which the backend's ``memory_layout`` kernel gives (NumPy's and CuPy's array interfaces,
    DLPack for array-api-strict); None where it cannot. Computed with the
    backend's array namespace (``Backend.xp``): the ops layer imports no array library."""
    vd, bd = t._data, b._data
    layout = getattr(t.backend.ops, "memory_layout", None)
    vl = layout(vd) if layout is not None else None
    bl = layout(bd) if layout is not None else None
    if vl is None or bl is None:
        return None
    xp = t.backend.xp
    i64 = t.backend.xp_dtype("int64")

    def addresses(shape: tuple[int, ...], strides: tuple[int, ...], start: int) -> Any:
        out = xp.full(shape, start, dtype=i64)
        for d, (n, s) in enumerate(zip(shape, strides)):
            step = [1] * len(shape)
            step[d] = n
            out = out + xp.reshape(xp.arange(n, dtype=i64) * s, tuple(step))
        return xp.reshape(out, (-1,))

    base = addresses(tuple(bd.shape), bl[1], 0)
    mine = addresses(tuple(vd.shape), vl[1], vl[0] - bl[0])
    if base.shape[0] == 0 or mine.shape[0] == 0:
        idx = xp.zeros(tuple(vd.shape), dtype=i64)
    else:
        order = xp.argsort(base, stable=True)
        ranked = xp.take(base, order)
        k = xp.clip(xp.searchsorted(ranked, mine), 0, base.shape[0] - 1)
        if not bool(xp.all(xp.take(ranked, k) == mine)):
            return None
        idx = xp.reshape(xp.take(order, k), tuple(vd.shape))
    return ((GATHER, idx),)


def _overlaps(t: Tensor, fn: ViewFn) -> bool:
    """PyTorch's internal-overlap test of the written tensor: a dimension of size > 1 with
    stride 0 (an expanded view). Without strides: a base element the view holds twice."""
    data = t._data
    strides = getattr(data, "strides", None)
    if strides is not None:
        return any(s == 0 and n > 1 for n, s in zip(data.shape, strides))
    counts = fn.counts()
    ops = t.backend.ops
    return t.numel() > 1 and ops.item(ops.amax(counts)) > 1


def _write(t: Tensor, b: Tensor, fn: ViewFn, values: Any) -> None:
    """``values`` into the view's elements. A view the backend made read-only (NumPy's
    ``broadcast_to``: a selection without overlap from an expanded view) is written through
    the base at the view's flat indices, as PyTorch writes it through shared memory."""
    be = t.backend
    if be.functional or getattr(getattr(t._data, "flags", None), "writeable", True):
        write(t, values)
        return
    flat = fn.flat_index()
    coords = []
    inner = 1
    for n in reversed(fn.base_shape):
        coords.append((flat // inner) % n)
        inner *= n
    be.ops.setitem(b._data, tuple(reversed(coords)) if coords else (Ellipsis,),
                   be.ops.expand(values, tuple(flat.shape)))


def inplace_on_view(name: str, t: Tensor, out_of_place: Callable[[Tensor], Tensor],
                    needs_old: bool) -> bool:
    """The recorded in-place op ``name`` on the view ``t`` (``ops.inplace._inplace``): write
    the result into the base's memory and give base and view their new histories. False when
    ``t`` is no differentiable view but a detached alias of its base (``detach()``,
    ``.data``): the caller then records the op on ``t`` alone, as PyTorch does."""
    b = t._base
    assert b is not None
    ex = t._extra
    if ex is not None and ex.multi_output is not None:  # an unbind output: ops.views
        raise RetrogradError(ex.multi_output)
    chain = ex.view_chain if ex is not None else None
    if chain is LAZY:  # taken before its base needed gradient: ops.late_views
        chain = chain_of(t)
    vc = t._counter()  # the base's, shared
    if chain is None:
        if t._data is b._data:
            return False
        if b._requires_grad:
            # taken before its base required grad, or from a detached alias: which of the
            # two PyTorch would see cannot be told here, and they differ in the gradient
            raise RetrogradError(
                f"{name}: in-place operation on a view (shape {t.shape}) whose steps from its "
                f"base (shape {b.shape}) were not recorded: it was taken before its base "
                "required grad, or from a detached alias. retrograd cannot tell how to rebase "
                "it (refused rather than a silently wrong gradient): take the view again from "
                "the base, or clone() it"
            )
        chain = _strided_chain(t, b)
        if chain is None:
            raise RetrogradError(
                f"{name}: in-place operation on a view (shape {t.shape}) of a tensor that did "
                "not require grad when the view was taken, on a backend whose memory layout "
                "retrograd cannot read: take the view from the base after it requires grad, "
                "or apply the op to the base"
            )
        ex = t._x()
        ex.view_chain = chain
        ex.view_epoch = rebased_of(vc)
    if b._requires_grad and b.grad_fn is None:
        raise RetrogradError(f"{name}: {LEAF_VIEW}")
    be = t.backend
    fn = ViewFn(chain, b.shape, be)
    if _overlaps(t, fn):
        raise RetrogradError(f"{name}: {OVERLAP}")
    if rebased_of(vc) != ex.view_epoch:  # type: ignore[union-attr]
        regenerate(t)  # the old value's history: the view of the base's current one
    old_data = be.ops.copy(t._data) if needs_old else t._data
    src = t
    hooks = t.grad_fn._hooks if t.grad_fn is not None else None
    if (hooks is not None and hooks.tensor_pre.get(t._output_nr)) or (
            t.grad_fn is not None and not type(t.grad_fn)._formula):
        # the view's own hooks belong to its old node, which PyTorch's CopySlices leaves out
        # of the graph (it feeds the base's old history directly): so must the op here --
        # through a fresh replay of the view's steps, not through that node. So too for a
        # view made by a custom Function marked ``_is_pure_view``: its backward is left out
        src = _replayed(b, chain)
    old = Tensor(old_data, be, src._requires_grad, src.grad_fn, src._output_nr)
    old._vc = new_counter()  # the view's value before the op: a counter of its own
    res = out_of_place(old)
    if res.shape != t.shape:
        raise ShapeError(
            f"{name}: output with shape {list(t.shape)} doesn't match the broadcast shape "
            f"{list(res.shape)}"
        )
    _write(t, b, fn, res._data)  # into the base's memory
    b_fn, b_nr = b.grad_fn, b._output_nr
    record(CopySlices, b, (b, res), (), (), fn)
    b._output_nr = 0  # b may have been output 1 of a node with several
    b._follow_retain(b_fn, b_nr)
    wake(b, stale=True)  # its views taken while it needed no gradient: ops.late_views
    bump(vc, rebase=True)  # once, for base and views alike: every other view is now stale
    regenerate(t)
    return True


def dirty_view_chain(t: Tensor) -> tuple[tuple[str, Any], ...] | None:
    """How the view ``t`` derives from its base, for ``ctx.mark_dirty`` on it: its recorded
    steps, or -- a view taken before its base required grad, where the base still does not --
    steps read from the memory layout; None where neither is known."""
    ex = t._extra
    if ex is not None and ex.view_chain is not None:
        return chain_of(t)
    b = t._base
    if b is None or b._requires_grad or t._data is b._data:
        return None
    return _strided_chain(t, b)


def rebase_dirty_view(t: Tensor, node: Any, nr: int) -> None:
    """``ctx.mark_dirty`` on the view ``t``, changed in place by the custom Function ``node``
    (its output ``nr``): as for a recorded in-place op through a view (``inplace_on_view``),
    the base takes ``CopySlices(its old history, the Function's output)`` and ``t`` is taken
    again from it, as PyTorch rebases a dirty view. The Function has already written the
    base's memory; the caller has bumped the shared counter (``rebase=True``)."""
    b = t._base
    chain = dirty_view_chain(t)
    assert b is not None and chain is not None  # _check_dirty refused the others
    be = t.backend
    ex = t._x()
    ex.view_chain = chain
    res = Tensor(t._data, be, True, node, nr)  # the Function's output: the view's new value
    res._vc = new_counter()
    b_fn, b_nr = b.grad_fn, b._output_nr
    record(CopySlices, b, (b, res), (), (), ViewFn(chain, b.shape, be))
    b._output_nr = 0  # b may have been output 1 of a node with several
    b._follow_retain(b_fn, b_nr)
    wake(b, stale=True)
    regenerate(t)
