"""Op-database entries of the normalization layers (``retrograd/ops/normalization.py``): the
entries, their ``<op>/sizes`` sweep rows and their kernels rows.

``batch_norm`` is sampled in training mode (batch statistics; running statistics made fresh in
each call, so the in-place update never leaks between the libraries' runs) and in evaluation
mode (running statistics as constants), through ``nn.functional.batch_norm`` and through
``batch_norm`` with ``torch.batch_norm``'s signature."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _f(lib: Any) -> Any:  # the functional namespace, same path in retrograd and torch
    return lib.nn.functional


def _stats(lib: Any, x: Any, mean: float, var: float) -> tuple[Any, Any]:
    """Running statistics for ``x``'s channels (axis 1), in ``x``'s dtype."""
    c = x.shape[1]
    ms = [mean + 0.1 * i for i in range(c)]
    vs = [var + 0.25 * i for i in range(c)]
    return lib.tensor(ms, dtype=x.dtype), lib.tensor(vs, dtype=x.dtype)


def _bn_train(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
    rm, rv = _stats(lib, x, 0.0, 1.0)
    return _f(lib).batch_norm(x, rm, rv, w, b, training=True, momentum=0.2)


def _bn_eval(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
    rm, rv = _stats(lib, x, -0.3, 0.6)
    return _f(lib).batch_norm(x, rm, rv, w, b, eps=1e-3)


def _bn_torch(lib: Any, x: Any, w: Any, b: Any) -> Any:
    rm, rv = _stats(lib, x, 0.0, 1.0)
    return lib.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("batch_norm", (
        Sample("training (N, C)", ((4, 3), (3,), (3,)), _bn_train),
        Sample("training (N, C, L), no affine", ((3, 2, 4),), _bn_train),
        Sample("training (N, C, H, W)", ((2, 3, 2, 2), (3,), (3,)), _bn_train),
        Sample("training, no running stats", ((3, 2, 2), (2,)),
               lambda lib, x, w: _f(lib).batch_norm(x, None, None, w, training=True)),
        Sample("eval (N, C, L)", ((2, 3, 4), (3,), (3,)), _bn_eval),
        Sample("eval (N, C), weight only", ((3, 2), (2,)), _bn_eval),
        Sample("torch.batch_norm signature", ((3, 2, 3), (2,), (2,)), _bn_torch),
    )),
    OpInfo("layer_norm", (
        Sample("last axis", ((4, 5), (5,), (5,)),
               lambda lib, x, w, b: _f(lib).layer_norm(x, [5], w, b)),
        Sample("two axes, no affine", ((2, 3, 4),),
               lambda lib, x: _f(lib).layer_norm(x, (3, 4))),
        Sample("weight only, eps", ((3, 2, 3), (2, 3)),
               lambda lib, x, w: _f(lib).layer_norm(x, (2, 3), w, eps=1e-3)),
        Sample("torch.layer_norm signature", ((2, 2, 4), (4,), (4,)),
               lambda lib, x, w, b: lib.layer_norm(x, (4,), w, b, 1e-5, True)),
    )),
    OpInfo("group_norm", (
        Sample("2 groups (N, C, L)", ((2, 4, 3), (4,), (4,)),
               lambda lib, x, w, b: _f(lib).group_norm(x, 2, w, b)),
        Sample("per channel (N, C), no affine", ((3, 3),),
               lambda lib, x: _f(lib).group_norm(x, 3)),
        Sample("1 group (N, C, H, W), weight only", ((2, 3, 2, 2), (3,)),
               lambda lib, x, w: _f(lib).group_norm(x, 1, w)),
        Sample("torch.group_norm signature", ((2, 4, 3), (4,), (4,)),
               lambda lib, x, w, b: lib.group_norm(x, 2, w, b, 1e-5, True)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops: statistics over a number of elements that grows
    with ``n`` at every size of ``SIZES``."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    calls: dict[str, tuple[Any, Any]] = {
        # channels' statistics over 2 * n values each
        "batch_norm": (lambda n: ((2, 3, n), (3,), (3,)),
                       lambda lib, x, w, b: _f(lib).batch_norm(x, None, None, w, b,
                                                               training=True)),
        # each row's statistics over n values
        "layer_norm": (lambda n: ((2, n), (n,), (n,)),
                       lambda lib, x, w, b: _f(lib).layer_norm(x, [x.shape[1]], w, b)),
        # n samples, 2 groups of 6 values each
        "group_norm": (lambda n: ((n, 4, 3), (4,), (4,)),
                       lambda lib, x, w, b: _f(lib).group_norm(x, 2, w, b)),
    }
    rows = []
    for name, (shapes, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, n=n) for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

_RULE = ("mean", "sub", "mul", "add", "sqrt", "div", "sum", "reshape")

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNEL_ROWS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "batch_norm": (("norm_stats", "norm_affine", "running_update", "reshape", "mul", "div",
                    "sqrt", "add"), _RULE),
    "layer_norm": (("norm_stats", "norm_affine"),
                   ("mean", "sub", "mul", "add", "sqrt", "div", "reduce_to")),
    "group_norm": (("norm_stats", "norm_affine", "reshape", "mul", "add"), _RULE),
}
