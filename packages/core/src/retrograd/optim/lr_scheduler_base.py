"""``LRScheduler``: the base of the learning-rate schedulers, with PyTorch's protocol.

A scheduler remembers each group's starting learning rate (``group["initial_lr"]``, kept in
``base_lrs``) and, on every ``step()``, advances ``last_epoch`` and writes the next learning
rates into the optimizer's groups. Construction takes the first step (epoch 0). As in PyTorch
the optimizer's ``step`` is wrapped on the instance so that a ``scheduler.step()`` before any
``optimizer.step()`` -- which skips the first value of the schedule -- warns.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, cast

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "EPOCH_DEPRECATION_WARNING",
    "format_param",
    "group_values",
    "set_group_value",
    "warn_get_lr_outside_step",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_STEP_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)

_STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    "See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


def _copy(value: Any) -> Any:
    """``value``, cloned when it is a tensor (a learning rate must never alias another)."""
    return cast(Any, value).clone() if isinstance(value, Tensor) else value


def format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per parameter group: ``param`` itself when it is a list or tuple (which must
    have one entry per group), else ``param`` repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every parameter group (tensors cloned); ``KeyError`` if missing."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    """Set ``group[key]``; a tensor-valued entry is filled in place rather than replaced."""
    current = group[key]
    if isinstance(current, Tensor):
        cast(Any, current).fill_(float(value.item() if isinstance(value, Tensor) else value))
    else:
        group[key] = value


def warn_get_lr_outside_step(scheduler: LRScheduler) -> None:
    """PyTorch's warning when ``get_lr()`` is called by the user instead of by ``step()``."""
    if not scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, "
            "please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


def _wrap_optimizer_step(optimizer: Optimizer) -> None:
    """Replace ``optimizer.step`` (on the instance) by a wrapper that records that it ran."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)
    func = cast(Any, optimizer.step).__func__

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = opt_ref()
        cast(Any, opt)._opt_called = True
        return func.__get__(opt, type(opt))(*args, **kwargs)

    cast(Any, wrapper)._wrapped_by_lr_sched = True
    cast(Any, optimizer).step = wrapper


class LRScheduler:
    """``LRScheduler(optimizer, last_epoch=-1)``: ``torch.optim.lr_scheduler.LRScheduler``.

    Subclasses implement ``get_lr`` (the next learning rates, usually from the current ones,
    PyTorch's "chainable" form) and may implement ``_get_closed_form_lr`` (from ``base_lrs``
    and ``last_epoch``, used by the deprecated ``step(epoch)``). ``last_epoch=-1`` starts a
    schedule; a larger value resumes one and needs ``initial_lr`` in every group."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        self.base_lrs: list[Any] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _wrap_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and take the step that sets epoch 0's learning rates."""
        self._step_count = 0
        with self._initial_mode():
            self.step()

    @contextmanager
    def _initial_mode(self) -> Iterator[None]:
        self._is_initial = True
        try:
            yield
        finally:
            self._is_initial = False

    @contextmanager
    def _within_step(self) -> Iterator[None]:
        self._get_lr_called_within_step = True
        try:
            yield
        finally:
            self._get_lr_called_within_step = False

    def state_dict(self) -> dict[str, Any]:
        """Everything the scheduler holds except the optimizer, as a dict (PyTorch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state returned by ``state_dict``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last ``step`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The learning rates of the next step, one per group (called by ``step``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set the groups' learning rates. Call it after
        ``optimizer.step()``. ``epoch`` (deprecated, warns) jumps to that epoch, using the
        closed form where the scheduler has one."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_STEP_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        closed_form: Callable[[], list[Any]] | None = getattr(self, "_get_closed_form_lr", None)
        with self._within_step():
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            set_group_value(group, "lr", lr)
        self._last_lr: list[Any] = group_values(self.optimizer, "lr")
