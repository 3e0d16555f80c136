"""Measure the figures quoted in docs/reliability.md and print them as Markdown.

    python tools/reliability_report.py            # everything (a few minutes, ~1.5 GB peak)
    python tools/reliability_report.py --quick    # smaller sizes, to check the script runs

It runs the very workloads of packages/core/tests/reliability (imported from there), so a
figure in the doc always belongs to a workload the test suite checks. Timings are figures, not
assertions: they depend on the machine; exactness is checked and printed beside them.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "core" / "tests"))

from reliability import _workloads as W  # noqa: E402


def threads_figure(n_threads: int, n_graphs: int) -> dict[str, object]:
    """Each thread differentiates its own MLPs; compare every gradient with NumPy."""
    results: dict[int, dict[str, np.ndarray]] = {}
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> None:
        barrier.wait()
        for g in range(n_graphs):
            s = t * 10_000 + g
            results[s] = W.mlp_grads(W.make_mlp_case(s), functional=bool(s % 2))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t0 = time.perf_counter()
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    sys.setswitchinterval(old)
    worst = 0.0
    for s, grads in results.items():
        ref = W.mlp_reference_grads(W.make_mlp_case(s))
        for k, g in grads.items():
            worst = max(worst, float(np.max(np.abs(g - ref[k]))))
    return {"threads": n_threads, "graphs": n_threads * n_graphs, "wall_s": wall,
            "max_abs_err_vs_numpy": worst, "complete": len(results) == n_threads * n_graphs}


def timed(fn):
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - t0
    finally:
        if was:
            gc.enable()


def wide_figures(n: int) -> list[tuple[str, int, float, bool]]:
    rows = []
    x = W.leaf([1.0, -3.0])
    (root, expected), t_build = timed(lambda: W.build_fanout_interior(n, x))
    _, t_back = timed(root.backward)
    rows.append((f"fan-out: one interior tensor, {n:,} consumers", n + 3, t_back,
                 bool(np.all(W.to_np(x.grad) == expected))))
    del root
    x = W.leaf([2.0, 0.5, -1.0])
    (root, expected), _ = timed(lambda: W.build_fanout_leaf(n, x))
    _, t_back = timed(root.backward)
    rows.append((f"fan-out: one leaf, {n:,} uses", n + 1, t_back,
                 bool(np.all(W.to_np(x.grad) == expected))))
    del root
    dag, _ = timed(lambda: W.build_random_dag(n, seed=n))
    _, t_back = timed(dag.root.backward)
    ok = all(np.allclose(W.to_np(t.grad), r, rtol=1e-9, atol=1e-12)
             for t, r in zip(dag.leaves, dag.expected))
    rows.append((f"random DAG, {dag.nodes:,} nodes", dag.nodes, t_back, ok))
    return rows


def rss_figure(steps: int) -> dict[str, float]:
    marks: dict[int, tuple[int, int]] = {}

    def record(step: int) -> None:
        marks[step] = (W.rss_bytes(), W.live_retrograd_objects())

    t0 = time.perf_counter()
    loss = W.training_loop(steps, record_at=(100, steps), on_record=record)
    wall = time.perf_counter() - t0
    return {"steps": steps, "rss_100_mib": marks[100][0] / 2**20,
            "rss_end_mib": marks[steps][0] / 2**20, "objects_100": marks[100][1],
            "objects_end": marks[steps][1], "loss": loss, "ms_per_step": 1e3 * wall / steps}


def counts() -> dict[str, int]:
    """How many checks each family of the suite holds (collected by pytest)."""
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-m", "not gpu",
         str(ROOT / "packages/core/tests/reliability")],
        capture_output=True, text=True, cwd=ROOT).stdout
    fam: dict[str, int] = {}
    for line in out.splitlines():
        if "::" in line:
            mod = line.split("::")[0].rsplit("/", 1)[-1]
            fam[mod] = fam.get(mod, 0) + 1
    return fam


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    q = args.quick
    print(f"# retrograd reliability figures\n\npython {platform.python_version()}, "
          f"numpy {np.__version__}, {platform.machine()}, {platform.system()}\n")

    th = threads_figure(4 if q else 16, 20 if q else 200)
    print("## Threads\n")
    print(f"{th['threads']} threads x {th['graphs'] // th['threads']} graphs = {th['graphs']} "
          f"independent MLP graphs in {th['wall_s']:.2f} s; complete: {th['complete']}; "
          f"max |grad - NumPy| = {th['max_abs_err_vs_numpy']:.1e}\n")

    print("## Deep chains (time per node)\n")
    print("| nodes | forward us/node | backward us/node | free graph (s) | graph RSS B/node "
          "| exact |")
    print("| ---: | ---: | ---: | ---: | ---: | :---: |")
    for n in ((10_000, 100_000) if q else (10_000, 100_000, 1_000_000)):
        r = W.time_chain(n)
        print(f"| {n:,} | {r['forward_us_per_node']:.2f} | {r['backward_us_per_node']:.2f} "
              f"| {r['free_s']:.2f} | {r['graph_bytes_per_node']:.0f} | {r['exact']} |")
        gc.collect()

    print("\n## Wide graphs\n")
    print("| graph | nodes | backward (s) | us/node | exact |")
    print("| --- | ---: | ---: | ---: | :---: |")
    for name, nodes, t, ok in wide_figures(10_000 if q else 100_000):
        print(f"| {name} | {nodes:,} | {t:.2f} | {1e6 * t / nodes:.2f} | {ok} |")
        gc.collect()

    rs = rss_figure(1_000 if q else 10_000)
    print("\n## Training loop memory\n")
    print(f"{rs['steps']:,} SGD steps of a 2-layer MLP ({rs['ms_per_step']:.2f} ms/step): RSS "
          f"{rs['rss_100_mib']:.1f} MiB at step 100, {rs['rss_end_mib']:.1f} MiB at step "
          f"{rs['steps']:,} (delta {rs['rss_end_mib'] - rs['rss_100_mib']:+.1f} MiB); live "
          f"retrograd objects {rs['objects_100']} -> {rs['objects_end']}\n")

    print("## Tests collected per family (quick + stress)\n")
    for mod, n in sorted(counts().items()):
        print(f"- {mod}: {n}")


if __name__ == "__main__":
    main()
