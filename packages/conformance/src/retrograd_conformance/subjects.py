"""Subjects: the retrograd backends found in the ``retrograd.backends`` entry-point group (or
named as ``module:attribute``), and PyTorch, the oracle.

An entry point that fails to load, or a backend whose ``is_available()`` is false (CUDA on a
machine without a GPU), becomes a subject with ``available=False`` and the reason: it is
reported as *unavailable*, never as passed.

:func:`recording_kernels` counts the kernels a backend runs while a check is rerun, so a
failure report can say which kernels the failing path went through.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata as md
import os
import platform
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

GROUP = "retrograd.backends"

# backends loaded from ``module:attribute`` in this process: name -> the spec it came from
_LOADED_FROM: dict[str, str] = {}
# specs that could not be loaded: spec -> why
_LOAD_ERRORS: dict[str, str] = {}


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


def is_spec(name: str) -> bool:
    """Whether ``name`` is a ``module:attribute`` reference rather than a backend name
    (backend names cannot hold a colon)."""
    return ":" in name


def _load_object(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected module:attribute, got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:  # as `python -m` would: a backend module in the working directory
        sys.path.insert(0, cwd)
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_backend_spec(spec: str) -> str:
    """Load the backend object ``module:attribute`` (an instance; a class or a factory is
    called with no argument), register it under its ``name`` for this process, and return
    that name. On failure the spec itself is returned and :func:`retrograd_subject` reports
    it as unavailable with the reason; never raises."""
    for name, known in _LOADED_FROM.items():
        if known == spec:
            return name
    try:
        from retrograd.backends import Backend, register_backend

        obj = _load_object(spec)
        if not isinstance(obj, Backend) and callable(obj):
            obj = obj()
        if not isinstance(obj, Backend):
            raise TypeError(f"{spec} is a {type(obj).__name__}, not a "
                            "retrograd.backends.Backend (or a class or factory of one)")
        name = getattr(obj, "name", None)
        if not isinstance(name, str) or not name or ":" in name:
            raise ValueError(f"{spec}: the backend's name must be a non-empty string without "
                             f"':', got {name!r}")
        register_backend(name, obj)
    except Exception as exc:  # noqa: BLE001 - reported as an unavailable subject
        _LOAD_ERRORS[spec] = f"cannot load {spec}: {type(exc).__name__}: {exc}"
        return spec
    _LOADED_FROM[name] = spec
    return name


def resolve_backends(names: list[str]) -> list[str]:
    """Backend names, with every ``module:attribute`` loaded and replaced by its name."""
    return list(dict.fromkeys(load_backend_spec(n) if is_spec(n) else n for n in names))


def retrograd_subject(name: str) -> Subject:
    """Resolve a backend by name and probe it; never raises."""
    subject = Subject(f"retrograd:{name}", "retrograd", name, False)
    if name in _LOAD_ERRORS:
        subject.reason = _LOAD_ERRORS[name]
        return subject
    if name in _LOADED_FROM:
        subject.info["loaded_from"] = _LOADED_FROM[name]
    eps = {ep.name: ep for ep in md.entry_points(group=GROUP)}
    if name in eps and name not in _LOADED_FROM:
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
    own = getattr(sys.modules.get(type(backend).__module__), "conformance_xfails", None)
    if callable(own):  # the backend package's own xfails file, applied to its results
        try:
            subject.info["xfails_file"] = str(own())
        except Exception:  # noqa: BLE001 - no file then; the run says nothing of it
            pass
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
    return [retrograd_subject(n) for n in resolve_backends(names or backend_names())]


@contextlib.contextmanager
def recording_kernels(name: str) -> Iterator[dict[str, int]]:
    """Count, for the duration, every kernel backend ``name`` runs: yields a dict kernel name
    -> calls, in the order of first call (a composite such as ``tanh_backward`` counts once,
    and so does each primitive it runs). The backend's own kernels are put back afterwards.
    Kernels a backend reaches without its kernel table (a fast path holding a function
    directly) are not seen."""
    from retrograd import backends

    backend = backends.get_backend(name)
    originals = dict(backend.kernels)
    calls: dict[str, int] = {}

    def counting(key: str, fn: Any) -> Any:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            calls[key] = calls.get(key, 0) + 1
            return fn(*args, **kwargs)

        kernel.__wrapped__ = fn  # type: ignore[attr-defined]
        return kernel

    backend.override(**{k: counting(k, fn) for k, fn in originals.items()})
    try:
        yield calls
    finally:
        backend.override(**originals)


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
