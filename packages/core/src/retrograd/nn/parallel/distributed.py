"""``DistributedDataParallel``: the same module on every rank, each rank a share of the batch;
gradients are averaged across ranks during backward, so every rank takes the same optimizer
step -- the one a single process would take on the whole batch."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...distributed.collectives import broadcast
from ...distributed.process_group import ProcessGroup, default_group
from ...grad_mode import is_grad_enabled
from ..module import Module
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training over the default process group
    (``retrograd.distributed.init_process_group``), as ``torch.nn.parallel.
    DistributedDataParallel`` on CPU:

    * at construction, checks that every rank has the same parameters (names, shapes,
      dtypes) and copies rank 0's parameters and buffers to every rank;
    * each forward broadcasts rank 0's buffers (``broadcast_buffers=True``: BatchNorm's running
      statistics) and prepares the reduction;
    * during backward, gradients are packed into buckets of about ``bucket_cap_mb`` in the
      order they become ready, and each full bucket is all-reduced while the walk goes on;
      when the backward returns, every ``.grad`` holds the average over the ranks.

    ``find_unused_parameters=True`` lets a forward leave parameters out of the graph (they
    count as zero on that rank; one unused on every rank keeps its ``.grad``); ``no_sync()``
    accumulates gradients locally for the backwards inside it.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool = True, init_sync: bool = True,
                 process_group: ProcessGroup | None = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        super().__init__()
        group = process_group or default_group()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a retrograd.nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None or output_device is not None:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments "
                             "only work with single-device/multiple-device GPU modules; "
                             "leave them None (the module's tensors stay where they are)")
        if dim != 0:
            raise ValueError("dim: retrograd's DistributedDataParallel does not scatter inputs "
                             "(each rank passes its own share); leave dim=0")
        if gradient_as_bucket_view:
            raise NotImplementedError("gradient_as_bucket_view=True: the buckets are host "
                                      "buffers separate from .grad in retrograd")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25.0
        if not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb}")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        _verify_same_model(module, group)
        if init_sync and group.size > 1:
            for _, t in _states(module):
                broadcast(t, 0, group)
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], group,
                               self.bucket_bytes_cap, find_unused_parameters)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Sync buffers from rank 0 (when asked), run the module, prepare the reduction of the
        backward that follows (grad mode on and not inside ``no_sync``)."""
        if self.require_forward_param_sync and self.broadcast_buffers \
                and self.process_group.size > 1:
            for _, b in self.module.named_buffers():
                if b is not None:
                    broadcast(b, 0, self.process_group)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(out)
        else:
            self.require_forward_param_sync = False
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backwards of forwards run inside accumulate their gradients locally, without
        communication; the first backward after the block averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _states(module: Module) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [(n, p) for n, p in module.named_parameters()]
    out += [(n, b) for n, b in module.named_buffers() if b is not None]
    return out


def _verify_same_model(module: Module, group: ProcessGroup) -> None:
    """RuntimeError on every rank when the ranks' parameters or buffers differ in number,
    name, shape or dtype -- before any collective could mix them up."""
    mine = [(n, tuple(t.shape), str(t.dtype)) for n, t in _states(module)]
    everyone = group.comm.allgather(mine)
    ref = everyone[0]
    for r, theirs in enumerate(everyone):
        if len(theirs) != len(ref):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {r} has "
                               f"{len(theirs)} params and buffers, while rank 0 has "
                               f"{len(ref)}.")
        for (n0, s0, d0), (n, s, d) in zip(ref, theirs, strict=True):
            if (n, s, d) != (n0, s0, d0):
                raise RuntimeError(
                    f"DDP expects same model across all ranks: {n!r} on rank {r} is {d} of "
                    f"shape {list(s)}, which does not match {n0!r} on rank 0 ({d0} of shape "
                    f"{list(s0)}).")


