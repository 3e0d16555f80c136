"""``set_warn_always``: PyTorch's switch that turns its once-per-process warnings into
warnings given every time.

retrograd gives one warning once per process, as PyTorch's ``TORCH_WARN_ONCE``: the reference
cycle of ``backward(create_graph=True)`` on leaves. With ``set_warn_always(True)`` it is given
at every such call; programs (and tests) that want to see it each time turn this on."""

from __future__ import annotations

__all__ = ["set_warn_always", "is_warn_always_enabled"]

_state = {"always": False}


def set_warn_always(b: bool) -> None:
    """When True, warnings retrograd gives once per process are given every time."""
    _state["always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return _state["always"]
