"""The error a user sees for an unavailable device says why, in the backend's own words
(issue 20, defect 8): ``unavailable_reason()`` -- no driver, no GPU, a library missing --
not only "is_available() == False"."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import Backend, backend_for_device
from retrograd.backends.registry import register_backend, unregister_backend
from retrograd.errors import RetrogradError


class _Offline(Backend):
    """A backend whose device is missing; ``reason`` is what its hook answers."""

    def __init__(self, name: str, reason: object) -> None:
        super().__init__(name, np)
        self.reason = reason

    def is_available(self) -> bool:
        return False

    def unavailable_reason(self) -> str:
        if isinstance(self.reason, Exception):
            raise self.reason
        return self.reason  # type: ignore[return-value]


class _Silent(Backend):
    """A backend without ``unavailable_reason`` at all (the hook is optional)."""

    def is_available(self) -> bool:
        return False


@pytest.fixture
def offline():
    names = []

    def register(name: str, backend: Backend) -> Backend:
        register_backend(name, backend)
        names.append(name)
        return backend

    yield register
    for name in names:
        unregister_backend(name)


def test_the_reason_is_in_the_error(offline):
    offline("offlinedev", _Offline("offlinedev", "no CUDA driver (cudaErrorInsufficientDriver)"))
    with pytest.raises(RetrogradError) as info:
        backend_for_device("offlinedev:1")
    message = str(info.value)
    assert "'offlinedev:1' is not available" in message
    assert "backend 'offlinedev' says: no CUDA driver (cudaErrorInsufficientDriver)" in message
    with pytest.raises(RuntimeError, match="cudaErrorInsufficientDriver"):  # through the API too
        rg.zeros(2, device="offlinedev")


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_an_empty_reason_falls_back_to_the_generic_message(offline, reason):
    offline("offlinedev", _Offline("offlinedev", reason))
    with pytest.raises(RetrogradError, match=r"is_available\(\) == False"):
        backend_for_device("offlinedev")


def test_a_backend_without_the_hook(offline):
    offline("silentdev", _Silent("silentdev", np))
    with pytest.raises(RetrogradError, match=r"'silentdev' is not available: .*is_available"):
        backend_for_device("silentdev")


def test_a_hook_that_raises_does_not_hide_the_error(offline):
    offline("offlinedev", _Offline("offlinedev", ValueError("probe crashed")))
    with pytest.raises(RetrogradError, match="unavailable_reason.. raised ValueError: probe crashed"):
        backend_for_device("offlinedev")


def test_available_backends_are_unaffected():
    backend, dev = backend_for_device("cpu")
    assert backend.name == "cpu" and dev == "cpu"
