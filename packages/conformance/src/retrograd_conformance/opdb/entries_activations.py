"""Op-database entries of the activations ops (``retrograd/ops/activations.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

The generated values are at least 0.05 from 0 and from the ``hardtanh`` bounds used here, so no
sample sits on a kink. ``isnan``/``isinf``/``isfinite`` (bool, not differentiable) ride along
in products with the log samples."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _act(name: str, call: Any, *, domain: tuple[float, float] = (0.2, 1.8),
         avoid: tuple[float, ...] = ()) -> OpInfo:
    """Samples of an ``nn.functional`` activation over 2-d, 0-d, batched and 1-d inputs."""
    kw: dict[str, Any] = {"domain": domain, "avoid": avoid}
    return OpInfo(name, (
        Sample("2-d", ((2, 3),), call, **kw),
        Sample("0-d", ((),), call, **kw),
        Sample("batched", ((2, 2, 3),), call, **kw),
        Sample("1-d", ((5,),), call, **kw),
    ))


def _log_unary(name: str) -> OpInfo:
    def fn(lib: Any, a: Any) -> Any:
        return getattr(lib, name)(a)

    def method(lib: Any, a: Any) -> Any:
        return getattr(a, name)()

    def masked(lib: Any, a: Any) -> Any:
        return getattr(lib, name)(a) * lib.isfinite(a) + lib.isinf(a) + lib.isnan(a)

    return OpInfo(name, (
        Sample("2-d", ((2, 3),), fn, positive=True),
        Sample("0-d", ((),), fn, positive=True),
        Sample("batched", ((2, 2, 3),), fn, positive=True),
        Sample("method", ((3,),), method, positive=True),
        Sample("times isfinite/isinf/isnan", ((4,),), masked, positive=True),
    ))


def _exp2_entry() -> OpInfo:
    return OpInfo("exp2", (
        Sample("2-d", ((2, 3),), lambda lib, a: lib.exp2(a)),
        Sample("0-d", ((),), lambda lib, a: lib.exp2(a)),
        Sample("method", ((3,),), lambda lib, a: a.exp2()),
        Sample("times isfinite", ((4,),), lambda lib, a: lib.exp2(a) * lib.isfinite(a)),
    ))


def _rounding(name: str) -> OpInfo:
    """Samples of ``ceil``/``trunc``/``frac`` (off the integers, where they jump)."""
    def fn(lib: Any, a: Any) -> Any:
        return getattr(lib, name)(a * 2.0) * a

    avoid = (0.5, 1.0, 1.5, -0.5, -1.0, -1.5)
    return OpInfo(name, (
        Sample("2-d times input", ((2, 3),), fn, avoid=avoid),
        Sample("0-d", ((),), lambda lib, a: getattr(lib, name)(a * 2.0), avoid=avoid),
        Sample("method", ((3,),), lambda lib, a: getattr(a * 2.0, name)() * a, avoid=avoid),
    ))


ENTRIES: tuple[OpInfo, ...] = (
    _act("mish", lambda lib, a: lib.nn.functional.mish(a), domain=(0.2, 3.0)),
    _act("selu", lambda lib, a: lib.nn.functional.selu(a)),
    _act("hardtanh", lambda lib, a: lib.nn.functional.hardtanh(a), avoid=(1.0, -1.0)),
    _act("relu6", lambda lib, a: lib.nn.functional.relu6(a * 4.0), avoid=(1.5,)),
    _act("logsigmoid", lambda lib, a: lib.nn.functional.logsigmoid(a), domain=(0.2, 4.0)),
    _exp2_entry(),
    _log_unary("log2"),
    _log_unary("log10"),
    _rounding("ceil"),
    _rounding("trunc"),
    _rounding("frac"),
)

# name: (call, pool keywords)
_SIZES: dict[str, tuple[Any, dict[str, Any]]] = {
    "mish": (lambda lib, a: lib.nn.functional.mish(a), {"hi": 3.0}),
    "selu": (lambda lib, a: lib.selu(a), {}),
    "hardtanh": (lambda lib, a: lib.nn.functional.hardtanh(a, -0.5, 0.5), {"hi": 1.8}),
    "relu6": (lambda lib, a: lib.nn.functional.relu6(a * 4.0), {}),
    "logsigmoid": (lambda lib, a: lib.nn.functional.logsigmoid(a), {"hi": 4.0}),
    "exp2": (lambda lib, a: lib.exp2(a), {}),
    "log2": (lambda lib, a: lib.log2(a), {"positive": True}),
    "log10": (lambda lib, a: a.log10(), {"positive": True}),
    "ceil": (lambda lib, a: lib.ceil(a * 4.0) * a, {}),
    "trunc": (lambda lib, a: lib.trunc(a * 4.0) * a, {}),
    "frac": (lambda lib, a: lib.frac(a * 4.0), {}),
}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops: a 1-D input of ``n`` elements (in the op's
    domain) at every size of ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    return [_row(name, "sizes", [SweepSample(f"n={n}", _pool((n,), **kw), fn, n=n)
                                 for n in SIZES])
            for name, (fn, kw) in _SIZES.items()]


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "mish": (("sigmoid", "sub", "mul", "div", "add"), ("sigmoid", "sub", "mul", "div", "add")),
    "selu": (("gt", "where", "expm1", "mul"), ("lt", "gt", "where", "exp", "mul")),
    "hardtanh": (("clip",), ("gt", "lt", "logical_and", "where")),
    "relu6": (("clip",), ("gt", "lt", "logical_and", "where")),
    "logsigmoid": (("minimum", "zeros_like", "abs", "neg", "exp", "log1p", "sub"),
                   ("neg", "sigmoid", "mul")),
    "exp2": (("exp2", "isfinite"), ("mul",)),
    "log2": (("log2", "isfinite", "isinf", "isnan"), ("mul", "div")),
    "ceil": (("ceil",), ("zeros_like",)),
    "trunc": (("trunc",), ("zeros_like",)),
    "frac": (("frac",), ()),
    "log10": (("log10", "isfinite", "isinf", "isnan"), ("mul", "div")),
}
