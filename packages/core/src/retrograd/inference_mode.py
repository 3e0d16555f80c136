"""Inference mode and inference tensors (PyTorch's ``torch.inference_mode``).

Inside ``inference_mode()`` nothing is recorded (whatever the grad mode says) and tensors made
there are *inference tensors*: tensors autograd may never see. Outside inference mode an
inference tensor may be read, viewed and used by ops that do not save it, but:

* an op that would save it for backward raises ("Inference tensors cannot be saved for
  backward"),
* changing it in place raises ("Inplace update to inference tensor outside InferenceMode"),
* ``requires_grad_()`` on it raises,
* it has no version counter (``t._version`` raises).

How it costs nothing elsewhere: an inference tensor's version counter slot (``Tensor._vc``)
holds ``INFERENCE``, one shared stand-in counter whose every use raises the error that use
means. Saving a tensor compares its counter with a fresh one (``ops._core._stamp``) or copies
it (``Function.save_for_backward``): the stand-in raises the "cannot be saved" error. An
in-place change bumps the counter: the stand-in raises the in-place error (``ops.inplace``
checks first, so nothing changes), or ignores the bump inside inference mode. Reading the
version outside inference mode raises. Views and ``detach()`` share their source's counter,
so a view of an inference tensor is one too, while a view made inside inference mode of a
normal tensor stays normal (it shares that tensor's real counter), as in PyTorch. Ops, and
tensors that are not inference tensors, do no extra work; ``Tensor.is_inference()`` is
``t._vc is INFERENCE``.

Which tensors are marked: a tensor starts with the counter ``creation_counter()`` gives
(``INFERENCE`` inside inference mode, else None). The creation functions (``ops.creation``)
ask for it, after checking ``_active`` -- how many threads are in inference mode -- so that
outside inference mode they ask nothing. An op's output made inside inference mode is an
inference tensor too, as in PyTorch: while any thread is in inference mode, ``Tensor.__init__``
is swapped for one that marks the tensors made in such a thread (``_mark_new_tensors``); asking
in the plain ``__init__`` -- one list read per tensor -- cost 2-4% of every op's forward (W1 of
tools/bench, one-process A/B), so it does not ask.

Like grad mode, inference mode is per thread.
"""

from __future__ import annotations

import threading
from typing import Any, NoReturn, TypeVar, overload

from .errors import RetrogradError
from .grad_mode import _ModeSwitch, _state

__all__ = ["inference_mode", "is_inference_mode_enabled"]

F = TypeVar("F")

SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `retrograd.no_grad()` "
    "instead of `retrograd.inference_mode()`."
)
INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed. You can make a "
    "clone to get a normal tensor before doing inplace update."
)
VERSION_ERROR = "Inference tensors do not track version counter."
REQUIRES_GRAD_ERROR = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
)


class _InferenceCounter(bytearray):
    """The version counter of every inference tensor (``INFERENCE``): it reads as a counter
    that was never bumped and never rebased, and refuses what an inference tensor refuses.
    Its bytes never change."""

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> NoReturn:  # the stamp of a saved value: _core._stamp
        raise RetrogradError(SAVE_ERROR)

    def __ne__(self, other: object) -> NoReturn:
        raise RetrogradError(SAVE_ERROR)

    def __bytes__(self) -> NoReturn:  # the stamp taken by Function.save_for_backward
        raise RetrogradError(SAVE_ERROR)

    def __getitem__(self, key: Any) -> Any:
        # the version (``_version.version_of`` reads ``[:8]``) is refused, except inside
        # inference mode, where an in-place change reads it to bump it (see __setitem__)
        if isinstance(key, slice) and key.start is None and not _state.inference:
            raise RetrogradError(VERSION_ERROR)
        return super().__getitem__(key)  # zeros: never bumped, never rebased, no flags

    def __setitem__(self, key: Any, value: Any) -> None:  # a bump: _version.bump
        if not _state.inference:
            raise RetrogradError(INPLACE_ERROR)
        # inside inference mode an inference tensor may change in place, uncounted

    def __repr__(self) -> str:
        return "<the version counter of inference tensors>"


INFERENCE = _InferenceCounter(16)

# How many threads are in inference mode now: while it is 0, no tensor can be an inference
# tensor in the making, and code that makes tensors can skip asking the thread-local state.
_active = [0]
_active_lock = threading.Lock()


def _set_inference(flag: bool) -> None:
    s = _state
    if s.inference is not flag:
        with _active_lock:
            was = _active[0]
            _active[0] = was + (1 if flag else -1)
            if (was == 0) != (_active[0] == 0):  # the first thread in, or the last one out
                _mark_new_tensors(_active[0] > 0)
        s.inference = flag


def _mark_new_tensors(on: bool) -> None:
    """While some thread is in inference mode, ``Tensor.__init__`` is a version that gives a
    tensor made in an inference-mode thread the ``INFERENCE`` counter: every op output made
    there is an inference tensor, as in PyTorch (a view of a normal tensor then takes its
    base's counter and stays normal). Otherwise it is the plain ``__init__``, and tensors made
    while no thread is in inference mode pay nothing for this (a check in every construction
    cost 2-4% of every op's forward, W1)."""
    from .tensor import Tensor

    if on:
        _plain_init.setdefault("init", Tensor.__init__)
        Tensor.__init__ = _marking_init  # type: ignore[method-assign]
    elif "init" in _plain_init:
        Tensor.__init__ = _plain_init["init"]  # type: ignore[method-assign]


_plain_init: dict[str, Any] = {}  # Tensor's own __init__, kept while the marking one is set


def _marking_init(self: Any, data: Any, backend: Any, requires_grad: bool = False,
                  grad_fn: Any = None, output_nr: int = 0) -> None:
    _plain_init["init"](self, data, backend, requires_grad, grad_fn, output_nr)
    if _state.inference:
        self._vc = INFERENCE


def creation_counter() -> bytearray | None:
    """The version counter a tensor made now starts with: ``INFERENCE`` in inference mode
    (the tensor is an inference tensor), else None (a counter is made on first need)."""
    return INFERENCE if _state.inference else None


def is_inference(t: Any) -> bool:
    """Whether the tensor ``t`` is an inference tensor (``Tensor.is_inference``)."""
    if not hasattr(t, "is_inference"):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(t).__name__}")
    return bool(t.is_inference())


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread."""
    return _state.inference


class inference_mode(_ModeSwitch):
    """Turn inference mode on (``mode=True``) or off in this thread: a context manager, or a
    decorator (``@inference_mode()``, ``@inference_mode`` or ``@inference_mode(False)``).

    Turning it on turns grad mode off (nothing records inside, even under ``enable_grad``)
    and makes every new tensor an inference tensor; turning it off turns grad mode on. Both
    are undone on exit. See the module docstring for what inference tensors may not do."""

    @overload
    def __new__(cls, mode: bool = True) -> inference_mode: ...
    @overload
    def __new__(cls, mode: F) -> F: ...  # type: ignore[misc]

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare @inference_mode

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = mode

    def _switch(self) -> tuple[bool, bool, bool]:
        s = _state
        token = (s.enabled, s.inference, s.inference_grad)
        if self.mode:
            s.enabled = False
            s.inference_grad = False
            _set_inference(True)
        else:
            s.enabled = True
            _set_inference(False)
        return token

    def _restore(self, token: tuple[bool, bool, bool]) -> None:
        s = _state
        s.enabled, inference, s.inference_grad = token
        _set_inference(inference)
