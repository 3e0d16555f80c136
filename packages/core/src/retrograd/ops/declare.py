"""Declaring an op once: ``@op`` fills :data:`OPS`, and the rest is derived from it.

An op declared here becomes ``retrograd.<name>`` (``function=True``), the Tensor method
``Tensor.<name>`` (``method=True``, or the callable to bind instead when the method's
signature differs from the function's), and -- where ``differentiable`` -- a row of
``ops.registry()``, which the conformance op database checks for an entry. The decorator
returns the function itself: declaring costs nothing per call.

    @op("narrow")
    def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor: ...

The ops written before this module (``add``, ``exp`` ...) are still listed by hand in
``ops/__init__.py`` and ``ops/methods.py``; new ops are declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["OPS", "OpSpec", "op", "bind_methods", "GRAPH_KERNELS"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class OpSpec:
    """One declared op: its name, the function, the method bound on Tensor (None: none) and
    whether it is differentiable (an entry of ``ops.registry()``)."""

    name: str
    fn: Callable[..., Any]
    method: Callable[..., Any] | None
    function: bool
    differentiable: bool


#: Every op declared with ``@op``, by name, in declaration order.
OPS: dict[str, OpSpec] = {}

#: Kernel name -> the differentiable op that computes the same on tensors, for the kernels a
#: derivative rule calls (``F.<name>``) that the first op set's ``GRAPH_F`` lacks: an op module
#: adds its own here and ``ops.graph_namespace`` puts them in ``GRAPH_F``, so that one rule
#: runs on raw kernels in the walk and on recorded ops under ``create_graph``.
GRAPH_KERNELS: dict[str, Callable[..., Any]] = {}


def op(name: str | None = None, *, method: bool | Callable[..., Any] = True,
       function: bool = True, differentiable: bool = True) -> Callable[[F], F]:
    """Declare the decorated function as the op ``name`` (default: the function's name).

    ``method``: True binds the function itself as ``Tensor.<name>``; a callable binds that
    instead; False binds nothing. ``function``: export it as ``retrograd.<name>``.
    ``differentiable``: list it in ``ops.registry()`` (False for comparisons, indices,
    creation and in-place ops, which the op database does not differentiate)."""

    def declare(fn: F) -> F:
        key = name or fn.__name__
        if key in OPS:
            raise ValueError(f"op {key!r} is declared twice")
        bound = fn if method is True else (method or None)
        OPS[key] = OpSpec(key, fn, bound, function, differentiable)  # type: ignore[arg-type]
        return fn

    return declare


def bind_methods(tensor_cls: type) -> None:
    """Set every declared op's method on ``tensor_cls`` (called once, from ``ops.methods``)."""
    for spec in OPS.values():
        if spec.method is not None:
            setattr(tensor_cls, spec.name, spec.method)
