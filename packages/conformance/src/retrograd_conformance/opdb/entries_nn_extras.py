"""Op-database entries of the everyday ``nn.functional`` extras (normalize, cosine_similarity,
...): the entries, their ``<op>/sizes`` sweep rows and their kernels rows.

These ops are compositions of core's differentiable ops, so their kernels rows list the
kernels of the parts. ``dropout1d``/``dropout2d`` are random in training, so their samples are
the deterministic cases (``p=0``, ``p=1``, ``training=False``). ``hardsigmoid`` has no double
backward in PyTorch (nor here): its entry checks first derivatives only. Samples keep values
off the kinks (the generated values are at least 0.05 from the listed points)."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "sizes_rows"]


def _f(lib: Any) -> Any:  # the functional namespace, same path in retrograd and torch
    return lib.nn.functional


_ACT = ((3, 4),)

ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("normalize", (
        Sample("2-d dim=1", ((3, 4),), lambda lib, x: _f(lib).normalize(x)),
        Sample("3-d p=1 dim=-1", ((2, 3, 4),), lambda lib, x: _f(lib).normalize(x, 1.0, -1)),
        Sample("batched dim=(0,2)", ((2, 3, 2),),
               lambda lib, x: _f(lib).normalize(x, dim=(0, 2))),
    )),
    OpInfo("cosine_similarity", (
        Sample("2-d", ((3, 4), (3, 4)), lambda lib, a, b: _f(lib).cosine_similarity(a, b)),
        Sample("broadcast dim=-1", ((3, 1, 4), (2, 4)),
               lambda lib, a, b: _f(lib).cosine_similarity(a, b, dim=-1)),
    )),
    OpInfo("pairwise_distance", (
        Sample("2-d", ((3, 4), (3, 4)), lambda lib, a, b: _f(lib).pairwise_distance(a, b)),
        Sample("batched broadcast keepdim p=3", ((2, 3, 4), (3, 4)),
               lambda lib, a, b: _f(lib).pairwise_distance(a, b, 3.0, keepdim=True)),
    )),
    OpInfo("softmin", (
        Sample("2-d dim=1", _ACT, lambda lib, x: _f(lib).softmin(x, 1)),
        Sample("3-d dim=0", ((2, 3, 2),), lambda lib, x: _f(lib).softmin(x, 0)),
    )),
    OpInfo("softsign", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).softsign(x)),
        Sample("0-d", ((),), lambda lib, x: _f(lib).softsign(x) * x),
    )),
    OpInfo("tanhshrink", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).tanhshrink(x)),
    )),
    OpInfo("threshold", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).threshold(x, 0.3, -2.0) * x, avoid=(0.3,)),
    )),
    OpInfo("hardsigmoid", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).hardsigmoid(x * 3.0), avoid=(-1.0, 1.0)),
    ), gradgrad=False, notes="PyTorch has no double backward of hardsigmoid"),
    OpInfo("hardswish", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).hardswish(x * 3.0), avoid=(-1.0, 1.0)),
    )),
    OpInfo("celu", (
        Sample("2-d", _ACT, lambda lib, x: _f(lib).celu(x)),
        Sample("alpha=0.5", _ACT, lambda lib, x: _f(lib).celu(x, 0.5)),
    )),
    OpInfo("prelu", (
        Sample("one slope", ((3, 4), (1,)), lambda lib, x, w: _f(lib).prelu(x, w)),
        Sample("per channel batched", ((2, 3, 2), (3,)), lambda lib, x, w: _f(lib).prelu(x, w)),
    )),
    OpInfo("glu", (
        Sample("2-d", ((3, 4),), lambda lib, x: _f(lib).glu(x)),
        Sample("3-d dim=1", ((2, 4, 3),), lambda lib, x: _f(lib).glu(x, 1)),
    )),
    OpInfo("rms_norm", (
        Sample("last axis, weight", ((3, 4), (4,)),
               lambda lib, x, w: _f(lib).rms_norm(x, [4], w)),
        Sample("two axes, eps", ((2, 3, 4),),
               lambda lib, x: _f(lib).rms_norm(x, (3, 4), eps=1e-3)),
    )),
    OpInfo("instance_norm", (
        Sample("(N, C, L)", ((2, 3, 4),), lambda lib, x: _f(lib).instance_norm(x)),
        Sample("(N, C, H, W) affine", ((2, 2, 2, 3), (2,), (2,)),
               lambda lib, x, w, b: _f(lib).instance_norm(x, weight=w, bias=b)),
    )),
    OpInfo("dropout1d", (
        Sample("p=0", ((2, 3, 4),), lambda lib, x: _f(lib).dropout1d(x, 0.0) * x),
        Sample("eval unbatched", ((3, 4),),
               lambda lib, x: _f(lib).dropout1d(x * x, 0.4, training=False)),
        Sample("p=1", ((2, 3, 4),), lambda lib, x: _f(lib).dropout1d(x, 1.0) + x * x),
    )),
    OpInfo("dropout2d", (
        Sample("p=0", ((2, 3, 2, 2),), lambda lib, x: _f(lib).dropout2d(x, 0.0) * x),
        Sample("eval", ((2, 3, 2, 2),),
               lambda lib, x: _f(lib).dropout2d(x * x, 0.4, training=False)),
    )),
    OpInfo("interpolate", (
        Sample("nearest scale 2", ((1, 2, 2, 3),),
               lambda lib, x: _f(lib).interpolate(x, scale_factor=2) ** 2),
        Sample("nearest size", ((2, 1, 3, 4),),
               lambda lib, x: _f(lib).interpolate(x, size=(5, 3)) ** 2),
        Sample("bilinear", ((1, 2, 3, 3),),
               lambda lib, x: _f(lib).interpolate(x, size=(4, 5), mode="bilinear") ** 2),
        Sample("bilinear align_corners", ((1, 2, 3, 3),),
               lambda lib, x: _f(lib).interpolate(x, scale_factor=1.5, mode="bilinear",
                                                  align_corners=True) ** 2),
        Sample("linear 3-d", ((2, 2, 4),),
               lambda lib, x: _f(lib).interpolate(x, size=7, mode="linear") ** 2),
    )),
    OpInfo("pixel_shuffle", (
        Sample("r=2", ((1, 8, 2, 3),), lambda lib, x: _f(lib).pixel_shuffle(x, 2) ** 2),
        Sample("unbatched r=3", ((9, 2, 2),), lambda lib, x: _f(lib).pixel_shuffle(x, 3) ** 2),
    )),
    OpInfo("pixel_unshuffle", (
        Sample("r=2", ((1, 2, 4, 6),), lambda lib, x: _f(lib).pixel_unshuffle(x, 2) ** 2),
    )),
)

_NORM = ("abs", "pow", "sum", "sqrt", "div", "mul", "clip", "maximum", "where", "gt", "eq")
_POINT = ("where", "gt", "lt", "mul", "add", "div")

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNEL_ROWS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "normalize": (_NORM + ("expand",), _NORM + ("reduce_to",)),
    "cosine_similarity": (_NORM + ("expand", "copy"), _NORM + ("reduce_to",)),
    "pairwise_distance": (("sub", "add") + _NORM, _NORM + ("neg", "reduce_to")),
    "softmin": (("neg", "softmax"), ("softmax_backward", "neg")),
    "softsign": (("abs", "add", "div"), ("div", "mul", "sign", "neg", "reduce_to")),
    "tanhshrink": (("tanh", "sub"), ("tanh_backward", "neg", "sub")),
    "threshold": (("gt", "where"), ("gt", "where")),
    "hardsigmoid": (("add", "clip", "div"), ("gt", "lt", "logical_and", "mul", "where")),
    "hardswish": (_POINT + ("le",), _POINT + ("le",)),
    "celu": (("clip", "div", "mul", "expm1", "gt", "where", "add", "sub"),
             ("exp", "mul", "where", "clip")),
    "prelu": (("reshape", "gt", "mul", "where"), ("where", "mul", "reduce_to", "reshape")),
    "glu": (("getitem", "sigmoid", "mul"), ("sigmoid_backward", "mul", "concat")),
    "rms_norm": (("pow", "mean", "add", "rsqrt", "mul"),
                 ("pow", "mean", "rsqrt", "mul", "reduce_to")),
    "instance_norm": (("repeat", "reshape", "norm_stats", "norm_affine"),
                      ("mean", "sub", "mul", "add", "sqrt", "div", "sum", "reshape")),
    "dropout1d": (("mul",), ("mul",)),
    "dropout2d": (("mul",), ("mul",)),
    "interpolate": (("index_select", "mul", "add"), ("index_select_backward", "mul")),
    "pixel_shuffle": (("reshape", "permute"), ("reshape", "permute")),
    "pixel_unshuffle": (("reshape", "permute"), ("reshape", "permute")),
}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` sweep rows of this family: the elementwise ops on ``n`` values
    (shifted into the range where each bends); ``softmin``, ``cosine_similarity``,
    ``pairwise_distance``, ``normalize`` and ``rms_norm`` reduce over ``n`` values;
    ``interpolate`` resizes ``n`` columns (nearest: its source positions are float32 in every
    dtype, as PyTorch's, so the float32 row's float64 oracle agrees; bilinear positions are
    computed in the input's precision, which diverges from a float64 oracle for thousands of
    columns)."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    calls: dict[str, tuple[Any, Any]] = {
        "normalize": (lambda n: ((2, n),), lambda lib, x: _f(lib).normalize(x)),
        "rms_norm": (lambda n: ((2, n), (n,)),
                     lambda lib, x, w: _f(lib).rms_norm(x, [x.shape[1]], w)),
        "interpolate": (lambda n: ((1, 1, 2, n),),
                        lambda lib, x: _f(lib).interpolate(x, scale_factor=1.5) ** 2),
        # elementwise: n values
        "celu": (lambda n: ((n,),), lambda lib, x: _f(lib).celu(x - 1.0, alpha=0.7)),
        "hardsigmoid": (lambda n: ((n,),), lambda lib, x: _f(lib).hardsigmoid(x * 4 - 4)),
        "hardswish": (lambda n: ((n,),), lambda lib, x: _f(lib).hardswish(x * 4 - 4)),
        "softsign": (lambda n: ((n,),), lambda lib, x: _f(lib).softsign(x - 1.0)),
        "tanhshrink": (lambda n: ((n,),), lambda lib, x: _f(lib).tanhshrink(x - 1.0)),
        "threshold": (lambda n: ((n,),), lambda lib, x: _f(lib).threshold(x, 1.0, -2.0)),
        "prelu": (lambda n: ((n,), (1,)), lambda lib, x, w: _f(lib).prelu(x - 1.0, w)),
        "glu": (lambda n: ((n, 2),), lambda lib, x: _f(lib).glu(x)),
        "dropout1d": (lambda n: ((n, 1),),
                      lambda lib, x: _f(lib).dropout1d(x, 0.5, training=False) ** 2),
        "dropout2d": (lambda n: ((n, 1, 1),),
                      lambda lib, x: _f(lib).dropout2d(x, 0.5, training=False) ** 2),
        "instance_norm": (lambda n: ((1, 2, n),), lambda lib, x: _f(lib).instance_norm(x)),
    }
    #: reductions over n values: float32 sums of n terms
    summed: dict[str, tuple[Any, Any]] = {
        "softmin": (lambda n: ((n,),), lambda lib, x: _f(lib).softmin(x, dim=0)),
        "cosine_similarity": (lambda n: ((2, n), (2, n)),
                              lambda lib, a, b: _f(lib).cosine_similarity(a, b, dim=1)),
        "pairwise_distance": (lambda n: ((2, n), (2, n)),
                              lambda lib, a, b: _f(lib).pairwise_distance(a, b)),
    }
    rows = []
    for name, (shapes, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, n=n) for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    # PyTorch refuses empty inputs to these two (pixel_shuffle's backward, pixel_unshuffle's
    # forward): at n=0 the first checks the forward only, the second a 2x2 image.
    rows.append(_row("pixel_shuffle", "sizes", [
        SweepSample(f"n={n}", _pool((1, 4, n, 1)),
                    lambda lib, x: _f(lib).pixel_shuffle(x, 2) ** 2, grad=n > 0, n=n)
        for n in SIZES]))
    rows.append(_row("pixel_unshuffle", "sizes", [
        SweepSample(f"n={n}" if n else "n=0 (PyTorch refuses empty input: a 2x2 image)",
                    _pool((1, 1, 2, 2 * max(n, 1))),
                    lambda lib, x: _f(lib).pixel_unshuffle(x, 2) ** 2, n=n)
        for n in SIZES]))
    for name, (shapes, fn) in summed.items():
        # at n=1 a cosine similarity is the constant 1: its gradient is rounding noise
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, tol="size", n=n,
                               grad=not (n == 1 and name == "cosine_similarity"))
                   for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows
