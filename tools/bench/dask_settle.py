"""What settling a backward once costs and saves on the Dask backend (docs/backends.md).

    python tools/bench/dask_settle.py            # 400k x 64 float64 batch, 16 chunks
    python tools/bench/dask_settle.py --quick    # it runs (tiny sizes)

One training step of an MLP (64-256-1, tanh, MSE) on a batch chunked along its batch axis,
then the loss read and every gradient read, as a training loop does. Two ways, alternating
for ``--reps`` rounds in one process (Dask's threaded scheduler, one BLAS thread):

* ``settled``: the backend's ``settle`` computes the loss and the gradients together at the
  end of ``backward()`` (``dask.persist``), so the forward runs once;
* ``per read``: ``settle`` replaced by the identity, so that each read computes its own graph
  (the loss, then each gradient, each with the whole forward).

The input chunks are counted as Dask computes them (a counting identity on each chunk), so
the table gives how often the forward ran as well as the time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
from retrograd_dask import backend, from_dask  # noqa: E402

import retrograd as rg  # noqa: E402


class Counted:
    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, block: np.ndarray) -> np.ndarray:
        if block.size:
            with self.lock:
                self.calls += 1
        return block


def step(n: int, chunks: int, settle: bool) -> tuple[float, int]:
    counter = Counted()
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((n, 64))
    x = from_dask(da.from_array(xs, chunks=(n // chunks, 64)).map_blocks(counter,
                                                                         dtype=np.float64))
    y = from_dask(da.from_array(np.sin(xs[:, :1]), chunks=(n // chunks, 1)))
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(64, 256), rg.nn.Tanh(), rg.nn.Linear(256, 1)).double()
    net.to("dask")
    original = backend.ops.settle
    if not settle:
        backend.ops.settle = lambda arrays: arrays
    try:
        t0 = time.perf_counter()
        loss = rg.nn.functional.mse_loss(net(x), y)
        loss.backward()
        loss.item()
        for p in net.parameters():
            p.grad.cpu()
        elapsed = time.perf_counter() - t0
    finally:
        backend.ops.settle = original
    return elapsed, counter.calls // chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400_000)
    ap.add_argument("--chunks", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.chunks, args.reps = 4_000, 4, 1
    dask.config.set(scheduler="threads")
    times: dict[str, list[float]] = {"settled": [], "per read": []}
    runs: dict[str, int] = {}
    for _ in range(args.reps):
        for name, settle in (("settled", True), ("per read", False)):
            t, forwards = step(args.rows, args.chunks, settle)
            times[name].append(t)
            runs[name] = forwards
    print(f"batch {args.rows} x 64 float64 in {args.chunks} chunks, MLP 64-256-1, "
          f"{args.reps} alternating rounds (medians)")
    print("| mode | forward computed | s per step + reads | / settled |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(times["settled"])
    for name in ("settled", "per read"):
        med = statistics.median(times[name])
        print(f"| {name} | {runs[name]}x | {med:.3f} | {med / base:.2f} |")


if __name__ == "__main__":
    main()
