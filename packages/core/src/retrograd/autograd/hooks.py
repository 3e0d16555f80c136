"""Running hooks inside a walk (E10, PyTorch semantics).

Tensor hooks see a slot's complete gradient before the node runs, and a returned tensor
replaces it downstream and in ``.grad``; node prehooks see ``grad_outputs``, node hooks
``(grad_inputs, grad_outputs)``. In the raw walk gradients are arrays: hooks get tensors
wrapped around them and their results are unwrapped and checked (shape, dtype, type).
"""

from __future__ import annotations

from typing import Any

from ..errors import DTypeError, RetrogradError, ShapeError
from ..tensor import Tensor
from .node import Node

__all__ = ["pre_hooks", "tensor_pre_hooks", "node_pre_hooks", "post_hooks", "leaf_hooks",
           "backend_of", "arr"]


def arr(v: Any) -> Any:
    """The raw array of a gradient (a tensor under create_graph)."""
    return getattr(v, "_data", v)


def _to_tensor(g: Any, backend: Any) -> Any:
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor(g if type(g) is backend.array_type else backend.asarray(g), backend)


def _hook_name(fn: Any) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _from_hook(result: Any, old: Any, what: str, create_graph: bool, fn: Any = None) -> Any:
    """Check a gradient a hook returned against the one it replaces (PyTorch's checks and
    error classes: a non-tensor is a TypeError, a new size or dtype a RuntimeError)."""
    if result is None:
        return old
    name = _hook_name(fn)
    if old is None:  # checked first, as PyTorch does
        raise RetrogradError(f"can't replace a None gradient with a non-None value (hook "
                             f"'{name}': {what})")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}' "
                        f"({what} must return a Tensor or None)")
    old_shape = tuple(getattr(old, "shape", ()))
    if old is not None and result.shape != old_shape:
        raise ShapeError(
            f"hook '{name}' has changed the size of value: {what} returned a gradient of "
            f"shape {result.shape}, expected {old_shape}"
        )
    old_dtype = getattr(old, "dtype", None)
    if old_dtype is not None and result._data.dtype != arr(old).dtype:
        raise DTypeError(
            f"hook '{name}' has changed the type of value (was "
            f"{result.backend.dtype_of(arr(old))} got {result.dtype}): {what}"
        )
    return result if create_graph else result._data


def _tensor_hook_chain(hooks: dict[int, Any], g: Any, backend: Any, what: str,
                       create_graph: bool) -> Any:
    for fn in list(hooks.values()):
        g = _from_hook(fn(_to_tensor(g, backend)), g, what, create_graph, fn)
    return g


def pre_hooks(node: Node, buf: list[Any], retained: list[Any], create_graph: bool) -> list[Any]:
    """A node's hooks before it runs, in PyTorch's order: the hooks of the tensors it
    produced (``tensor_pre_hooks``), then its own pre-hooks (``node_pre_hooks``)."""
    return node_pre_hooks(node, tensor_pre_hooks(node, buf, retained, create_graph),
                          create_graph)


def tensor_pre_hooks(node: Node, buf: list[Any], retained: list[Any],
                     create_graph: bool) -> list[Any]:
    """The hooks registered on the tensors ``node`` produced, then ``retain_grad`` (which
    always sees the gradient after every hook, as in PyTorch). What ``autograd.grad``
    captures for an interior tensor is the result of these when its node is idle (nothing
    upstream requested), the gradient before them when the node runs (engine ``_prune``)."""
    hooks = node._hooks
    if hooks is None:
        return buf
    backend = getattr(node, "_backend", None)
    if hooks.tensor_pre:
        # an output that got no gradient (another output of the node did) still has its
        # hooks called, with None, as in PyTorch; retain_grad skips it
        for slot, table in hooks.tensor_pre.items():
            if table:
                be = backend or backend_of(buf[slot])
                buf[slot] = _tensor_hook_chain(table, buf[slot], be,
                                               f"hook on the output {slot} of {node.name()}",
                                               create_graph)
    if hooks.retain:
        for slot, ref in hooks.retain.items():
            t = ref()
            if t is not None and buf[slot] is not None:
                retained.append((t, buf[slot]))
    return buf


def node_pre_hooks(node: Node, buf: list[Any], create_graph: bool) -> list[Any]:
    """``node.register_prehook`` hooks: ``fn(grad_outputs)``, may return new grad_outputs."""
    hooks = node._hooks
    if hooks is None or not hooks.pre:
        return buf
    be = getattr(node, "_backend", None) or backend_of(
        next((g for g in buf if g is not None), None))
    for fn in list(hooks.pre.values()):
        res = fn(tuple(_to_tensor(g, be) for g in buf))
        if res is not None:
            res = _hook_tuple(res, f"prehook of {node.name()}")
            if len(res) != len(buf):
                _raise_hook_count(fn, node, "prehook", len(res), len(buf))
            buf = [_from_hook(r, o, f"prehook of {node.name()}", create_graph, fn)
                   for r, o in zip(res, buf)]
    return buf


def _raise_hook_count(fn: Any, node: Node, kind: str, got: int, expected: int) -> None:
    raise RetrogradError(
        f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {got}, but "
        f"expected {expected}): {kind} of {node.name()}"
    )


def _hook_tuple(res: Any, what: str) -> list[Any]:
    """A node hook's result must be a tuple or list of gradients (PyTorch: "expected tuple,
    but hook returned ..."); a bare Tensor is not iterated element by element."""
    if not isinstance(res, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(res).__name__}' ({what} "
                        "must return a tuple of gradients or None)")
    return list(res)


def post_hooks(node: Node, outs: Any, buf: list[Any], create_graph: bool) -> Any:
    hooks = node._hooks
    assert hooks is not None
    be = getattr(node, "_backend", None) or backend_of(
        next((g for g in buf if g is not None), None))
    for fn in list(hooks.post.values()):
        res = fn(tuple(_to_tensor(g, be) for g in outs), tuple(_to_tensor(g, be) for g in buf))
        if res is not None:
            res = _hook_tuple(res, f"hook of {node.name()}")
            if len(res) != len(outs):
                _raise_hook_count(fn, node, "hook", len(res), len(outs))
            outs = [_from_hook(r, o, f"hook of {node.name()}", create_graph, fn)
                    if r is not None
                    else None for r, o in zip(res, outs)]
    return outs


def leaf_hooks(leaf: Any, buf: list[Any], create_graph: bool) -> list[Any]:
    ex = leaf._extra
    if ex is None or not ex.hooks:  # an undefined gradient (None) is given to the hooks too
        return buf
    return [_tensor_hook_chain(ex.hooks, buf[0], leaf.backend,
                               f"hook on the leaf of shape {leaf.shape}", create_graph)]


def backend_of(a: Any) -> Any:
    from ..backends.registry import _registered, get_backend

    if hasattr(a, "backend"):
        return a.backend
    for be in list(_registered.values()) or [get_backend("cpu")]:
        if isinstance(a, be.array_type):
            return be
    return get_backend("cpu")
