"""Op-database entries of the convolutions and pooling (``retrograd/ops/conv.py``,
``retrograd/ops/pooling.py``): the entries, their ``<op>/sizes`` sweep rows and their kernels
rows.

The functional forms live in ``nn.functional`` (some also at the top level, as in PyTorch):
the samples call them through ``_F(lib)``. Sample values are distinct, so a max-pooling
window never has a tie."""

from __future__ import annotations

import importlib
from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "SIZES_ROWS", "sizes_rows"]


def _F(lib: Any) -> Any:
    """``lib.nn.functional`` (imported where the package does not import it)."""
    return importlib.import_module(f"{lib.__name__}.nn.functional")


def _with_indices(out: Any) -> Any:
    """The maxima plus their (integer) indices: both outputs of a ``return_indices`` call in
    one differentiable tensor."""
    values, indices = out
    return values + indices


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("conv1d", (
        Sample("plain", ((2, 3, 6), (4, 3, 3)), lambda lib, x, w: lib.conv1d(x, w)),
        Sample("bias,stride,padding", ((2, 2, 7), (3, 2, 2), (3,)),
               lambda lib, x, w, b: _F(lib).conv1d(x, w, b, stride=2, padding=1)),
        Sample("dilation,groups", ((1, 4, 8), (4, 2, 3)),
               lambda lib, x, w: _F(lib).conv1d(x, w, dilation=2, groups=2)),
        Sample("same,unbatched", ((2, 5), (3, 2, 4)),
               lambda lib, x, w: _F(lib).conv1d(x, w, padding="same")),
    )),
    OpInfo("conv2d", (
        Sample("plain", ((2, 2, 5, 4), (3, 2, 3, 2)), lambda lib, x, w: lib.conv2d(x, w)),
        Sample("bias,stride,padding", ((1, 2, 6, 5), (2, 2, 3, 3), (2,)),
               lambda lib, x, w, b: _F(lib).conv2d(x, w, b, stride=(2, 1), padding=1)),
        Sample("dilation,groups", ((1, 4, 6, 6), (2, 2, 2, 3)),
               lambda lib, x, w: _F(lib).conv2d(x, w, dilation=(2, 1), groups=2)),
        Sample("same", ((1, 2, 4, 5), (2, 2, 2, 3)),
               lambda lib, x, w: _F(lib).conv2d(x, w, padding="same")),
        Sample("unbatched", ((2, 4, 4), (1, 2, 2, 2), (1,)),
               lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding=(0, 1))),
    )),
    OpInfo("conv_transpose1d", (
        Sample("stride,output_padding", ((2, 2, 4), (2, 3, 3), (3,)),
               lambda lib, x, w, b: lib.conv_transpose1d(x, w, b, stride=2, output_padding=1)),
        Sample("groups,dilation,unbatched", ((4, 3), (4, 1, 2)),
               lambda lib, x, w: _F(lib).conv_transpose1d(x, w, groups=2, dilation=2)),
    )),
    OpInfo("conv_transpose2d", (
        Sample("plain", ((2, 2, 3, 3), (2, 3, 2, 2)),
               lambda lib, x, w: lib.conv_transpose2d(x, w)),
        Sample("bias,stride,padding,output_padding", ((1, 2, 3, 4), (2, 2, 3, 3), (2,)),
               lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                              output_padding=(1, 0))),
        Sample("groups,dilation", ((1, 4, 3, 3), (4, 1, 2, 2)),
               lambda lib, x, w: _F(lib).conv_transpose2d(x, w, groups=2, dilation=(1, 2))),
        Sample("unbatched", ((2, 3, 2), (2, 1, 2, 3)),
               lambda lib, x, w: _F(lib).conv_transpose2d(x, w, stride=(1, 2))),
    )),
    OpInfo("max_pool2d", (
        Sample("2x2", ((2, 2, 4, 4),), lambda lib, x: lib.max_pool2d(x, 2)),
        Sample("stride,padding,ceil_mode", ((1, 2, 5, 6),),
               lambda lib, x: _F(lib).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
        Sample("dilation,unbatched", ((2, 6, 5),),
               lambda lib, x: _F(lib).max_pool2d(x, (2, 3), stride=1, dilation=(2, 1))),
        Sample("return_indices", ((1, 1, 5, 5),),
               lambda lib, x: _with_indices(_F(lib).max_pool2d(x, 2, return_indices=True))),
    )),
    OpInfo("max_pool1d", (
        Sample("k=2", ((2, 2, 6),), lambda lib, x: lib.max_pool1d(x, 2)),
        Sample("stride,padding,ceil_mode,unbatched", ((2, 7),),
               lambda lib, x: _F(lib).max_pool1d(x, 3, 2, 1, ceil_mode=True)),
    )),
    OpInfo("max_pool1d_with_indices", (
        Sample("dilation", ((1, 2, 7),),
               lambda lib, x: _with_indices(lib.max_pool1d_with_indices(x, 2, 1, 0, 2))),
    )),
    OpInfo("avg_pool2d", (
        Sample("2x2", ((2, 2, 4, 4),), lambda lib, x: _F(lib).avg_pool2d(x, 2)),
        Sample("stride,padding,ceil_mode", ((1, 2, 5, 6),),
               lambda lib, x: _F(lib).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
        Sample("count_include_pad=False", ((1, 1, 5, 5),),
               lambda lib, x: _F(lib).avg_pool2d(x, (3, 2), 2, 1, True, False)),
        Sample("divisor_override,unbatched", ((2, 4, 5),),
               lambda lib, x: _F(lib).avg_pool2d(x, 2, 1, divisor_override=3)),
    )),
    OpInfo("avg_pool1d", (
        Sample("k=2", ((2, 2, 6),), lambda lib, x: lib.avg_pool1d(x, 2)),
        Sample("padding,ceil_mode,unbatched", ((2, 7),),
               lambda lib, x: _F(lib).avg_pool1d(x, 3, 2, 1, True, False)),
    )),
    OpInfo("adaptive_avg_pool2d", (
        Sample("uneven windows", ((2, 2, 5, 7),),
               lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (3, 4))),
        Sample("None,unbatched", ((2, 4, 5),),
               lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (None, 2))),
        Sample("larger output", ((1, 1, 3, 2),),
               lambda lib, x: _F(lib).adaptive_avg_pool2d(x, 5)),
    )),
    OpInfo("adaptive_avg_pool1d", (
        Sample("uneven windows", ((2, 2, 7),), lambda lib, x: lib.adaptive_avg_pool1d(x, 3)),
        Sample("unbatched", ((3, 5),), lambda lib, x: _F(lib).adaptive_avg_pool1d(x, 2)),
    )),
)


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of these ops: a batch of ``n`` small windows at every size of
    ``SIZES`` (an empty batch included)."""
    from .sweeps import SIZES, SweepSample, _pool, _row  # the sweeps import the entries

    calls: dict[str, tuple[Any, Any]] = {
        "conv1d": (lambda n: ((n, 2, 3), (2, 2, 2)), lambda lib, x, w: lib.conv1d(x, w)),
        "conv2d": (lambda n: ((n, 1, 2, 3), (2, 1, 2, 2)), lambda lib, x, w: lib.conv2d(x, w)),
        "conv_transpose1d": (lambda n: ((n, 2, 2), (2, 1, 2)),
                             lambda lib, x, w: lib.conv_transpose1d(x, w, stride=2)),
        "conv_transpose2d": (lambda n: ((n, 1, 2, 2), (1, 2, 2, 1)),
                             lambda lib, x, w: lib.conv_transpose2d(x, w)),
        "max_pool2d": (lambda n: ((n, 1, 2, 4),), lambda lib, x: lib.max_pool2d(x, 2)),
        "max_pool1d": (lambda n: ((n, 1, 4),), lambda lib, x: lib.max_pool1d(x, 2)),
        "max_pool1d_with_indices": (
            lambda n: ((n, 1, 4),),
            lambda lib, x: _with_indices(lib.max_pool1d_with_indices(x, 2))),
        "avg_pool2d": (lambda n: ((n, 1, 2, 4),), lambda lib, x: _F(lib).avg_pool2d(x, 2)),
        "avg_pool1d": (lambda n: ((n, 1, 4),), lambda lib, x: lib.avg_pool1d(x, 2)),
        "adaptive_avg_pool2d": (lambda n: ((n, 1, 3, 2),),
                                lambda lib, x: _F(lib).adaptive_avg_pool2d(x, 2)),
        "adaptive_avg_pool1d": (lambda n: ((n, 1, 3),),
                                lambda lib, x: lib.adaptive_avg_pool1d(x, 2)),
    }
    rows = []
    for name, (shapes, fn) in calls.items():
        samples = [SweepSample(f"n={n}", _pool(*shapes(n)), fn, n=n) for n in SIZES]
        rows.append(_row(name, "sizes", samples))
    return rows


#: The rows' builder, under the name the sweeps merge.
SIZES_ROWS = sizes_rows

_CONV = (("conv_nd", "conv_transpose_nd"), ("conv_transpose_nd", "conv_weight_nd", "conv_nd",
                                            "sum"))

#: op -> (forward kernels, backward kernels), merged into opdb.kernels.KERNELS
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "conv1d": _CONV,
    "conv2d": _CONV,
    "conv_transpose1d": _CONV,
    "conv_transpose2d": _CONV,
    "max_pool2d": (("max_pool_nd", "max_pool_nd_indices"),
                   ("max_pool_nd_backward", "max_pool_nd_select")),
    "max_pool1d": (("max_pool_nd",), ("max_pool_nd_backward", "max_pool_nd_select")),
    "max_pool1d_with_indices": (("max_pool_nd", "max_pool_nd_indices"),
                                ("max_pool_nd_backward", "max_pool_nd_select")),
    "avg_pool2d": (("avg_pool_nd",), ("avg_pool_nd_backward", "avg_pool_nd")),
    "avg_pool1d": (("avg_pool_nd",), ("avg_pool_nd_backward", "avg_pool_nd")),
    "adaptive_avg_pool2d": (("adaptive_avg_pool_nd", "mean"),
                            ("adaptive_avg_pool_nd_backward", "adaptive_avg_pool_nd")),
    "adaptive_avg_pool1d": (("adaptive_avg_pool_nd", "mean"),
                            ("adaptive_avg_pool_nd_backward", "adaptive_avg_pool_nd")),
}
