"""Op-database entries of the arithmetic ops (``retrograd/ops/arithmetic.py``: hypot, fmod,
remainder, lerp, addcmul, addcdiv, logaddexp, xlogy, erfc, sgn, round, nan_to_num, clamp_min,
clamp_max, clip with number and tensor bounds) and of the ``nn.functional`` activations
declared in ``ops/pointwise.py`` (softplus, silu, gelu, leaky_relu, elu): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

The samples stay off the kinks: ``fmod``/``remainder`` quotients away from integers (the
divisor's gradient jumps there), ``round`` away from halves, number bounds and thresholds
away from the values (``avoid``); generated values are distinct, so no tensor bound ties."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]

_HALVES = (0.5, 1.5, -0.5, -1.5)
_ZERO_NOTE = ("no double-backward check: PyTorch's second derivative through the rounded "
              "quotient is an efficient zero tensor, which has no values to compare (the "
              "core parity tests compare it)")


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _nans(lib: Any, a: Any) -> Any:
    """``a`` with NaN where it is negative (a constant)."""
    return lib.where(a > 0, a, lib.full_like(a, float("nan")))


def _infinities(lib: Any, a: Any) -> Any:
    """``a`` with -inf where it is negative and +inf where it is above 1 (constants: no
    gradient flows into them)."""
    inf = float("inf")
    x = lib.where(a > 0, a, lib.full_like(a, -inf))
    return lib.where(a > 1, lib.full_like(a, inf), x)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("hypot", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.hypot(a, b)),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.hypot(a, b)),
        Sample("0-d", ((), ()), lambda lib, a, b: lib.hypot(a, b)),
        Sample("method,batched", ((2, 2, 3), (2, 1, 3)), lambda lib, a, b: a.hypot(b)),
    )),
    OpInfo("fmod", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.fmod(a * 0.3, b)),
        Sample("number", ((2, 3),), lambda lib, a: lib.fmod(a, 0.7),
               avoid=(0.7, -0.7, 1.4, -1.4)),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.fmod(a * 0.3, b)),
        Sample("0-d,method", ((), ()), lambda lib, a, b: a.fmod(b * 4.0 + 0.1)),
    ), gradgrad=False, notes=_ZERO_NOTE),
    OpInfo("remainder", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.remainder(a * 0.3, b)),
        Sample("number", ((2, 3),), lambda lib, a: a.remainder(-0.7),
               avoid=(0.7, -0.7, 1.4, -1.4)),
        Sample("broadcast", ((2, 3), (2, 1)), lambda lib, a, b: lib.remainder(a * 0.3, b)),
        Sample("0-d", ((),), lambda lib, a: lib.remainder(a, 2.5)),
        Sample("batched", ((2, 2, 3), (3,)), lambda lib, a, b: lib.remainder(a * 0.3, b)),
    ), gradgrad=False, notes=_ZERO_NOTE),
    OpInfo("lerp", (
        Sample("number weight", ((2, 3), (2, 3)), lambda lib, a, b: lib.lerp(a, b, 0.3)),
        Sample("number weight above half", ((2, 3), (2, 3)), lambda lib, a, b: a.lerp(b, 0.8)),
        Sample("tensor weight", ((2, 3), (2, 3), (2, 3)),
               lambda lib, a, b, w: lib.lerp(a, b, w)),
        Sample("broadcast", ((2, 3), (3,), (2, 1)), lambda lib, a, b, w: lib.lerp(a, b, w)),
        Sample("0-d", ((), (), ()), lambda lib, a, b, w: a.lerp(b, w)),
    )),
    OpInfo("addcmul", (
        Sample("same-shape", ((2, 3), (2, 3), (2, 3)),
               lambda lib, s, a, b: lib.addcmul(s, a, b)),
        Sample("value", ((2, 3), (2, 3), (2, 3)),
               lambda lib, s, a, b: s.addcmul(a, b, value=-1.5)),
        Sample("broadcast", ((3,), (2, 1), (2, 3)),
               lambda lib, s, a, b: lib.addcmul(s, a, b, value=0.5)),
        Sample("0-d", ((), (), ()), lambda lib, s, a, b: lib.addcmul(s, a, b, value=2)),
    )),
    OpInfo("addcdiv", (
        Sample("same-shape", ((2, 3), (2, 3), (2, 3)),
               lambda lib, s, a, b: lib.addcdiv(s, a, b)),
        Sample("value", ((2, 3), (2, 3), (2, 3)),
               lambda lib, s, a, b: s.addcdiv(a, b, value=-1.5)),
        Sample("broadcast", ((2, 3), (3,), (2, 1)),
               lambda lib, s, a, b: lib.addcdiv(s, a, b, value=0.5)),
        Sample("0-d", ((), (), ()), lambda lib, s, a, b: lib.addcdiv(s, a, b, value=2)),
    )),
    OpInfo("logaddexp", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.logaddexp(a, b)),
        Sample("broadcast", ((2, 3), (2, 1)), lambda lib, a, b: lib.logaddexp(a, b)),
        Sample("0-d,method", ((), ()), lambda lib, a, b: a.logaddexp(b)),
        Sample("batched", ((2, 2, 3), (3,)), lambda lib, a, b: lib.logaddexp(a * 3, b)),
    )),
    OpInfo("xlogy", (
        Sample("same-shape", ((2, 3), (2, 3)), lambda lib, a, b: lib.xlogy(a, b.abs())),
        Sample("broadcast", ((2, 3), (3,)), lambda lib, a, b: lib.xlogy(a, b.abs())),
        Sample("number other", ((2, 3),), lambda lib, a: lib.xlogy(a, 2.5)),
        Sample("number self", ((2, 3),), lambda lib, b: lib.xlogy(1.5, b), positive=True),
        Sample("0-d,method", ((), ()), lambda lib, a, b: a.xlogy(b.abs())),
    )),
    OpInfo("erfc", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.erfc(a), domain=(0.1, 2.5)),
        Sample("0-d", ((),), lambda lib, a: lib.erfc(a)),
        Sample("batched,method", ((2, 2, 3),), lambda lib, a: a.erfc(), domain=(0.1, 2.5)),
        Sample("tail", ((4,),), lambda lib, a: lib.erfc(a * 3), positive=True),
    )),
    OpInfo("sgn", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.sgn(a) * a),
        Sample("0-d", ((),), lambda lib, a: lib.sgn(a) * a),
        Sample("batched,method", ((2, 2, 3),), lambda lib, a: a.sgn() + a),
    )),
    OpInfo("round", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.round(a) + a, avoid=_HALVES),
        Sample("0-d", ((),), lambda lib, a: lib.round(a) * a, avoid=_HALVES),
        Sample("decimals,method", ((2, 3),), lambda lib, a: a.round(decimals=1) * a),
        Sample("negative decimals,batched", ((2, 2, 3),),
               lambda lib, a: lib.round(a * 40, decimals=-1) + a),
    )),
    OpInfo("nan_to_num", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.nan_to_num(a)),
        Sample("nan", ((2, 3),), lambda lib, a: lib.nan_to_num(_nans(lib, a), nan=0.5)),
        Sample("inf,method", ((2, 3),),
               lambda lib, a: _infinities(lib, a).nan_to_num(posinf=1.0, neginf=-1.0)),
        Sample("0-d", ((),), lambda lib, a: lib.nan_to_num(a * 2)),
    )),
    OpInfo("clamp_min", (
        Sample("number", ((2, 3),), lambda lib, a: lib.clamp_min(a, 0.3), avoid=(0.3,)),
        Sample("tensor", ((2, 3), (2, 3)), lambda lib, a, b: lib.clamp_min(a, b)),
        Sample("broadcast,method", ((2, 3), (3,)), lambda lib, a, b: a.clamp_min(b)),
        Sample("0-d", ((),), lambda lib, a: a.clamp_min(-0.4), avoid=(-0.4,)),
    )),
    OpInfo("clamp_max", (
        Sample("number", ((2, 3),), lambda lib, a: lib.clamp_max(a, 0.3), avoid=(0.3,)),
        Sample("tensor", ((2, 3), (2, 3)), lambda lib, a, b: lib.clamp_max(a, b)),
        Sample("broadcast,method", ((2, 3), (2, 1)), lambda lib, a, b: a.clamp_max(b)),
        Sample("0-d", ((),), lambda lib, a: a.clamp_max(-0.4), avoid=(-0.4,)),
    )),
    OpInfo("clip", (
        Sample("numbers", ((2, 3),), lambda lib, a: lib.clip(a, -0.5, 0.8), avoid=(-0.5, 0.8)),
        Sample("tensor bounds", ((2, 3), (2, 3), (2, 3)),
               lambda lib, a, lo, hi: lib.clip(a, lo, hi * 0.1 + 2.0)),
        Sample("tensor min,method", ((2, 3), (3,)), lambda lib, a, lo: a.clip(min=lo)),
        Sample("tensor max,broadcast", ((2, 3), (2, 1)),
               lambda lib, a, hi: lib.clamp(a, max=hi)),
        Sample("crossed bounds", ((2, 3), (2, 3), (2, 3)),
               lambda lib, a, lo, hi: lib.clip(a, lo, hi)),
        Sample("0-d", ((), (), ()), lambda lib, a, lo, hi: lib.clip(a, lo, hi)),
    )),
    OpInfo("softplus", (
        Sample("2-d", ((2, 3),), lambda lib, a: _F(lib).softplus(a)),
        Sample("beta,threshold", ((2, 3),),
               lambda lib, a: _F(lib).softplus(a, beta=2.0, threshold=1.0), avoid=(0.5,)),
        Sample("0-d", ((),), lambda lib, a: _F(lib).softplus(a, beta=0.5)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: _F(lib).softplus(a * 3, threshold=2.0),
               avoid=(2 / 3,)),
    )),
    OpInfo("silu", (
        Sample("2-d", ((2, 3),), lambda lib, a: _F(lib).silu(a)),
        Sample("0-d", ((),), lambda lib, a: _F(lib).silu(a)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: _F(lib).silu(a * 3)),
    )),
    OpInfo("gelu", (
        Sample("2-d", ((2, 3),), lambda lib, a: _F(lib).gelu(a)),
        Sample("tanh", ((2, 3),), lambda lib, a: _F(lib).gelu(a, approximate="tanh")),
        Sample("0-d", ((),), lambda lib, a: _F(lib).gelu(a)),
        Sample("batched,tanh", ((2, 2, 3),),
               lambda lib, a: _F(lib).gelu(a * 2, approximate="tanh")),
    )),
    OpInfo("leaky_relu", (
        Sample("2-d", ((2, 3),), lambda lib, a: _F(lib).leaky_relu(a)),
        Sample("negative_slope", ((2, 3),), lambda lib, a: _F(lib).leaky_relu(a, 0.2)),
        Sample("0-d", ((),), lambda lib, a: _F(lib).leaky_relu(a, negative_slope=-0.5)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: _F(lib).leaky_relu(a, 1.5)),
    )),
    OpInfo("elu", (
        Sample("2-d", ((2, 3),), lambda lib, a: _F(lib).elu(a)),
        Sample("alpha", ((2, 3),), lambda lib, a: _F(lib).elu(a, alpha=0.5)),
        Sample("0-d", ((),), lambda lib, a: _F(lib).elu(a, 2.0)),
        Sample("batched", ((2, 2, 3),), lambda lib, a: _F(lib).elu(a * 2)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows: each op over a 1-D tensor at every size of ``SIZES`` (the
    binary and ternary ops over operands of that size each)."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    F = _F
    # name: (call, number of operands, pool keywords)
    calls: dict[str, tuple[Any, int, dict[str, Any]]] = {
        "hypot": (lambda lib, a, b: lib.hypot(a, b), 2, {}),
        "fmod": (lambda lib, a, b: lib.fmod(a * 0.1, b), 2, {}),
        "remainder": (lambda lib, a, b: lib.remainder(a * 0.1, b), 2, {}),
        "lerp": (lambda lib, a, b, w: lib.lerp(a, b, w), 3, {}),
        "addcmul": (lambda lib, s, a, b: lib.addcmul(s, a, b, value=0.5), 3, {}),
        "addcdiv": (lambda lib, s, a, b: lib.addcdiv(s, a, b, value=0.5), 3, {}),
        "logaddexp": (lambda lib, a, b: lib.logaddexp(a, b), 2, {}),
        "xlogy": (lambda lib, a, b: lib.xlogy(a, b), 2, {"positive": True}),
        "erfc": (lambda lib, a: lib.erfc(a), 1, {}),
        "sgn": (lambda lib, a: lib.sgn(a) * a, 1, {}),
        "round": (lambda lib, a: lib.round(a * 0.4) + a, 1, {}),
        "nan_to_num": (lambda lib, a: lib.nan_to_num(_nans(lib, _infinities(lib, a * 1.5)),
                                                      nan=0.5, posinf=2.0, neginf=-2.0), 1, {}),
        "clamp_min": (lambda lib, a, b: lib.clamp_min(a, b), 2, {}),
        "clamp_max": (lambda lib, a, b: lib.clamp_max(a, b), 2, {}),
        "clip": (lambda lib, a, lo, hi: lib.clip(a, lo, hi), 3, {}),
        "softplus": (lambda lib, a: F(lib).softplus(a, beta=2.0, threshold=10.0), 1, {}),
        "silu": (lambda lib, a: F(lib).silu(a), 1, {}),
        "gelu": (lambda lib, a: F(lib).gelu(a, approximate="tanh"), 1, {}),
        "leaky_relu": (lambda lib, a: F(lib).leaky_relu(a, 0.2), 1, {}),
        "elu": (lambda lib, a: F(lib).elu(a), 1, {}),
    }
    rows = []
    for name, (fn, k, kw) in calls.items():
        rows.append(_row(name, "sizes", [
            SweepSample(f"n={n}", _pool(*([(n,)] * k), **kw), fn, n=n) for n in SIZES]))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

# op -> (forward kernels, backward kernels), as in ``opdb/kernels.py``
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "hypot": (("hypot",), ("mul", "div", "reduce_to")),
    "fmod": (("fmod",), ("div", "trunc", "mul", "neg", "reduce_to")),
    "remainder": (("remainder",), ("div", "floor", "mul", "neg", "reduce_to")),
    "lerp": (("lerp",), ("mul", "sub", "reduce_to")),
    "addcmul": (("addcmul",), ("mul", "reduce_to")),
    "addcdiv": (("addcdiv",), ("div", "mul", "neg", "reduce_to")),
    "logaddexp": (("logaddexp",), ("sub", "exp", "add", "div", "reduce_to")),
    "xlogy": (("xlogy",), ("xlogy", "ne", "mul", "div", "where", "reduce_to")),
    "erfc": (("erfc",), ("mul", "exp", "neg")),
    "sgn": (("sign", "ne", "where"), ("mul",)),
    "round": (("round", "round_decimals"), ("mul",)),
    "nan_to_num": (("nan_to_num",), ("eq", "ne", "abs", "logical_and", "where")),
    "clamp_min": (("maximum",), ("ge", "lt", "where", "reduce_to")),
    "clamp_max": (("minimum",), ("le", "gt", "where", "reduce_to")),
    "clip": (("clip", "maximum", "minimum"),
             ("ge", "le", "lt", "gt", "logical_and", "where", "reduce_to")),
    "softplus": (("mul", "gt", "exp", "log1p", "div", "where"),
                 ("mul", "exp", "gt", "div", "add", "where")),
    "silu": (("sigmoid", "mul"), ("sigmoid", "mul", "sub", "add")),
    "gelu": (("gelu", "erf", "tanh", "mul", "add"), ("gelu_backward",)),
    "leaky_relu": (("gt", "mul", "where"), ("gt", "mul", "where")),
    "elu": (("gt", "expm1", "mul", "where"), ("lt", "gt", "exp", "mul", "add", "where")),
}
