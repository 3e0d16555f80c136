"""Anomaly mode: record where each node's forward op was called, and fail on NaN/inf in
backward with that call site in the error."""

from __future__ import annotations

import sys
import traceback
import warnings
from typing import Any

__all__ = ["detect_anomaly", "is_anomaly_enabled", "set_detect_anomaly", "warn_error_in",
           "note_forward"]


class _Anomaly:
    enabled = False


_state = _Anomaly()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection (``detect_anomaly`` / ``set_detect_anomaly``) is on."""
    return _state.enabled


class detect_anomaly:
    """Context manager (and decorator): while active, nodes remember their forward call site
    and the engine raises ``RetrogradError`` when a backward produces NaN or inf."""

    _warn = True  # set_detect_anomaly does not warn, as in PyTorch

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[bool] = []
        if self._warn:
            warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                          "runtime and should only be enabled for debugging.", UserWarning,
                          stacklevel=2)

    def __enter__(self) -> None:
        self._prev.append(_state.enabled)
        _state.enabled = self.check_nan

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev.pop()

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly(detect_anomaly):
    """Turn anomaly mode on or off (context manager, decorator)."""

    _warn = False

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)


def forward_stack() -> str:
    """The user's call stack at a forward op, without retrograd's own frames."""
    frames = [
        f for f in traceback.extract_stack()[:-1]
        if "/retrograd/ops/" not in f.filename and "/retrograd/autograd/" not in f.filename
        and "/retrograd/tensor.py" not in f.filename
    ]
    return "".join(traceback.format_list(frames[-8:]))


def note_forward(node: Any) -> None:
    """Anomaly mode's record on a node being made: the forward call site (``traceback_``) and,
    for a node made while a backward runs (a ``create_graph`` backward, or a backward that
    calls ops), the node whose backward made it (``parent_``), as PyTorch's metadata."""
    from .engine import current_node  # the engine imports this module: no import at the top

    meta = node.metadata
    meta["traceback_"] = forward_stack()
    parent = current_node()
    if parent is not None and parent is not node:
        meta["parent_"] = parent


def check_outputs(node: Any, outs: Any) -> None:
    """Raise if a node's backward produced NaN, naming the node and its forward site."""
    from ..errors import RetrogradError
    from .hooks import arr, backend_of

    for i, g in enumerate(outs):
        if g is None:
            continue
        a = arr(g)
        be = getattr(node, "_backend", None) or backend_of(a)
        # NaN only, as PyTorch: an infinite gradient (sqrt at 0) is a value, not an anomaly
        if be.ops.any_nonfinite(a) and bool(be.xp.any(be.ops.isnan(a))):
            where = (node._meta or {}).get("traceback_")
            raise RetrogradError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
                + (f"\nThe forward op that created {node.name()} was called at:\n{where}"
                   if where is not None else "")
            )


# PyTorch's words for a node made while anomaly mode was off (no forward trace recorded)
_NO_FORWARD = ("No forward pass information available. Enable detect anomaly during forward "
               "pass for more information.")


def warn_error_in(node: Any) -> None:
    """Anomaly mode's warnings when a node's backward raised: the node and the forward call
    that created it, then one warning per node up its ``parent_`` chain (the backward that
    made it, and so on), as PyTorch warns them before letting the error through."""
    meta = node._meta or {}
    where = meta.get("traceback_")
    _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
          f"error:\n{where}" if where is not None
          else f"Error detected in {node.name()}. {_NO_FORWARD}")
    parent = meta.get("parent_")
    while parent is not None:
        meta = parent._meta or {}
        where = meta.get("traceback_")
        _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward "
              f"call that induced the previous calculation:\n{where}" if where is not None
              else f"Error detected in {parent.name()}. {_NO_FORWARD}")
        parent = meta.get("parent_")


def _warn(msg: str) -> None:
    try:
        warnings.warn(msg, UserWarning, stacklevel=3)
    except Warning:
        # warnings turned into errors: the node's own error is what the caller must get, as
        # in PyTorch (whose C++ warning then goes to stderr)
        print(f"UserWarning: {msg}", file=sys.stderr)
