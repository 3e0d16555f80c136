"""The gradient reducer behind DistributedDataParallel: it listens for each parameter's gradient
during the backward walk, packs it into its bucket, starts a bucket's all-reduce (non-blocking)
as soon as the bucket is full, and -- once the backward has finished -- waits for the last
buckets and writes the averaged gradients into ``.grad``.

Why a leaf's gradient hook rather than a post-accumulate-grad hook: in retrograd a backward
commits every ``.grad`` at once after the walk has succeeded (E13 in docs/semantics.md), and
post-accumulate-grad hooks run after that commit -- too late to overlap anything. A leaf's
tensor hook runs *during* the walk, as soon as the walk reaches the leaf with its gradient
complete; the reducer adds the ``.grad`` the leaf already holds (gradient accumulation under
``no_sync``) and so packs exactly what the commit will write. The end of the backward is
``Engine.queue_callback``: the engine's "run this when the current backward finishes".

Buckets are launched strictly in their index order (a full bucket waits for the ones before
it), so every rank issues the same all-reduces in the same order, as MPI requires.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...autograd.accumulate import AccumulateGrad
from ...autograd.engine import Engine
from ...distributed.process_group import ProcessGroup, wait_requests
from ...distributed.staging import host_array, host_dtype, write_back
from ...tensor import Tensor
from .buckets import Bucket, assign_buckets

__all__ = ["Reducer"]

_MARKED_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the following "
    "reasons: 1) Use of a module parameter outside the `forward` function (the parameter "
    "{name!r} got a second gradient in one backward of the DistributedDataParallel step); "
    "2) Reused parameters in multiple reentrant backward passes, or a second backward through "
    "the same forward without a new forward in between.")


class Reducer:
    """Buckets, hooks and the per-step state of one DistributedDataParallel."""

    def __init__(self, params: Sequence[Tensor], names: Sequence[str], group: ProcessGroup,
                 cap_bytes: int, find_unused_parameters: bool) -> None:
        self.params = list(params)
        self.names = list(names)
        self.group = group
        self.cap_bytes = cap_bytes
        self.find_unused = find_unused_parameters
        self._numels = [p.numel() for p in self.params]
        self._dtypes = [host_dtype(p) for p in self.params]
        self.buckets = assign_buckets(range(len(self.params))[::-1], self._numels, self._dtypes,
                                      cap_bytes)
        self._where: list[tuple[Bucket, int]] = []
        self._index_buckets()
        self.armed = False  # a forward prepared the next backward's reduction
        self._ready = [False] * len(self.params)
        self._order: list[int] = []  # the order parameters became ready (first step)
        self._rebuilt = find_unused_parameters  # torch rebuilds only without unused detection
        self._next = 0  # the next bucket to launch
        self._inflight: list[Any] = []
        self._queued = False
        self._unused: list[int] = []
        # which parameters got a gradient since the last reduction (no_sync backwards
        # included): torch's local_used_map, for find_unused_parameters
        self._used = [False] * len(self.params)
        self.last_wait_s = 0.0  # time the last backward's end waited for communication
        self.reductions = 0  # backwards whose gradients were averaged across the ranks
        self._handles: list[Any] = []
        self._hook()

    # -- the step ---------------------------------------------------------------------------
    def prepare_for_backward(self, outputs: Any) -> None:
        """Called by the forward (grad mode on, sync on): the next backward reduces."""
        if self.armed:
            missing = [self.names[i] for i, r in enumerate(self._ready) if not r]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`retrograd.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss. Parameters which "
                f"did not receive grad for rank {self.group.rank}: {', '.join(missing)}")
        if not self._rebuilt and len(self._order) == len(self.params):
            self._rebuild()
        for b in self.buckets:
            b.reset()
        self._ready = [False] * len(self.params)
        self._next = 0
        self._inflight = []
        self._queued = False
        self._unused = self._unused_in(outputs) if self.find_unused else []
        self._hook()
        self.armed = True

    def _on_grad(self, i: int, grad: Tensor) -> None:
        """A parameter's gradient, complete, during the walk: pack it, launch what is full."""
        self._used[i] = True
        if not self.armed:
            return None  # no_sync, or a backward DDP's forward did not prepare
        if not self._queued:
            self._queued = True
            Engine.queue_callback(self._finish)
            for j in self._unused:
                self._mark_ready(j, None)
        if self._ready[i]:
            raise RuntimeError(_MARKED_TWICE.format(name=self.names[i]))
        self._mark_ready(i, grad)
        if self._inflight:  # MPI progresses only inside MPI calls: give it one
            from mpi4py import MPI

            if MPI.Request.Testall(self._inflight):
                self._inflight = []
        return None

    def _mark_ready(self, i: int, grad: Tensor | None) -> None:
        bucket, k = self._where[i]
        off, n = bucket.offsets[k], bucket.sizes[k]
        view = bucket.buffer[off:off + n]
        p = self.params[i]
        if grad is None:  # no gradient this backward: what .grad holds (no_sync), or zero
            view[...] = 0 if p.grad is None else host_array(p.grad).reshape(-1)
        else:
            g = host_array(grad).reshape(-1)
            if g.size != n:
                raise RuntimeError(f"DistributedDataParallel: the gradient of {self.names[i]!r} "
                                   f"has {g.size} elements, the parameter {n}")
            prev = p.grad
            if prev is not None:
                np.add(g, host_array(prev).reshape(-1), out=view)
            else:
                view[...] = g
        self._ready[i] = True
        if not self._rebuilt and grad is not None:
            self._order.append(i)
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        from mpi4py import MPI

        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            b = self.buckets[self._next]
            b.request = self.group.comm.Iallreduce(MPI.IN_PLACE, b.buffer, op=MPI.SUM)
            self._inflight.append(b.request)
            self._next += 1

    def _finish(self) -> None:
        """After the backward's commit: finish the reduction, write the averaged ``.grad``."""
        if self.find_unused:
            for j, r in enumerate(self._ready):
                if not r:  # in the graph, but no gradient reached it: a zero contribution
                    self._mark_ready(j, None)
        start = time.perf_counter()
        launched = self.buckets[:self._next]
        for k, b in enumerate(launched):
            wait_requests(self.group, [b.request],
                          f"all-reduce of gradient bucket {k} ({len(b.params)} parameters, "
                          f"{b.buffer.nbytes} bytes) in DistributedDataParallel's backward")
        globally_used = self._globally_used() if self.find_unused else None
        self.last_wait_s = time.perf_counter() - start
        scale = 1.0 / self.group.size
        for b in launched:
            for k, i in enumerate(b.params):
                if globally_used is not None and not globally_used[i]:
                    continue  # unused on every rank: its .grad stays as it was
                off, n = b.offsets[k], b.sizes[k]
                _write_grad(self.params[i], b.buffer[off:off + n], scale)
        if self._next == len(self.buckets):
            self.reductions += 1
            self.armed = False  # else: the next forward reports the parameters left out

    # -- helpers ----------------------------------------------------------------------------
    def _globally_used(self) -> np.ndarray:
        from mpi4py import MPI

        used = np.asarray(self._used, dtype=np.int32)
        self._used = [False] * len(self.params)
        req = self.group.comm.Iallreduce(MPI.IN_PLACE, used, op=MPI.MAX)
        wait_requests(self.group, [req], "all-reduce of DistributedDataParallel's map of "
                      "parameters used in this step")
        return used

    def _unused_in(self, outputs: Any) -> list[int]:
        """The parameters the autograd graph of ``outputs`` does not reach."""
        reached: set[int] = set()
        seen: set[int] = set()
        stack = [t.grad_fn for t in _tensors(outputs) if t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                reached.add(id(node.variable))
                continue
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
        direct = {id(t) for t in _tensors(outputs)}
        return [i for i, p in enumerate(self.params)
                if id(p) not in reached and id(p) not in direct]

    def _rebuild(self) -> None:
        """Rebuild the buckets in the order gradients became ready in the first step (rank 0's
        order, broadcast, so that every rank has the same buckets)."""
        order = self.group.comm.bcast(self._order, root=0)
        self.buckets = assign_buckets(order, self._numels, self._dtypes, self.cap_bytes)
        self._index_buckets()
        self._rebuilt = True

    def _index_buckets(self) -> None:
        where: list[Any] = [None] * len(self.params)
        for b in self.buckets:
            for k, i in enumerate(b.params):
                where[i] = (b, k)
        self._where = where

    def _hook(self) -> None:
        """(Re)register the gradient hooks, so that they run after every hook the user put
        on a parameter before this forward: the reducer packs the gradient as the user's
        hooks leave it, as PyTorch's reducer (an ``AccumulateGrad`` hook) does."""
        self.remove_hooks()
        self._handles = [p.register_hook(partial(self._on_grad, i))
                         for i, p in enumerate(self.params)]

    def remove_hooks(self) -> None:
        """Detach the reducer from the parameters."""
        for h in self._handles:
            h.remove()
        self._handles = []


def _write_grad(p: Tensor, flat: np.ndarray, scale: float) -> None:
    """``p.grad`` = ``flat * scale`` (reshaped), in place where ``.grad`` already exists: one
    pass over the bucket's slice."""
    g = p.grad
    if g is None:  # used on another rank only: the average is its gradient here
        from ...ops.creation import zeros_like

        g = zeros_like(p, requires_grad=False)
        write_back(g, (flat * scale).reshape(tuple(p.shape)))
        p.grad = g
        return
    arr = g._data
    if isinstance(arr, np.ndarray) and arr.flags.c_contiguous and arr.flags.writeable \
            and g._vc is not None:
        from ..._version import bump

        np.multiply(flat, scale, out=arr.reshape(-1), casting="unsafe")
        bump(g._vc)
    else:
        write_back(g, (flat * scale).reshape(tuple(p.shape)))


def _tensors(obj: Any) -> Iterator[Tensor]:
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)
