"""The :class:`Case` record and the topic a case belongs to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Where each document case is explained, in the project's own words: one section per case,
#: anchored by the case id (``docs/conformance.md#shared-branch``).
CASES_DOC = "docs/conformance.md"

# The topics the document cases are grouped under (docs/semantics.md states the rules they
# lead to; docs/conformance.md walks through every example).
TOPIC_MEET = "How gradients meet"
TOPIC_BACKWARD = "loss.backward() from start to finish"
TOPIC_ENGINE = "The Engine API: backward and grad"
TOPICS = (TOPIC_MEET, TOPIC_BACKWARD, TOPIC_ENGINE)


@dataclass(frozen=True)
class Source:
    """The topic a case belongs to and the question within it the case answers."""

    topic: str
    section: str

    def __str__(self) -> str:
        return f"{self.topic}: {self.section}"


@dataclass(frozen=True)
class Case:
    """One document example.

    ``program(lib)`` returns a dict of named results (tensors, numbers, bools, lists, or
    :class:`~retrograd_conformance.errors.Raised` captured with ``lib.capture``).
    ``expected`` holds the example's value for some of those names (a
    :class:`~retrograd_conformance.errors.Raises` for an expected error; ``raises`` for a
    program that must fail as a whole). Every name is also compared with the oracle.
    """

    id: str
    title: str
    sources: tuple[Source, ...]
    program: Callable[[Any], dict[str, Any]]
    expected: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    note: str = ""
    dtypes: tuple[str, ...] = ("float32", "float64")

    @property
    def topic(self) -> str:
        return self.sources[0].topic if self.sources else ""

    @property
    def explained_at(self) -> str:
        """Where the example is explained: ``docs/conformance.md#<id>``."""
        return f"{CASES_DOC}#{self.id}"
