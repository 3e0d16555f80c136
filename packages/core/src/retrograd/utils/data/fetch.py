"""Fetchers: how the loader turns what its sampler yields into a collated batch, one kind
per dataset kind (a map-style dataset is indexed; an iterable one is read onward)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["IterableDatasetFetcher", "MapDatasetFetcher"]


class MapDatasetFetcher:
    """Reads ``dataset[i]`` for every index of a batch (or one index, without
    auto-collation), through ``__getitems__`` when the dataset has one."""

    def __init__(self, dataset: Any, auto_collation: bool,
                 collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index: Any) -> Any:
        """The collated samples at a list of indices, or the converted sample at one."""
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """Reads the next samples of the dataset's stream: as many as the batch has slots (a
    shorter last batch unless ``drop_last``), or one without auto-collation. Raises
    ``StopIteration`` once the stream is exhausted."""

    def __init__(self, dataset: Any, auto_collation: bool,
                 collate_fn: Callable[[Any], Any], drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index: Any) -> Any:
        """The next batch (or sample) of the stream, collated (or converted)."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)
