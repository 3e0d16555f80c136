"""The version counter shared by a tensor and all of its views."""

from __future__ import annotations


class VersionCounter:
    """One small mutable integer. Views share their base's counter, so an in-place change made
    through any alias is seen by every node that saved any alias."""

    __slots__ = ("value", "rebased")

    def __init__(self, value: int = 0) -> None:
        self.value = value
        # bumped when a *recorded* in-place op gives the base a new history: views taken
        # before that carry a stale grad_fn and are refused (see ops._core.edge_of)
        self.rebased = 0

    def bump(self) -> None:
        self.value += 1

    def __repr__(self) -> str:
        return f"VersionCounter({self.value})"
