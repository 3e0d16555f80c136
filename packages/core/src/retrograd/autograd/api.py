"""``retrograd.autograd.backward`` and ``grad``: PyTorch's signatures over the Engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import RetrogradError
from ..tensor import Tensor
from .engine import run_backward, run_grad
from .gradient_edge import GradientEdge

__all__ = ["backward", "grad"]


def _seq(x: Any, what: str) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (Tensor, GradientEdge)):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _check_inputs(inputs: list[Any]) -> None:
    for i, t in enumerate(inputs):
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RetrogradError(
                "all inputs have to be Tensors or GradientEdges, but got "
                f"{type(t).__name__} (inputs[{i}])"
            )


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves they reach
    (only into ``inputs`` when given)."""
    roots = _seq(tensors, "tensors")
    seeds = _seq(grad_tensors, "grad_tensors") if grad_tensors is not None else [None] * len(roots)
    if len(seeds) != len(roots):
        if len(seeds) < len(roots):
            raise RetrogradError(f"backward: got {len(roots)} tensors and {len(seeds)} "
                                 "gradients (grad_tensors)")
        seeds = seeds[:len(roots)]  # PyTorch pairs them up and ignores the extra ones
    input_list = None
    if inputs is not None:
        input_list = _seq(inputs, "inputs")
        if not input_list:
            raise RetrogradError("`inputs` argument to `backward()` cannot be empty.")
        _check_inputs(input_list)
    for i, r in enumerate(roots):
        if r is None:
            raise RetrogradError(f"backward: tensors[{i}] is None")
    if not roots:  # nothing to differentiate: a no-op, as in PyTorch
        for t in input_list or ():
            if isinstance(t, Tensor):
                t.retain_grad()  # still refuses an input that does not require grad
        return
    run_backward(roots, seeds, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=input_list, fuse=None)


def _not_used(i: int, t: Any) -> RetrogradError:
    where = (f"inputs[{i}] has shape {t.shape}" if isinstance(t, Tensor)
             else f"inputs[{i}] is an edge of {t.node.name()}")
    return RetrogradError(
        f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
        f"Set allow_unused=True if this is the desired behavior. ({where})")


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple[Any, ...]:
    """Gradients of ``outputs`` w.r.t. ``inputs``; writes no ``.grad``. An input the outputs do
    not depend on raises unless ``allow_unused`` (then None) or ``materialize_grads`` (zeros)."""
    roots = _seq(outputs, "outputs")
    input_list = _seq(inputs, "inputs")
    if not input_list:
        raise RetrogradError("`inputs` argument to `grad()` cannot be empty.")
    _check_inputs(input_list)
    for i, t in enumerate(roots):
        if t is None:
            raise RetrogradError(f"grad: outputs[{i}] is None")
    seeds: Sequence[Any] = (_seq(grad_outputs, "grad_outputs") if grad_outputs is not None
                            else [None] * len(roots))
    if len(seeds) != len(roots):
        if len(seeds) < len(roots):
            raise RetrogradError(f"grad: got {len(roots)} tensors and {len(seeds)} gradients "
                                 "(grad_outputs)")
        seeds = list(seeds)[:len(roots)]  # PyTorch pairs them up and ignores the extra ones
    if materialize_grads:
        if allow_unused is False:
            raise ValueError("Expected allow_unused to be True or not passed when "
                             "materialize_grads=True, but got: allow_unused=False.")
        allow_unused = True
    def unused_check(captured: Sequence[Any]) -> None:
        for i, (g, t) in enumerate(zip(captured, input_list)):
            if g is None:
                raise _not_used(i, t)

    if roots:
        result = run_grad(roots, list(seeds), input_list, retain_graph=retain_graph,
                          create_graph=create_graph, fuse=None,
                          unused_check=None if allow_unused else unused_check)
    else:  # no outputs: every input is unused (PyTorch's answer too)
        for i, t in enumerate(input_list):
            if isinstance(t, Tensor) and not t.requires_grad:
                raise RetrogradError(
                    f"One of the differentiated Tensors does not require grad: inputs[{i}] "
                    f"(shape {t.shape}) cannot receive a gradient"
                )
        result = [None] * len(input_list)
    out = []
    for i, (g, t) in enumerate(zip(result, input_list)):
        if g is None:
            if materialize_grads and not isinstance(t, Tensor):
                raise RetrogradError(
                    f"grad: materialize_grads=True cannot make zeros for inputs[{i}], a "
                    "GradientEdge (an edge carries no shape): pass the tensor instead")
            if materialize_grads:
                from ..ops.creation import zeros_like

                # under create_graph the zeros can be differentiated again (to zero), as
                # in PyTorch: they require grad
                g = zeros_like(t, requires_grad=create_graph)
            elif not allow_unused:
                raise _not_used(i, t)
        out.append(g)
    return tuple(out)
