"""``DistributedSampler``: each of ``num_replicas`` processes reads its own shard of the
dataset, the shards together covering it (padded or trimmed to divide evenly)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ...ops.creation import randperm
from ...ops.random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group() -> Any:
    """``retrograd.distributed``, imported on demand so that data loading never pulls it in
    when ``num_replicas`` and ``rank`` are given. As in torch, asking it for the world size
    without an initialized group raises its ValueError ("Default process group has not been
    initialized ...")."""
    from ... import distributed

    return distributed


class DistributedSampler(Sampler[int]):
    """The indices this rank reads: ``indices[rank:total_size:num_replicas]``.

    ``indices`` is ``0 .. len(dataset)-1``, or with ``shuffle`` a permutation drawn from a
    ``retrograd.Generator`` seeded with ``seed + epoch``: every rank computes the same
    permutation without communicating, and ``set_epoch`` changes it between epochs. To
    make it divide evenly it is padded by repeating its head (``drop_last=False``) or its
    tail is dropped (``drop_last=True``). ``num_replicas`` and ``rank`` default to the
    world size and rank of ``retrograd.distributed``'s default process group.

    The permutation for a given seed is retrograd's, not torch's (their generators
    differ); the padding and sharding rules are torch's."""

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = int(_process_group().get_world_size())
        if rank is None:
            rank = int(_process_group().get_rank())
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil(
                (len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _all_indices(self) -> list[int]:
        """Every rank's indices before sharding: the (shuffled) range, padded or trimmed to
        ``total_size``."""
        if self.shuffle:
            g = Generator().manual_seed(self.seed + self.epoch)
            indices: list[int] = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match "
                                 f"total_size ({self.total_size})")
        return indices

    def __iter__(self) -> Iterator[int]:
        indices = self._all_indices()[self.rank: self.total_size: self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not "
                                 f"match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the shuffle's seed: call it at the start of every epoch, before
        iterating, or every epoch reads the same order."""
        self.epoch = epoch
