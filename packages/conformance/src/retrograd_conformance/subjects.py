"""Subjects: the retrograd backends found in the ``retrograd.backends`` entry-point group, and
PyTorch, the oracle.

An entry point that fails to load, or a backend whose ``is_available()`` is false (CUDA on a
machine without a GPU), becomes a subject with ``available=False`` and the reason: it is
reported as *unavailable*, never as passed.
"""

from __future__ import annotations

import importlib.metadata as md
import platform
from dataclasses import dataclass, field
from typing import Any

GROUP = "retrograd.backends"


@dataclass
class Subject:
    """One thing under test: ``retrograd:<backend>`` or ``torch`` / ``torch:cuda``."""

    name: str
    family: str  # "retrograd" or "torch"
    device: str
    available: bool
    reason: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def backend(self) -> str:
        return self.device


def _dist_of(ep: md.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "?", "?"
    return dist.metadata["Name"], dist.version


def backend_names() -> list[str]:
    """Every backend name: the entry-point group plus those registered at run time."""
    names = [ep.name for ep in md.entry_points(group=GROUP)]
    try:
        from retrograd import backends

        registered = getattr(backends, "registered_backends", None)
        if callable(registered):
            names += [n for n in registered() if n not in names]
    except Exception:  # noqa: BLE001 - discovery must not die on a broken core
        pass
    return sorted(dict.fromkeys(names), key=lambda n: (n != "cpu", n))


def retrograd_subject(name: str) -> Subject:
    """Resolve a backend by name and probe it; never raises."""
    subject = Subject(f"retrograd:{name}", "retrograd", name, False)
    eps = {ep.name: ep for ep in md.entry_points(group=GROUP)}
    if name in eps:
        dist, version = _dist_of(eps[name])
        subject.info.update(entry_point=eps[name].value, distribution=dist,
                            distribution_version=version)
    try:
        from retrograd import backends

        backend = backends.get_backend(name)
    except Exception as exc:  # noqa: BLE001
        subject.reason = f"cannot load backend {name!r}: {type(exc).__name__}: {exc}"
        return subject
    subject.info["backend_class"] = f"{type(backend).__module__}.{type(backend).__qualname__}"
    try:
        subject.available = bool(backend.is_available())
    except Exception as exc:  # noqa: BLE001
        subject.reason = f"is_available() raised {type(exc).__name__}: {exc}"
        return subject
    if not subject.available:
        why = ""
        explain = getattr(type(backend), "unavailable_reason", None)
        if callable(explain):
            try:
                why = str(explain(backend))
            except Exception:  # noqa: BLE001
                why = ""
        subject.reason = f"backend {name!r} reports is_available() == False" + (
            f": {why}" if why else "")
        return subject
    try:  # only probed once available: a lazy backend may build its namespace here
        xp = backend.xp
        subject.info.update(xp=getattr(xp, "__name__", repr(xp)),
                            xp_version=str(getattr(xp, "__version__", "?")))
    except Exception as exc:  # noqa: BLE001
        subject.available = False
        subject.reason = f"backend {name!r} has no usable array namespace: {exc}"
    return subject


def retrograd_subjects(names: list[str] | None = None) -> list[Subject]:
    return [retrograd_subject(n) for n in (names or backend_names())]


def torch_subjects() -> list[Subject]:
    """``torch`` (CPU), and ``torch:cuda`` when a GPU is present."""
    try:
        import torch
    except ImportError as exc:
        hint = "pip install 'retrograd-conformance[torch]'"
        return [Subject("torch", "torch", "cpu", False, f"torch is not installed ({exc}); {hint}")]
    info = {"version": torch.__version__}
    out = [Subject("torch", "torch", "cpu", True, info=dict(info))]
    if torch.cuda.is_available():
        out.append(Subject("torch:cuda", "torch", "cuda", True,
                           info=dict(info, gpu=torch.cuda.get_device_name(0))))
    return out


def versions() -> dict[str, str]:
    """The versions echoed in every report header."""
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in ("retrograd", "retrograd-conformance", "torch", "numpy", "hypothesis",
                 "array-api-strict"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "not installed"
    return out
