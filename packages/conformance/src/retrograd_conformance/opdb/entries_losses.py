"""Op-database entries of the losses (``retrograd/ops/losses.py``): the entries, their
``<op>/sizes`` sweep rows and their kernels rows.

Class-index targets are built inside the call (``lib.int_tensor``); the binary cross entropy's
probabilities and ``kl_div``'s targets are sampled positive, in (0, 1) where a probability is
meant. The piecewise losses' thresholds (``beta``, ``delta``) are chosen so that samples on
either side of the kink are far from it at the sample values."""

from __future__ import annotations

from typing import Any

from .base import OpInfo, Sample

__all__ = ["ENTRIES", "KERNEL_ROWS", "sizes_rows"]

PROB = (0.1, 0.9)  # the sampled domain of probabilities


def _f(lib: Any) -> Any:
    """The functional namespace, same path in retrograd and torch."""
    return lib.nn.functional


def _w(lib: Any, values: list[Any], like: Any) -> Any:
    """A constant weight tensor of ``like``'s dtype, on the subject's device."""
    return lib.tensor(values, dtype=like.dtype)


ENTRIES: tuple[OpInfo, ...] = (
    OpInfo("nll_loss", (
        Sample("mean", ((3, 4),),
               lambda lib, a: _f(lib).nll_loss(a, lib.int_tensor([0, 3, 1]))),
        Sample("weight,ignore_index,sum", ((4, 3),), lambda lib, a: _f(lib).nll_loss(
            a, lib.int_tensor([2, -100, 0, 1]), weight=_w(lib, [0.5, 2.0, 1.5], a),
            reduction="sum")),
        Sample("weight,mean", ((3, 3),), lambda lib, a: _f(lib).nll_loss(
            a, lib.int_tensor([2, 2, 0]), weight=_w(lib, [0.5, 2.0, 1.5], a))),
        Sample("none", ((2, 3),), lambda lib, a: _f(lib).nll_loss(
            a, lib.int_tensor([1, 0]), reduction="none")),
        Sample("unbatched", ((3,),), lambda lib, a: _f(lib).nll_loss(a, lib.int_tensor(2))),
        Sample("4-d", ((2, 3, 2, 2),), lambda lib, a: _f(lib).nll_loss(
            a, lib.int_tensor([[[0, 1], [2, 1]], [[1, -100], [0, 2]]]))),
        Sample("3-d,none", ((2, 3, 2),), lambda lib, a: _f(lib).nll_loss(
            a, lib.int_tensor([[0, 2], [1, 1]]), reduction="none")),
    )),
    OpInfo("binary_cross_entropy", (
        Sample("mean", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).binary_cross_entropy(a, b),
               domain=PROB, positive=True),
        Sample("weight,sum", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).binary_cross_entropy(
            a, b, _w(lib, [0.5, 2.0, 1.5], a), reduction="sum"), domain=PROB, positive=True),
        Sample("none", ((4,), (4,)), lambda lib, a, b: _f(lib).binary_cross_entropy(
            a, b, reduction="none"), domain=PROB, positive=True),
    )),
    OpInfo("binary_cross_entropy_with_logits", (
        Sample("mean", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).binary_cross_entropy_with_logits(a, b)),
        Sample("weight,pos_weight,sum", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).binary_cross_entropy_with_logits(
                   a, b, _w(lib, [[0.5], [2.0]], a), reduction="sum",
                   pos_weight=_w(lib, [0.5, 2.0, 1.5], a))),
        Sample("top-level,none", ((3,), (3,)),
               lambda lib, a, b: lib.binary_cross_entropy_with_logits(a, b, reduction=0)),
    )),
    OpInfo("l1_loss", (
        Sample("mean", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).l1_loss(a, b)),
        Sample("sum", ((3,), (3,)), lambda lib, a, b: _f(lib).l1_loss(a, b, reduction="sum")),
        Sample("weight,none", ((2, 2), (2, 2)), lambda lib, a, b: _f(lib).l1_loss(
            a, b, reduction="none", weight=_w(lib, [[0.5, 2.0], [1.0, 3.0]], a))),
    )),
    OpInfo("smooth_l1_loss", (
        Sample("mean", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).smooth_l1_loss(a, b)),
        Sample("beta=0.7,sum", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).smooth_l1_loss(a, b, reduction="sum", beta=0.7)),
        Sample("none", ((4,), (4,)),
               lambda lib, a, b: _f(lib).smooth_l1_loss(a, b, reduction="none")),
    )),
    OpInfo("huber_loss", (
        Sample("mean", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).huber_loss(a, b)),
        Sample("delta=0.7,sum", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).huber_loss(a, b, reduction="sum", delta=0.7)),
        Sample("none", ((4,), (4,)),
               lambda lib, a, b: _f(lib).huber_loss(a, b, reduction="none")),
    )),
    OpInfo("kl_div", (
        Sample("batchmean", ((2, 3), (2, 3)),
               lambda lib, a, b: _f(lib).kl_div(a, b, reduction="batchmean"), positive=True),
        Sample("log_target,sum", ((2, 3), (2, 3)), lambda lib, a, b: _f(lib).kl_div(
            a, b, reduction="sum", log_target=True)),
        Sample("top-level,none", ((3,), (3,)), lambda lib, a, b: lib.kl_div(a, b, 0),
               positive=True),
    )),
)

# op -> (forward kernels, backward kernels)
KERNEL_ROWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "nll_loss": (("nll_loss_check_targets", "nll_loss_forward"), ("nll_loss_weights", "mul")),
    "binary_cross_entropy": (("binary_cross_entropy_forward", "mean"),
                             ("sub", "mul", "div", "where", "log")),
    "binary_cross_entropy_with_logits": (("binary_cross_entropy_with_logits_forward", "mean"),
                                         ("sigmoid", "sub", "mul", "bce_log_sigmoid")),
    "l1_loss": (("sub", "abs", "mean"), ("sign", "mul")),
    "smooth_l1_loss": (("smooth_l1_loss_forward", "mean"), ("sub", "abs", "lt", "where")),
    "huber_loss": (("huber_loss_forward", "mean"), ("sub", "abs", "lt", "where")),
    "kl_div": (("xlogy", "mul", "sub", "exp"), ("mul", "log")),
}


def sizes_rows() -> list[Any]:
    """The ``<op>/sizes`` rows of this family's entries: each loss over ``n`` elements (``n``
    rows of 3 classes for ``nll_loss``), summed and averaged (a float32 sum of ``n`` terms)."""
    from .sweeps import SIZES, SweepSample, _chain, _pool, _row, _targets

    def F(lib: Any) -> Any:  # noqa: N802 - PyTorch's spelling
        return lib.nn.functional

    pairs: dict[str, tuple[dict[str, float], Any]] = {
        "binary_cross_entropy": ({"lo": 0.05, "hi": 0.95, "positive": True},
                                 lambda lib, a, b, r: F(lib).binary_cross_entropy(
                                     a, b, reduction=r)),
        "binary_cross_entropy_with_logits": (
            {}, lambda lib, a, b, r: F(lib).binary_cross_entropy_with_logits(
                a - 1.0, b - 0.5, reduction=r)),
        "l1_loss": ({}, lambda lib, a, b, r: F(lib).l1_loss(a, b, reduction=r)),
        "smooth_l1_loss": ({}, lambda lib, a, b, r: F(lib).smooth_l1_loss(
            a, b, reduction=r, beta=0.5)),
        "huber_loss": ({}, lambda lib, a, b, r: F(lib).huber_loss(a, b, reduction=r,
                                                                 delta=0.5)),
        "kl_div": ({"positive": True}, lambda lib, a, b, r: F(lib).kl_div(
            a, b, reduction="batchmean" if r == "mean" else r)),
    }
    rows = []
    for name, (bounds, fn) in pairs.items():
        samples = [SweepSample(f"n={n},{red}", _pool((n,), (n,), **bounds),
                               (lambda f, r: lambda lib, a, b: f(lib, a, b, r))(fn, red),
                               tol="size", n=n)
                   for n in SIZES for red in ("sum", "mean")]
        rows.append(_row(name, "sizes", samples))
    rows.append(_row("nll_loss", "sizes", [
        SweepSample(f"n={n} rows of 3 classes,{red}", _chain(_pool((n, 3)), _targets(n, 3)),
                    (lambda r: lambda lib, a, t: F(lib).nll_loss(a, t, reduction=r))(red),
                    kinds=("f", "int64"), tol="size", n=n)
        for n in SIZES for red in ("sum", "mean")]))
    return rows
