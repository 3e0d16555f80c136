"""The host array library (NumPy). Everything that must touch host memory whatever the
device -- building a tensor from Python data, seeding random numbers, finite differences --
gets it from here, so that ``retrograd.ops`` and ``retrograd.autograd`` import no array
library themselves.

It also keeps NumPy quiet about floating-point exceptions. PyTorch computes ``log(0)``,
``1 / 0``, ``sqrt(-1)``, ``exp(1000)``, ``inf - inf`` or a float16 overflow silently (IEEE
results: inf, nan); NumPy's ufuncs report each as a ``RuntimeWarning`` ("divide by zero
encountered in log", ...) or, under the user's ``np.seterr(all="raise")``, an exception. So
every kernel that can hit one runs with NumPy's error handling set to *ignore*, and then
restored: the user's own NumPy code, outside retrograd, behaves as the user set it.

The mechanism. NumPy 2 keeps its error state (``np.seterr`` / ``np.errstate``) in a
context variable, ``numpy._core.umath._extobj_contextvar``; ``np.errstate`` sets and resets
it, at about 0.9 us per use (it builds the state object each time) -- more than a small
op of retrograd costs in all (``x.log()`` of 16 elements: 0.66 us). Here:

* :func:`quiet` wraps a kernel so that it runs inside :data:`_QUIET_CONTEXT`, a private
  ``contextvars.Context`` that holds only the all-ignore state: ``Context.run`` swaps the
  current context in and out in C, about 55-85 ns a call with the wrapper (a token
  set/reset of the variable in a Python wrapper: about 200 ns). A context can be entered
  by one thread at a time, and not twice: a second thread (while the first is inside a
  kernel that released the GIL), or a quiet kernel called from inside another, finds it
  entered and takes the token path. A kernel runs where no other context variable is set:
  kernels are array code, and must not read one (retrograd has none).
* :func:`quiet_enter` / :func:`quiet_exit` set and reset the state itself (a token: one
  set, one reset), for a stretch of code that runs many kernels: the engine's backward
  walk holds it while it runs derivative rules and sums gradients, and gives it up around
  the user's code (hooks, a custom Function's backward, pack/unpack hooks). Inside such a
  stretch the wrapper is pure overhead, so the rules get the kernels unwrapped
  (:func:`unquiet`; ``NumpyBackend.walk_ops``).

With another NumPy (no such variable: NumPy 1.x keeps the state per thread), both fall
back to ``np.errstate``: the same behaviour, at its cost.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import operator
import weakref
from collections.abc import Callable
from typing import Any

import numpy as xp

__all__ = ["xp", "quiet", "quiet_call", "quiet_enter", "quiet_exit", "quiet_add", "unquiet"]


def _fp_state_var() -> Any:
    """NumPy's error-state context variable and its all-ignore value, or ``(None, None)``
    where this NumPy has none (or it does not behave as expected)."""
    try:
        from numpy._core.umath import _extobj_contextvar as var
    except ImportError:
        return None, None
    if not isinstance(var, contextvars.ContextVar):
        return None, None
    with xp.errstate(all="ignore"):
        state = var.get()
    # check that the state is what NumPy reads: a context holding it must ignore everything
    ctx = contextvars.Context()
    ctx.run(var.set, state)
    if ctx.run(xp.geterr) != {"divide": "ignore", "over": "ignore", "under": "ignore",
                              "invalid": "ignore"}:
        return None, None
    return var, state


_FP_VAR, _FP_IGNORE = _fp_state_var()

if _FP_VAR is not None:
    _QUIET_CONTEXT = contextvars.Context()
    _QUIET_CONTEXT.run(_FP_VAR.set, _FP_IGNORE)
    _run_quiet = _QUIET_CONTEXT.run
    try:  # the exact error for "already entered" (it names the context: one string)
        _run_quiet(_run_quiet, int)
    except RuntimeError as exc:
        _ENTERED: tuple[Any, ...] = exc.args
    else:  # pragma: no cover - a Python whose contexts can be entered twice
        _ENTERED = ()
    _fp_set = _FP_VAR.set
    _fp_reset = _FP_VAR.reset


def quiet_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with NumPy's floating-point errors ignored, in the caller's
    own context (the slow path of :func:`quiet`; one-off calls)."""
    if _FP_VAR is None:
        with xp.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = _fp_set(_FP_IGNORE)
    try:
        return fn(*args, **kwargs)
    finally:
        _fp_reset(token)


def _seterr_enter() -> Any:
    return xp.seterr(all="ignore")


def _seterr_exit(token: Any) -> None:
    xp.seterr(**token)


#: ``quiet_enter()``: ignore NumPy's floating-point errors from here on (this thread and
#: context) until ``quiet_exit`` is called with what this returned -- in a ``finally``, so
#: that the caller's state comes back also when an exception escapes. Nests.
#: ``quiet_exit(token)``: restore the error state ``quiet_enter`` replaced.
#: Both are the context variable's own ``set`` / ``reset`` (C calls, no Python frame: the
#: backward walk takes and gives back the state around every stretch of the user's code).
quiet_enter: Callable[[], Any]
quiet_exit: Callable[[Any], Any]
if _FP_VAR is None:
    quiet_enter, quiet_exit = _seterr_enter, _seterr_exit
else:
    quiet_enter = functools.partial(_fp_set, _FP_IGNORE)
    quiet_exit = _fp_reset


def quiet(fn: Callable[..., Any], nargs: int | None = None) -> Callable[..., Any]:
    """``fn`` as a kernel that runs with NumPy's floating-point errors ignored (see the
    module's docstring), with ``fn``'s own positional signature -- defaults included -- so
    that a call costs no argument packing: ``nargs`` positional-only arguments where given
    (a ufunc: its ``nin``), else ``fn``'s signature where it has only positional parameters,
    else ``*args, **kwargs``."""
    if _FP_VAR is None:
        @functools.wraps(fn)
        def errstate_kernel(*args: Any, **kwargs: Any) -> Any:
            with xp.errstate(all="ignore"):
                return fn(*args, **kwargs)

        _UNWRAPPED[errstate_kernel] = fn
        return errstate_kernel
    if nargs is None and isinstance(fn, xp.ufunc):
        nargs = fn.nin
    params: list[str] | None
    defaults: dict[str, Any] = {}
    if nargs is not None:
        params = [f"x{i}" for i in range(nargs)] + ["/"]
    else:
        params = _positional_params(fn, defaults)
    if params is None:
        names = "*args, **kwargs"
        call = "*args, **kwargs"
    else:
        names = ", ".join(params)
        call = ", ".join(p.split("=")[0] for p in params if p != "/")
    source = (
        f"def quiet_kernel({names}):\n"
        f"    try:\n"
        f"        return _run(_fn, {call})\n"
        f"    except RuntimeError as _exc:\n"
        f"        if _exc.args != _ENTERED:\n"
        f"            raise\n"
        f"    return _slow(_fn, {call})\n"
    )
    scope: dict[str, Any] = {"_run": _run_quiet, "_fn": fn, "_ENTERED": _ENTERED,
                             "_slow": quiet_call, **defaults}
    exec(source, scope)  # noqa: S102 - a wrapper with fn's signature: no packing per call
    kernel = scope.pop("quiet_kernel")  # no wrapper <-> globals cycle: refcounting frees it
    kernel.__name__ = getattr(fn, "__name__", "quiet_kernel")
    kernel.__qualname__ = getattr(fn, "__qualname__", kernel.__name__)
    kernel.__doc__ = getattr(fn, "__doc__", None)
    kernel.__wrapped__ = fn
    _UNWRAPPED[kernel] = fn
    return kernel


#: quiet kernel -> the function it wraps. A registry, not ``__wrapped__``: a function that
#: ``functools.wraps`` a quiet kernel (a test's spy, a fault injector) carries the same
#: ``__wrapped__`` but must be called itself.
_UNWRAPPED: weakref.WeakKeyDictionary[Callable[..., Any], Callable[..., Any]] = \
    weakref.WeakKeyDictionary()


def unquiet(fn: Any) -> Any:
    """The function a :func:`quiet` kernel wraps; anything else unchanged. For code that
    holds the quiet state already (:func:`quiet_enter`), where the wrapper would only add a
    call."""
    try:
        return _UNWRAPPED.get(fn, fn)
    except TypeError:  # not weakly referenceable: not a quiet kernel
        return fn


def _positional_params(fn: Callable[..., Any], defaults: dict[str, Any]) -> list[str] | None:
    """``fn``'s parameters as source (``"a"``, ``"b=_d1"``, ``"/"``), each default stored in
    ``defaults`` under the name the source gives it; None where the signature is unknown or
    has ``*args``, keyword-only parameters or ``**kwargs``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out: list[str] = []
    slash = False
    for i, p in enumerate(sig.parameters.values()):
        if p.kind is p.POSITIONAL_ONLY:
            slash = True
        elif p.kind is p.POSITIONAL_OR_KEYWORD:
            if slash:
                out.append("/")
                slash = False
        else:
            return None
        if not p.name.isidentifier() or p.name.startswith("_"):
            return None  # not a name the generated source may use
        if p.default is p.empty:
            out.append(p.name)
        else:
            defaults[f"_d{i}"] = p.default
            out.append(f"{p.name}=_d{i}")
    if slash:
        out.append("/")
    return out


#: ``a + b`` with NumPy's floating-point errors ignored: the backward walk's own sums of two
#: gradients of one tensor (``inf + -inf`` is nan in PyTorch, silently) where it does not
#: hold the quiet state itself (the seeds; a sum after a hook or a custom backward, which
#: run in the user's NumPy state).
quiet_add = quiet(operator.add, 2)
