"""What every op needs: operand checks, and ``record`` -- attaching a backward node to an
output. Ops compute on raw arrays through ``tensor.backend.ops`` and call ``record`` only when
grad mode is on and some input requires grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._version import FRESH, rebased_of
from ..autograd.accumulate import accumulator_of
from ..autograd.anomaly import _state as _anomaly
from ..autograd.anomaly import note_forward
from ..autograd.graph import _LIVE as _saved_hooks_live
from ..autograd.graph import pack_node
from ..errors import RetrogradError
from ..grad_mode import _state as _grad
from ..tensor import Tensor

__all__ = ["record", "edge_of", "binary_operands", "check_device", "Scalar"]

Scalar = (int, float)

# ``sources`` of an op that saves only its own (fresh) output: ``record`` skips ``_stamp``
OUTPUT = (0,)


def edge_of(t: Tensor | None) -> Any:
    """The edge a gradient for ``t`` travels: its grad_fn slot, or its leaf accumulator."""
    if t is None or not t._requires_grad:
        return None
    fn = t.grad_fn
    if t._base is not None and t._extra is not None:
        _check_view_fresh(t)
        if not t._requires_grad:  # taken again from a base that no longer requires grad
            return None
        fn = t.grad_fn
    if fn is not None:
        nr = t._output_nr
        return fn if nr == 0 else (fn, nr)  # see autograd.node.edge_node
    return accumulator_of(t)


class InferenceView(str):
    """A view's creation kind ("no_grad" or "no_grad_plain") for a view made inside
    inference mode: it behaves as the no_grad kind it equals (``==``), and PyTorch's refusals
    name inference mode instead of no_grad mode (``view_refusal``)."""

    __slots__ = ()


def view_refusal(creation: str, what: str) -> str:
    """PyTorch's refusal of a view made in no_grad or inference mode; ``what``: "is being
    modified inplace" or "its base or another view of its base has been modified inplace"."""
    if isinstance(creation, InferenceView):
        mode, now, block = "inference mode", "in normal mode", "inference_mode"
    else:
        mode, now, block = "no_grad mode", "with grad mode enabled", "no_grad"
    return (
        f"A view was created in {mode} and {what} {now}. Given that this use case is "
        "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
        f"the view and the inplace either both inside the {block} block (if you don't want "
        "the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
    )


def _check_view_fresh(t: Tensor) -> None:
    """A view whose base's data changed in place since the view's history was taken -- by
    any op, recorded or not (under no_grad, through another view or a ``detach()`` alias):
    every in-place op bumps the counter's rebase epoch (``ops.inplace.touch``) -- still has
    history derived from the old data. PyTorch takes such a view again from its base's current
    history when it is next used (its ``attr_version``), so the nodes of views taken in between
    are skipped, and their hooks with them; here too (``ops.view_inplace.regenerate``). A view
    PyTorch would not regenerate -- made under no_grad, or an output of a custom Function that
    aliases its input -- is refused with PyTorch's words rather than used with a stale
    history, unless its base needs no gradient (nothing to take again, as in PyTorch)."""
    vc = t._vc
    ex = t._extra
    if vc is None or rebased_of(vc) == ex.view_epoch:  # type: ignore[union-attr]
        return
    if ex.view_chain is not None:  # type: ignore[union-attr]
        from .view_inplace import regenerate

        regenerate(t)
        return
    creation = ex.view_creation  # type: ignore[union-attr]
    if creation is None:
        return  # not a differentiable view (a detached alias): its history is its own
    if creation in ("no_grad", "no_grad_plain"):
        base = t._base
        # (a plain one requires grad only once woken by its base: ops.late_views)
        if base is None or not base._requires_grad or not t._requires_grad:
            return
        raise RetrogradError(view_refusal(
            creation, "its base or another view of its base has been modified inplace"))
    raise RetrogradError(  # a custom Function's output: its in-place refusal, for its base
        (creation.partition(": ")[2] or creation).replace(
            "is being modified inplace", "its base or another view of its base has been "
            "modified inplace")
    )


def record(
    cls: Any,
    out: Tensor,
    inputs: tuple[Tensor | None, ...],
    saved: tuple[Any, ...] = (),
    sources: tuple[Any, ...] = (),
    attrs: Any = None,
) -> Tensor:
    """Attach a ``cls`` backward node to ``out``.

    ``sources[i]`` says what ``saved[i]`` is: the input Tensor it came from (its version is
    stamped), ``0`` for the output's own array (stamped with the output's counter), or None
    for a constant.

    This runs once per recorded op, so it is written flat: the edge of a plain tensor (no
    view, output slot 0) is taken inline rather than through ``edge_of``, and the node's
    slots are set here rather than in an ``__init__`` frame (``FormulaNode.__init__`` stays
    the readable form of the same thing; ``test_node_slots_match_init`` holds them equal).
    """
    if not sources or (sources is OUTPUT and out._vc is None):
        stamps: tuple[Any, ...] = ()  # nothing to stamp, or only the fresh output (lazy)
    else:
        stamps = _stamp(out, sources)
    t = inputs[0]
    if t is None or not t._requires_grad:
        first = None
    elif t._base is None and t._output_nr == 0 and t.grad_fn is not None:
        first = t.grad_fn
    else:
        first = edge_of(t)
    if len(inputs) == 1:
        edges = first if first is not None and type(first) is not tuple else (first,)
    elif len(inputs) == 2:
        t = inputs[1]
        if t is None or not t._requires_grad:
            # bare when the first edge goes to slot 0 of a node: see autograd.node.next_entries
            edges = first if cls._arity == 2 and first is not None and \
                type(first) is not tuple else (first, None)
        elif t._base is None and t._output_nr == 0 and t.grad_fn is not None:
            edges = (first, t.grad_fn)  # the second edge as the first: inline (W2's adds)
        else:
            edges = (first, edge_of(t))
    else:
        edges = (first, *map(edge_of, inputs[1:]))
    dt = out._data.dtype
    if _float_array_dtypes.get(id(dt)) is not dt:
        _check_differentiable(out)
    node = _new(cls)
    node._next = edges
    node._versions = stamps
    node._released = False
    node._walk = None
    node._hooks = None
    node._meta = None
    node._backend = out.backend
    node._saved = saved
    node._sources = sources
    node._attrs = attrs
    if _anomaly.enabled:
        note_forward(node)
    out.grad_fn = node
    out._requires_grad = True
    if _saved_hooks_live:  # some thread is inside saved_tensors_hooks: see autograd.graph
        pack_node(node, out)
    return out


_new = object.__new__

# id -> array dtype, for the floating-point ones (those that can carry history): record's
# check, one lookup. By id: some array libraries warn when their dtypes meet others in ==
_float_array_dtypes: dict[int, Any] = {}

# PyTorch's names of the scalar types, in its refusal
_SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                      "int32": "Int", "int64": "Long"}


def inplace_result(t: Tensor, record: Callable[..., Any], *args: Any) -> Any:
    """``record(*args)``: the recording of an in-place op on ``t`` (or of a view of ``t``
    taken again), whose results may be integer or bool tensors with history when ``t`` is
    one, as PyTorch's rebase and view regeneration allow (``_check_differentiable``)."""
    if t.dtype.is_floating_point:
        return record(*args)
    before = _grad.inplace_history
    _grad.inplace_history = True
    try:
        return record(*args)
    finally:
        _grad.inplace_history = before


def _check_differentiable(out: Tensor) -> None:
    """An op's output may carry history only in a floating-point dtype, as in PyTorch: an
    integer or bool tensor given history by a recorded in-place write (``m[i] = w[0]``)
    makes every op whose output would be an integer or bool tensor with history an error
    (``m + 1``, ``m[0]``, ``m.sum()``); ``m * 1.5`` is a float result and records. The
    in-place op's own result is exempt (``_state.inplace_history``), as PyTorch's rebase
    does not check."""
    dt = out.backend.dtype_of(out._data)
    if dt.is_floating_point:
        _float_array_dtypes[id(out._data.dtype)] = out._data.dtype
        return
    if _grad.inplace_history:
        return
    raise RetrogradError(
        f"Autograd not support dtype: {_SCALAR_TYPE_NAMES.get(dt.name, dt.name)} (an op on "
        "an integer or bool tensor that has history would give an integer or bool result "
        "with history: detach() it, or cast it to a floating-point dtype first)")


def _stamp(out: Tensor, sources: tuple[Any, ...]) -> tuple[Any, ...]:
    """Flat (counter, snapshot, index) stamps for the saved values that come from tensors
    (no reference the garbage collector tracks: see ``retrograd._version``).

    The op's own output is stamped lazily: a fresh output has no version counter yet, and
    nothing can change it in place without first giving it one (``Tensor._counter``), which
    then stamps this node at version 0 (``FormulaNode._output_counter``). Most outputs never
    get a counter, so most nodes that save their output (tanh, relu, exp ...) hold no stamp
    at all: one counter and one tuple fewer per node to allocate, and for the garbage
    collector to scan while the graph lives (W1's forward, ``docs/performance.md``)."""
    if len(sources) == 1:  # the common case (an activation's output, one input): no list
        src = sources[0]
        if src is None:
            return ()
        # a counter is 16 bytes, never falsy; an input without one gets it (and may stamp
        # the node that saved it as an output) through Tensor._counter
        vc = out._vc if type(src) is int else (src._vc or src._counter())
        return () if vc is None else (vc, FRESH if vc == FRESH else bytes(vc), 0)
    flat: list[Any] = []
    i = 0
    for src in sources:
        if src is not None:
            vc = out._vc if type(src) is int else (src._vc or src._counter())
            if vc is not None:  # None: the op's fresh output, stamped lazily
                flat += (vc, FRESH if vc == FRESH else bytes(vc), i)
        i += 1
    return tuple(flat)


def same_device(a: Tensor, b: Tensor) -> bool:
    """Whether ``a`` and ``b`` live on one device. Device indices are compared only on a
    backend whose arrays can sit on different devices (``Backend.multi_device``), and not
    through ``t.device``: that property builds a lookup key, ~1 µs a call, and the ops ask
    this for every pair of operands."""
    be = a.backend
    return b.backend is be and (not be.multi_device or
                                be.device_index(a._data) == be.device_index(b._data))


def check_device(op: str, a: Tensor, b: Tensor) -> None:
    if not same_device(a, b):
        raise RetrogradError(
            f"{op}: expected all tensors to be on the same device, but found at least two "
            f"devices, {a.device} and {b.device}"
        )


def binary_operands(op: str, a: Any, b: Any) -> tuple[Any, Any, Any]:
    """Resolve the backend of a binary op; Python scalars stay scalars (weak dtypes)."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a.backend is not b.backend or a.backend.multi_device:
                check_device(op, a, b)  # raises only when the two devices differ
            return a, b, a.backend
        if isinstance(b, Scalar):
            return a, b, a.backend
        raise TypeError(
            f"{op}: unsupported operand type {type(b).__name__} (expected a Tensor or a number)"
        )
    if isinstance(b, Tensor) and isinstance(a, Scalar):
        return a, b, b.backend
    raise TypeError(
        f"{op}: unsupported operand types {type(a).__name__} and {type(b).__name__}"
    )

