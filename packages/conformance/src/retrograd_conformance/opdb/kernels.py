"""Which backend kernels an op runs, so that a failure names the kernel a vendor has to look at.

The names are keys of ``retrograd.backends.reference_kernels`` (the table a backend overrides):
the forward kernels compute the op's output, the backward kernels its vector-Jacobian product
(composites such as ``tanh_backward`` run further kernels through ``F``; the first names are
the ones to read first). A test checks that every name is a kernel of the reference table.
"""

from __future__ import annotations

# op -> (forward kernels, backward kernels)
KERNELS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "add": (("add",), ("reduce_to",)),
    "sub": (("sub",), ("neg", "reduce_to")),
    "mul": (("mul",), ("mul", "reduce_to")),
    "div": (("div",), ("div", "mul", "neg", "reduce_to")),
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
