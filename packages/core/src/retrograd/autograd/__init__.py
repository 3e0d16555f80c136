"""The autograd layer: graph nodes, the Engine, custom Functions, checks and anomaly mode."""

from ..tensor import Tensor as _Tensor
from . import functional, graph  # torch.autograd.functional and torch.autograd.graph
from .accumulate import AccumulateGrad
from .anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .api import backward, grad
from .engine import Engine, is_fusion_enabled, set_fusion, set_tracer
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .multithreading import is_multithreading_enabled, set_multithreading_enabled
from .node import Edge, FormulaNode, Node


class _VariableMeta(type):
    def __instancecheck__(cls, other: object) -> bool:
        return isinstance(other, _Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's deprecated ``Variable``: ``Variable(t)`` is ``t`` itself (with
    ``requires_grad`` set when asked), every tensor is an instance, and
    ``Variable._execution_engine`` is the ``Engine`` (for ``queue_callback``)."""

    _execution_engine = Engine

    def __new__(cls, data: _Tensor, requires_grad: bool = False) -> _Tensor:  # type: ignore[misc]
        if requires_grad:
            data.requires_grad_()
        return data


try:  # the walk-trace viewer lives beside the engine
    from .trace import trace
except ImportError:  # pragma: no cover - only while the module is being written
    pass

__all__ = [
    "AccumulateGrad", "Edge", "Engine", "FormulaNode", "Function", "FunctionCtx",
    "GradcheckError", "Node", "backward", "detect_anomaly", "functional", "grad", "gradcheck",
    "gradgradcheck", "graph", "is_anomaly_enabled", "is_multithreading_enabled",
    "set_multithreading_enabled", "is_fusion_enabled", "once_differentiable",
    "set_detect_anomaly", "set_fusion", "set_tracer", "trace", "Variable",
]
