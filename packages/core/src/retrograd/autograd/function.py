"""Custom ops, as in PyTorch: subclass ``Function`` with static ``forward(ctx, ...)`` and
``backward(ctx, *grads)``, call ``MyFn.apply(...)``.

``backward`` receives and returns tensors. When it is written with retrograd ops it is
differentiable (``create_graph=True`` works); a backward marked ``@once_differentiable`` or one
that drops the graph (returns tensors without history while its inputs have one) makes
``create_graph=True`` raise ``DoubleBackwardUnsupported`` naming the Function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import DoubleBackwardUnsupported, GraphFreedError, RetrogradError
from ..grad_mode import _state as _grad
from ..grad_mode import no_grad
from ..tensor import Tensor
from .node import Node

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not differentiable (it may use raw arrays)."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return fn(ctx, *grads)

    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


class FunctionCtx(Node):
    """The backward node of one ``Function.apply`` call; also the ``ctx`` its methods get."""

    __slots__ = ("_fn_cls", "_saved_tensors", "_nin", "needs_input_grad",
                 "_input_shapes", "_backend", "_dirty", "_non_diff", "_attrs", "__dict__")

    def __init__(self, fn_cls: Any, next_edges: tuple[Any, ...], needs: tuple[bool, ...],
                 shapes: tuple[Any, ...], backend: Any) -> None:
        Node.__init__(self, next_edges)
        self._fn_cls = fn_cls
        self._saved_tensors: tuple[Any, ...] | None = ()
        self._nin = 1
        self.needs_input_grad = needs
        self._input_shapes = shapes
        self._backend = backend

    def name(self) -> str:
        return f"{self._fn_cls.__name__}Backward"

    # -- ctx API --------------------------------------------------------------------------
    def save_for_backward(self, *tensors: Any) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"{self._fn_cls.__name__}: save_for_backward can only save tensors (or "
                    f"None), but argument {i} is {type(t).__name__}"
                )
        self._saved_tensors = tensors
        flat: list[Any] = []
        for i, t in enumerate(tensors):
            if t is not None:
                vc = t._counter()
                flat += (vc, bytes(vc), i)
        self._versions = tuple(flat)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved_tensors is None:
            raise GraphFreedError(
                f"{self.name()}: saved tensors were already freed by an earlier backward; "
                "pass retain_graph=True to the earlier backward to keep them"
            )
        self.validate_versions()
        return self._saved_tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_diff = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        self._dirty = tensors

    def saved_arrays(self) -> list[Any]:
        return [t._data for t in self._saved_tensors or () if t is not None]

    def release_saved(self) -> None:
        self._saved_tensors = None
        self._versions = ()
        self._released = True

    def _saved_shape(self, index: int) -> Any:
        if not self._saved_tensors:
            return "?"
        return self._saved_tensors[index].shape

    # -- backward ---------------------------------------------------------------------------
    def _call_backward(self, grads: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
        fn = self._fn_cls.backward
        result = fn(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        nexts = self._next
        if len(result) != len(nexts):
            raise RetrogradError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{len(nexts)}, got {len(result)})"
            )
        for i, (g, shape) in enumerate(zip(result, self._input_shapes)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type {type(g).__name__} "
                    f"for input {i}; backward must return Tensors or None"
                )
            if shape is not None and g.shape != shape:
                raise ValueError(
                    f"function {self.name()} returned an invalid gradient at index {i} - got "
                    f"shape {g.shape} but expected shape compatible with {shape}"
                )
        return result

    def apply(self, grad_outputs: Any) -> tuple[Any, ...]:
        be = self._backend
        grads = tuple(None if g is None else Tensor(g if type(g) is be.array_type
                                                    else be.asarray(g), be)
                      for g in grad_outputs)
        prev = _grad.enabled
        _grad.enabled = False
        try:
            result = self._call_backward(grads, False)
        finally:
            _grad.enabled = prev
        return tuple(None if g is None else g._data for g in result)

    def apply_for_graph(self, grad_outputs: Any) -> tuple[Any, ...]:
        fn = self._fn_cls.backward
        if getattr(fn, "_once_differentiable", False):
            raise DoubleBackwardUnsupported(
                f"create_graph=True through {self.name()}: the backward of Function "
                f"{self._fn_cls.__name__} is marked once_differentiable and cannot be recorded"
            )
        result = self._call_backward(tuple(grad_outputs), True)
        inputs_have_history = any(
            g is not None and g._requires_grad for g in grad_outputs
        ) or any(t is not None and t._requires_grad for t in self._saved_tensors or ())
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


class Function:
    """Base class of custom differentiable ops (PyTorch's ``torch.autograd.Function``)."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Function subclasses must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("Function subclasses must implement backward(ctx, ...)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RetrogradError(
            f"{type(self).__name__} is a Function: call {type(self).__name__}.apply(...), "
            "not the constructor"
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        from ..ops._core import edge_of
        tensors = [a for a in args if isinstance(a, Tensor)]
        backend = tensors[0].backend if tensors else None
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        record = _grad.enabled and any(needs)
        edges = tuple(edge_of(a) if isinstance(a, Tensor) else None for a in args)
        shapes = tuple(a.shape if isinstance(a, Tensor) else None for a in args)
        ctx = FunctionCtx(cls, edges, needs, shapes, backend)
        prev = _grad.enabled
        _grad.enabled = False
        try:
            out = cls.forward(ctx, *args, **kwargs)
        finally:
            _grad.enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                raise TypeError(f"{cls.__name__}.forward must return Tensors, output {i} is "
                                f"{type(o).__name__}")
        if not record:
            return out
        ctx._nin = len(outs)
        non_diff = getattr(ctx, "_non_diff", ())
        wrapped = []
        for i, o in enumerate(outs):
            if any(o is a for a in args) or o.grad_fn is not None or o._base is not None:
                o = Tensor(o._data, o.backend)  # an alias of an input: give it its own history
            if any(o is n for n in non_diff) or not o.dtype.is_floating_point:
                wrapped.append(o)
                continue
            o.grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
            wrapped.append(o)
        from .anomaly import _state as _anomaly
        from .anomaly import forward_stack

        if _anomaly.enabled:
            ctx.metadata["traceback_"] = forward_stack()
        return wrapped[0] if single else tuple(wrapped)
