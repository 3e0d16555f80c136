"""The collectives of ``torch.distributed`` on retrograd tensors, each one non-blocking MPI call:
``all_reduce``, ``broadcast``, ``all_gather``, ``reduce_scatter``. With ``async_op=True`` they
return a :class:`~retrograd.distributed.work.Work`; otherwise they wait (bounded by the group's
timeout) and return None. They act in place on the tensors given, outside autograd, as torch's
do."""

from __future__ import annotations

import enum
from typing import Any

from ..tensor import Tensor
from .process_group import ProcessGroup, default_group
from .staging import buffer_of, write_back
from .work import Work

__all__ = ["ReduceOp", "all_reduce", "broadcast", "all_gather", "reduce_scatter"]


class ReduceOp(enum.Enum):
    """How ``all_reduce`` / ``reduce_scatter`` combine the ranks' values."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


def _mpi_op(op: Any, dtype: Any) -> Any:
    from mpi4py import MPI

    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a retrograd.distributed.ReduceOp, got {op!r}")
    if op is ReduceOp.AVG and not dtype.is_floating_point:
        raise ValueError(f"ReduceOp.AVG needs a floating point tensor, got {dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.is_floating_point:
        raise ValueError(f"ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _finish(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _check_tensor(t: Any, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a retrograd Tensor, got {type(t).__name__}")
    return t


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Combine ``tensor`` across every rank with ``op``; each rank's ``tensor`` ends with the
    result (AVG: the sum divided by the number of ranks)."""
    g = group or default_group()
    t = _check_tensor(tensor, "all_reduce")
    mpi_op = _mpi_op(op, t.dtype)
    from mpi4py import MPI

    buf, shared = buffer_of(t, g, writable=True)
    req = g.comm.Iallreduce(MPI.IN_PLACE, buf, op=mpi_op)

    def finish() -> None:
        out = buf
        if op is ReduceOp.AVG:
            out /= g.size  # floating point only (checked above)
        if not shared:
            write_back(t, out)

    return _finish(Work(g, [req], f"all_reduce({op.name}) of a tensor of shape "
                        f"{tuple(t.shape)}", finish, buf), async_op)


def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` gets rank ``src``'s values."""
    g = group or default_group()
    t = _check_tensor(tensor, "broadcast")
    _check_rank(src, g, "src")
    buf, shared = buffer_of(t, g, writable=True)
    req = g.comm.Ibcast(buf, root=src)

    def finish() -> None:
        if not shared:
            write_back(t, buf)

    return _finish(Work(g, [req], f"broadcast from rank {src} of a tensor of shape "
                        f"{tuple(t.shape)}", finish, buf), async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[r]`` gets rank ``r``'s ``tensor``, on every rank. ``tensor_list`` holds
    one tensor per rank, each of ``tensor``'s shape and dtype."""
    g = group or default_group()
    t = _check_tensor(tensor, "all_gather")
    _check_list(tensor_list, t, g, "all_gather", "tensor_list")
    send, _ = buffer_of(t, g, writable=False)
    recv = _empty_like_many(send, g.size)
    req = g.comm.Iallgather(send, recv)

    def finish() -> None:
        for r, out in enumerate(tensor_list):
            write_back(out, recv[r])

    return _finish(Work(g, [req], f"all_gather of tensors of shape {tuple(t.shape)}", finish,
                        (send, recv)), async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: ReduceOp = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Rank ``r``'s ``output`` gets ``input_list[r]`` combined with ``op`` across every rank.
    ``input_list`` holds one tensor per rank, each of ``output``'s shape and dtype."""
    g = group or default_group()
    out = _check_tensor(output, "reduce_scatter")
    _check_list(input_list, out, g, "reduce_scatter", "input_list")
    mpi_op = _mpi_op(op, out.dtype)
    parts = [buffer_of(t, g, writable=False)[0] for t in input_list]
    send = _namespace_of(parts[0]).stack(parts)  # host, or device buffers (CUDA-aware MPI)
    recv = _empty_like_many(parts[0], 1)[0]
    req = g.comm.Ireduce_scatter_block(send, recv, op=mpi_op)

    def finish() -> None:
        res = recv
        if op is ReduceOp.AVG:
            res /= g.size
        write_back(out, res)

    return _finish(Work(g, [req], f"reduce_scatter({op.name}) into a tensor of shape "
                        f"{tuple(out.shape)}", finish, (send, recv)), async_op)


def _namespace_of(arr: Any) -> Any:
    """The array library of ``arr`` (NumPy, or CuPy for a device buffer)."""
    import importlib

    return importlib.import_module(type(arr).__module__.split(".")[0])


def _empty_like_many(like: Any, n: int) -> Any:
    return _namespace_of(like).empty((n, *like.shape), dtype=like.dtype)


def _check_rank(r: Any, g: ProcessGroup, name: str) -> None:
    if not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < g.size:
        raise ValueError(f"{name}={r!r} is not a rank of this group (0 to {g.size - 1})")


def _check_list(tensors: Any, like: Tensor, g: ProcessGroup, fn: str, name: str) -> None:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}: {name} must be a list of tensors, got {type(tensors).__name__}")
    if len(tensors) != g.size:
        raise ValueError(f"{fn}: {name} has {len(tensors)} tensors; it needs one per rank "
                         f"({g.size})")
    for i, t in enumerate(tensors):
        _check_tensor(t, f"{fn}: {name}[{i}]")
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ValueError(f"{fn}: {name}[{i}] is {t.dtype} of shape {tuple(t.shape)}; every "
                             f"tensor must be {like.dtype} of shape {tuple(like.shape)}")


