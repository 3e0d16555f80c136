"""Error kinds: one vocabulary for what retrograd and PyTorch raise.

PyTorch raises a bare ``RuntimeError`` where retrograd raises a named subclass of
``RetrogradError`` (itself a ``RuntimeError``). Cases compare *kinds*, slash-separated paths
such as ``runtime/graph-freed``: a retrograd exception is classified by its class, a torch
exception by its class and a marker in its message. Two kinds agree when one is a prefix of the
other, so an expectation of ``runtime`` accepts any runtime error, while
``runtime/version-mismatch`` demands exactly that failure.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass, field

# The retrograd class names (looked up by name so this module imports nothing heavy).
RETROGRAD_KINDS: dict[str, str] = {
    "VersionMismatch": "runtime/version-mismatch",
    "GraphFreedError": "runtime/graph-freed",
    "DoubleBackwardUnsupported": "runtime/double-backward-unsupported",
    "RetrogradError": "runtime",
}

# Markers in PyTorch 2.x messages that identify the same failures.
TORCH_MARKERS: tuple[tuple[str, str], ...] = (
    ("modified by an inplace operation", "runtime/version-mismatch"),
    ("backward through the graph a second time", "runtime/graph-freed"),
    ("saved tensors after they have already been freed", "runtime/graph-freed"),
    ("appears to not have been used in the graph", "runtime/unused-input"),
    ("grad can be implicitly created only for scalar outputs", "runtime/implicit-seed"),
)


#: How many innermost traceback frames a captured error keeps (the report and the JSON show
#: them: where in the backend the error came from).
FRAMES = 4


# The kernel-counting wrapper of ``subjects.recording_kernels``: not a frame of the failure.
_RECORDER_FILE = os.path.join("retrograd_conformance", "subjects.py")


def _short_path(path: str) -> str:
    """A frame's file, from its package down (``retrograd/autograd/engine.py``)."""
    norm = path.replace(os.sep, "/")
    for marker in ("/site-packages/", "/dist-packages/", "/src/"):
        if marker in norm:
            return norm.rsplit(marker, 1)[1]
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return norm
    return norm if rel.startswith("..") else rel.replace(os.sep, "/")


def last_frames(exc: BaseException, limit: int = FRAMES) -> tuple[str, ...]:
    """The innermost ``limit`` frames of ``exc``'s traceback, one line each:
    ``retrograd/autograd/engine.py:779 in _raise_freed: raise GraphFreedError(...)``."""
    if limit <= 0:
        return ()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not (f.name == "kernel" and f.filename.endswith(_RECORDER_FILE))][-limit:]
    out = []
    for f in frames:
        line = (f.line or "").strip()
        if len(line) > 100:
            line = line[:97] + "..."
        out.append(f"{_short_path(f.filename)}:{f.lineno} in {f.name}"
                   + (f": {line}" if line else ""))
    return tuple(out)


def format_frames(frames: tuple[str, ...] | list[str], indent: str = "  ") -> str:
    """The frames as a block, innermost last."""
    return "\n".join(indent + f for f in frames)


@dataclass(frozen=True)
class Raised:
    """An exception captured from a program: its kind, class name and message.

    ``frames`` holds the innermost traceback frames (see :func:`last_frames`). A
    :class:`Raised` built inside the ``except`` block that caught the exception fills them in
    itself (from ``sys.exc_info()``, when the class names match), so every runner that turns
    an exception into a :class:`Raised` keeps where it came from without passing it on.
    """

    kind: str
    type_name: str
    message: str
    frames: tuple[str, ...] = field(default=(), kw_only=True, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.frames:
            return
        exc = sys.exc_info()[1]
        if exc is not None and type(exc).__name__ == self.type_name:
            object.__setattr__(self, "frames", last_frames(exc))

    @classmethod
    def from_exception(cls, exc: BaseException, kind: str) -> Raised:
        """The :class:`Raised` for ``exc``, classified as ``kind``, with its last frames."""
        return cls(kind, type(exc).__name__, str(exc), frames=last_frames(exc))

    def __str__(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        if len(first) > 120:
            first = first[:117] + "..."
        return f"raises {self.type_name} ({self.kind}): {first}"


@dataclass(frozen=True)
class Raises:
    """An expectation: the program (or one step of it) raises an error of ``kind``.

    ``document`` is how the document words it (e.g. "RuntimeError").
    """

    kind: str
    document: str = ""

    def __str__(self) -> str:
        return f"raises {self.document or self.kind}"


def _generic_kind(exc: BaseException) -> str:
    if isinstance(exc, TypeError):
        return "type"
    if isinstance(exc, ValueError | IndexError):
        return "value"
    if isinstance(exc, RuntimeError):
        return "runtime"
    return "other/" + type(exc).__name__


def retrograd_kind(exc: BaseException) -> str:
    """Classify an exception raised by retrograd (walks the MRO for the named classes)."""
    for klass in type(exc).__mro__:
        kind = RETROGRAD_KINDS.get(klass.__name__)
        if kind is not None and klass.__module__.startswith("retrograd"):
            return kind
    return _generic_kind(exc)


def torch_kind(exc: BaseException) -> str:
    """Classify an exception raised by PyTorch (class, then message markers)."""
    if isinstance(exc, RuntimeError):
        text = str(exc)
        for marker, kind in TORCH_MARKERS:
            if marker in text:
                return kind
    return _generic_kind(exc)


def kinds_agree(a: str, b: str) -> bool:
    """True when one kind is the other or a refinement of it (``runtime`` ~ ``runtime/x``)."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return long.startswith(short + "/")


def satisfies(raised: str, expected: str) -> bool:
    """True when a raised kind meets an expectation: equal to it, or a refinement of it."""
    return raised == expected or raised.startswith(expected + "/")
