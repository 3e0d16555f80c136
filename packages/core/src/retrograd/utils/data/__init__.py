"""Data loading with ``torch.utils.data``'s names and behaviour.

A *dataset* maps an index to a sample (``Dataset``) or streams samples
(``IterableDataset``); a *sampler* says which indices to read and in what order; the
``DataLoader`` reads them, groups them into batches and *collates* each batch into tensors
(``default_collate``). Loading happens in the calling process only: worker processes are
not provided (see ``DataLoader``).

Randomness (``RandomSampler``, ``random_split``, shuffling in ``DistributedSampler``) is drawn
from retrograd's own ``Generator``, so a seed gives the same order on every run and rank,
but not the order torch gives for the same seed.

``collation`` holds the per-type collate table (``default_collate_fn_map``) and the
``collate`` function that walks it, PyTorch's ``torch.utils.data._utils.collate``."""

from .collation import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, TensorDataset
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .stack import StackDataset
from .subset import Subset, random_split

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
