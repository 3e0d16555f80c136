"""Which backend kernels an op runs, so that a failure names the kernel a vendor has to look at.

The names are keys of ``retrograd.backends.reference_kernels`` (the table a backend overrides):
the forward kernels compute the op's output, the backward kernels its vector-Jacobian product
(composites such as ``tanh_backward`` run further kernels through ``F``; the first names are
the ones to read first). A test checks that every name is a kernel of the reference table.
"""

from __future__ import annotations

from .entries_activations import KERNEL_ROWS as _ACTIVATIONS
from .entries_arithmetic import KERNEL_ROWS as _ARITHMETIC
from .entries_attention import KERNEL_ROWS as _ATTENTION
from .entries_conv import KERNEL_ROWS as _CONV
from .entries_indexing import KERNEL_ROWS as _INDEXING
from .entries_layout import KERNEL_ROWS as _LAYOUT
from .entries_losses import KERNEL_ROWS as _LOSSES
from .entries_nn_extras import KERNEL_ROWS as _NN_EXTRAS
from .entries_normalization import KERNEL_ROWS as _NORMALIZATION
from .entries_numeric import KERNEL_ROWS as _NUMERIC
from .entries_products import KERNEL_ROWS as _PRODUCTS
from .entries_random import KERNEL_ROWS as _RANDOM
from .entries_rearrange import KERNEL_ROWS as _REARRANGE
from .entries_selection import KERNEL_ROWS as _SELECTION
from .entries_sorting import KERNEL_ROWS as _SORTING

# op -> (forward kernels, backward kernels)
KERNELS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "add": (("add",), ("reduce_to",)),
    "sub": (("sub",), ("neg", "reduce_to")),
    "mul": (("mul",), ("mul", "reduce_to")),
    "div": (("div", "floor_divide", "div_trunc"), ("div", "mul", "neg", "reduce_to")),
    "pow": (("pow",), ("pow_backward", "pow", "log", "where", "reduce_to")),
    "neg": (("neg",), ("neg",)),
    "abs": (("abs",), ("sign", "where", "mul")),
    "exp": (("exp",), ("mul",)),
    "log": (("log",), ("div",)),
    "sqrt": (("sqrt",), ("div", "mul")),
    "sin": (("sin",), ("cos", "mul")),
    "cos": (("cos",), ("sin", "mul", "neg")),
    "tanh": (("tanh",), ("tanh_backward",)),
    "sigmoid": (("sigmoid",), ("sigmoid_backward",)),
    "relu": (("relu",), ("relu_backward",)),
    "clamp": (("maximum", "minimum"), ("ge", "le", "logical_and", "where")),
    "where": (("where",), ("where", "reduce_to")),
    "maximum": (("maximum",), ("eq", "gt", "lt", "where", "mul", "reduce_to")),
    "minimum": (("minimum",), ("eq", "gt", "lt", "where", "mul", "reduce_to")),
    "matmul": (("matmul",), ("matmul", "matrix_transpose", "reduce_to")),
    "sum": (("sum",), ("expand",)),
    "mean": (("mean",), ("expand", "div")),
    "amax": (("amax",), ("eq", "where", "sum", "div")),
    "logsumexp": (("logsumexp",), ("sub", "exp", "mul")),
    "reshape": (("reshape",), ("reshape",)),
    "view": (("reshape",), ("reshape",)),
    "permute": (("permute",), ("permute",)),
    "transpose": (("permute",), ("permute",)),
    "T": (("permute",), ("permute",)),
    "squeeze": (("reshape",), ("reshape",)),
    "unsqueeze": (("reshape",), ("reshape",)),
    "expand": (("expand",), ("reduce_to",)),
    "flatten": (("reshape",), ("reshape",)),
    "getitem": (("getitem",), ("index_backward", "setitem")),
    "cat": (("concat",), ("getitem",)),
    "stack": (("stack",), ("getitem",)),
    "linear": (("linear_forward",), ("linear_backward", "matmul", "sum")),
    "softmax": (("softmax",), ("softmax_backward", "sum")),
    "log_softmax": (("log_softmax",), ("log_softmax_backward", "exp", "sum")),
    "cross_entropy": (("cross_entropy_forward", "check_class_targets"),
                      ("cross_entropy_backward",)),
    "clone": (("copy",), ()),
    "to": (("astype",), ("astype",)),
    "mse_loss": (("sub", "mul", "mean"), ("sub", "mul")),
    # views (ops/views.py): slices of the input; a multi-output view's backward writes each
    # output's gradient into zeros of the input's shape (``concat``/``stack`` of them under
    # create_graph)
    "narrow": (("getitem",), ("zeros", "setitem", "index_backward")),
    "select": (("getitem",), ("zeros", "setitem", "index_backward")),
    "unbind": (("getitem",), ("zeros", "setitem", "stack")),
    "split": (("getitem",), ("zeros", "setitem", "concat")),
    "split_with_sizes": (("getitem",), ("zeros", "setitem", "concat")),
    "unsafe_split": (("getitem",), ("zeros", "setitem", "concat")),
    "unsafe_split_with_sizes": (("getitem",), ("zeros", "setitem", "concat")),
    "chunk": (("getitem",), ("zeros", "setitem", "concat")),
    "unsafe_chunk": (("getitem",), ("zeros", "setitem", "concat")),
    "tensor_split": (("getitem",), ("zeros", "setitem", "index_backward")),
    "diagonal": (("diagonal_view", "diagonal"), ("diagonal_backward",)),
    "as_strided": (("as_strided_view", "as_strided", "reshape", "flat_positions"),
                   ("index_backward", "reshape")),
    # statistics (ops/statistics.py)
    "var": (("var",), ("mean", "sub", "mul", "expand")),
    "std": (("var", "sqrt"), ("eq", "where", "div", "mean", "sub", "mul", "expand")),
    "var_mean": (("var", "mean"), ("mean", "sub", "mul", "div", "expand")),
    "std_mean": (("var", "sqrt", "mean"), ("eq", "where", "div", "mean", "sub", "mul",
                                            "expand")),
    "prod": (("prod",), ("div", "mul", "eq", "where", "sum", "prod")),
    "max": (("amax", "argmax"), ("index_mask", "where", "eq", "sum", "div", "mul")),
    "min": (("amin", "argmin"), ("index_mask", "where", "eq", "sum", "div", "mul")),
    "amin": (("amin",), ("eq", "where", "sum", "div", "mul")),
    "median": (("median",), ("index_mask", "where", "eq", "sum", "div", "mul")),
    "nanmedian": (("median",), ("index_mask", "where", "ne", "sum", "div", "mul")),
    "trace": (("diagonal_mask", "where", "sum"), ("diagonal_mask", "where", "expand")),
    "cumsum": (("cumsum",), ("cumsum_reverse",)),
    "cumprod": (("cumprod",), ("cumsum_reverse", "mul", "div", "cumsum", "where")),
    "logcumsumexp": (("logcumsumexp",), ("logcumsumexp", "log", "abs", "where", "exp",
                                         "sub")),
    # pointwise (ops/pointwise.py); square is PyTorch's pow(x, 2)
    "log1p": (("log1p",), ("add", "div")),
    "expm1": (("expm1",), ("add", "mul")),
    "square": (("pow",), ("pow_backward",)),
    "reciprocal": (("reciprocal",), ("neg", "mul")),
    "rsqrt": (("rsqrt",), ("pow", "mul")),
    "sign": (("sign", "ne", "where"), ("zeros_like",)),
    "floor": (("floor",), ("zeros_like",)),
    "tan": (("tan",), ("mul", "add")),
    "sinh": (("sinh",), ("cosh", "mul")),
    "cosh": (("cosh",), ("sinh", "mul")),
    "asin": (("asin",), ("rsqrt", "neg", "mul", "add")),
    "acos": (("acos",), ("rsqrt", "neg", "mul", "add")),
    "atan": (("atan",), ("mul", "add", "div")),
    "erf": (("erf",), ("exp", "neg", "mul")),
    "atan2": (("atan2",), ("mul", "add", "eq", "where", "div", "neg", "reduce_to")),
    "masked_fill": (("masked_fill",), ("where", "reduce_to", "sum")),
    # matrix products (ops/linalg.py) and tiling (ops/tiling.py)
    "mm": (("matmul",), ("matmul", "matrix_transpose", "reduce_to")),
    "mv": (("matmul",), ("matmul", "matrix_transpose", "unsqueeze", "reshape", "reduce_to")),
    "dot": (("matmul",), ("mul",)),
    "outer": (("reshape", "mul"), ("mul", "reduce_to")),
    "repeat": (("reshape", "repeat"), ("reshape", "sum")),
    "tile": (("reshape", "repeat"), ("reshape", "sum")),
    # sorting (ops/sorting.py): listed with their entries
    **_SORTING,
    # the families below list theirs beside their entries (opdb/entries_<family>.py)
    **_INDEXING,
    **_LAYOUT,
    **_PRODUCTS,
    **_ACTIVATIONS,
    **_ARITHMETIC,
    **_RANDOM,
    **_SELECTION,
    **_REARRANGE,
    **_NUMERIC,
    **_CONV,
    **_NORMALIZATION,
    **_LOSSES,
    **_ATTENTION,
    **_NN_EXTRAS,
}


def kernel_note(op: str, quantity: str) -> str:
    """`` [forward kernel: tanh]`` for an output, `` [backward kernels: tanh_backward]`` for a
    gradient; empty for an op without an entry."""
    entry = KERNELS.get(op)
    if entry is None:
        return ""
    forward, backward = entry
    names = forward if quantity.startswith(("output", "dtype", "forward")) else backward
    if not names:
        return ""
    which = "forward" if names is forward else "backward"
    plural = "s" if len(names) > 1 else ""
    return f" [{which} kernel{plural}: {', '.join(names)}]"
