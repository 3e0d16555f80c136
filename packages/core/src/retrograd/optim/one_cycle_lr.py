"""``OneCycleLR``: Smith's one-cycle policy (warm up to ``max_lr``, anneal far below the
start), with the momentum (SGD's ``momentum`` or Adam's ``beta1``) cycled the opposite way."""

from __future__ import annotations

import math
from typing import Any, Literal

from .lr_scheduler_base import LRScheduler, format_param, warn_get_lr_outside_step
from .optimizer import Optimizer

__all__ = ["OneCycleLR"]


def _annealing_cos(start: Any, end: Any, pct: float) -> Any:
    """From ``start`` (``pct=0``) to ``end`` (``pct=1``) along half a cosine."""
    cos_out = math.cos(math.pi * pct) + 1
    return end + (start - end) / 2.0 * cos_out


def _annealing_linear(start: Any, end: Any, pct: float) -> Any:
    """From ``start`` (``pct=0``) to ``end`` (``pct=1``) along a straight line."""
    return (end - start) * pct + start


def _phase(end_step: float, lr: tuple[str, str], momentum: tuple[str, str]) -> dict[str, Any]:
    return {"end_step": end_step, "start_lr": lr[0], "end_lr": lr[1],
            "start_momentum": momentum[0], "end_momentum": momentum[1]}


class OneCycleLR(LRScheduler):
    """``OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
    pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
    max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
    last_epoch=-1)``: ``torch.optim.lr_scheduler.OneCycleLR``. The learning rate starts at
    ``max_lr / div_factor``, reaches ``max_lr`` after ``pct_start`` of the steps and ends at
    ``initial_lr / final_div_factor`` (``three_phase``: back to the start first, then down).
    Step it once per batch; stepping past ``total_steps`` is an error."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        up = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            self._schedule_phases = [
                _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                _phase(float(2 * pct_start * self.total_steps) - 2, ("max_lr", "initial_lr"),
                       ("base_momentum", "max_momentum")),
                _phase(last, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum")),
            ]
        else:
            self._schedule_phases = [
                _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                _phase(last, ("max_lr", "min_lr"), ("base_momentum", "max_momentum")),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, group_max in zip(optimizer.param_groups, max_lrs, strict=True):
                group["initial_lr"] = group_max / div_factor
                group["max_lr"] = group_max
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = format_param("max_momentum", optimizer, max_momentum)
            base_momentums = format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(max_momentums, base_momentums,
                                              optimizer.param_groups, strict=True):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], value: Any) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: Any, end: Any, pct: float) -> Any:
        if self._anneal_func_type == "cos":
            return _annealing_cos(start, end, pct)
        return _annealing_linear(start, end, pct)

    def get_lr(self) -> list[Any]:
        """The learning rate of step ``last_epoch`` for each group (and, with
        ``cycle_momentum``, sets the groups' momentum or ``beta1``)."""
        warn_get_lr_outside_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        last_phase = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last_phase:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start_step = phase["end_step"]
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None,
                 steps_per_epoch: int | None) -> int:
    """The number of steps of the cycle, given directly or as ``epochs * steps_per_epoch``."""
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(
                f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
            )
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
