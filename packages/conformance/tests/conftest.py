"""Fixtures for the conformance tests. Planted broken backends: each is wrong in one way the suite must catch.

- ``planted_tanh``: a wrong backward formula (``tanh_backward`` returns ``g * (1 - y)``
  instead of ``g * (1 - y*y)``), registered as a backend over NumPy;
- ``planted_drop``: a backend whose arrays' ``+`` keeps only its left operand. The engine sums
  the contributions that meet at a shared node's input slot with ``+``, so every shared node
  loses all but one of them (the forward ops go through ufunc kernels and stay right);
- ignoring version counters is planted by monkeypatching, in the test only, the node
  constructor so nodes stamp no versions (see ``no_version_checks``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from retrograd import backends
from retrograd.backends.numpy import NumpyBackend


class _WrongTanh(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.name = "planted_tanh"
        self.override(tanh_backward=lambda g, y: g * (1.0 - y))


class DroppingArray(np.ndarray):
    """``a + b`` returns ``a``: a contribution arriving second at a slot is dropped."""

    def __add__(self, other: Any) -> Any:
        return self


def _drop(x: Any) -> Any:
    if isinstance(x, np.ndarray) and not isinstance(x, DroppingArray):
        return x.view(DroppingArray)
    if isinstance(x, tuple):
        return tuple(_drop(v) for v in x)
    return x


class _DroppingBackend(NumpyBackend):
    def __init__(self) -> None:
        super().__init__()
        self.name = "planted_drop"
        self.array_type = DroppingArray
        wrapped = {}
        for key, fn in self.kernels.items():
            wrapped[key] = (lambda f: lambda *a, **k: _drop(f(*a, **k)))(fn)
        wrapped["add"] = lambda a, b: _drop(np.add(a, b))  # forward adds stay right
        self.override(**wrapped)

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        return _drop(np.array(super().asarray(data, dtype)))


@contextlib.contextmanager
def planted(name: str) -> Iterator[str]:
    """Register the planted backend ``name`` for the duration; yields its subject name."""
    backend = {"planted_tanh": _WrongTanh, "planted_drop": _DroppingBackend}[name]()
    backends.register_backend(name, backend)
    try:
        yield f"retrograd:{name}"
    finally:
        backends.unregister_backend(name)


def no_version_checks(monkeypatch: Any) -> None:
    """Make every recorded op stamp no saved versions (``record`` takes its stamps from
    ``_stamp``): the engine then never sees an in-place change."""
    from retrograd.ops import _core

    monkeypatch.setattr(_core, "_stamp", lambda out, sources: ())


@pytest.fixture
def plant():
    """``with plant("planted_tanh") as subject:`` registers a planted backend."""
    return planted


@pytest.fixture
def without_version_checks(monkeypatch):
    no_version_checks(monkeypatch)
