"""Ops that copy a tensor into a larger one by repetition: ``repeat`` and ``tile``."""

from __future__ import annotations

import operator
from typing import Any

from ..autograd.node import formula_node
from ..errors import ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .declare import op

__all__ = ["repeat", "tile"]


def _repeat_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The copies summed back: the gradient, of shape ``(r0*s0, r1*s1, ...)``, seen as
    ``(r0, s0, r1, s1, ...)`` and summed over the ``r`` axes, then given the input's shape
    (its leading 1s, added by ``repeat``, dropped)."""
    reps, padded, shape = attrs
    wide: list[int] = []
    for r, s in zip(reps, padded):
        wide += [r, s]
    summed = F.sum(F.reshape(g, tuple(wide)), tuple(range(0, 2 * len(reps), 2)), False)
    return (F.reshape(summed, shape),)


RepeatBackward = formula_node("RepeatBackward0", _repeat_rule, arity=1)


def _sizes(name: str, sizes: tuple[Any, ...]) -> tuple[int, ...]:
    """The repetition counts, as ints or one sequence of ints (``__index__`` accepted)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    out = []
    for s in sizes:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{name}(): argument 'repeats' must be tuple of ints, but found "
                            f"element of type {type(s).__name__}")
        out.append(operator.index(s))
    return tuple(out)


def _repeat(x: Tensor, reps: tuple[int, ...]) -> Tensor:
    if len(reps) < x.ndim:
        raise ShapeError("Number of dimensions of repeat dims can not be smaller than number "
                         f"of dimensions of tensor (repeats {list(reps)} for a tensor of shape "
                         f"{x.shape})")
    shape = x.shape
    padded = (1,) * (len(reps) - len(shape)) + shape
    target = [r * s for r, s in zip(reps, padded)]
    if any(n < 0 for n in target):
        bad = next(n for n in target if n < 0)
        raise ShapeError(f"Trying to create tensor with negative dimension {bad}: {target}")
    be = x.backend
    F = be.ops
    data = F.repeat(F.reshape(x._data, padded), reps)
    if type(data) is not be.array_type:
        data = be.asarray(data)
    out = Tensor(data, be)
    if _grad.enabled and x._requires_grad:
        record(RepeatBackward, out, (x,), (), (), (reps, padded, shape))
    return out


def _method_repeat(self: Tensor, *sizes: Any) -> Tensor:
    """``Tensor.repeat(*sizes)``: PyTorch's binding wants at least one argument."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    return repeat(self, *sizes)


@op("repeat", method=_method_repeat, function=False)
def repeat(x: Tensor, *sizes: Any) -> Tensor:
    """``x`` copied ``sizes[i]`` times along dimension i (ints, or one sequence). ``sizes``
    may have more entries than ``x`` has dimensions: ``x`` is then seen with leading
    dimensions of size 1. Not a view: a new tensor (RepeatBackward0)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"repeat: expected a Tensor, got {type(x).__name__}")
    return _repeat(x, _sizes("repeat", sizes))


def _method_tile(self: Tensor, *dims: Any) -> Tensor:
    """``Tensor.tile(*dims)``: ints, or one sequence."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tile(self, dims[0])
    return tile(self, dims)


@op("tile", method=_method_tile)
def tile(input: Tensor, dims: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """``input`` repeated ``dims[i]`` times along dimension i; fewer ``dims`` than dimensions
    are padded with 1s in front (unlike ``repeat``, which refuses them)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"tile(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    reps = _sizes("tile", (tuple(dims),))
    if len(reps) < input.ndim:
        reps = (1,) * (input.ndim - len(reps)) + reps
    return _repeat(input, reps)
