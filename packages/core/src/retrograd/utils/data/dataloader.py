"""``DataLoader``: reads a dataset through a sampler, batch by batch, in the calling
process."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ...ops.random import Generator
from .collation import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import IterableDatasetFetcher, MapDatasetFetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

#: Attributes that fix what the loader reads; PyTorch refuses to reassign them after
#: construction (the sampler chain was built from them).
_FROZEN_ATTRIBUTES = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                      "persistent_workers")


def get_worker_info() -> None:
    """Information about the current loader worker process; always None, since retrograd
    loads in the calling process only (PyTorch returns None there too)."""
    return None


class _InfiniteConstantSampler(Sampler[None]):
    """``None`` forever: the sampler of an iterable dataset, whose samples are read in
    stream order rather than by index."""

    def __iter__(self) -> Any:
        while True:
            yield None


def _has_accelerator() -> bool:
    """Whether a device backend (CUDA) is usable, which decides what the pinned-memory
    warning says."""
    try:
        from ...backends import get_backend

        return bool(get_backend("cuda").is_available())
    except Exception:  # noqa: BLE001 - no CUDA backend installed, or it cannot start
        return False


class DataLoader:
    """Iterate over ``dataset`` in batches, as PyTorch's ``DataLoader`` with
    ``num_workers=0``.

    Indices come from ``sampler`` (default: ``SequentialSampler``, or with ``shuffle=True``
    ``RandomSampler(dataset, generator=generator)``) and are grouped by
    ``BatchSampler(sampler, batch_size, drop_last)`` unless ``batch_sampler`` is given;
    each batch of samples goes through ``collate_fn`` (default ``default_collate``).
    ``batch_size=None`` turns batching off: each sample goes through ``default_convert``.
    An ``IterableDataset`` is read in its own order (no sampler, no shuffle).

    Argument checks and their messages are PyTorch's. ``num_workers > 0`` raises
    ``NotImplementedError``: worker processes are not provided, because PyTorch's rely on
    its shared-memory tensor storage and ``torch.multiprocessing`` to hand batches back
    without copying, which retrograd does not have; loading happens in the calling
    process. ``pin_memory=True`` warns and is ignored (retrograd has no pinned host
    memory)."""

    dataset: Any
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler[Any] | Iterable[Any]
    prefetch_factor: int | None
    _initialized = False

    def __init__(self, dataset: Any, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler[Any] | Iterable[Any] | None = None,
                 batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor,
                                                persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive "
                                 "with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching "
                             "and is mutually exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called: int | None = None

        if num_workers > 0:
            raise NotImplementedError(
                f"DataLoader(num_workers={num_workers}): retrograd has no worker processes "
                "(PyTorch's need shared-memory tensors and torch.multiprocessing); "
                "use num_workers=0, which loads in the calling process.")

    @property
    def multiprocessing_context(self) -> Any:
        """The multiprocessing start method for workers; only valid with workers."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context: Any) -> None:
        if multiprocessing_context is not None and self.num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with "
                             "multi-process loading (num_workers > 0), but got "
                             f"num_workers={self.num_workers}")
        self._multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in _FROZEN_ATTRIBUTES:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        """What the fetcher is driven by: the batch sampler when batching, else the
        sampler."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _SingleProcessIterator:
        return _SingleProcessIterator(self)

    def __len__(self) -> int:
        """The number of batches (samples without batching). For an iterable dataset it is
        derived from ``len(dataset)``, and iterating past it warns, as in PyTorch."""
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            if self.drop_last:
                return length // self.batch_size
            return math.ceil(length / self.batch_size)
        return length


def _check_worker_options(num_workers: int, timeout: float, prefetch_factor: int | None,
                          persistent_workers: bool) -> int | None:
    """PyTorch's checks of the worker-related options; the prefetch factor to keep (2 by
    default once there are workers)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; "
                         "use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle: bool | None, sampler: Any, batch_sampler: Any) -> None:
    """An iterable dataset is read in stream order: no shuffle, sampler or batch sampler."""
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified "
                         f"batch_sampler option, but got batch_sampler={batch_sampler}")


class _SingleProcessIterator:
    """One pass over a ``DataLoader``: draws the next index (or batch of indices) from its
    sampler and fetches and collates the samples, in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        _warn_pin_memory(loader)
        if loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        fetcher = IterableDatasetFetcher if self._iterable else MapDatasetFetcher
        self._fetcher = fetcher(loader.dataset, loader._auto_collation, loader.collate_fn,
                                loader.drop_last)

    def __iter__(self) -> _SingleProcessIterator:
        return self

    def __next__(self) -> Any:
        data = self._fetcher.fetch(next(self._sampler_iter))
        self._num_yielded += 1
        if (self._iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._IterableDataset_len_called}(when accessing "
                          f"len(dataloader)), but {self._num_yielded} samples have been "
                          "fetched. ", stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


def _warn_pin_memory(loader: DataLoader) -> None:
    """``pin_memory=True`` is accepted and ignored: say so, in PyTorch's words where they
    apply (no accelerator)."""
    if not loader.pin_memory:
        return
    if loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                      f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                      stacklevel=3)
    if not _has_accelerator():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                      "then device pinned memory won't be used.", stacklevel=3)
    else:
        warnings.warn("'pin_memory' argument is set as true but retrograd has no pinned "
                      "memory, then device pinned memory won't be used.", stacklevel=3)
