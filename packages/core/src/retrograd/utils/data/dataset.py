"""The dataset kinds: map-style ``Dataset`` (index -> sample), ``IterableDataset`` (a stream),
``TensorDataset`` (rows of tensors), and what ``+`` makes of them (``ConcatDataset``,
``ChainDataset``)."""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

from ...tensor import Tensor

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "TensorDataset"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually ``0 .. len-1``) to samples.

    Subclasses implement ``__getitem__`` and, for the default samplers and ``len(loader)``,
    ``__len__``; they may add ``__getitems__(indices)`` to read a whole batch at once (the
    ``DataLoader`` uses it when present)."""

    def __getitem__(self, index: Any) -> T_co:
        """The sample at ``index`` (subclasses provide it)."""
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        """``a + b``: the samples of ``a`` followed by those of ``b``."""
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses implement ``__iter__`` (abstract, so a subclass
    without one cannot be instantiated, as in PyTorch).

    For data that arrives in order (a file read line by line, a generator); the
    ``DataLoader`` takes samples in the order the stream gives them, so it accepts no
    sampler and no ``shuffle``."""

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        """``a + b``: the stream of ``a`` then that of ``b``."""
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples that are rows: item ``i`` is ``tuple(t[i] for t in tensors)``.

    Every tensor must have the same size along dimension 0 (else ``AssertionError``, as
    in PyTorch)."""

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


def _cumulative_sizes(datasets: Iterable[Any]) -> list[int]:
    """The running totals of ``len`` over ``datasets``: where each one ends."""
    ends, total = [], 0
    for dataset in datasets:
        total += len(dataset)
        ends.append(total)
    return ends


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets read as one: index ``i`` falls in the first dataset whose
    running total of lengths exceeds it."""

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        """The running totals of the datasets' lengths (PyTorch's name for it)."""
        return _cumulative_sizes(sequence)

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self) -> list[int]:
        """The old misspelt name of ``cumulative_sizes`` (warns, as in PyTorch)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset[Any]):
    """Several iterable datasets read one after the other, lazily (each stream is opened
    only when the one before it ends)."""

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total
