"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each thread starts with grad mode on; switching it in one thread never affects another.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    enabled: bool = True


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operations in this thread are recorded for backward."""
    return _state.enabled


class _GradModeContext:
    """Base for the grad-mode switches: a context manager that also works as a decorator."""

    _mode: bool = True

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_state.enabled)
        _state.enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev.pop()

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _state.enabled
            _state.enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.enabled = prev

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disable recording in this thread (context manager or decorator)."""

    _mode = False


class enable_grad(_GradModeContext):
    """Enable recording in this thread (context manager or decorator)."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``: immediately when called, and restored on exit when used as a
    context manager (PyTorch semantics)."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(mode): mode must be a bool, got {type(mode).__name__}"
            )
        self._mode = mode
        self._entered_prev = _state.enabled
        _state.enabled = mode

    def __enter__(self) -> None:
        self._prev.append(self._entered_prev)

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev.pop()
