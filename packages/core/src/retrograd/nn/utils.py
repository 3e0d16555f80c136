"""``retrograd.nn.utils``: gradient clipping (``clip_grad_norm_``, ``clip_grad_value_``) and
``parameters_to_vector``/``vector_to_parameters``, with ``torch.nn.utils``' arithmetic (the
same tensor operations in the same dtypes, so clipped gradients agree with PyTorch's)."""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any, cast

from .. import grad_mode
from ..ops.activations import isfinite as _isfinite
from ..tensor import Tensor

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
    "parameters_to_vector",
    "vector_to_parameters",
]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(t: Tensor, norm_type: float) -> Tensor:
    """``linalg.vector_norm(t, norm_type)``; orders it does not take (between 0 and 1, or
    negative and finite) as ``sum(|t| ** p) ** (1 / p)``, PyTorch's formula."""
    from .. import linalg

    if norm_type in (0.0, float("inf"), float("-inf")) or norm_type >= 1:
        return linalg.vector_norm(t, norm_type)
    powered: Any = cast(Any, t).abs() ** norm_type
    return cast(Tensor, powered.sum() ** (1.0 / norm_type))


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (their norm as one vector);
    ``tensor(0.)`` for none. ``foreach`` is accepted for PyTorch compatibility."""
    from .. import stack, tensor

    items = _as_list(tensors)
    norm_type = float(norm_type)
    if not items:
        return tensor(0.0)
    with grad_mode.no_grad():
        first_device = items[0].device
        norms = [_vector_norm(g, norm_type) for g in items]
        total = _vector_norm(stack([n.to(first_device) for n in norms]), norm_type)
        if error_if_nonfinite and not bool(_isfinite(total).item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return total


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale every ``.grad`` in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    from .. import clamp

    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with grad_mode.no_grad():
        coef = clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Rescale the gradients of ``parameters`` in place so that their total ``norm_type``
    norm (computed as if concatenated into one vector) is at most ``max_norm``; returns that
    total norm (before clipping) as a tensor. With ``error_if_nonfinite`` a nan or inf total
    norm is an error."""
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        params = list(parameters)
        if is_generator and not params:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every ``.grad`` of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with grad_mode.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                cast(Any, p.grad).clamp_(min=-clip_value, max=clip_value)


def _check_same_device(params: list[Tensor]) -> None:
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated into one vector (differentiable, as in
    PyTorch: the result has a ``CatBackward0`` history when they require grad)."""
    from .. import cat

    params = list(parameters)
    _check_same_device(params)
    return cat([p.view(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (replacing their data, as
    PyTorch's ``param.data = ...``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected retrograd.Tensor, but got: {_typename(vec)}")
    params = list(parameters)
    _check_same_device(params)
    pointer = 0
    for param in params:
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n


def _typename(value: Any) -> str:
    return type(value).__name__
