"""The :class:`Case` record and where a case comes from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The three design documents the cases replay, named by what they are (docs/semantics.md
# states the rules they lead to; the documents themselves are not part of the repository).
SEED_ENGINE = "design 000, the Engine reference"
SEED_BACKWARD = "design 001, loss.backward() end to end"
SEED_MEET = "design 002, how gradients meet (PyTorch 2.10 baseline)"


@dataclass(frozen=True)
class Source:
    """A document (seed file name) and the section the example is taken from."""

    document: str
    section: str

    def __str__(self) -> str:
        return f"{self.document} § {self.section}"


@dataclass(frozen=True)
class Case:
    """One document example.

    ``program(lib)`` returns a dict of named results (tensors, numbers, bools, lists, or
    :class:`~retrograd_conformance.errors.Raised` captured with ``lib.capture``).
    ``expected`` holds the document's value for some of those names (a
    :class:`~retrograd_conformance.errors.Raises` for an expected error; ``raises`` for a
    program that must fail as a whole). Every name is also compared with the oracle.
    """

    id: str
    title: str
    sources: tuple[Source, ...]
    program: Callable[[Any], dict[str, Any]]
    expected: dict[str, Any] = field(default_factory=dict)
    spec_row: str = ""
    note: str = ""
    dtypes: tuple[str, ...] = ("float32", "float64")
