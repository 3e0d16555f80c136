"""Data-parallel training over MPI, with ``torch.distributed``'s names.

    mpiexec -n 2 python train.py

    import retrograd.distributed as dist
    dist.init_process_group("mpi")
    model = rg.nn.parallel.DistributedDataParallel(model)

The launcher starts the processes and gives their ranks; the collectives are MPI's
non-blocking ones (through mpi4py), each waited for with a timeout. Install with
``pip install 'retrograd[mpi]'`` (mpi4py and the mpich wheel, which brings ``mpiexec``).
docs/distributed.md has the design, launching on a cluster, and the figures.
"""

from __future__ import annotations

from .collectives import ReduceOp, all_gather, all_reduce, broadcast, reduce_scatter
from .errors import DistBackendError, DistError
from .process_group import (
    ProcessGroup,
    barrier,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
)
from .work import Work

__all__ = [
    "DistBackendError",
    "DistError",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "reduce_scatter",
]
