"""``Subset`` (a dataset seen through a list of its indices) and ``random_split``, which
cuts a dataset into random non-overlapping subsets."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any, TypeVar

from ...ops.creation import randperm
from ...ops.random import Generator, default_generator
from .dataset import Dataset

__all__ = ["Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Subset(Dataset[T_co]):
    """Item ``i`` is ``dataset[indices[i]]``.

    A subclass that overrides ``__getitem__`` must override ``__getitems__`` too (else
    ``NotImplementedError``, as in PyTorch): the ``DataLoader`` reads batches through
    ``__getitems__`` and would silently bypass the override."""

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if (type(self).__getitem__ is not Subset.__getitem__
                and type(self).__getitems__ is Subset.__getitems__):
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        """The samples at ``indices``, read in one call when the dataset has
        ``__getitems__``."""
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(  # type: ignore[attr-defined, no-any-return]
                [self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(fractions: Sequence[float], total: int) -> list[int]:
    """``floor(f * total)`` for each fraction, the remainder handed out one by one from the
    first split on (round-robin); an empty split warns."""
    lengths: list[int] = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(total * frac))
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. "
                          f"This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Generator | None = default_generator) -> list[Subset[T]]:
    """Cut ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths``.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (each
    split gets ``floor(f * len)``, the remainder spread one by one from the first). The
    shuffle is ``retrograd.randperm(len(dataset), generator=generator)``: reproducible with
    a seeded generator, but not the same split torch makes for the same seed."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))  # type: ignore[arg-type]
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length: offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
