"""DDP on the W3 MLP (784-1024-1024-10, ReLU, mean softmax cross-entropy, float32): what two
ranks on this machine gain over one process, and how much of the gradient all-reduce
DistributedDataParallel hides behind the backward.

    python tools/bench/ddp_w3.py                 full run (~2 min on 2 cores)
    python tools/bench/ddp_w3.py --quick         tiny sizes: it runs, DDP gradients == 1 process
    python tools/bench/ddp_w3.py --batches 512 --caps 1,25 --rounds 3
    python tools/bench/ddp_w3.py --profile       cProfile of a DDP step on rank 0 (stderr)

One *step* is zero_grad, forward, backward and an SGD step (lr 0.01, momentum 0.9), every
process with one BLAS thread. For each global batch B, per round:

* ``1 process``: ``mpiexec -n 1`` of this file, the plain module on the whole batch;
* ``mpiexec -n 2`` of this file, every 2-rank subject alternating step by step in one job
  (order rotating each step): ``DDP cap X`` (DistributedDataParallel, ``bucket_cap_mb=X``, B/2
  rows per rank) and ``big allreduce`` (plain module, backward, then every gradient packed
  into one float32 buffer, one blocking ``comm.Allreduce``, divided and written back).

Each timed step starts after a barrier; its time is the slowest rank's. A job reports the
median over its steps; the rounds alternate the two jobs' order, and the table gives medians
over rounds (speed-ups: the median over rounds of that round's ratio). ``exposed ms`` is
``ddp.reducer.last_wait_s`` (the end of the backward waiting for its buckets); ``allreduce
alone ms`` is one all-reduce of every gradient with both ranks already waiting (no skew, no
compute beside it) -- the communication cost itself. ``overlap`` is ``1 - exposed / the big
allreduce's blocking Allreduce`` in the same run: the share of the wait a loop that hides
nothing has, which DDP's buckets hide (both include waiting for the slower rank).
Nothing is asserted about times; ``--quick`` asserts only the gradients (max relative
difference < 1e-5 per parameter, float32) and that every job ran.

Results: out/bench/ddp.json and out/bench/ddp.md (also printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from threads import set_threads  # noqa: E402

set_threads(1)  # before NumPy: one BLAS thread in this process and every rank it launches

import machine  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DIMS = [784, 1024, 1024, 10]
QUICK_DIMS = [32, 48, 48, 10]
MARKER = "DDP-RESULT "
LR, MOMENTUM = 0.01, 0.9
GRAD_RTOL = 1e-5


# -- the ranks' side --------------------------------------------------------------------------
def build(dims: list[int], batch: int) -> tuple[Any, Any, Any]:
    """The W3 module (weights drawn once with NumPy, as the suite's W3), the batch, targets."""
    from mlp import init

    import retrograd as rg

    x, target, weights, biases = init({"dims": dims, "batch": batch, "dtype": "f32"})
    layers: list[Any] = []
    for i, (w, b) in enumerate(zip(weights, biases)):
        lin = rg.nn.Linear(w.shape[1], w.shape[0])
        with rg.no_grad():
            lin.weight.copy_(rg.tensor(w))
            lin.bias.copy_(rg.tensor(b))
        layers.append(lin)
        if i < len(weights) - 1:
            layers.append(rg.nn.ReLU())
    return rg.nn.Sequential(*layers), rg.tensor(x), rg.tensor(target)


class Trainer:
    """One subject: a module, its optimizer, and how its gradients are combined."""

    def __init__(self, dims: list[int], batch: int, rows: slice, mode: str, cap_mb: float = 0):
        import retrograd as rg

        self.net, x, t = build(dims, batch)
        self.x, self.t = x[rows], t[rows]
        self.mode = mode
        self.forward = self.net
        if mode == "ddp":
            self.forward = rg.nn.parallel.DistributedDataParallel(self.net, bucket_cap_mb=cap_mb)
        self.opt = rg.optim.SGD(self.net.parameters(), lr=LR, momentum=MOMENTUM)
        self.params = list(self.net.parameters())
        self.flat = np.zeros(sum(p.numel() for p in self.params), dtype=np.float32)

    def step(self) -> dict[str, float]:
        """One training step; the communication figures it measured (ms)."""
        from retrograd.nn import functional as F

        t0 = time.perf_counter()
        self.opt.zero_grad()
        loss = F.cross_entropy(self.forward(self.x), self.t)
        t1 = time.perf_counter()
        loss.backward()
        out: dict[str, float] = {}
        if self.mode == "ddp":
            out["exposed_ms"] = self.forward.reducer.last_wait_s * 1e3
        elif self.mode == "big":
            out.update(self.big_allreduce())
        t2 = time.perf_counter()
        self.opt.step()
        t3 = time.perf_counter()
        out.update(fwd_ms=(t1 - t0) * 1e3, bwd_ms=(t2 - t1) * 1e3, opt_ms=(t3 - t2) * 1e3)
        return out

    def big_allreduce(self) -> dict[str, float]:
        """Pack every ``.grad`` into one buffer, one blocking all-reduce, average, unpack."""
        from mpi4py import MPI

        t0 = time.perf_counter()
        off = 0
        grads = [p.grad.numpy().reshape(-1) for p in self.params]
        for g in grads:
            self.flat[off:off + g.size] = g
            off += g.size
        t1 = time.perf_counter()
        MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, self.flat, op=MPI.SUM)
        t2 = time.perf_counter()
        self.flat *= 1.0 / MPI.COMM_WORLD.Get_size()
        off = 0
        for g in grads:  # .numpy() shares the gradient's memory
            g[...] = self.flat[off:off + g.size]
            off += g.size
        t3 = time.perf_counter()
        return {"allreduce_ms": (t2 - t1) * 1e3, "pack_ms": (t1 - t0 + t3 - t2) * 1e3}

    def grads(self) -> list[np.ndarray]:
        return [p.grad.numpy().copy() for p in self.params]

    def allreduce_alone(self) -> dict[str, float]:
        """The full communication cost: the same all-reduce, both ranks already waiting."""
        from mpi4py import MPI

        MPI.COMM_WORLD.Barrier()
        t0 = time.perf_counter()
        MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, self.flat, op=MPI.SUM)
        return {"allreduce_alone_ms": (time.perf_counter() - t0) * 1e3}


def max_rel(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    """The largest, over parameters, of max |a - b| / max |b|."""
    return max(float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)) for x, y in zip(a, b))


def timed(fn: Callable[[], dict[str, float]]) -> Callable[[], dict[str, float]]:
    """``fn`` run after a barrier (and a garbage collection), its wall time added as step_ms."""
    import gc

    from mpi4py import MPI

    def run() -> dict[str, float]:
        gc.collect()
        MPI.COMM_WORLD.Barrier()
        t0 = time.perf_counter()
        extra = fn()
        return {"step_ms": (time.perf_counter() - t0) * 1e3, **extra}

    return run


def worker(args: argparse.Namespace) -> None:
    """One rank of ``mpiexec -n 1`` (plain module) or ``-n 2`` (the 2-rank subjects)."""
    import datetime

    from alternate import alternate
    from mpi4py import MPI

    import retrograd.distributed as dist

    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=args.timeout))
    rank, size = dist.get_rank(), dist.get_world_size()
    dims = QUICK_DIMS if args.quick else DIMS
    share = args.batch // size
    rows = slice(rank * share, (rank + 1) * share)
    if size == 1:
        subjects = {"1 process": Trainer(dims, args.batch, rows, "plain")}
    else:
        subjects = {f"DDP cap {c:g}": Trainer(dims, args.batch, rows, "ddp", c)
                    for c in args.caps}
        subjects["big allreduce"] = Trainer(dims, args.batch, rows, "big")
    reference = Trainer(dims, args.batch, slice(0, args.batch), "plain")
    worst = 0.0
    for _ in range(args.warmup):  # also the correctness check: every subject vs one process
        reference.step()
        want = reference.grads()
        for s in subjects.values():
            s.step()
            worst = max(worst, max_rel(s.grads(), want))
    if args.profile and size > 1:
        profile_ddp(subjects, rank)
    runs = {name: timed(s.step) for name, s in subjects.items()}
    if size > 1:
        big = subjects["big allreduce"]
        runs["allreduce alone"] = big.allreduce_alone
    results = alternate(runs, args.steps)
    per_rank: list[Any] = MPI.COMM_WORLD.gather(results, root=0) or []  # rank 0 only
    worst_all = MPI.COMM_WORLD.allreduce(worst, op=MPI.MAX)
    if rank == 0:
        out = {"ranks": size, "batch": args.batch, "grad_max_rel": worst_all, "subjects": {}}
        for name in runs:
            steps = [{k: max(r[name][i][k] for r in per_rank) for k in per_rank[0][name][i]}
                     for i in range(len(per_rank[0][name]))]
            out["subjects"][name] = {k: statistics.median(s[k] for s in steps)
                                     for k in steps[0]}
        print(MARKER + json.dumps(out), flush=True)
    dist.destroy_process_group()


def profile_ddp(subjects: dict[str, Trainer], rank: int) -> None:
    """cProfile of 10 steps of the first DDP subject; rank 0 prints the top of it."""
    import cProfile
    import pstats

    name = next(n for n in subjects if n.startswith("DDP"))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(10):
        subjects[name].step()
    prof.disable()
    if rank == 0:
        print(f"--- cProfile, 10 steps of {name}, rank 0 ---", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(18)


# -- the driver ---------------------------------------------------------------------------------
def mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("mpiexec not found: pip install 'retrograd[mpi]'")
    return found


def launch(ranks: int, batch: int, args: argparse.Namespace) -> dict:
    """One ``mpiexec -n ranks`` job of this file; its rank 0 result."""
    cmd = [mpiexec(), "-n", str(ranks), sys.executable, str(Path(__file__).resolve()),
           "--worker", "--batch", str(batch), "--steps", str(args.steps),
           "--warmup", str(args.warmup), "--caps", ",".join(f"{c:g}" for c in args.caps),
           "--timeout", str(args.timeout)]
    cmd += ["--quick"] * args.quick + ["--profile"] * args.profile
    env = dict(os.environ)
    set_threads(1, env)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=args.timeout + 30)
    except subprocess.TimeoutExpired as exc:
        raise SystemExit(f"{' '.join(cmd)}: timed out after {args.timeout + 30:.0f} s") from exc
    if args.profile:
        sys.stderr.write(proc.stderr)
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    raise SystemExit(f"{' '.join(cmd)} failed (exit status {proc.returncode}):\n"
                     f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def measure_batch(batch: int, args: argparse.Namespace, log: Callable[[str], None]) -> dict:
    """``args.rounds`` rounds of the 1-process and the 2-rank jobs, in alternating order."""
    rounds: list[dict[str, dict[str, float]]] = []
    worst = 0.0
    for r in range(args.rounds):
        jobs = [1, 2] if r % 2 == 0 else [2, 1]
        merged: dict[str, dict[str, float]] = {}
        for ranks in jobs:
            res = launch(ranks, batch, args)
            worst = max(worst, res["grad_max_rel"])
            merged.update(res["subjects"])
        rounds.append(merged)
        log(f"  B={batch} round {r + 1}/{args.rounds}: " + ", ".join(
            f"{n} {v['step_ms']:.1f}" for n, v in merged.items() if "step_ms" in v))
    return {"batch": batch, "rounds": rounds, "grad_max_rel": worst,
            "summary": summarise(rounds)}


def summarise(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per subject: the median over rounds of each figure, and the ratios of the issue."""
    def med(name: str, key: str) -> float:
        return statistics.median(r[name][key] for r in rounds)

    def med_ratio(top: Callable[[dict[str, float]], float], a: str,
                  bottom: Callable[[dict[str, float]], float], b: str) -> float:
        """The median over rounds of ``top(a's figures) / bottom(b's figures)``."""
        return statistics.median(top(r[a]) / bottom(r[b]) for r in rounds)

    def step(fig: dict[str, float]) -> float:
        return fig["step_ms"]

    full = med("allreduce alone", "allreduce_alone_ms")
    out: dict[str, dict[str, float]] = {"allreduce alone": {"allreduce_alone_ms": full}}
    for name in rounds[0]:
        if name == "allreduce alone":
            continue
        row = {k: med(name, k) for k in rounds[0][name]}
        row["no_sgd_ms"] = statistics.median(no_sgd(r[name]) for r in rounds)
        if name != "1 process":
            row["speedup"] = med_ratio(step, "1 process", step, name)
            row["efficiency"] = row["speedup"] / 2
            row["no_sgd_speedup"] = med_ratio(no_sgd, "1 process", no_sgd, name)
            row["vs_big"] = med_ratio(step, name, step, "big allreduce")
        if "exposed_ms" in row:  # against the same wait of the loop that hides nothing
            row["overlap"] = 1 - row["exposed_ms"] / med("big allreduce", "allreduce_ms")
        out[name] = row
    return out


def no_sgd(fig: dict[str, float]) -> float:
    """The step without its optimizer update: forward, backward and communication (ms)."""
    return fig["step_ms"] - fig["opt_ms"]


def markdown(result: dict) -> str:
    meta = result["meta"]
    lines = [f"# DDP on W3 ({'quick' if meta['quick'] else 'full'} run)", "",
             f"`{meta['command']}` -- {meta['machine']['cpu']}, {meta['machine']['cpus']} "
             f"CPUs, load {meta['load_before']} -> {meta['load_after']}, "
             f"{meta['wall_s']:.0f} s. Step = forward + backward + SGD step, float32, "
             f"1 BLAS thread per process; {meta['rounds']} rounds x {meta['steps']} steps, "
             "medians.", ""]
    for b in result["batches"]:
        s = b["summary"]
        ddp = {n: v for n, v in s.items() if n.startswith("DDP")}
        best = min(ddp, key=lambda n: ddp[n]["step_ms"])
        lines += [f"## global batch {b['batch']}", "",
                  "| subject | step ms | speed-up vs 1 process | efficiency | SGD ms "
                  "| step - SGD ms | its speed-up | exposed comm ms | overlap "
                  "| step / big-allreduce step |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, row in s.items():
            if name == "allreduce alone":
                continue

            def cell(key: str, fmt: str, row: dict = row) -> str:
                return format(row[key], fmt) if key in row else "-"

            exposed = cell("exposed_ms", ".2f") if "exposed_ms" in row else \
                cell("allreduce_ms", ".2f")
            lines.append(f"| {name} | {row['step_ms']:.1f} | {cell('speedup', '.2f')} | "
                         f"{cell('efficiency', '.0%')} | {row['opt_ms']:.1f} | "
                         f"{row['no_sgd_ms']:.1f} | {cell('no_sgd_speedup', '.2f')} | "
                         f"{exposed} | {cell('overlap', '.0%')} | {cell('vs_big', '.3f')} |")
        lines += ["", f"Full all-reduce of every gradient, alone: "
                  f"{s['allreduce alone']['allreduce_alone_ms']:.2f} ms. Best bucket cap: "
                  f"{best} ({ddp[best]['step_ms']:.1f} ms). Largest gradient difference "
                  f"DDP / big-allreduce vs 1 process (relative): {b['grad_max_rel']:.1e}.", ""]
    lines += ["`SGD ms`: the optimizer update alone (every rank does the whole of it); "
              "`step - SGD ms`: forward, backward and communication, the part data "
              "parallelism divides. "
              "`exposed comm ms`: DDP's end-of-backward wait (`ddp.reducer.last_wait_s`); for "
              "big allreduce, its blocking Allreduce. `overlap` = 1 - DDP's exposed wait / big "
              "allreduce's (both include waiting for the slower rank's backward). "
              "Speed-up = 1-process step / 2-rank step at the same global batch "
              "(median over rounds of each round's ratio); efficiency = speed-up / 2.", ""]
    return "\n".join(lines)


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes; checks gradients, < 40 s")
    ap.add_argument("--batches", default="512,128", help="global batches (default 512,128)")
    ap.add_argument("--caps", default="0.5,1,2,5,25", help="bucket_cap_mb sweep")
    ap.add_argument("--rounds", type=int, default=0, help="rounds per batch (default 7)")
    ap.add_argument("--steps", type=int, default=0, help="timed steps per subject per job")
    ap.add_argument("--warmup", type=int, default=3, help="untimed (checked) steps per subject")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per mpiexec job")
    ap.add_argument("--profile", action="store_true", help="cProfile a DDP step (rank 0)")
    ap.add_argument("--out", default=str(ROOT / "out" / "bench"), help="output folder")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.caps = [float(c) for c in str(args.caps).split(",") if c.strip()]
    if args.quick:
        args.batches, args.rounds = "16", args.rounds or 1
        args.steps, args.timeout = args.steps or 2, min(args.timeout, 60.0)
    args.rounds = args.rounds or 7
    args.steps = args.steps or 5
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.worker:
        worker(args)
        return 0

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    start, load_before = time.time(), machine.load_average()
    batches = [measure_batch(int(b), args, log) for b in str(args.batches).split(",")]
    result = {"meta": {"command": "python tools/bench/ddp_w3.py " + " ".join(argv),
                       "quick": args.quick, "rounds": args.rounds, "steps": args.steps,
                       "caps": args.caps, "machine": machine.describe(),
                       "git": machine.git_state(str(ROOT)), "load_before": load_before,
                       "load_after": machine.load_average(), "wall_s": time.time() - start},
              "batches": batches}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ddp.json").write_text(json.dumps(result, indent=1))
    md = markdown(result)
    (out / "ddp.md").write_text(md)
    print(md)
    worst = max(b["grad_max_rel"] for b in batches)
    if worst >= GRAD_RTOL:
        log(f"FAILED: DDP gradients differ from one process's by {worst:.2e} (>= {GRAD_RTOL})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
