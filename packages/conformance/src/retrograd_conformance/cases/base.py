"""The :class:`Case` record and where a case comes from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SEED_ENGINE = "000_b52f253ccc32576e.txt"  # the Engine reference
SEED_BACKWARD = "001_f3524e54403c64a2.txt"  # loss.backward(), end to end
SEED_MEET = "002_2646596573a8d860.txt"  # how gradients meet (PyTorch 2.10 baseline)


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
