"""The ``capabilities`` family: each claim a backend declares (``backend.capabilities``: in-place
writes, laziness, memory, dtypes) is checked against the real library before any other case
runs. A claim that does not hold is a failure named ``capabilities/<claim>`` -- a backend that
says its arrays take in-place writes while they silently drop them (JAX's ``x += y``) fails
here, with what was observed, instead of producing wrong gradients later."""

from __future__ import annotations

from typing import Any

from .runner import Result

__all__ = ["capability_results"]


def capability_results(subjects: list[Any]) -> list[Result]:
    """One result per declared claim of every available retrograd subject."""
    from retrograd.backends import get_backend
    from retrograd.backends.capabilities import verify

    out = []
    for s in subjects:
        if s.family != "retrograd" or not s.available:
            continue
        backend = get_backend(s.device)
        for claim, problem in verify(backend).items():
            out.append(Result("capabilities", claim, s.name, "pass" if problem is None else "fail",
                              problem or f"{claim}: {getattr(backend.capabilities, claim)!r}"))
    return out
