"""The entries: every differentiable op retrograd provides, with samples covering 0-d tensors,
broadcasting, batching and the op's argument forms (method, function, Python scalars on
either side, ``dim`` / ``keepdim``)."""

from __future__ import annotations

import dataclasses

from . import (
    entries_activations,
    entries_arithmetic,
    entries_attention,
    entries_conv,
    entries_indexing,
    entries_layout,
    entries_losses,
    entries_nn_extras,
    entries_normalization,
    entries_numeric,
    entries_pointwise,
    entries_products,
    entries_random,
    entries_rearrange,
    entries_selection,
    entries_sorting,
    entries_statistics,
    entries_views,
)
from .base import OpInfo, Sample
from .sweeps import SWEEPS

M23 = [[True, False, True], [False, True, True]]


def _f(lib):  # the functional namespace, same path in retrograd and torch
    return lib.nn.functional


def _binary(name: str, fn, *, positive_b: bool = False, extra: tuple[Sample, ...] = ()) -> OpInfo:
    samples = (
        Sample("same-shape", ((2, 3), (2, 3)), fn, positive=positive_b),
        Sample("broadcast", ((2, 3), (3,)), fn, positive=positive_b),
        Sample("broadcast-both", ((2, 1), (1, 3)), fn, positive=positive_b),
        Sample("0-d", ((), ()), fn, positive=positive_b),
        Sample("0-d-with-tensor", ((), (2, 3)), fn, positive=positive_b),
        Sample("batched", ((2, 2, 3), (2, 1, 3)), fn, positive=positive_b),
    ) + extra
    return OpInfo(name, samples)


def _unary(name: str, fn, *, positive: bool = False, domain=(0.2, 1.8), avoid=(),
           method=None) -> OpInfo:
    samples = [
        Sample("2-d", ((2, 3),), fn, positive=positive, domain=domain, avoid=avoid),
        Sample("0-d", ((),), fn, positive=positive, domain=domain, avoid=avoid),
        Sample("batched", ((2, 2, 3),), fn, positive=positive, domain=domain, avoid=avoid),
    ]
    if method is not None:
        samples.append(Sample("method", ((3,),), method, positive=positive, domain=domain,
                              avoid=avoid))
    return OpInfo(name, tuple(samples))


def _reduction(name: str, fn_all, fn_dim) -> OpInfo:
    return OpInfo(name, (
        Sample("all", ((2, 3),), fn_all),
        Sample("dim=1", ((2, 3),), lambda lib, a: fn_dim(lib, a, 1, False)),
        Sample("dim=0,keepdim", ((2, 3),), lambda lib, a: fn_dim(lib, a, 0, True)),
        Sample("dim=-1,batched", ((2, 2, 3),), lambda lib, a: fn_dim(lib, a, -1, False)),
        Sample("1-d", ((4,),), lambda lib, a: fn_dim(lib, a, 0, False)),
        Sample("0-d", ((),), fn_all),
        # partial tuples of dims: the count a mean divides by is that of the reduced axes
        Sample("dim=(1,2) of 3-d", ((2, 3, 4),), lambda lib, a: fn_dim(lib, a, (1, 2), False)),
        Sample("dim=(0,2),keepdim of 3-d", ((2, 3, 4),),
               lambda lib, a: fn_dim(lib, a, (0, 2), True)),
        Sample("dim=(-1,0) of 3-d", ((3, 2, 2),), lambda lib, a: fn_dim(lib, a, (-1, 0), False)),
    ))


ENTRIES: tuple[OpInfo, ...] = (
    _binary("add", lambda lib, a, b: a + b, extra=(
        Sample("tensor+scalar", ((2, 3),), lambda lib, a: a + 1.5),
        Sample("scalar+tensor", ((2, 3),), lambda lib, a: 1.5 + a),
        Sample("function", ((2, 3), (3,)), lambda lib, a, b: lib.add(a, b)),
    )),
    _binary("sub", lambda lib, a, b: a - b, extra=(
        Sample("tensor-scalar", ((2, 3),), lambda lib, a: a - 1.5),
        Sample("scalar-tensor", ((2, 3),), lambda lib, a: 1.5 - a),
    )),
    _binary("mul", lambda lib, a, b: a * b, extra=(
        Sample("tensor*scalar", ((2, 3),), lambda lib, a: a * 2.5),
        Sample("scalar*tensor", ((2, 3),), lambda lib, a: 2.5 * a),
        Sample("repeated-operand", ((2, 3),), lambda lib, a: a * a),
    )),
    _binary("div", lambda lib, a, b: a / b, positive_b=True, extra=(
        Sample("tensor/scalar", ((2, 3),), lambda lib, a: a / 2.5),
        Sample("scalar/tensor", ((2, 3),), lambda lib, a: 2.5 / a),
        Sample("repeated-operand", ((2, 3),), lambda lib, a: (a * 0.5) / a),
        Sample("rounding_mode=None", ((2, 3), (3,)),
               lambda lib, a, b: lib.div(a, b, rounding_mode=None), positive=True),
        # a rounded quotient has zero gradients: times a, so that a's gradient is its value
        Sample("rounding_mode floor, trunc", ((2, 3),), lambda lib, a: a * (
            lib.div(a * 7.0, 1.5, rounding_mode="floor")
            + a.div(-2.5, rounding_mode="trunc") + lib.divide(a, a + 3.0, rounding_mode="trunc"))),
    )),
    OpInfo("pow", (
        Sample("tensor**2", ((2, 3),), lambda lib, a: a ** 2),
        Sample("tensor**3,0-d", ((),), lambda lib, a: a ** 3),
        Sample("tensor**0.5", ((2, 3),), lambda lib, a: a ** 0.5, positive=True),
        Sample("tensor**-1.5", ((3,),), lambda lib, a: a ** -1.5, positive=True),
        Sample("scalar**tensor", ((2, 3),), lambda lib, a: 1.7 ** a),
        Sample("tensor**tensor", ((2, 3), (2, 3)), lambda lib, a, b: a ** b, positive=True),
        Sample("tensor**tensor,broadcast", ((2, 3), (3,)), lambda lib, a, b: a ** b,
               positive=True),
    )),
    _unary("neg", lambda lib, a: lib.neg(a), method=lambda lib, a: -a),
    _unary("abs", lambda lib, a: lib.abs(a), method=lambda lib, a: a.abs()),
    _unary("exp", lambda lib, a: lib.exp(a), method=lambda lib, a: a.exp()),
    _unary("log", lambda lib, a: lib.log(a), positive=True, method=lambda lib, a: a.log()),
    _unary("sqrt", lambda lib, a: lib.sqrt(a), positive=True, method=lambda lib, a: a.sqrt()),
    _unary("sin", lambda lib, a: lib.sin(a), method=lambda lib, a: a.sin()),
    _unary("cos", lambda lib, a: lib.cos(a), method=lambda lib, a: a.cos()),
    _unary("tanh", lambda lib, a: lib.tanh(a), method=lambda lib, a: a.tanh()),
    _unary("sigmoid", lambda lib, a: lib.sigmoid(a), method=lambda lib, a: a.sigmoid()),
    _unary("relu", lambda lib, a: lib.relu(a), method=lambda lib, a: _f(lib).relu(a)),
    OpInfo("clamp", (
        Sample("min-max", ((2, 3),), lambda lib, a: lib.clamp(a, min=-0.5, max=0.8),
               avoid=(-0.5, 0.8)),
        Sample("min", ((2, 3),), lambda lib, a: a.clamp(min=0.3), avoid=(0.3,)),
        Sample("max,0-d", ((),), lambda lib, a: lib.clamp(a, max=0.4), avoid=(0.4,)),
    )),
    OpInfo("where", (
        Sample("same-shape", ((2, 3), (2, 3)),
               lambda lib, a, b: lib.where(lib.tensor(M23, dtype=lib.bool), a, b)),
        Sample("broadcast", ((3,), (2, 1)),
               lambda lib, a, b: lib.where(lib.tensor(M23, dtype=lib.bool), a, b)),
        Sample("cond-from-compare", ((2, 3), (2, 3)),
               lambda lib, a, b: lib.where(a > b, a, b * 2)),
    )),
    _binary("maximum", lambda lib, a, b: lib.maximum(a, b)),
    _binary("minimum", lambda lib, a, b: lib.minimum(a, b)),
    OpInfo("matmul", (
        Sample("2-d@2-d", ((2, 3), (3, 4)), lambda lib, a, b: a @ b),
        Sample("1-d@1-d", ((3,), (3,)), lambda lib, a, b: a @ b),
        Sample("2-d@1-d", ((2, 3), (3,)), lambda lib, a, b: lib.matmul(a, b)),
        Sample("1-d@2-d", ((3,), (3, 2)), lambda lib, a, b: lib.matmul(a, b)),
        Sample("batched", ((2, 2, 3), (2, 3, 2)), lambda lib, a, b: a @ b),
        Sample("batched-broadcast", ((2, 2, 3), (3, 2)), lambda lib, a, b: a @ b),
        Sample("repeated-operand", ((2, 3),), lambda lib, a: a @ a.T),
    )),
    _reduction("sum", lambda lib, a: a.sum(),
               lambda lib, a, d, k: lib.sum(a, dim=d, keepdim=k)),
    _reduction("mean", lambda lib, a: lib.mean(a),
               lambda lib, a, d, k: a.mean(dim=d, keepdim=k)),
    _reduction("amax", lambda lib, a: lib.amax(a, dim=0) if a.ndim else lib.amax(a),
               lambda lib, a, d, k: lib.amax(a, dim=d, keepdim=k)),
    _reduction("logsumexp", lambda lib, a: lib.logsumexp(a, dim=0),
               lambda lib, a, d, k: lib.logsumexp(a, dim=d, keepdim=k)),
    OpInfo("reshape", (
        Sample("2-d->3-d", ((2, 3),), lambda lib, a: a.reshape(3, 2, 1)),
        Sample("-1", ((2, 3),), lambda lib, a: lib.reshape(a, (-1,))),
        Sample("0-d->(1,1)", ((),), lambda lib, a: a.reshape(1, 1)),
        Sample("non-contiguous", ((2, 3),), lambda lib, a: a.T.reshape(6)),
    )),
    OpInfo("view", (
        Sample("2-d->1-d", ((2, 3),), lambda lib, a: a.view(6)),
        Sample("3-d->2-d", ((2, 2, 3),), lambda lib, a: a.view(4, 3)),
        Sample("-1", ((2, 3),), lambda lib, a: a.view(-1, 2)),
    )),
    OpInfo("permute", (
        Sample("3-d", ((2, 3, 4),), lambda lib, a: a.permute(2, 0, 1)),
        Sample("function", ((2, 3),), lambda lib, a: lib.permute(a, (1, 0))),
    )),
    OpInfo("transpose", (
        Sample("2-d", ((2, 3),), lambda lib, a: a.transpose(0, 1)),
        Sample("3-d,negative", ((2, 3, 4),), lambda lib, a: lib.transpose(a, -1, 0)),
        Sample(".T", ((2, 3),), lambda lib, a: a.T * 1.0),
    ), aliases=("T",)),
    OpInfo("squeeze", (
        Sample("dim", ((2, 1, 3),), lambda lib, a: a.squeeze(1)),
        Sample("all", ((1, 3, 1),), lambda lib, a: lib.squeeze(a)),
    )),
    OpInfo("unsqueeze", (
        Sample("dim=0", ((2, 3),), lambda lib, a: a.unsqueeze(0)),
        Sample("dim=-1,0-d", ((),), lambda lib, a: lib.unsqueeze(a, -1)),
    )),
    OpInfo("expand", (
        Sample("(3,)->(2,3)", ((3,),), lambda lib, a: a.expand(2, 3)),
        Sample("(2,1)->(2,4)", ((2, 1),), lambda lib, a: a.expand(2, 4)),
        Sample("0-d->(3,)", ((),), lambda lib, a: a.expand(3)),
    )),
    OpInfo("flatten", (
        Sample("3-d", ((2, 2, 3),), lambda lib, a: a.flatten()),
        Sample("function", ((2, 3),), lambda lib, a: lib.flatten(a)),
    )),
    OpInfo("getitem", (
        Sample("int", ((3, 4),), lambda lib, a: a[1]),
        Sample("slice", ((3, 4),), lambda lib, a: a[1:, ::2]),
        Sample("None,Ellipsis", ((2, 3),), lambda lib, a: a[None, ..., 1]),
        Sample("int-array,repeated", ((3, 2),), lambda lib, a: a[lib.int_tensor([0, 2, 0])]),
        Sample("bool-mask", ((2, 3),), lambda lib, a: a[lib.tensor(M23, dtype=lib.bool)]),
        Sample("negative,0-d-result", ((3,),), lambda lib, a: a[-1]),
    )),
    OpInfo("cat", (
        Sample("dim=0", ((2, 3), (1, 3)), lambda lib, a, b: lib.cat([a, b], dim=0)),
        Sample("dim=1", ((2, 3), (2, 2)), lambda lib, a, b: lib.cat((a, b), 1)),
        Sample("repeated-operand", ((3,),), lambda lib, a: lib.cat([a, a * 2, a])),
    )),
    OpInfo("stack", (
        Sample("dim=0", ((2, 3), (2, 3)), lambda lib, a, b: lib.stack([a, b])),
        Sample("dim=-1", ((3,), (3,)), lambda lib, a, b: lib.stack((a, b), dim=-1)),
        Sample("0-d", ((), ()), lambda lib, a, b: lib.stack([a, b, a])),
    )),
    OpInfo("linear", (
        Sample("bias", ((4, 3), (2, 3), (2,)), lambda lib, x, w, b: _f(lib).linear(x, w, b)),
        Sample("no-bias", ((4, 3), (2, 3)), lambda lib, x, w: _f(lib).linear(x, w)),
        Sample("1-d-input", ((3,), (2, 3), (2,)), lambda lib, x, w, b: _f(lib).linear(x, w, b)),
    )),
    OpInfo("softmax", (
        Sample("dim=-1", ((2, 3),), lambda lib, a: _f(lib).softmax(a, dim=-1)),
        Sample("dim=0", ((2, 3),), lambda lib, a: _f(lib).softmax(a, dim=0)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: _f(lib).softmax(a, dim=1)),
    )),
    OpInfo("log_softmax", (
        Sample("dim=-1", ((2, 3),), lambda lib, a: _f(lib).log_softmax(a, dim=-1)),
        Sample("dim=0", ((3, 2),), lambda lib, a: _f(lib).log_softmax(a, dim=0)),
    )),
    OpInfo("cross_entropy", (
        Sample("mean", ((3, 4),),
               lambda lib, a: _f(lib).cross_entropy(a, lib.int_tensor([0, 3, 1]))),
        Sample("sum", ((3, 4),), lambda lib, a: _f(lib).cross_entropy(
            a, lib.int_tensor([2, 2, 0]), reduction="sum")),
        Sample("none", ((2, 3),), lambda lib, a: _f(lib).cross_entropy(
            a, lib.int_tensor([1, 0]), reduction="none")),
    )),
    OpInfo("clone", (
        Sample("2-d", ((2, 3),), lambda lib, a: a.clone()),
        Sample("0-d", ((),), lambda lib, a: a.clone() * a),
    )),
    OpInfo("to", (
        Sample("dtype", ((2, 3),), lambda lib, a: a.to(lib.float64)),
        Sample("same-device", ((3,),), lambda lib, a: a.to(lib.device) * 2.0),
    )),
    OpInfo("mse_loss", (
        Sample("mean", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).mse_loss(a, b)),
        Sample("0-d", ((), ()), lambda lib, a, b: _f(lib).mse_loss(a, b)),
    )),
)

ENTRIES += (entries_views.ENTRIES + entries_statistics.ENTRIES + entries_pointwise.ENTRIES
            + entries_sorting.ENTRIES + entries_indexing.ENTRIES + entries_layout.ENTRIES
            + entries_products.ENTRIES + entries_activations.ENTRIES
            + entries_arithmetic.ENTRIES + entries_random.ENTRIES
            + entries_selection.ENTRIES + entries_rearrange.ENTRIES + entries_numeric.ENTRIES
            + entries_conv.ENTRIES + entries_normalization.ENTRIES + entries_losses.ENTRIES
            + entries_attention.ENTRIES + entries_nn_extras.ENTRIES)

#: PyTorch's other names of an op (``multiply`` for ``mul`` ...): each is an alias of the op's
#: entry and runs through a copy of its first sample
SYNONYMS: dict[str, tuple[str, ...]] = {
    "mul": ("multiply",), "sub": ("subtract",), "neg": ("negative",), "abs": ("absolute",),
    "div": ("true_divide", "divide"), "outer": ("ger",),
}


def _with_synonyms(entry: OpInfo) -> OpInfo:
    names = SYNONYMS.get(entry.name, ())
    if not names:
        return entry
    first = entry.samples[0]
    extra = tuple(dataclasses.replace(first, label=f"as {name}", call=(
        lambda lib, *ts, name=name: getattr(lib, name)(*ts))) for name in names)
    return dataclasses.replace(entry, samples=entry.samples + extra,
                               aliases=entry.aliases + names)


ENTRIES = tuple(_with_synonyms(e) for e in ENTRIES)

#: every row the suite runs: the entries, then the sweep rows (``<op>/<family>``, see
#: :mod:`.sweeps`), each of which the report shows apart
OPS: tuple[OpInfo, ...] = ENTRIES + SWEEPS

OPS_BY_NAME: dict[str, OpInfo] = {}
for _op in OPS:
    for _name in (_op.name, *_op.aliases):
        OPS_BY_NAME[_name] = _op
