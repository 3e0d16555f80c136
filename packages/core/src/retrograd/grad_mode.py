"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each thread starts with grad mode on; switching it in one thread never affects another.

Every switch is a context manager and a decorator, as in PyTorch. As a decorator it applies
its mode around each call; around a *generator* function it applies it around each resume of
the generator (every ``next``/``send``/``throw``/``close``) and gives the caller back its own
mode in between, so the mode covers the generator's body and nothing else. (A coroutine
function is wrapped like a plain function, as PyTorch does: the mode covers creating the
coroutine, not running it.) ``no_grad`` and ``enable_grad`` also work bare (``@no_grad``);
decorating a class warns (``FutureWarning``) and wraps its constructor call.

The state read by every op is ``_state.enabled``: whether operations record. Inference mode
(``retrograd.inference_mode``) keeps it False throughout and tracks the grad mode that
``is_grad_enabled`` reports separately, so ``enable_grad`` inside inference mode reads True and
still records nothing (PyTorch semantics).
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Generator
from typing import Any, TypeVar, overload

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    enabled: bool = True  # operations record (read by every op); False in inference mode
    inference: bool = False  # inference mode is on (retrograd.inference_mode)
    inference_grad: bool = False  # the grad mode is_grad_enabled() reports in inference mode
    # an in-place op's result is being recorded: it may be an integer or bool tensor with
    # history, as PyTorch's rebase allows (ops._core.record refuses any other)
    inplace_history: bool = False


_state = _State()


def is_grad_enabled() -> bool:
    """Whether grad mode is on in this thread (inside inference mode: the grad mode that
    ``no_grad``/``enable_grad`` set there; nothing records there either way)."""
    s = _state
    return s.inference_grad if s.inference else s.enabled


def _set_grad(mode: bool) -> None:
    s = _state
    if s.inference:
        s.inference_grad = mode
    else:
        s.enabled = mode


_CLASS_DECORATION = (
    "Decorating classes is deprecated and will be disabled in future versions. You should "
    "only decorate functions or methods. To preserve the current behavior of class "
    "decoration, you can directly decorate the `__init__` method and nothing else."
)


class _ModeSwitch:
    """A context manager that also works as a decorator. A subclass says how to switch its
    mode on (``_switch``, returning what ``_restore`` needs to undo it); the decorator keeps
    that token in the call's own frame, so one decorated function may run in many threads,
    and recursively, at once."""

    def __init__(self) -> None:
        self._prev: list[Any] = []

    def _switch(self) -> Any:
        raise NotImplementedError

    def _restore(self, token: Any) -> None:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._prev.append(self._switch())

    def __exit__(self, *exc: object) -> None:
        self._restore(self._prev.pop())

    def __call__(self, fn: F) -> F:
        if inspect.isclass(fn):
            warnings.warn(_CLASS_DECORATION, FutureWarning, stacklevel=2)
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)  # type: ignore[assignment]  # noqa: E731
        switch, restore = self._switch, self._restore
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(switch, restore, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = switch()
            try:
                return fn(*args, **kwargs)
            finally:
                restore(token)

        return wrapper  # type: ignore[return-value]


def _wrap_generator(
    switch: Callable[[], Any], restore: Callable[[Any], None], fn: Callable[..., Any]
) -> Callable[..., Generator[Any, Any, Any]]:
    """A generator function running ``fn``'s generator with the mode switched on around each
    resume and switched back before each value reaches the caller."""

    def resume(step: Callable[..., Any], *arg: Any) -> Any:
        token = switch()
        try:
            return step(*arg)
        finally:
            restore(token)

    @functools.wraps(fn)
    def generator(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        gen = fn(*args, **kwargs)  # runs none of the body
        try:
            response = resume(gen.send, None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    resume(gen.close)
                    raise
                except BaseException:
                    response = resume(gen.throw, sys.exc_info()[1])
                else:
                    response = resume(gen.send, request)
        except StopIteration as stop:
            return stop.value

    return generator


class _GradSwitch(_ModeSwitch):
    """A switch to the fixed grad mode ``_mode``."""

    _mode: bool = True

    def _switch(self) -> bool:
        s = _state
        if s.inference:
            prev = s.inference_grad
            s.inference_grad = self._mode
        else:
            prev = s.enabled
            s.enabled = self._mode
        return prev

    def _restore(self, token: bool) -> None:
        s = _state
        if s.inference:
            s.inference_grad = token
        else:
            s.enabled = token

    # the context manager written out (``_ModeSwitch``'s, without its two calls): these
    # switches run around every optimizer step and module update
    def __enter__(self) -> None:
        s = _state
        if s.inference:
            self._prev.append(s.inference_grad)
            s.inference_grad = self._mode
        else:
            self._prev.append(s.enabled)
            s.enabled = self._mode

    def __exit__(self, *exc: object) -> None:
        s = _state
        if s.inference:
            s.inference_grad = self._prev.pop()
        else:
            s.enabled = self._prev.pop()


class _BareDecorator(_GradSwitch):
    """``cls()`` is the switch; ``cls(fn)`` (a bare ``@cls``) is ``cls()(fn)``."""

    @overload
    def __new__(cls, orig_func: None = None) -> _BareDecorator: ...
    @overload
    def __new__(cls, orig_func: F) -> F: ...  # type: ignore[misc]

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Disable grad mode in this thread: a context manager, or a decorator (``@no_grad()`` or
    ``@no_grad``). Results computed with it off do not require grad."""

    _mode = False


class enable_grad(_BareDecorator):
    """Enable grad mode in this thread: a context manager, or a decorator (``@enable_grad()``
    or ``@enable_grad``)."""

    _mode = True


class set_grad_enabled(_GradSwitch):
    """Set grad mode to ``mode`` in this thread.

    Called bare (``set_grad_enabled(False)``) it switches immediately; as a context manager it
    restores the mode it found when it was made; as a decorator (``@set_grad_enabled(False)``)
    it leaves the mode as it was and applies ``mode`` around each call (PyTorch semantics)."""

    def __init__(self, mode: bool) -> None:
        super().__init__()
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}"
            )
        self._mode = mode
        self.prev = is_grad_enabled()
        _set_grad(mode)

    def __call__(self, fn: F) -> F:
        _set_grad(self.prev)  # decorating is not switching: undo what __init__ did
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_grad(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad(self.prev)

    def __repr__(self) -> str:
        return f"retrograd.grad_mode.set_grad_enabled(mode={self._mode})"
