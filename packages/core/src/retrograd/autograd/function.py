"""Custom ops, as in PyTorch: subclass ``Function`` with static ``forward(ctx, ...)`` and
``backward(ctx, *grads)`` (or ``vjp``), call ``MyFn.apply(...)``. The PyTorch 2 style -- a
``forward(...)`` without ``ctx`` plus ``setup_context(ctx, inputs, output)`` -- works too.

What ``apply`` does with the outputs of ``forward`` follows PyTorch:

* a fresh tensor gets the Function's node as its ``grad_fn`` (returned twice, it is one
  object whose ``output_nr`` is the last position);
* an input returned as-is comes back as a new tensor that is a view of it (each time);
* an input marked with ``ctx.mark_dirty`` comes back as itself, its version bumped and its
  history rebased onto the node (a leaf that requires grad, or a view of one, is refused);
* outputs that are views may not be modified in place while grad mode records (the error
  says why); non-tensor outputs pass through and get ``None`` as gradient in ``backward``;
* ``backward`` gets zeros for a tensor output that received no gradient (or was marked
  non-differentiable) unless ``ctx.set_materialize_grads(False)``.

``backward`` receives and returns tensors. When it is written with retrograd ops it is
differentiable (``create_graph=True`` works). A backward marked ``@once_differentiable`` runs
without recording: under ``create_graph=True`` its gradients get a node that raises only if
they are differentiated again. A backward that drops the graph (returns tensors without
history while its inputs have one) makes ``create_graph=True`` raise
``DoubleBackwardUnsupported`` naming the Function.
"""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .._version import bump, rebased_of
from ..errors import (
    GRAPH_FREED,
    DoubleBackwardUnsupported,
    DTypeError,
    GraphFreedError,
    RetrogradError,
    ShapeError,
)
from ..grad_mode import _state as _grad
from ..grad_mode import no_grad
from ..tensor import Tensor
from .anomaly import _state as _anomaly
from .anomaly import note_forward
from .graph import current_saved_tensors_hooks, pack_saved_tensors, unpack_saved_tensors
from .node import Node

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"

_CLEARED_MSG = (
    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set "
    "on the autograd.Function. Either access saved_tensors only once, or set "
    "clear_saved_tensors_on_access=False."
)

_LEAF_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."
_VIEW_OF_LEAF_DIRTY = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
_DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. "
    "The inputs that are modified inplace must all be outputs of the Function."
)
_DIRTY_VIEW_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() for "
    "example) or make your Function only return one Tensor (potentially splitting it into two "
    "Functions: one doing the inplace that returns a single Tensor and a second one that does "
    "the other operations)."
)
_DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
    "been mutated should be passed to ctx.mark_dirty()."
)
_CUSTOM_VIEW = (
    "Output {nr} of {name} is a view and is being modified inplace. This view was created "
    "inside a custom Function (or because an input was returned as-is) and the autograd logic "
    "to handle view+inplace would override the custom backward associated with the custom "
    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
    "cloning the output of the custom Function."
)
_MULTI_VIEW = (
    "Output {nr} of {name} is a view and is being modified inplace. This view is the output of "
    "a function that returns multiple views. Such functions do not allow the output views to "
    "be modified inplace. You should replace the inplace operation by an out-of-place one."
)


def _typename(obj: Any) -> str:
    return type(obj).__name__


def _shape_list(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ------------------------------------------------------------------------------------------
# once_differentiable
# ------------------------------------------------------------------------------------------
class DelayedError(Node):
    """The ``grad_fn`` of gradients computed by a ``@once_differentiable`` backward under
    ``create_graph=True``: differentiating them again raises (PyTorch's ``DelayedError``)."""

    __slots__ = ("_nin",)

    def __init__(self, next_edges: Sequence[Any], nin: int) -> None:
        Node.__init__(self, next_edges)
        self._nin = nin

    def name(self) -> str:
        return "Error"  # PyTorch's node name (``torch::autograd::Error``)

    def apply(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        raise RetrogradError(_ONCE)

    def apply_for_graph(self, grad_outputs: Sequence[Any]) -> tuple[Any, ...]:
        raise RetrogradError(_ONCE)


DelayedError.__name__ = DelayedError.__qualname__ = "Error"  # the class name PyTorch shows


def _delayed_error(outputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``outputs`` re-wrapped with a ``DelayedError`` node as their history. Its edges go to
    detached stand-ins, as in PyTorch: nothing reaches the original graph through it."""
    from .accumulate import accumulator_of

    edges: list[Any] = []
    for o in outputs:
        if isinstance(o, Tensor) and o.dtype.is_floating_point:
            edges.append(accumulator_of(Tensor(o._data, o.backend, True)))
        else:
            edges.append(None)
    node = DelayedError(edges, len(outputs))
    return tuple(
        Tensor(o._data, o.backend, True, node, k) if e is not None else o
        for k, (o, e) in enumerate(zip(outputs, edges))
    )


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not differentiable (it may use raw arrays).

    It runs under ``no_grad``. Under ``create_graph=True``, when a gradient it receives has
    history, the gradients it returns get a node that raises "trying to differentiate twice a
    function that was marked with @once_differentiable" if a later backward reaches it."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *grads)
        if not _grad.enabled:
            return outputs
        if not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return outputs
        if isinstance(outputs, tuple):
            return _delayed_error(outputs)
        return _delayed_error((outputs,))[0]

    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


# ------------------------------------------------------------------------------------------
# the ctx / backward node
# ------------------------------------------------------------------------------------------
class _SavedOutput:
    """A saved output of the Function itself, held without the tensor (whose ``grad_fn`` is
    the node: saving it would make a reference cycle), re-wrapped on access."""

    __slots__ = ("data", "backend", "nr", "vc")

    def __init__(self, t: Tensor) -> None:
        self.data = t._data
        self.backend = t.backend
        self.nr = t._output_nr
        self.vc = t._counter()


class _SavedDirtyView:
    """A saved view that the Function marked dirty and returned, held weakly (see
    ``_take_saved``): the view itself while it lives, else its value without history."""

    __slots__ = ("ref", "data", "backend", "vc", "shape")

    def __init__(self, t: Tensor) -> None:
        self.ref = weakref.ref(t)
        self.data = t._data
        self.backend = t.backend
        self.vc = t._counter()
        self.shape = t.shape

    def tensor(self) -> Tensor:
        t = self.ref()
        if t is not None:
            return t
        out = Tensor(self.data, self.backend)
        out._vc = self.vc
        return out


_CLEARED: tuple[Any, ...] = ("<cleared>",)  # saved_tensors already taken (clear on access)


class FunctionCtx(Node):
    """The backward node of one ``Function.apply`` call; also the ``ctx`` its methods get.

    ``next_functions`` has one entry per *tensor* argument of ``forward`` (as in PyTorch);
    ``needs_input_grad`` one per argument."""

    _runs_undefined = True  # its backward is called with undefined grads too, as PyTorch's

    __slots__ = ("_fn_cls", "_saved_tensors", "_to_save", "_nin", "needs_input_grad",
                 "_is_var", "_in_meta", "_out_meta", "_backend", "_dirty", "_non_diff",
                 "_materialize", "_packed", "__dict__")

    def __init__(self, fn_cls: Any, next_edges: tuple[Any, ...], needs: tuple[bool, ...],
                 is_var: tuple[bool, ...], in_meta: tuple[Any, ...], backend: Any) -> None:
        Node.__init__(self, next_edges)
        self._fn_cls = fn_cls
        self._saved_tensors: tuple[Any, ...] | None = ()
        self._to_save: tuple[Any, ...] = ()
        self._nin = 1
        self.needs_input_grad = needs
        self._is_var = is_var
        self._in_meta = in_meta  # (shape, dtype, device) per tensor argument
        self._out_meta: tuple[Any, ...] = ()  # (backend, shape, raw dtype) or None per output
        self._backend = backend
        self._dirty: tuple[Any, ...] = ()
        self._non_diff: tuple[Any, ...] = ()
        self._materialize = True
        self._packed = False  # _saved_tensors holds what saved-tensor hooks packed

    def name(self) -> str:
        return f"{self._fn_cls.__name__}Backward"

    # -- ctx API --------------------------------------------------------------------------
    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (or None) for ``backward``, read back as ``ctx.saved_tensors``. They
        are taken when ``forward`` returns (so a tensor saved and then marked dirty is saved
        at its new version); a non-tensor is refused then, when the call records."""
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to ``save_for_backward``, checked against in-place changes."""
        st = self._saved_tensors
        if st is None:
            raise GraphFreedError(
                f"{GRAPH_FREED} ({self.name()}: its saved tensors were freed by an earlier "
                "backward)"
            )
        if st is _CLEARED:
            raise RetrogradError(_CLEARED_MSG)
        if not st:
            return ()
        self.validate_versions()
        if self._packed:
            out = unpack_saved_tensors(self, st)
        else:
            out = tuple(self._unpack(e) for e in st)
        if self._fn_cls.clear_saved_tensors_on_access:
            self._saved_tensors = _CLEARED
            self._versions = ()
        return out

    def _unpack(self, entry: Any) -> Any:
        if type(entry) is _SavedOutput:
            t = Tensor(entry.data, entry.backend, True, self, entry.nr)
            t._vc = entry.vc
            return t
        if type(entry) is _SavedDirtyView:
            return entry.tensor()
        return entry

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Outputs that get no history (``requires_grad`` False); their gradient in
        ``backward`` is zeros (or None without materialized grads)."""
        self._non_diff = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Inputs that ``forward`` modified in place. Each must be returned: it comes back as
        the same object, version bumped, with this node as its history."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (True, the default) or None for an output that
        received no gradient."""
        self._materialize = bool(value)

    def saved_arrays(self) -> list[Any]:
        st = self._saved_tensors
        if not st or st is _CLEARED or self._packed:
            return []
        return [e.data if type(e) is _SavedOutput else e._data for e in st if e is not None]

    def release_saved(self) -> None:
        self._saved_tensors = None
        self._versions = ()
        self._released = True

    def _saved_shape(self, index: int) -> Any:
        st = self._saved_tensors
        if not st or st is _CLEARED or st[index] is None:
            return "?"
        e = st[index]
        return tuple(e.data.shape) if type(e) is _SavedOutput else e.shape  # Tensor, packed,
        # dirty view

    def _take_saved(self) -> None:
        """Store what ``save_for_backward`` was given (types checked before) and stamp the
        versions: called once the outputs have their history, as PyTorch saves then."""
        saved: list[Any] = []
        flat: list[Any] = []
        for i, t in enumerate(self._to_save):
            if t is None:
                saved.append(None)
                continue
            e: Any
            if t.grad_fn is self:
                e = _SavedOutput(t)
                vc = e.vc
            elif t._base is not None and any(t is d for d in self._dirty):
                # a view marked dirty and returned: its history leads back to this node (its
                # base was rebased onto it), so holding it would be a reference cycle
                e = _SavedDirtyView(t)
                vc = e.vc
            else:
                e = t
                vc = t._counter()
            saved.append(e)
            flat += (vc, bytes(vc), i)
        self._versions = tuple(flat)
        packed = pack_saved_tensors(self, self._to_save)  # None without saved-tensor hooks
        self._to_save = ()
        if packed is None:
            self._saved_tensors = tuple(saved)
        else:
            self._saved_tensors = packed
            self._packed = True
            hooks = current_saved_tensors_hooks()
            if hooks is not None and getattr(hooks[0], "_unversioned", False):
                self._versions = ()  # copies (allow_mutation_on_saved_tensors): no E7 check

    # -- backward ---------------------------------------------------------------------------
    def _user_backward(self) -> Callable[..., Any]:
        cls = self._fn_cls
        b, v = cls.backward, cls.vjp
        if b is not _BASE_BACKWARD and v is not _BASE_BACKWARD:
            raise RetrogradError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                f"You should only implement one of them ({cls.__name__} has both)."
            )
        return v if v is not _BASE_BACKWARD else b  # type: ignore[no-any-return]

    def _materialized(self, grads: list[Any], as_tensor: bool) -> list[Any]:
        for k, g in enumerate(grads):
            if g is None:
                meta = self._out_meta[k] if k < len(self._out_meta) else None
                if meta is not None:
                    be, shape, dtype = meta
                    z = be.ops.zeros(shape, dtype)
                    grads[k] = Tensor(z, be) if as_tensor else z
        return grads

    def _call_backward(self, fn: Callable[..., Any], grads: Sequence[Any]) -> tuple[Any, ...]:
        """Run the user's backward and check its result as PyTorch does; one gradient (or
        None) per tensor argument of ``forward``."""
        result = fn(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        is_var = self._is_var
        n = len(is_var)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]  # extra trailing Nones are accepted
        if len(result) != n:
            raise RetrogradError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n}, got {len(result)})"
            )
        out: list[Any] = []
        for i, (g, var) in enumerate(zip(result, is_var)):
            if not var:
                if g is not None:
                    raise RetrogradError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise DTypeError(
                    f"function {self.name()} returned a {_typename(g)} as the gradient at "
                    f"position {i + 1}: expected Variable or None (got {_typename(g)})"
                )
            out.append(g)
        nexts = self._next
        for k, g in enumerate(out):
            if g is None or nexts[k] is None:
                continue  # PyTorch checks the gradients that go somewhere
            out[k] = self._validated(k, g)
        return tuple(out)

    def _validated(self, k: int, g: Tensor) -> Tensor:
        shape, dtype, device = self._in_meta[k]
        gshape = g.shape
        if gshape != shape:
            lead = len(gshape) - len(shape)
            if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, gshape[lead:])):
                raise ShapeError(
                    f"Function {self.name()} returned an invalid gradient at index {k} - got "
                    f"{_shape_list(gshape)} but expected shape compatible with "
                    f"{_shape_list(shape)}"
                )
            from ..ops.shape import sum_to

            g = sum_to(g, shape)
        if g.dtype is not dtype:
            g = g.to(dtype)
        if g.device != device:
            if g.ndim == 0:
                g = g.to(device)
            else:
                raise RetrogradError(
                    f"Function {self.name()} returned an invalid gradient at index {k} - "
                    f"expected device {device} but got {g.device}"
                )
        return g

    def apply(self, grad_outputs: Any) -> tuple[Any, ...]:
        be = self._backend
        grads: list[Any] = [None if g is None else Tensor(g if type(g) is be.array_type
                                                          else be.asarray(g), be)
                            for g in grad_outputs]
        if self._materialize:
            grads = self._materialized(grads, True)
        fn = self._user_backward()
        prev = _grad.enabled
        _grad.enabled = False
        try:
            result = self._call_backward(fn, grads)
        finally:
            _grad.enabled = prev
        return tuple(None if g is None else g._data for g in result)

    def apply_for_graph(self, grad_outputs: Any) -> tuple[Any, ...]:
        grads = list(grad_outputs)
        if self._materialize:
            grads = self._materialized(grads, True)
        fn = self._user_backward()
        result = self._call_backward(fn, grads)
        if getattr(fn, "_once_differentiable", False):
            return result
        st = self._saved_tensors
        inputs_have_history = any(
            g is not None and g._requires_grad for g in grads
        ) or (st is not None and st is not _CLEARED and any(
            e is not None and (type(e) is _SavedOutput or
                               (e.output_nr >= 0 or e.edge is not None if self._packed
                                else e._requires_grad)) for e in st))
        if inputs_have_history and any(
            g is not None and not g._requires_grad for g, e in zip(result, self._next)
            if e is not None
        ):
            raise DoubleBackwardUnsupported(
                f"create_graph=True through {self.name()}: the backward of Function "
                f"{self._fn_cls.__name__} returned gradients without history (written in raw "
                "arrays?), so it cannot be differentiated again. Write it with retrograd ops "
                "or mark it @once_differentiable."
            )
        return result


# ------------------------------------------------------------------------------------------
# Function
# ------------------------------------------------------------------------------------------
class Function:
    """Base class of custom differentiable ops (PyTorch's ``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` (or
    ``vjp``), or with ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``; call
    ``MyFn.apply(*args)``. Set ``clear_saved_tensors_on_access = True`` on the class to let
    ``ctx.saved_tensors`` be read once only (the node then drops them)."""

    clear_saved_tensors_on_access: bool = False
    # the class of this Function's nodes, ``<Name>Backward`` as PyTorch names it
    _backward_cls: type[FunctionCtx] = FunctionCtx

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (FunctionCtx,), {"__slots__": ()})

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> Any:
        """Override it (with a ``forward`` that takes no ctx) to set up ``ctx`` from the
        inputs and the output of ``forward``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward  # an alias: a subclass overrides one of the two

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # as PyTorch: instantiating warns; calling the instance (the legacy style) raises
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an error in a future version.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = type(self).__name__
        raise RetrogradError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html"
            f"#torch.autograd.Function) Call {name}.apply(...) on the class, with "
            "forward(ctx, ...) and backward(ctx, ...) static methods."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` without recording and give its tensor outputs this Function's
        node as history. Tensors passed by keyword count as inputs, in ``forward``'s
        parameter order."""
        setup = cls.setup_context is not _BASE_SETUP
        if setup:
            args = _bind_all(cls.forward, args, kwargs)
        elif kwargs:
            args = _bind_keywords(cls.forward, args, kwargs)
        is_var = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(v and a._requires_grad for a, v in zip(args, is_var))
        record = _grad.enabled and any(needs)
        tensors = [a for a, v in zip(args, is_var) if v]
        backend = tensors[0].backend if tensors else None
        if record:
            edge_of = _EDGE_OF[0] if _EDGE_OF else _edge_of()
            edges = tuple([edge_of(t) for t in tensors])
            meta = tuple([(t.shape, t.dtype, t.device) for t in tensors])
        else:
            edges = meta = ()
        ctx = cls._backward_cls(cls, edges, needs, is_var, meta, backend)
        prev = _grad.enabled
        _grad.enabled = False
        try:
            if setup:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            _grad.enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        wrapped = _wrap_outputs(cls, ctx, tensors, outs, record)
        if record:
            ctx._take_saved()
            if _anomaly.enabled:
                note_forward(ctx)
        ctx._dirty = ctx._non_diff = ()  # read only while wrapping: holding them may be a cycle
        return wrapped[0] if single else wrapped


_BASE_BACKWARD = Function.backward
_BASE_SETUP = Function.setup_context
_EDGE_OF: list[Any] = []


def _edge_of() -> Any:
    """``ops._core.edge_of``, bound on first use (the ops import this package)."""
    from ..ops._core import edge_of

    _EDGE_OF.append(edge_of)
    return edge_of


# ------------------------------------------------------------------------------------------
# apply's helpers
# ------------------------------------------------------------------------------------------
_SIGNATURES: weakref.WeakKeyDictionary[Any, inspect.Signature] = weakref.WeakKeyDictionary()


def _signature(fn: Any) -> inspect.Signature:
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = inspect.signature(fn)
        try:
            _SIGNATURES[fn] = sig
        except TypeError:  # pragma: no cover - a callable without weak references
            pass
    return sig


def _bind_all(forward: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """With ``setup_context``: the inputs are all of ``forward``'s parameters, defaults
    applied (PyTorch binds them the same way)."""
    bound = _signature(forward).bind(*args, **kwargs)  # TypeError as Python raises it
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"forward() got an unexpected keyword argument '{next(iter(bound.kwargs))}'"
        )
    return bound.args


_MISSING = object()


def _bind_keywords(forward: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[Any, ...]:
    """Keyword arguments placed at their positional parameter of ``forward(ctx, ...)``, as
    PyTorch does: every parameter before the last one given must be given (defaults are not
    filled in), and keyword-only parameters are refused."""
    params = list(_signature(forward).parameters.values())[1:]  # after ctx
    names = [p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    index = {name: j for j, name in enumerate(names)}
    top = len(args) - 1
    for name in kwargs:
        j = index.get(name)
        if j is None:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        if j < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        top = max(top, j)
    filled: list[Any] = list(args) + [_MISSING] * (top + 1 - len(args))
    for name, value in kwargs.items():
        filled[index[name]] = value
    for j, v in enumerate(filled):
        if v is _MISSING:
            raise TypeError(f"forward() missing required argument: '{names[j]}' (position {j})")
    return tuple(filled)


def _alias(t: Tensor, view: bool) -> Tensor:
    """A new tensor sharing ``t``'s data and version counter: a view of it (PyTorch's
    ``view_as_self``) or a detached alias that is no view."""
    a = Tensor(t._data, t.backend)
    a._vc = t._counter()
    if view:
        a._base = t if t._base is None else t._base
        if t._extra is not None and t._extra.view_creation is not None:
            a._x().view_creation = t._extra.view_creation
        if t.backend.functional:  # immutable arrays: writes reach it through its base
            from .._writes import adopt_view

            adopt_view(a, t, None)
    return a


def _check_marked(cls: Any, what: str, tensors: tuple[Any, ...]) -> None:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            if what == "mark_dirty":
                raise RetrogradError(
                    f"{cls.__name__}: mark_dirty can only accept variables, but argument {i} "
                    f"is of type {_typename(t)}"
                )
            raise RetrogradError(
                f"{cls.__name__}: mark_non_differentiable only accepts variable arguments, "
                f"but got {_typename(t)} (argument {i})"
            )


def _wrap_outputs(cls: Any, ctx: FunctionCtx, inputs: list[Tensor], outs: tuple[Any, ...],
                  record: bool) -> Any:
    """Give the outputs of ``forward`` their history, as PyTorch's ``_wrap_outputs``: every
    check runs before anything changes (the dirty inputs' versions are bumped either way:
    ``forward`` did change their data)."""
    dirty, non_diff = ctx._dirty, ctx._non_diff
    if dirty:
        _check_marked(cls, "mark_dirty", dirty)
    if non_diff:
        _check_marked(cls, "mark_non_differentiable", non_diff)
    if record:
        for i, t in enumerate(ctx._to_save):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"{cls.__name__}: save_for_backward can only save variables, but argument "
                    f"{i} is of type {_typename(t)}"
                )
    if not dirty and not non_diff and len(outs) == 1 and isinstance(outs[0], Tensor) and \
            outs[0]._base is None and record and outs[0].dtype.is_floating_point and \
            not any(outs[0] is t for t in inputs):
        # the common case: one fresh tensor
        o = outs[0]
        ctx._out_meta = ((o.backend, o._data.shape, o._data.dtype),)
        if o.grad_fn is not None:
            o._counter()  # the node that may have saved it keeps watching it
        o.grad_fn = ctx
        o._output_nr = 0
        o._requires_grad = True
        return (o,)
    pure = ctx.__dict__.get("_is_pure_view", False)
    if pure and (len(inputs) != 1 or sum(isinstance(o, Tensor) for o in outs) != 1):
        raise RetrogradError(_PURE_VIEW_ARITY)
    input_ids = {id(t) for t in inputs}
    dirty_ids = {id(t): t for t in dirty}
    nd_ids = {id(t) for t in non_diff}
    n = len(outs)
    plan: list[Any] = []
    num_diff = 0
    try:
        for o in outs:
            if not isinstance(o, Tensor):
                plan.append(None)
                continue
            is_input = id(o) in input_ids
            is_mod = id(o) in dirty_ids
            is_diff = record and id(o) not in nd_ids and o.dtype.is_floating_point
            if is_diff and is_mod:
                _check_dirty(cls, o, is_input, n)
            plan.append((is_input, is_mod, is_diff))
            num_diff += is_diff
        returned = {id(o) for o in outs}
        if any(k not in returned for k in dirty_ids):
            raise RetrogradError(_DIRTY_NOT_RETURNED)
    except BaseException:
        for t in dirty_ids.values():
            bump(t._counter(), rebase=True)  # its data changed: its views are stale
        raise
    for t in dirty_ids.values():
        bump(t._counter(), rebase=True)
    ctx._nin = n
    ctx._out_meta = tuple(None if p is None else (o.backend, o._data.shape, o._data.dtype)
                          for o, p in zip(outs, plan))
    result: list[Any] = []
    for i, (o, p) in enumerate(zip(outs, plan)):
        if p is None:
            result.append(o)
            continue
        is_input, is_mod, is_diff = p
        if not is_diff:
            if not o._requires_grad:
                if is_input and not is_mod:
                    o = _alias(o, view=True)
            elif is_input:
                o = _alias(o, view=False)
            elif o._base is None:
                o.detach_()
        elif is_mod:
            o._grad = None  # PyTorch resets the grad of a rebased input
            if o._base is not None:  # a view: its base is rebased through CopySlices
                from ..ops.view_inplace import rebase_dirty_view

                rebase_dirty_view(o, ctx, i)
            else:
                o.grad_fn = ctx
                o._output_nr = i
                o._requires_grad = True
                if o._extra is not None and o._extra.plain_views:
                    from ..ops.late_views import wake

                    wake(o, stale=True)  # its views taken while it needed no gradient
        else:
            if is_input:
                o = _alias(o, view=True)
            elif o.grad_fn is not None:
                o._counter()  # the node that may have saved it keeps watching it
            o.grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
        # (under no_grad a view keeps how forward made it, as PyTorch)
        if pure and is_diff and o._base is not None and not is_input:
            _mark_pure_view(o, inputs[0])
        elif o._base is not None and not (is_input and is_mod) and (is_diff or (
                _grad.enabled and o._extra is not None and o._extra.view_creation is not None)):
            ex = o._x()
            msg = _MULTI_VIEW if num_diff > 1 else _CUSTOM_VIEW
            ex.view_creation = "custom_function: " + msg.format(nr=i, name=cls.__name__)
            ex.view_epoch = rebased_of(o._counter())
        result.append(o)
    return tuple(result)


_PURE_VIEW_ARITY = ("Pure view custom Function can only have one input Tensor and one output "
                    "Tensor. Open an issue if you need to support more.")


def _mark_pure_view(o: Tensor, inp: Tensor) -> None:
    """An output of a Function whose ctx sets ``_is_pure_view`` (PyTorch's flag for a
    Function that only takes a view) that is a view: an ordinary view of its base, as if a
    view op had made it. An in-place change through it rebases the base (``CopySlices``) and
    the view is taken again from there -- the Function's backward is then no longer used --
    its steps read off the memory layout (``ops.late_views.LAZY``). A view of a tensor made
    inside ``forward`` (not of the input) has no history to rebase: an in-place change is
    refused as on a view of a leaf, as in PyTorch."""
    from .._version import rebased_of
    from ..ops.late_views import LAZY

    ex = o._x()
    root = inp if inp._base is None else inp._base
    if o._base is root:
        ex.view_creation = None
        ex.view_chain = LAZY
        ex.view_epoch = rebased_of(o._counter())
    else:
        ex.view_creation = ("custom_function: a view of a leaf Variable that requires grad is "
                            "being used in an in-place operation.")
        ex.view_epoch = rebased_of(o._counter())


def _check_dirty(cls: Any, t: Tensor, is_input: bool, num_outputs: int) -> None:
    """The refusals of PyTorch's ``set_history`` for an input marked dirty, in its order."""
    if t._requires_grad and t.grad_fn is None:
        raise RetrogradError(_LEAF_DIRTY)
    if not is_input:
        if t._base is not None:  # a view of a tensor made inside forward: PyTorch refuses
            raise RetrogradError(_DIRTY_NOT_INPUT)
        warnings.warn(_DIRTY_NOT_INPUT, UserWarning, stacklevel=4)
    base = t._base
    if base is None:
        return
    creation = t._extra.view_creation if t._extra is not None else None
    if creation is not None and creation.startswith("multi_output: "):  # ops.views
        raise RetrogradError(creation.partition(": ")[2])  # checked first, as PyTorch
    if num_outputs > 1:
        raise RetrogradError(_DIRTY_VIEW_MULTI)
    if base._requires_grad and base.grad_fn is None:
        raise RetrogradError(_VIEW_OF_LEAF_DIRTY)
    from ..ops.view_inplace import dirty_view_chain

    if dirty_view_chain(t) is not None:
        return  # rebased through CopySlices once the forward has returned
    raise RetrogradError(
        f"{cls.__name__}: an input marked with ctx.mark_dirty is a view (shape {t.shape}) of "
        f"another tensor (shape {base.shape}) whose steps from its base were not recorded "
        "(taken from a detached alias, or before its base required grad): retrograd cannot "
        "tell how to rebase it (refused rather than a silently wrong gradient). Take the view "
        "again from the base, or pass a .clone() of it."
    )
