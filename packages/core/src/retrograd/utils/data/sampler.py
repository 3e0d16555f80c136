"""Samplers: iterables of dataset indices (or, for ``BatchSampler``, lists of them) that
decide which samples the ``DataLoader`` reads and in what order."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ...dtypes import float64, int64
from ...ops import as_tensor
from ...ops.creation import randint, randperm
from ...ops.random import Generator, multinomial
from ...tensor import Tensor

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)

#: RandomSampler with replacement draws its indices this many at a time (as PyTorch does).
_DRAW_CHUNK = 32
#: Seeds for a sampler's fresh generator are drawn from ``[0, 2**63 - 1)``, the
#: non-negative int64 range PyTorch's ``random_()`` draws from.
_SEED_BOUND = 2**63 - 1


class Sampler(Generic[T_co]):
    """The base class of samplers: subclasses implement ``__iter__`` (the indices, or lists
    of indices) and, for ``len(loader)``, ``__len__``."""

    def __iter__(self) -> Iterator[T_co]:
        """The indices to read (subclasses provide it)."""
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """``0, 1, ..., len(data_source) - 1``, the same order every time."""

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator() -> Generator:
    """A generator seeded from one draw of the default generator: what a sampler given no
    ``generator`` uses, so that ``manual_seed`` makes its order reproducible while each
    pass still differs."""
    seed = int(randint(0, _SEED_BOUND, size=(1,), dtype=int64).item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """Indices in random order: a fresh permutation of the data source per pass (the
    permutations chained, then cut, when ``num_samples`` exceeds its length), or, with
    ``replacement=True``, ``num_samples`` independent uniform draws.

    The numbers come from ``generator`` (a ``retrograd.Generator``) or, when it is None, from
    a generator seeded by one draw of the default generator each pass."""

    data_source: Sized
    replacement: bool

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields: ``num_samples`` or the data source's length."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // _DRAW_CHUNK):
                yield from randint(high=n, size=(_DRAW_CHUNK,), dtype=int64,
                                   generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % _DRAW_CHUNK,), dtype=int64,
                               generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (a fresh permutation each pass)."""

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices into ``weights``, index ``i`` drawn with probability
    proportional to ``weights[i]`` (with or without replacement), through
    ``retrograd.multinomial``."""

    weights: Tensor
    num_samples: int
    replacement: bool

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``; the last, shorter
    list is kept unless ``drop_last``."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        if self.drop_last:
            yield from (list(batch) for batch in zip(*[indices] * self.batch_size))
            return
        batch = list(itertools.islice(indices, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self) -> int:
        size: Any = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return int(size // self.batch_size)
        return int((size + self.batch_size - 1) // self.batch_size)
