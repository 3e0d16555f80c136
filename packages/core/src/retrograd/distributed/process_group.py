"""The default process group: one MPI communicator (``MPI.COMM_WORLD`` duplicated), its rank,
size and timeout, as ``torch.distributed``'s ``init_process_group`` makes it.

Why MPI: it is a proven communication engine that every cluster already has, with launchers
(``mpiexec``, ``srun``) that start the processes and tell each its rank, so there is no
rendezvous (store, address, port) to configure: the launcher *is* the rendezvous.

A failing rank must not leave the others waiting forever. Two guards:

* ``init_process_group`` wraps ``sys.excepthook``: an exception that ends a rank's script
  prints its traceback under a line naming the rank, then calls ``MPI_Abort``, so the
  launcher stops every process of the job at once (the others print nothing more: they were
  waiting in a collective).
* every wait (a collective, a work handle, DDP's buckets) polls its MPI request against the
  group's ``timeout`` and raises :class:`DistBackendError` naming the operation, the rank and
  the time waited -- a rank that stalls (an endless loop, a deadlock, a lost node) makes the
  others fail with that error instead of hanging.
"""

from __future__ import annotations

import datetime
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from .errors import DistBackendError

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available",
           "is_mpi_available", "get_rank", "get_world_size", "get_backend", "barrier",
           "default_group", "ProcessGroup"]

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's default for non-NCCL backends
_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


@dataclass
class ProcessGroup:
    """A communicator and what the collectives need to know about it."""

    comm: Any  # an mpi4py ``Intracomm``
    rank: int
    size: int
    timeout_s: float
    cuda_aware: bool  # the MPI library takes device (CUDA) buffers itself

    def backend(self) -> str:
        """The backend's name, ``"mpi"``."""
        return "mpi"


_group: list[ProcessGroup | None] = [None]
_saved_excepthook: list[Any] = [None]


def is_available() -> bool:
    """Whether ``retrograd.distributed`` can be used: always (the package is pure Python)."""
    return True


def is_mpi_available() -> bool:
    """Whether mpi4py (and an MPI library under it) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` has been called (and not undone)."""
    return _group[0] is not None


def default_group() -> ProcessGroup:
    """The default process group; ValueError (torch's message) when there is none."""
    g = _group[0]
    if g is None:
        raise ValueError(_NOT_INITIALIZED)
    return g


def init_process_group(backend: str | None = "mpi", init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, group_name: str = "") -> None:
    """Join the default process group. Only the ``"mpi"`` backend exists: the processes, their
    number and their ranks come from the MPI launcher (``mpiexec -n 4 python train.py``,
    ``srun``); ``world_size`` and ``rank``, when given, must agree with it. A script started
    without a launcher is a group of one. ``timeout`` bounds every wait (default 30 minutes;
    ``RETROGRAD_DIST_TIMEOUT`` in seconds overrides it when the argument is not given)."""
    if _group[0] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is None:
        backend = "mpi"
    if not isinstance(backend, str) or backend.lower() != "mpi":
        raise ValueError(f"retrograd.distributed supports only the 'mpi' backend, got "
                         f"{backend!r} (gloo and nccl are PyTorch's own; see docs/distributed.md)")
    if init_method not in (None, "env://"):
        raise ValueError(f"init_method {init_method!r}: with MPI the launcher (mpiexec, srun) "
                         "starts the processes and gives their ranks; leave init_method unset")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    if not is_mpi_available():
        raise RuntimeError("retrograd.distributed needs mpi4py and an MPI library: "
                           "pip install 'retrograd[mpi]' (mpi4py and the mpich wheel)")
    from mpi4py import MPI

    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)  # pragma: no cover - mpi4py initialises on import
    world = MPI.COMM_WORLD
    if world_size not in (-1, world.Get_size()):
        raise ValueError(f"world_size={world_size} but the MPI launcher started "
                         f"{world.Get_size()} processes")
    if rank not in (-1, world.Get_rank()):
        raise ValueError(f"rank={rank} but MPI gave this process rank {world.Get_rank()}")
    if timeout is None:
        env = os.environ.get("RETROGRAD_DIST_TIMEOUT")
        seconds = float(env) if env else _DEFAULT_TIMEOUT.total_seconds()
    else:
        seconds = timeout.total_seconds()
    if seconds <= 0:
        raise ValueError(f"timeout must be positive, got {seconds} s")
    comm = world.Dup()  # our own matching space: the user's MPI traffic cannot interleave
    _group[0] = ProcessGroup(comm, comm.Get_rank(), comm.Get_size(), seconds,
                             _query_cuda_aware(MPI))
    _install_abort_on_error()


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default process group (its communicator is freed); a later
    ``init_process_group`` starts a new one. AssertionError, as torch, when there is none."""
    g = _group[0]
    assert g is not None, "Process group cannot be None"
    if group is not None and group is not g:
        raise ValueError("only the default process group exists")
    _group[0] = None
    if _saved_excepthook[0] is not None:
        sys.excepthook = _saved_excepthook[0]
        _saved_excepthook[0] = None
    g.comm.Free()


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in the group, 0 to ``get_world_size() - 1``."""
    return (group or default_group()).rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in the group."""
    return (group or default_group()).size


def get_backend(group: ProcessGroup | None = None) -> str:
    """The group's backend name: ``"mpi"``."""
    return (group or default_group()).backend()


def barrier(group: ProcessGroup | None = None, async_op: bool = False) -> Any:
    """Wait until every rank has reached this call (bounded by the group's timeout)."""
    from .work import Work

    g = group or default_group()
    work = Work(g, [g.comm.Ibarrier()], "barrier")
    if async_op:
        return work
    work.wait()
    return None


def wait_requests(g: ProcessGroup, requests: list[Any], what: str) -> None:
    """Wait for ``requests`` (mpi4py requests) to complete, polling, at most the group's
    timeout; past it raise :class:`DistBackendError` naming ``what`` and this rank."""
    from mpi4py import MPI

    if MPI.Request.Testall(requests):
        return
    start = time.monotonic()
    deadline = start + g.timeout_s
    spins = 0
    while not MPI.Request.Testall(requests):
        spins += 1
        if spins >= 64:  # a clock read costs more than a Test: look at it now and then
            spins = 0
            now = time.monotonic()
            if now > deadline:
                raise DistBackendError(
                    f"rank {g.rank} of {g.size}: {what} did not complete within "
                    f"{g.timeout_s:g} s (the group's timeout). Another rank has failed, "
                    f"stalled, or is not running the same collectives in the same order.")
            if now - start > 1e-3:
                time.sleep(2e-5)  # a long wait: leave the core to a rank that computes


def _query_cuda_aware(MPI: Any) -> bool:
    """Whether the MPI library takes CUDA device buffers: MPICH's and Open MPI's
    ``MPIX_Query_cuda_support``, looked up in the library mpi4py loaded. False when the
    library has no such function. ``RETROGRAD_MPI_CUDA_AWARE=0/1`` overrides the answer."""
    env = os.environ.get("RETROGRAD_MPI_CUDA_AWARE")
    if env is not None:
        return env.strip() not in ("", "0", "false", "no")
    try:
        import ctypes

        query = ctypes.CDLL(MPI.__file__).MPIX_Query_cuda_support
    except (OSError, AttributeError):
        return False
    query.restype = ctypes.c_int
    return bool(query())


def _install_abort_on_error() -> None:
    """``sys.excepthook`` for a rank whose script raises: report the rank, then abort the job
    so that no other rank waits for it."""
    prev = sys.excepthook
    _saved_excepthook[0] = prev

    def abort_job(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        g = _group[0]
        if g is None or g.size == 1:
            prev(kind, value, tb)
            return
        sys.stderr.write(f"retrograd.distributed: rank {g.rank} of {g.size} failed; aborting "
                         "every rank of the job (MPI_Abort)\n")
        sys.stderr.write("".join(traceback.format_exception(kind, value, tb)))
        sys.stderr.flush()
        g.comm.Abort(1)

    sys.excepthook = abort_job
