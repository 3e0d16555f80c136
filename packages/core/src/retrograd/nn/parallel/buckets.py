"""How DistributedDataParallel groups gradients into buckets: PyTorch's rule. Parameters are
taken in an order (at construction the reverse of ``module.parameters()``, a guess at the order
backward reaches them; after the first step the order they actually became ready), and each
dtype fills its own buckets up to a byte limit -- the first bucket small (1 MiB), so that the
first all-reduce starts early, the rest ``bucket_cap_mb``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Bucket", "assign_buckets", "FIRST_BUCKET_BYTES"]

FIRST_BUCKET_BYTES = 1024 * 1024  # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES


@dataclass
class Bucket:
    """The parameters (indices into DDP's parameter list) whose gradients travel together in
    one all-reduce, each at an offset of one flat host buffer."""

    params: list[int]
    offsets: list[int]
    sizes: list[int]
    buffer: np.ndarray
    pending: int = 0  # parameters not yet ready in this backward
    request: Any = None  # the all-reduce in flight
    slot: dict[int, int] = field(default_factory=dict)  # param index -> position in params

    def reset(self) -> None:
        """Ready for the next backward: every parameter pending, no request."""
        self.pending = len(self.params)
        self.request = None


def assign_buckets(order: Sequence[int], numels: Sequence[int], dtypes: Sequence[Any],
                   cap_bytes: int, first_cap_bytes: int = FIRST_BUCKET_BYTES) -> list[Bucket]:
    """Buckets for the parameters in ``order``: per dtype, fill a bucket until it holds at
    least its limit (``first_cap_bytes`` for the first bucket of all, then ``cap_bytes``),
    then start the next. Buckets are listed in the order they were closed -- the order they
    are launched in, the same on every rank."""
    open_: dict[Any, list[int]] = {}
    filled: dict[Any, int] = {}
    groups: list[list[int]] = []
    limit = min(first_cap_bytes, cap_bytes)
    for i in order:
        key = np.dtype(dtypes[i])
        members = open_.setdefault(key, [])
        members.append(i)
        filled[key] = filled.get(key, 0) + numels[i] * key.itemsize
        if filled[key] >= limit:
            groups.append(members)
            open_[key] = []
            filled[key] = 0
            limit = cap_bytes
    groups.extend(m for m in open_.values() if m)
    buckets = []
    for members in groups:
        offsets, off = [], 0
        for i in members:
            offsets.append(off)
            off += numels[i]
        dt = np.dtype(dtypes[members[0]])
        b = Bucket(list(members), offsets, [numels[i] for i in members],
                   np.zeros(off, dtype=np.float32 if dt == np.float16 else dt))
        b.slot = {p: k for k, p in enumerate(members)}
        b.reset()
        buckets.append(b)
    return buckets
