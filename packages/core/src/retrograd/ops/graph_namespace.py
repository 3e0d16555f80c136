"""``GRAPH_F``: the op namespace derivative rules get under ``create_graph=True``.

It has the same names as a backend's raw kernel table, but every entry is a differentiable
retrograd op on tensors, so the backward computation is itself recorded and can be
differentiated again. The composite formulas (``tanh_backward`` ...) are the very functions
the backends bind to raw kernels: one formula, two executions.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..backends.reference import bind_composites
from ..tensor import Tensor
from . import elementwise as ew
from . import linalg, nn, reduction, shape
from .creation import ones_like, zeros_like
from .declare import GRAPH_KERNELS

__all__ = ["GRAPH_F"]


def _one_hot(target: Any, like: Tensor) -> Tensor:
    be = like.backend
    t = target._data if isinstance(target, Tensor) else target
    return Tensor(be.ops.one_hot(t, like._data), be)


def _ce_probs(x: Tensor, logp: Any) -> Tensor:
    return nn.softmax(x, 1)


def _sum(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return reduction.sum(x, dim, keepdim)


GRAPH_F = SimpleNamespace(
    add=ew.add, sub=ew.sub, mul=ew.mul, div=ew.div, pow=ew.pow, neg=ew.neg,
    matmul=linalg.matmul,
    gt=ew.gt, ge=ew.ge, lt=ew.lt, le=ew.le, eq=ew.eq, ne=ew.ne, logical_and=ew.logical_and,
    exp=ew.exp, log=ew.log, sqrt=ew.sqrt, sin=ew.sin, cos=ew.cos, tanh=ew.tanh, abs=ew.abs,
    sign=ew.sign, sigmoid=ew.sigmoid, relu=ew.relu, where=ew.where,
    maximum=ew.maximum, minimum=ew.minimum,
    sum=_sum, mean=reduction.mean, amax=reduction.amax, logsumexp=reduction.logsumexp,
    softmax=nn.softmax, log_softmax=nn.log_softmax,
    one_hot=_one_hot, ce_probs=_ce_probs,
    matrix_transpose=shape.matrix_transpose, reduce_to=shape.sum_to, expand=shape.expand_to,
    reshape=shape.reshape, permute=shape.permute, unsqueeze=shape.unsqueeze,
    squeeze=shape.squeeze, getitem=shape.getitem, index_backward=shape.index_backward,
    index_zero=shape.index_zero, ones_like=ones_like, zeros_like=zeros_like,
)
bind_composites(GRAPH_F.__dict__, GRAPH_F, keep={"pow_backward"})
GRAPH_F.pow_backward = ew.pow_backward  # one recorded node, with its own derivative
for _name, _fn in GRAPH_KERNELS.items():  # the later op families' (ops.declare); by now every
    GRAPH_F.__dict__.setdefault(_name, _fn)  # op module is imported: GRAPH_F is made lazily
