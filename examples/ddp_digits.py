"""Train the digits MLP of ``train_digits.py`` data-parallel, with DistributedDataParallel over MPI.

Every rank holds the same model; each global batch is split between the ranks, each rank
computes the gradients of its share, and DDP averages them during the backward -- so every
rank takes the optimizer step one process would take on the whole batch. Same model, Adam
and hyper-parameters as ``train_digits.py``; with the same global batch and steps, any number
of ranks ends at the accuracy of one process (equal up to rounding in float64).

One machine:

    mpiexec -n 2 python examples/ddp_digits.py
    mpiexec -n 2 python examples/ddp_digits.py --steps 200 --dtype float64
    python examples/ddp_digits.py            # no launcher: a group of one (MPI singleton)

A cluster (the launcher starts the ranks on the nodes; nothing else to configure):

    mpiexec -f hostfile -n 8 python examples/ddp_digits.py
    srun -n 8 python examples/ddp_digits.py

Set ``OPENBLAS_NUM_THREADS=1`` when the ranks share a few cores. Needs ``mpi4py`` and an MPI
library (``pip install 'retrograd[mpi]'``) and ``scikit-learn`` (the data).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import retrograd as rg
import retrograd.distributed as dist
from retrograd.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the examples beside it
from train_digits import build_model, load_digits_split
from training_support import accuracy, progress_bar

DTYPES = {"float32": rg.float32, "float64": rg.float64}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600, help="optimizer steps (default 600)")
    parser.add_argument("--batch", type=int, default=64,
                        help="global batch, split evenly between the ranks (default 64)")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate")
    parser.add_argument("--hidden", type=int, default=128, help="width of the hidden layers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def shard(batch: np.ndarray, rank: int, world: int) -> np.ndarray:
    """Rank ``rank``'s contiguous share of one global batch (the batch divides evenly)."""
    share = len(batch) // world
    return batch[rank * share:(rank + 1) * share]


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Train on this rank's shards; rank 0 evaluates and prints. Returns what was printed."""
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch % world:
        raise SystemExit(f"--batch {args.batch} does not split evenly between {world} ranks")
    dtype = DTYPES[args.dtype]
    rg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)  # the same on every rank: the same global batches
    x_train, x_test, y_train, y_test = load_digits_split(args.seed)

    net = build_model(args.hidden).to(dtype)
    model = rg.nn.parallel.DistributedDataParallel(net)  # rank 0's weights, on every rank
    optimizer = rg.optim.Adam(net.parameters(), lr=args.lr)
    loss_value = float("nan")
    start = time.perf_counter()
    order, cursor = rng.permutation(len(x_train)), 0
    with progress_bar(args.steps, rank == 0 and not args.no_progress) as update:
        for _ in range(args.steps):
            if cursor + args.batch > len(order):  # a new epoch: reshuffle
                order, cursor = rng.permutation(len(x_train)), 0
            mine = shard(order[cursor:cursor + args.batch], rank, world)
            cursor += args.batch
            xb = rg.tensor(x_train[mine], dtype=dtype)
            yb = rg.tensor(y_train[mine])
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()  # DDP averages the gradients across the ranks here
            optimizer.step()
            global_loss = loss.detach().clone()  # the whole batch's loss: the shards' mean
            dist.all_reduce(global_loss, op=dist.ReduceOp.AVG)
            loss_value = global_loss.item()
            update(loss_value)
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {"ranks": world, "final_loss": loss_value, "seconds": seconds}
    if rank == 0:  # the plain module: evaluation needs no collective
        test_accuracy = accuracy(net, rg.tensor(x_test, dtype=dtype), y_test)
        train_accuracy = accuracy(net, rg.tensor(x_train, dtype=dtype), y_train)
        correct = round(test_accuracy * len(y_test))
        print(f"{world} rank(s), {args.steps} steps of {args.batch} ({args.dtype}) in "
              f"{seconds:.1f} s: final loss {loss_value:.12g}, train accuracy "
              f"{train_accuracy:.1%}, test accuracy {test_accuracy:.2%} "
              f"({correct}/{len(y_test)})", flush=True)
        result.update(test_accuracy=test_accuracy, train_accuracy=train_accuracy)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    dist.init_process_group("mpi")
    try:
        train(args)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
