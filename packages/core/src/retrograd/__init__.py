"""retrograd: a reverse-mode automatic differentiation engine with a PyTorch-shaped API.

    >>> import retrograd as rg
    >>> x = rg.tensor(2.0, requires_grad=True)
    >>> u = x * x
    >>> (2 * u + 3 * u).backward()
    >>> x.grad.item()
    20.0
"""

from . import autograd, backends, linalg, nn, utils
from .autograd import Function
from .backends import available_backends, get_backend, register_backend
from .dtypes import (
    Device,
    DType,
    bool_,
    float16,
    float32,
    float64,
    get_default_dtype,
    int32,
    int64,
    set_default_dtype,
)
from .dtypes import Device as device
from .errors import (
    DoubleBackwardUnsupported,
    DTypeError,
    GraphFreedError,
    RetrogradError,
    ShapeError,
    VersionMismatch,
)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .inference_mode import inference_mode, is_inference, is_inference_mode_enabled
from .ops import (
    Generator,
    abs,
    add,
    allclose,
    amax,
    arange,
    as_tensor,
    cat,
    clamp,
    clone,
    cos,
    default_generator,
    div,
    empty,
    empty_like,
    eq,
    exp,
    expand,
    flatten,
    from_numpy,
    full,
    full_like,
    ge,
    get_rng_state,
    gt,
    initial_seed,
    le,
    linspace,
    log,
    log_softmax,
    logical_and,
    logsumexp,
    lt,
    manual_seed,
    matmul,
    maximum,
    mean,
    minimum,
    mul,
    ne,
    neg,
    ones,
    ones_like,
    permute,
    pow,
    promote_types,
    rand,
    rand_like,
    randn,
    randn_like,
    relu,
    reshape,
    result_type,
    seed,
    set_rng_state,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    tanh,
    tensor,
    transpose,
    unsqueeze,
    where,
    zeros,
    zeros_like,
)
from .serialization import load, save
from .tensor import Tensor
from .warn_always import is_warn_always_enabled, set_warn_always

bool = bool_  # noqa: A001 - PyTorch exports retrograd.bool as a dtype
# PyTorch's other names of the same dtypes
double = float64
float = float32  # noqa: A001
half = float16
long = int64
int = int32  # noqa: A001

try:
    from . import optim  # noqa: F401
except ImportError:  # pragma: no cover - only while the optimizers are being written
    pass

from .ops import declared_functions as _declared_functions  # noqa: E402
from .ops.statistics import return_types  # noqa: E402 - PyTorch's named tuples (max, min ...)

# the ops declared with ``@op`` (ops/declare.py): each is ``retrograd.<name>``
globals().update(_declared_functions())

__version__ = "0.1.0"

__all__ = [
    "save", "load", "utils",
    "DTypeError", "Device", "DType", "DoubleBackwardUnsupported", "Function", "GraphFreedError",
    "allclose",
    "ShapeError",
    "RetrogradError", "Tensor", "VersionMismatch", "abs", "linalg", "add", "amax", "arange",
    "as_tensor", "autograd", "available_backends", "backends", "bool", "bool_", "cat", "clamp",
    "double", "float", "half", "int", "long",
    "clone", "cos", "device", "div", "empty", "empty_like", "enable_grad", "eq", "exp",
    "expand", "flatten", "float16", "float32", "float64", "from_numpy", "full", "full_like",
    "ge", "get_backend", "get_default_dtype", "gt", "inference_mode", "int32", "int64",
    "is_grad_enabled", "is_inference", "is_inference_mode_enabled", "is_warn_always_enabled",
    "le", "linspace", "log",
    "log_softmax", "logical_and", "logsumexp", "lt", "manual_seed", "matmul", "maximum",
    "mean", "minimum", "mul", "ne", "neg", "nn", "no_grad", "ones", "ones_like", "permute",
    "pow", "promote_types", "rand", "rand_like", "randn", "randn_like", "register_backend",
    "relu", "reshape", "result_type", "set_default_dtype", "set_grad_enabled",
    "set_warn_always", "sigmoid",
    "sin", "softmax", "sqrt", "squeeze", "stack", "sub", "sum",
    "tanh", "tensor", "transpose", "unsqueeze", "where", "zeros", "zeros_like",
]
__all__ += sorted(_declared_functions()) + ["return_types"]
__all__ += ["Generator", "default_generator", "get_rng_state", "initial_seed", "seed",
            "set_rng_state"]
