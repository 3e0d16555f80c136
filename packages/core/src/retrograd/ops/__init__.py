"""The ops: one module per family, each op's forward next to its derivative rule.

``registry()`` names every differentiable op, so the conformance op database can check that
each has an entry.
"""

from . import (
    activations,
    arithmetic,
    attention,
    conv,
    conversion,
    creation,
    division,
    dropout,
    elementwise,
    embedding,
    indexing,
    inplace,
    inplace_forms,
    layout,
    linalg,
    losses,
    metadata,
    methods,
    nn,
    nn_extras,
    normalization,
    numeric,
    pointwise,
    pooling,
    products,
    random,
    rearrange,
    reduction,
    selection,
    shape,
    sorting,
    statistics,
    tiling,
    views,
)
from .conversion import clone, to
from .creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .declare import OPS, bind_methods
from .elementwise import (
    abs,
    add,
    allclose,
    clamp,
    cos,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    logical_and,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    relu,
    sigmoid,
    sin,
    sqrt,
    sub,
    tanh,
    where,
)
from .linalg import linear, matmul
from .nn import cross_entropy, log_softmax, mse_loss, softmax
from .promotion import promote_types, result_type
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    seed,
    set_rng_state,
)
from .reduction import amax, logsumexp, mean, sum
from .shape import (
    cat,
    expand,
    flatten,
    getitem,
    permute,
    reshape,
    squeeze,
    stack,
    transpose,
    unsqueeze,
    view,
)

bind_methods(methods.Tensor)  # the ops declared with ``@op``, once every op module is imported

_DIFFERENTIABLE = (
    "add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "sin", "cos",
    "tanh", "sigmoid", "relu", "clamp", "where", "maximum", "minimum", "matmul", "sum",
    "mean", "amax", "logsumexp", "reshape", "view", "permute", "transpose", "T", "squeeze",
    "unsqueeze", "expand", "flatten", "getitem", "cat", "stack", "linear", "softmax",
    "log_softmax", "cross_entropy", "mse_loss", "clone", "to",
)


def registry() -> tuple[str, ...]:
    """Names of every differentiable op retrograd provides: those listed above and those
    declared with ``@op`` (``ops.declare``)."""
    return _DIFFERENTIABLE + tuple(s.name for s in OPS.values() if s.differentiable)


def declared_functions() -> dict[str, object]:
    """The functions ``@op`` declares for the ``retrograd`` namespace, by name."""
    return {s.name: s.fn for s in OPS.values() if s.function}


__all__ = [
    "activations", "arithmetic", "attention", "conv", "dropout", "embedding", "losses",
    "normalization", "nn_extras", "pooling", "division", "inplace_forms", "metadata", "numeric",
    "rearrange", "selection", "indexing", "layout", "products", "random",
    "abs", "add", "allclose", "amax", "arange", "as_tensor", "cat", "clamp", "clone",
    "conversion", "cos", "declared_functions",
    "creation", "cross_entropy", "div", "elementwise", "empty", "empty_like", "eq", "exp",
    "expand", "flatten", "from_numpy", "full", "full_like", "ge", "getitem", "gt", "inplace",
    "le", "linalg", "linear", "linspace", "log", "log_softmax", "logical_and", "logsumexp",
    "lt", "manual_seed", "matmul", "maximum", "mean", "methods", "minimum", "mse_loss", "mul",
    "ne", "neg", "nn", "ones", "ones_like", "permute", "pointwise", "pow", "promote_types", "rand",
    "rand_like", "randn", "randn_like", "reduction", "registry", "relu", "reshape",
    "result_type", "shape", "sigmoid", "sin", "sorting", "statistics", "tiling", "views",
    "softmax", "sqrt", "squeeze", "stack", "sub", "sum", "tanh", "tensor", "to", "transpose",
    "unsqueeze", "view", "where", "zeros", "zeros_like",
    "Generator", "default_generator", "get_rng_state", "initial_seed", "seed", "set_rng_state",
]
