"""Reference kernels of the losses (see ``ops/losses.py``), in Array-API calls on ``xp``;
``reference_kernels`` merges them into every backend's table.

The class-index losses (``nll_loss``) take the classes on axis 1 of an ``(N, C, d1, ...)``
input (axis 0 of a ``(C,)`` input with a 0-d target); their targets are an integer array of
the input's shape without the class axis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .summation import blocked_sum

__all__ = ["kernels", "target_out_of_bounds"]


def target_out_of_bounds(value: int) -> IndexError:
    """PyTorch's error for a class index outside ``[0, C)`` that is not ``ignore_index``."""
    return IndexError(f"Target {value} is out of bounds.")


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The losses kernels on ``xp``."""

    def _class_last(x: Any) -> Any:
        """``x`` with its class axis (1; 0 for a 1-d input) moved last."""
        if x.ndim == 1:
            return xp.reshape(x, (1, x.shape[0]))
        if x.ndim == 2:
            return x
        return xp.permute_dims(x, (0, *range(2, x.ndim), 1))

    def _class_back(y: Any, shape: tuple[int, ...]) -> Any:
        """Undo ``_class_last`` for an array of the input's ``shape``."""
        if len(shape) == 1:
            return xp.reshape(y, shape)
        if len(shape) == 2:
            return y
        nd = len(shape)
        return xp.permute_dims(y, (0, nd - 1, *range(1, nd - 1)))

    def _picked(target: Any, weight: Any, ignore_index: int, like: Any) -> tuple[Any, Any]:
        """The selection mask (class-last, bool) of each non-ignored target's class, and the
        weight of each target (0 where ignored), of ``target``'s shape."""
        n_classes = like.shape[1] if like.ndim >= 2 else like.shape[0]
        t = xp.reshape(target, (1,)) if like.ndim == 1 else target
        keep = t != ignore_index
        safe = xp.where(keep, t, xp.zeros_like(t))
        classes = xp.arange(n_classes, dtype=t.dtype)
        mask = (xp.expand_dims(safe, axis=-1) == classes) & xp.expand_dims(keep, axis=-1)
        zero = xp.zeros(t.shape, dtype=like.dtype)
        if weight is None:
            w = xp.where(keep, xp.ones(t.shape, dtype=like.dtype), zero)
        else:
            w = xp.reshape(xp.take(weight, xp.reshape(safe, (-1,)), axis=0), t.shape)
            w = xp.where(keep, xp.astype(w, like.dtype), zero)
        return mask, w

    def nll_loss_check_targets(target: Any, n_classes: int, ignore_index: int) -> None:
        """Raise PyTorch's ``IndexError("Target 5 is out of bounds.")`` for the first class
        index (in order) outside ``[0, n_classes)`` that is not ``ignore_index``."""
        flat = xp.reshape(target, (-1,))
        bad = ((flat < 0) | (flat >= n_classes)) & (flat != ignore_index)
        if not bool(xp.any(bad)):
            return
        first = int(xp.argmax(xp.astype(bad, xp.int8)))
        raise target_out_of_bounds(int(flat[first]))

    def nll_loss_forward(x: Any, target: Any, weight: Any, ignore_index: int,
                         reduction: str) -> tuple[Any, Any]:
        """``-x[i, target[i]] * weight[target[i]]`` per target (0 where ignored), reduced;
        and the mean's divisor (the total weight of the kept targets, 1 where it is 0, so
        that the gradient of an all-ignored batch is 0 as in PyTorch)."""
        xl = _class_last(x)
        mask, w = _picked(target, weight, ignore_index, x)
        picked = xp.sum(xp.where(mask, xl, xp.zeros_like(xl)), axis=-1)  # one term: exact
        losses = -(picked * w)
        total = blocked_sum(xp, w, None, False)
        divisor = xp.where(total == 0, xp.ones_like(total), total)
        if reduction == "mean":  # 0 / 0 (every target ignored) is nan, as in PyTorch
            mean = blocked_sum(xp, losses, None, False) / divisor
            return xp.where(total == 0, xp.asarray(float("nan"), dtype=mean.dtype), mean), \
                divisor
        if reduction == "sum":
            return blocked_sum(xp, losses, None, False), divisor
        return xp.reshape(losses, ()) if x.ndim == 1 else losses, divisor

    def nll_loss_weights(target: Any, weight: Any, ignore_index: int, like: Any) -> Any:
        """``-weight[target]`` at each target's class, 0 elsewhere: ``d loss / d x`` of the
        unreduced loss, of ``like``'s shape (the input)."""
        mask, w = _picked(target, weight, ignore_index, like)
        out = xp.where(mask, -xp.expand_dims(w, axis=-1), xp.zeros(mask.shape, dtype=like.dtype))
        return _class_back(out, tuple(like.shape))

    def binary_cross_entropy_forward(x: Any, t: Any) -> Any:
        """``-(t * log(x) + (1 - t) * log(1 - x))`` elementwise, each log clamped at -100;
        PyTorch's RuntimeError for an ``x`` outside ``[0, 1]``."""
        if not bool(xp.all((x >= 0) & (x <= 1))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        floor = xp.asarray(-100.0, dtype=x.dtype)
        log_x = xp.maximum(xp.log(x), floor)
        log_1mx = xp.maximum(xp.log(1 - x), floor)
        return -(t * log_x + (1 - t) * log_1mx)

    def bce_log_sigmoid(x: Any) -> Any:
        """``log(sigmoid(x))`` without overflow: ``-logaddexp(0, -x)``."""
        return -xp.logaddexp(xp.zeros_like(x), -x)

    def binary_cross_entropy_with_logits_forward(x: Any, t: Any, pos_weight: Any) -> Any:
        """``(1 - t) * x - log_sigmoid(x) * (1 + (pos_weight - 1) * t)`` elementwise (no
        ``pos_weight``: its factor is 1)."""
        ls = bce_log_sigmoid(x)
        if pos_weight is not None:
            ls = ls * ((pos_weight - 1) * t + 1)
        return (1 - t) * x - ls

    def smooth_l1_loss_forward(x: Any, t: Any, beta: float) -> Any:
        """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``;
        ``d = x - t``."""
        z = xp.abs(x - t)
        return xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)

    def huber_loss_forward(x: Any, t: Any, delta: float) -> Any:
        """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``;
        ``d = x - t``."""
        z = xp.abs(x - t)
        return xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))

    return {
        "nll_loss_check_targets": nll_loss_check_targets,
        "nll_loss_forward": nll_loss_forward,
        "nll_loss_weights": nll_loss_weights,
        "binary_cross_entropy_forward": binary_cross_entropy_forward,
        "bce_log_sigmoid": bce_log_sigmoid,
        "binary_cross_entropy_with_logits_forward": binary_cross_entropy_with_logits_forward,
        "smooth_l1_loss_forward": smooth_l1_loss_forward,
        "huber_loss_forward": huber_loss_forward,
    }
