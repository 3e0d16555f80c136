"""Error kinds: one vocabulary for what retrograd and PyTorch raise.

PyTorch raises a bare ``RuntimeError`` where retrograd raises a named subclass of
``RetrogradError`` (itself a ``RuntimeError``). Cases compare *kinds*, slash-separated paths
such as ``runtime/graph-freed``: a retrograd exception is classified by its class, a torch
exception by its class and a marker in its message. Two kinds agree when one is a prefix of the
other, so an expectation of ``runtime`` accepts any runtime error, while
``runtime/version-mismatch`` demands exactly that failure.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Raised:
    """An exception captured from a program: its kind, class name and message."""

    kind: str
    type_name: str
    message: str

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
