"""``set_multithreading_enabled``: PyTorch's switch for running the backward on per-device
worker threads.

retrograd's walk always runs on the calling thread (a re-entrant backward nested very deep
moves to a fresh thread, whatever this says), so the switch changes no computation here; it
is kept, thread-local and with PyTorch's context-manager-or-function behaviour, so that
programs that set it run unchanged and read back what they set."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["set_multithreading_enabled", "is_multithreading_enabled"]


class _State(threading.local):
    enabled = True


_state = _State()


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled in this thread (the default)."""
    return _state.enabled


class set_multithreading_enabled:
    """Set multithreaded backward on or off for this thread: takes effect when called, and,
    used as a context manager, restores the previous setting on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.enabled
        _state.enabled = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A new switch with the same mode (as PyTorch's decorator context managers)."""
        return self.__class__(self.mode)
