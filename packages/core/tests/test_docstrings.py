"""Every public name has a docstring: each public ``Tensor`` attribute (method, property, or
slot) and each callable in the ``__all__`` of ``retrograd``, ``retrograd.nn.functional``,
``retrograd.autograd``, ``retrograd.distributed``, ``retrograd.nn.parallel`` and ``retrograd.utils.data``.

Why: the API is PyTorch's, and ``help(x.op)`` is where a user learns what retrograd's op
computes and records. A new op or method without one fails here, naming it."""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

import retrograd
import retrograd.autograd
import retrograd.distributed
import retrograd.nn.functional
import retrograd.utils.data


def _doc(obj: Any, owner: type | None = None, name: str = "") -> str | None:
    """The docstring of ``obj`` itself: a property's getter's, a slot's from the owner's
    ``__slots__`` dict (what ``inspect.getdoc`` reads), else its own ``__doc__`` (never a
    base class's)."""
    if isinstance(obj, property):
        return obj.fget.__doc__ if obj.fget is not None else None
    if inspect.ismemberdescriptor(obj) and owner is not None:
        for cls in owner.__mro__:
            slots = cls.__dict__.get("__slots__")
            if isinstance(slots, dict) and name in slots:
                return slots[name]
        return None
    return getattr(obj, "__doc__", None)


def _undocumented_tensor_attributes() -> list[str]:
    cls = retrograd.Tensor
    missing = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        # the class's own entry (a property or slot object, not its value on an instance)
        obj = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__),
                   getattr(cls, name))
        doc = _doc(obj, cls, name)
        if not (doc and doc.strip()):
            missing.append(name)
    return missing


def _undocumented_callables(module: ModuleType) -> list[str]:
    missing = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if obj is None or not callable(obj):
            continue
        doc = obj.__doc__
        if not (doc and doc.strip()):
            missing.append(f"{module.__name__}.{name}")
    return missing


def test_every_public_tensor_attribute_has_a_docstring() -> None:
    missing = _undocumented_tensor_attributes()
    assert not missing, f"Tensor attributes without a docstring: {missing}"


def test_every_public_function_has_a_docstring() -> None:
    missing = []
    for module in (retrograd, retrograd.nn.functional, retrograd.autograd, retrograd.distributed,
                   retrograd.nn.parallel, retrograd.utils.data):
        missing += _undocumented_callables(module)
    assert not missing, f"public callables without a docstring: {missing}"


def test_the_check_sees_a_missing_docstring() -> None:
    """The checks themselves: a name without a docstring is reported, one with is not."""

    class Probe:
        __slots__ = {"documented": "A slot with a docstring.", "bare": None}

        def method(self) -> None:
            pass

        @property
        def prop(self) -> int:
            """A property with a docstring."""
            return 0

    assert _doc(Probe.__dict__["method"]) is None
    assert _doc(Probe.__dict__["prop"]) == "A property with a docstring."
    assert _doc(Probe.__dict__["documented"], Probe, "documented") == "A slot with a docstring."
    assert _doc(Probe.__dict__["bare"], Probe, "bare") is None
    module = ModuleType("probe")
    module.__all__ = ["f", "g", "CONSTANT"]  # type: ignore[attr-defined]
    module.f = lambda: None  # type: ignore[attr-defined]

    def g() -> None:
        """Documented."""

    module.g = g  # type: ignore[attr-defined]
    module.CONSTANT = 3  # type: ignore[attr-defined]
    assert _undocumented_callables(module) == ["probe.f"]
