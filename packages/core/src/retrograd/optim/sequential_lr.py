"""``SequentialLR`` and ``ChainedScheduler``: schedulers made of other schedulers."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from .lr_scheduler_base import LRScheduler, group_values, set_group_value
from .optimizer import Optimizer
from .reduce_lr_on_plateau import ReduceLROnPlateau

__all__ = ["SequentialLR", "ChainedScheduler"]


def _save_children(scheduler: Any, children: list[LRScheduler]) -> dict[str, Any]:
    """``scheduler``'s state with ``_schedulers`` replaced by the children's own states."""
    state = {k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in children]
    return state


def _load_children(scheduler: Any, children: list[LRScheduler], state: dict[str, Any]) -> None:
    """Restore a state saved by ``_save_children`` into ``scheduler`` and its children."""
    saved = dict(state)
    child_states = saved.pop("_schedulers")
    scheduler.__dict__.update(saved)
    for child, child_state in zip(children, child_states, strict=True):
        child.load_state_dict(child_state)


class SequentialLR(LRScheduler):
    """``SequentialLR(optimizer, schedulers, milestones, last_epoch=-1)``: ``schedulers[0]``
    until epoch ``milestones[0]``, then ``schedulers[1]`` (started from its epoch 0) and so on,
    e.g. a linear warm-up followed by a cosine decay."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(name, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the first steps the schedulers took when they were built, then start the first
        for group in optimizer.param_groups:
            set_group_value(group, "lr", group["initial_lr"])
        for scheduler in schedulers:
            _undo_initial_step(scheduler)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch with the scheduler whose turn it is (a scheduler starting at this
        epoch is set to its epoch 0)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with each child's state under ``_schedulers``."""
        return _save_children(self, self._schedulers)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state returned by ``state_dict``, the children's included."""
        _load_children(self, self._schedulers, state_dict)


def _undo_initial_step(scheduler: Any) -> None:
    """Move ``scheduler`` (and, for a composite, every scheduler inside) back one epoch."""
    if hasattr(scheduler, "_schedulers"):
        for child in scheduler._schedulers:
            _undo_initial_step(child)
    elif hasattr(scheduler, "last_epoch"):
        scheduler.last_epoch -= 1


class ChainedScheduler(LRScheduler):
    """``ChainedScheduler(schedulers, optimizer=None)``: every ``step()`` steps all the
    schedulers, one after the other, so their effects multiply."""

    def __init__(self, schedulers: list[LRScheduler], optimizer: Optimizer | None = None) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self.optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, with each child's state under ``_schedulers``."""
        return _save_children(self, self._schedulers)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state returned by ``state_dict``, the children's included."""
        _load_children(self, self._schedulers, state_dict)


def _check_schedulers(name: str, schedulers: list[Any], optimizer: Any) -> None:
    """PyTorch's checks of the schedulers a SequentialLR or ChainedScheduler combines, in its
    order and words: each has an optimizer, none is ReduceLROnPlateau, all share
    ``optimizer``."""
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at "
                f"index {i} in the given schedulers sequence."
            )
        if optimizer is not scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has "
                f"{scheduler.optimizer}, which is different from "
                f"{type(optimizer).__name__}."
            )
