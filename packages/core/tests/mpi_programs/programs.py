"""Programs that test_distributed.py runs under ``mpiexec -n N``: each scenario prints one JSON
line per rank (``RESULT {...}``) that the test reads. ``python programs.py SCENARIO [ARGS]``."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from typing import Any

import numpy as np

import retrograd as rg
import retrograd.distributed as dist

DDP = rg.nn.parallel.DistributedDataParallel


def report(**kw: object) -> None:
    print("RESULT " + json.dumps({"rank": dist.get_rank(), **kw}), flush=True)


def max_rel(net: rg.nn.Module, ref: rg.nn.Module) -> float:
    """The largest relative difference between two models' parameters."""
    return max(float(((a - b).abs().max() / b.abs().max()).item())
               for a, b in zip(net.parameters(), ref.parameters(), strict=True))


# -- collectives --------------------------------------------------------------------------
def collectives() -> None:
    r, n = dist.get_rank(), dist.get_world_size()
    out: dict[str, object] = {}
    t = rg.tensor([1.0, 2.0, 3.0], dtype=rg.float64) * (r + 1)
    dist.all_reduce(t)
    out["sum"] = t.tolist()
    for name in ("AVG", "MAX", "MIN", "PRODUCT"):
        t = rg.tensor([1.0, -2.0, 3.0]) * (r + 1)
        work = dist.all_reduce(t, op=getattr(dist.ReduceOp, name), async_op=True)
        out[f"{name}_pending_type"] = type(work).__name__
        assert work.wait() is True and work.is_completed()
        out[name] = t.tolist()
    t = rg.tensor([3, 5]) * (r + 1)
    dist.all_reduce(t, op=dist.ReduceOp.BOR)
    out["bor"] = t.tolist()
    h = rg.tensor([0.5, 1.5], dtype=rg.float16) * (r + 1)
    dist.all_reduce(h)
    out["half"] = [h.tolist(), str(h.dtype)]
    base = rg.zeros(6)
    view = base[::2]
    v0 = base._version
    dist.all_reduce(view.add_(r + 1))
    out["view_base"] = base.tolist()
    out["version_moved"] = base._version > v0
    b = rg.full((2, 2), float(r))
    dist.broadcast(b, n - 1)
    out["broadcast"] = b.tolist()
    lst = [rg.zeros(3, dtype=rg.int64) for _ in range(n)]
    dist.all_gather(lst, rg.arange(3) + 10 * r)
    out["all_gather"] = [x.tolist() for x in lst]
    o = rg.zeros(2)
    dist.reduce_scatter(o, [rg.full((2,), float(10 * r + i)) for i in range(n)])
    out["reduce_scatter"] = o.tolist()
    o = rg.zeros(2)
    work = dist.reduce_scatter(o, [rg.full((2,), float(10 * r + i)) for i in range(n)],
                               op=dist.ReduceOp.AVG, async_op=True)
    work.wait()
    out["reduce_scatter_avg"] = o.tolist()
    errors = {}
    for key, fn in {
        "avg_int": lambda: dist.all_reduce(rg.tensor([1]), op=dist.ReduceOp.AVG),
        "bad_src": lambda: dist.broadcast(rg.zeros(1), n),
        "short_list": lambda: dist.all_gather([rg.zeros(1)], rg.zeros(1)),
        "bad_op": lambda: dist.all_reduce(rg.zeros(1), op="sum"),
        "not_tensor": lambda: dist.all_reduce(np.zeros(1)),
    }.items():
        try:
            fn()
            errors[key] = None
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            errors[key] = f"{type(e).__name__}: {e}"
    out["errors"] = errors
    if "array_api_strict" in rg.available_backends():  # a backend staged through host memory
        a = rg.tensor([1.0, 2.0], device="array_api_strict") * (r + 1)
        dist.all_reduce(a)
        lst = [rg.zeros(2, device="array_api_strict") for _ in range(n)]
        dist.all_gather(lst, a * 0 + r)
        out["other_backend"] = [a.tolist(), str(a.device), [x.tolist() for x in lst]]
    from retrograd.utils.data import DistributedSampler

    out["sampler"] = list(DistributedSampler(range(10), shuffle=False))
    out["sampler_shuffled"] = list(DistributedSampler(range(10), seed=3))
    dist.barrier()
    work = dist.barrier(async_op=True)
    work.wait()
    report(world=n, **out)


# -- DDP against one process --------------------------------------------------------------
STEPS = 20
BATCH = 24


def model(unused: bool = False) -> rg.nn.Module:
    rg.manual_seed(0)

    class Net(rg.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = rg.nn.Linear(6, 32)
            self.fc2 = rg.nn.Linear(32, 32)
            self.head = rg.nn.Linear(32, 3)
            self.spare = rg.nn.Linear(32, 3) if unused else None

        def forward(self, x: rg.Tensor) -> rg.Tensor:
            return self.head(rg.tanh(self.fc2(rg.tanh(self.fc1(x)))))

    return Net().double()


def data() -> tuple[rg.Tensor, rg.Tensor]:
    g = rg.Generator().manual_seed(7)
    x = rg.randn(STEPS, BATCH, 6, generator=g, dtype=rg.float64)
    y = rg.randn(STEPS, BATCH, 3, generator=g, dtype=rg.float64)
    return x, y


def train(net: rg.nn.Module, forward: rg.nn.Module, shard: slice, accumulate: int,
          no_sync: bool) -> None:
    """SGD with momentum; each step's batch in ``accumulate`` micro-batches (gradient
    accumulation: the loss of each scaled so that the sum is the batch mean)."""
    x, y = data()
    opt = rg.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
    for s in range(STEPS):
        opt.zero_grad()
        xs, ys = x[s][shard], y[s][shard]
        chunks = xs.shape[0] // accumulate
        for k in range(accumulate):
            part = slice(k * chunks, (k + 1) * chunks)
            last = k == accumulate - 1
            ctx = forward.no_sync() if (no_sync and not last) else contextlib.nullcontext()
            with ctx:
                loss = ((forward(xs[part]) - ys[part]) ** 2).mean() / accumulate
                loss.backward()
        opt.step()


def ddp_equal(cap_mb: str, mode: str) -> None:
    r, n = dist.get_rank(), dist.get_world_size()
    unused = mode == "unused"
    net = model(unused)
    share = BATCH // n
    accumulate = 3 if mode == "no_sync" else 1
    # every rank starts from rank-dependent weights: the construction broadcast must fix that
    with rg.no_grad():
        for p in net.parameters():
            p.add_(0.01 * r)
    ddp = DDP(net, bucket_cap_mb=float(cap_mb), find_unused_parameters=unused)
    ref = model(unused)
    if mode == "user_hook":  # registered after DDP's: the reducer must see its result
        for m in (net, ref):
            m.fc1.weight.register_hook(lambda g: g * 2)  # type: ignore[union-attr]
    train(net, ddp, slice(r * share, (r + 1) * share), accumulate, mode == "no_sync")
    train(ref, ref, slice(0, BATCH), accumulate, False)
    rel = max_rel(net, ref)
    spare_grad = None if not unused else net.spare.weight.grad  # type: ignore[union-attr]
    report(world=n, rel=rel, buckets=len(ddp.reducer.buckets), reductions=ddp.reducer.reductions,
           spare_grad_none=spare_grad is None, mode=mode)


def ddp_partly_used(mode: str = "plain") -> None:
    """A layer that only rank 0 uses (find_unused_parameters=True): on the other ranks it
    counts as zero, so its .grad there is rank 0's gradient / N -- what one process computes
    from the sum of the shards' losses / N. ``mode="no_sync"``: two micro-batches a step, the
    first inside ``no_sync``, and rank 0 uses the layer in the first only -- its accumulated
    .grad must still be part of the average though the layer is outside the last graph."""
    r, n = dist.get_rank(), dist.get_world_size()
    share = BATCH // n
    micro = 2 if mode == "no_sync" else 1

    def forward(net: rg.nn.Module, x: rg.Tensor, extra: bool) -> rg.Tensor:
        h = rg.tanh(net.fc2(rg.tanh(net.fc1(x))))  # type: ignore[operator]
        out = net.head(h)  # type: ignore[operator]
        return out + net.spare(h) if extra else out  # type: ignore[operator]

    class Wrapped(rg.nn.Module):
        def __init__(self, net: rg.nn.Module) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: rg.Tensor, extra: bool) -> rg.Tensor:
            return forward(self.net, x, extra)

    def loss(net: rg.nn.Module, s: int, q: int, k: int, call: Any) -> rg.Tensor:
        rows = slice(q * share + k * share // micro, q * share + (k + 1) * share // micro)
        return ((call(x[s][rows], q == 0 and k == 0) - y[s][rows]) ** 2).mean() / micro

    net, ref = model(unused=True), model(unused=True)
    ddp = DDP(Wrapped(net), bucket_cap_mb=0.0001, find_unused_parameters=True)
    x, y = data()
    opt = rg.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    opt_ref = rg.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for s in range(STEPS):
        opt.zero_grad()
        for k in range(micro):
            with ddp.no_sync() if k < micro - 1 else contextlib.nullcontext():
                loss(net, s, r, k, ddp).backward()
        opt.step()
        opt_ref.zero_grad()
        total = sum((loss(ref, s, q, k, lambda xs, e: forward(ref, xs, e))
                     for q in range(n) for k in range(micro)), rg.tensor(0.0, dtype=rg.float64))
        (total / n).backward()
        opt_ref.step()
    rel = max_rel(net, ref)
    report(rel=rel, spare_grad=net.spare.weight.grad is not None)  # type: ignore[union-attr]


def ddp_hooks_during_walk() -> None:
    """The first bucket's all-reduce starts before the walk ends: when the hook of the first
    parameter (the last layer's) fires, no ``.grad`` has been committed yet."""
    net = model()
    ddp = DDP(net, bucket_cap_mb=0.0001)
    seen: list[tuple[str, bool]] = []
    orig = ddp.reducer._launch_ready

    def spy() -> None:
        before = ddp.reducer._next
        orig()
        if ddp.reducer._next > before:
            seen.append(("launch", all(p.grad is None for p in net.parameters())))

    ddp.reducer._launch_ready = spy  # type: ignore[method-assign]
    x, y = data()
    ((ddp(x[0]) - y[0]) ** 2).mean().backward()
    report(launches=len(seen), before_commit=[b for _, b in seen],
           buckets=len(ddp.reducer.buckets))


def ddp_unfinished() -> None:
    """A parameter left out of the graph without find_unused_parameters: the next forward
    raises torch's error naming it."""
    net = model(unused=True)
    ddp = DDP(net)
    x, y = data()
    ((ddp(x[0]) - y[0]) ** 2).mean().backward()
    try:
        ddp(x[1])
        report(error=None)
    except RuntimeError as e:
        report(error=str(e))


def ddp_buffers() -> None:
    """BatchNorm running statistics: each forward starts from rank 0's."""
    r = dist.get_rank()
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(4, 5), rg.nn.BatchNorm1d(5)).double()
    ddp = DDP(net, broadcast_buffers=True)
    g = rg.Generator().manual_seed(100 + r)
    for _ in range(3):
        ddp(rg.randn(8, 4, generator=g, dtype=rg.float64)).sum().backward()
    before = net[1].running_mean.tolist()
    net.eval()
    with rg.no_grad():
        ddp(rg.randn(8, 4, generator=g, dtype=rg.float64))
    report(before=before, after=net[1].running_mean.tolist(),
           var=net[1].running_var.tolist(), tracked=int(net[1].num_batches_tracked.item()))


def shape_mismatch() -> None:
    r = dist.get_rank()
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(4, 5 + (r == 1)))
    try:
        DDP(net)
        report(error=None)
    except RuntimeError as e:
        report(error=f"{type(e).__name__}: {e}")


def rank_raises() -> None:
    """Rank 1 raises in its third step; the others are inside the step's all-reduce."""
    r = dist.get_rank()
    net = model()
    ddp = DDP(net)
    x, y = data()
    for s in range(STEPS):
        if r == 1 and s == 2:
            raise ValueError("injected failure in step 2")
        ((ddp(x[s]) - y[s]) ** 2).mean().backward()
    report(finished=True)


def rank_stalls() -> None:
    """Rank 1 stops answering (a long sleep) in step 2; rank 0 waits at most the group's
    timeout, then fails with DistBackendError, and the job is aborted."""
    r = dist.get_rank()
    net = model()
    ddp = DDP(net)
    x, y = data()
    for s in range(STEPS):
        if r == 1 and s == 2:
            time.sleep(120)
        ((ddp(x[s]) - y[s]) ** 2).mean().backward()
    report(finished=True)


def main() -> None:
    import datetime

    timeout = float(dict(a.split("=") for a in sys.argv[2:] if "=" in a).get("timeout", 60))
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=timeout))
    args = [a for a in sys.argv[2:] if "=" not in a]
    globals()[sys.argv[1]](*args)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
