"""``embedding`` (``padding_idx``) and ``one_hot``.

``__all__`` lists the functional forms, which ``retrograd.nn.functional`` re-exports.

``embedding`` is one ``EmbeddingBackward0`` node, as in PyTorch: its gradient is the output
gradient's rows added into zeros at their indices (the ``padding_idx`` row gets none), from the
kernel ``embedding_backward``. Under ``create_graph`` that kernel is itself a recorded op
(``EmbeddingDenseBackwardBackward0``, PyTorch's name), linear in the output gradient, whose
own gradient is the lookup again: double backward works.
"""

from __future__ import annotations

from typing import Any, cast

from ..autograd.node import formula_node
from ..dtypes import int32, int64
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from ._core import record
from .declare import GRAPH_KERNELS, op
from .promotion import torch_name

__all__ = ["embedding", "one_hot"]


def _tensor(be: Any, data: Any) -> Tensor:
    return Tensor(data if type(data) is be.array_type else be.asarray(data), be)


# -- the nodes ----------------------------------------------------------------------------------
def _embedding_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """PyTorch's ``embedding_dense_backward``: ``g``'s rows added at their indices."""
    (idx,) = saved
    num_weights, padding_idx, by_freq = attrs
    return (F.embedding_backward(g, idx, num_weights, padding_idx, by_freq),)


def _dense_rule(F: Any, g: Any, saved: Any, attrs: Any, needs: Any) -> tuple[Any]:
    """The gradient of ``embedding_backward`` in its output gradient: the lookup of ``g``
    (PyTorch's, which leaves out the ``scale_grad_by_freq`` factors)."""
    (idx,) = saved
    _, padding_idx, _ = attrs
    return (F.embedding_double_backward(g, idx, padding_idx),)


EmbeddingBackward0 = formula_node("EmbeddingBackward0", _embedding_rule, arity=1)
_DenseBackward = formula_node("EmbeddingDenseBackwardBackward0", _dense_rule, arity=1)


def _raw(idx: Any) -> Any:
    """The array of ``idx`` (saved arrays reach rules as tensors under ``create_graph``)."""
    return idx._data if isinstance(idx, Tensor) else idx


def _graph_backward(g: Tensor, idx: Any, num_weights: int, padding_idx: int,
                    by_freq: bool) -> Tensor:
    """``embedding_backward`` on tensors, recorded (``GRAPH_F``'s version)."""
    be = g.backend
    idx = _raw(idx)
    out = _tensor(be, be.ops.embedding_backward(g._data, idx, num_weights, padding_idx,
                                                by_freq))
    if _grad.enabled and g._requires_grad:
        record(_DenseBackward, out, (g,), (idx,), (None,), (num_weights, padding_idx, by_freq))
    return out


def _graph_double(gg: Tensor, idx: Any, padding_idx: int) -> Tensor:
    """``embedding_double_backward`` on tensors, recorded as the lookup it is."""
    be = gg.backend
    idx = _raw(idx)
    out = _tensor(be, be.ops.embedding_double_backward(gg._data, idx, padding_idx))
    if _grad.enabled and gg._requires_grad:
        record(EmbeddingBackward0, out, (gg,), (idx,), (None,),
               (gg.shape[0], padding_idx, False))
    return out


GRAPH_KERNELS.update({"embedding_backward": _graph_backward,
                      "embedding_double_backward": _graph_double})


# -- the ops ------------------------------------------------------------------------------------
def _padding(padding_idx: Any, n: int) -> int:
    """``padding_idx`` as a row in ``[0, n)`` (negative: from the end), -1 for None."""
    if padding_idx is None:
        return -1
    p = int(padding_idx)
    if p > 0:
        if p >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif p < 0:
        if p < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        p += n
    return p


def _renorm_rows(weight: Tensor, input: Tensor, max_norm: float,  # noqa: A002
                 norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: the rows ``input`` looks up whose norm exceeds
    ``max_norm`` scaled, in place and unrecorded, by ``max_norm / (norm + 1e-7)``."""
    from ..dtypes import float64
    from ..grad_mode import no_grad
    from ..linalg import vector_norm
    from .creation import tensor
    from .elementwise import where

    with no_grad():
        rows = cast(Any, input).reshape(-1).unique()
        picked = cast(Any, weight).index_select(0, rows)
        norms = vector_norm(picked, norm_type, dim=1, keepdim=True).to(float64)  # as .item()
        over = norms > max_norm
        if not bool(cast(Any, over).any()):
            return
        scale = where(over, max_norm / (norms + 1e-7), tensor(1.0, dtype=norms.dtype))
        cast(Any, weight).index_copy_(0, rows, picked * scale.to(weight.dtype))


@op("embedding", method=False, function=False)
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of the 2-d ``weight`` at the int64/int32 indices ``input`` (any shape):
    shape ``input.shape + (embedding_dim,)``. ``padding_idx``: that row gets no gradient.
    ``scale_grad_by_freq``: each row's gradient divided by how often its index occurs.
    ``max_norm``: first, each looked-up row of ``weight`` whose ``norm_type`` norm exceeds it
    is scaled in place (not recorded) to ``max_norm / (norm + 1e-7)`` of itself, as PyTorch's
    ``embedding_renorm_``. ``sparse`` is accepted and the gradient is dense."""
    for pos, (arg, v) in enumerate((("input", input), ("weight", weight)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"embedding(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(v).__name__}")
    p = _padding(padding_idx, weight.shape[0] if weight.ndim else 0)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (int32, int64):
        kind = torch_name(input.dtype)
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{kind}Tensor "
                           "instead (while checking arguments for embedding)")
    be = weight.backend
    xp = be.xp
    n = weight.shape[0]
    idx = input._data
    flat = xp.reshape(idx, (-1,))
    if flat.shape[0] and bool(xp.any((flat < 0) | (flat >= n))):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, input, float(max_norm), float(norm_type))
    out = _tensor(be, be.ops.embedding(weight._data, idx))
    if _grad.enabled and weight._requires_grad:
        record(EmbeddingBackward0, out, (weight,), (idx,), (None,),
               (n, p, bool(scale_grad_by_freq)))
    return out


@op("one_hot", method=False, function=False, differentiable=False)
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 ``tensor.shape + (num_classes,)``: 1 at each element's class (``tensor`` holds
    int64 class indices), else 0. ``num_classes=-1``: one more than the largest class."""
    if not isinstance(tensor, Tensor):
        raise TypeError("one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    be = tensor.backend
    xp = be.xp
    data = tensor._data
    k = int(num_classes)
    if tensor.numel() == 0:
        if k == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if bool(xp.min(data) < 0):
            raise RuntimeError("Class values must be non-negative.")
        top = int(xp.max(data))
        if k == -1:
            k = top + 1
        elif top >= k:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _tensor(be, be.ops.one_hot_classes(data, k))
