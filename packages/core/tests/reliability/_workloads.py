"""Graph builders and measurements shared by the reliability tests and
``tools/reliability_report.py``, so that the figures in ``docs/reliability.md`` come from the
very workloads the tests check.

Every builder returns what a test needs to judge the result without trusting retrograd: a
reference computed in NumPy, or an exactly representable expected gradient.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import retrograd as rg

F64 = rg.float64


def leaf(values: Any, *, requires_grad: bool = True) -> rg.Tensor:
    """A float64 leaf built from plain Python data (``rg.tensor(data)``)."""
    return rg.tensor(np.asarray(values, dtype=np.float64).tolist(), dtype=F64,
                     requires_grad=requires_grad)


def to_np(t: rg.Tensor | None) -> np.ndarray | None:
    """A NumPy copy of a tensor (detached), or None."""
    if t is None:
        return None
    return np.array(t.detach().numpy(), dtype=np.float64, copy=True)


# --------------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------------

def rss_bytes() -> int:
    """Resident set size of this process, read from /proc (Linux) or psutil."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # pragma: no cover - non-Linux
        import psutil

        return int(psutil.Process().memory_info().rss)


def is_retrograd_instance(o: object) -> bool:
    """True for instances of classes defined in retrograd (not for the classes themselves)."""
    mod = type(o).__dict__.get("__module__")
    return isinstance(mod, str) and mod.startswith("retrograd")


def live_retrograd_objects() -> int:
    """How many objects of retrograd's own classes the garbage collector can see."""
    return sum(1 for o in gc.get_objects() if is_retrograd_instance(o))


# --------------------------------------------------------------------------------------------
# a small MLP with shared intermediates (threads, training loop)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MLPCase:
    """One independent problem: input and parameters as NumPy arrays."""

    x: np.ndarray
    params: dict[str, np.ndarray]


def make_mlp_case(seed: int, batch: int = 4, d_in: int = 3, hidden: int = 5,
                  d_out: int = 2) -> MLPCase:
    rng = np.random.default_rng(seed)
    return MLPCase(
        x=rng.standard_normal((batch, d_in)),
        params={
            "W1": rng.standard_normal((hidden, d_in)) * 0.5,
            "b1": rng.standard_normal(hidden) * 0.1,
            "W2": rng.standard_normal((d_out, hidden)) * 0.5,
        },
    )


def mlp_loss(p: dict[str, rg.Tensor], x: rg.Tensor) -> rg.Tensor:
    """``h`` feeds two consumers and ``y`` is used twice: shared intermediates on purpose."""
    F = rg.nn.functional
    h = F.linear(x, p["W1"], p["b1"]).tanh()
    y = F.linear(h, p["W2"])
    return (y * y).sum() + (h * 0.5).sum()


def mlp_reference_grads(case: MLPCase) -> dict[str, np.ndarray]:
    """The same loss differentiated by hand in NumPy."""
    x, W1, b1, W2 = case.x, case.params["W1"], case.params["b1"], case.params["W2"]
    h = np.tanh(x @ W1.T + b1)
    y = h @ W2.T
    dy = 2.0 * y
    dh = dy @ W2 + 0.5
    dz = dh * (1.0 - h * h)
    return {"W1": dz.T @ x, "b1": dz.sum(0), "W2": dy.T @ h}


def mlp_grads(case: MLPCase, *, functional: bool = False) -> dict[str, np.ndarray]:
    """Build the case's graph, differentiate it, return the gradients as NumPy arrays.

    ``functional=True`` goes through ``autograd.grad`` (no ``.grad`` written) instead of
    ``backward``.
    """
    p = {k: leaf(v) for k, v in case.params.items()}
    loss = mlp_loss(p, leaf(case.x, requires_grad=False))
    if functional:
        names = list(p)
        grads = rg.autograd.grad(loss, [p[k] for k in names])
        if any(p[k].grad is not None for k in names):
            raise AssertionError("autograd.grad wrote a .grad")
        return {k: to_np(g) for k, g in zip(names, grads)}
    loss.backward()
    return {k: to_np(t.grad) for k, t in p.items()}


def training_loop(steps: int, *, record_at: tuple[int, ...] = (), seed: int = 0,
                  on_record: Callable[[int], None] | None = None) -> float:
    """Plain SGD on a 2-layer MLP (cross entropy); returns the final loss.

    ``on_record(step)`` is called after the steps listed in ``record_at`` (1-based).
    """
    F = rg.nn.functional
    rng = np.random.default_rng(seed)
    x = leaf(rng.standard_normal((16, 8)), requires_grad=False)
    target = rg.tensor(rng.integers(0, 4, size=16).tolist(), dtype=rg.int64)
    W1 = leaf(rng.standard_normal((32, 8)) * 0.3)
    b1 = leaf(np.zeros(32))
    W2 = leaf(rng.standard_normal((4, 32)) * 0.3)
    b2 = leaf(np.zeros(4))
    params = [W1, b1, W2, b2]
    value = float("nan")
    for step in range(1, steps + 1):
        h = F.relu(F.linear(x, W1, b1))
        loss = F.cross_entropy(F.linear(h, W2, b2), target)
        loss.backward()
        with rg.no_grad():
            for p in params:
                p.sub_(p.grad * 0.05)
                p.grad = None
        value = loss.item()
        if on_record is not None and step in record_at:
            on_record(step)
    return value


# --------------------------------------------------------------------------------------------
# deep and wide graphs
# --------------------------------------------------------------------------------------------

def build_chain(n: int, x: rg.Tensor) -> rg.Tensor:
    """``n`` nodes in one line: alternately ``+ 1.0`` and ``* -1.0``.

    d(out)/dx is exactly ``(-1) ** (n // 2)``.
    """
    y = x
    for i in range(n):
        y = y + 1.0 if i % 2 == 0 else y * -1.0
    return y


def chain_expected_grad(n: int) -> float:
    return float((-1) ** (n // 2))


def build_fanout_interior(n: int, x: rg.Tensor) -> tuple[rg.Tensor, float]:
    """One interior tensor ``h`` used by ``n`` consumers, joined by one ``stack`` node.

    Returns the scalar root and the exact d(root)/dx (per element).
    """
    h = x * 2.0
    parts = [h * float(i % 5) for i in range(n)]
    root = rg.stack(parts).sum()
    return root, 2.0 * float(sum(i % 5 for i in range(n)))


def build_fanout_leaf(n: int, x: rg.Tensor) -> tuple[rg.Tensor, float]:
    """A leaf used ``n`` times: ``x + x + ... + x`` (n edges into one AccumulateGrad)."""
    acc = x * 1.0
    for _ in range(n - 1):
        acc = acc + x
    return acc.sum(), float(n)


@dataclass
class RandomDAG:
    """A random DAG program and its NumPy reference gradients."""

    root: rg.Tensor
    leaves: list[rg.Tensor]
    nodes: int
    expected: list[np.ndarray]


def build_random_dag(n_nodes: int, seed: int = 0, n_leaves: int = 8,
                     width: int = 4) -> RandomDAG:
    """About ``n_nodes`` backward nodes: each step picks a recent and a uniformly random earlier
    value and combines them with one of four bounded ops (values stay in [-1, 1]). The same
    program runs in NumPy alongside, and a hand-written reverse pass gives the reference.
    """
    rng = np.random.default_rng(seed)
    leaf_vals = [rng.uniform(-1, 1, width) for _ in range(n_leaves)]
    leaves = [leaf(v) for v in leaf_vals]
    tensors: list[rg.Tensor] = list(leaves)
    values: list[np.ndarray] = list(leaf_vals)
    program: list[tuple[str, int, int]] = []
    nodes = 0
    while nodes < n_nodes:
        n = len(tensors)
        i = n - 1 - int(rng.integers(0, min(n, 50)))
        j = int(rng.integers(0, n))
        kind = ("mul", "tanh_add", "sin", "half_sub")[int(rng.integers(0, 4))]
        a, b = tensors[i], tensors[j]
        va, vb = values[i], values[j]
        if kind == "mul":
            t, v = a * b, va * vb
            nodes += 1
        elif kind == "tanh_add":
            t, v = (a + b).tanh(), np.tanh(va + vb)
            nodes += 2
        elif kind == "sin":
            t, v = rg.sin(a), np.sin(va)
            nodes += 1
        else:
            t, v = (a - b) * 0.5, (va - vb) * 0.5
            nodes += 2
        tensors.append(t)
        values.append(v)
        program.append((kind, i, j))
    # root: the sum of the last value and a few random others
    picks = sorted({len(tensors) - 1, *map(int, rng.integers(n_leaves, len(tensors), 3))})
    root = tensors[picks[0]].sum()
    for k in picks[1:]:
        root = root + tensors[k].sum()
    nodes += 2 * len(picks)
    # NumPy reverse pass over the same program
    grads = [np.zeros(width) for _ in values]
    for k in picks:
        grads[k] += 1.0
    for idx in range(len(program) - 1, -1, -1):
        kind, i, j = program[idx]
        out = n_leaves + idx
        g = grads[out]
        if kind == "mul":
            grads[i] = grads[i] + g * values[j]
            grads[j] = grads[j] + g * values[i]
        elif kind == "tanh_add":
            d = g * (1.0 - values[out] ** 2)
            grads[i] = grads[i] + d
            grads[j] = grads[j] + d
        elif kind == "sin":
            grads[i] = grads[i] + g * np.cos(values[i])
        else:
            grads[i] = grads[i] + 0.5 * g
            grads[j] = grads[j] - 0.5 * g
    del tensors, values
    return RandomDAG(root=root, leaves=leaves, nodes=nodes, expected=grads[:n_leaves])


def time_chain(n: int) -> dict[str, float]:
    """Build and differentiate an ``n``-node chain; seconds and microseconds per node."""
    x = leaf([0.5])
    gc_was = gc.isenabled()
    gc.disable()  # measure the engine, not the collector's passes over a million objects
    try:
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        y = build_chain(n, x)
        loss = y.sum()
        t1 = time.perf_counter()
        graph_bytes = rss_bytes() - rss0
        loss.backward()
        t2 = time.perf_counter()
        ok = to_np(x.grad)[0] == chain_expected_grad(n)
        del y, loss
        t3 = time.perf_counter()
    finally:
        if gc_was:
            gc.enable()
    return {"nodes": n, "forward_s": t1 - t0, "backward_s": t2 - t1, "free_s": t3 - t2,
            "forward_us_per_node": 1e6 * (t1 - t0) / n,
            "backward_us_per_node": 1e6 * (t2 - t1) / n, "exact": bool(ok),
            "graph_bytes_per_node": graph_bytes / n}


def python_depth() -> int:
    """Number of Python frames on the current stack."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def graph_nodes(root: rg.Tensor) -> list[Any]:
    """Every node reachable from ``root.grad_fn`` (AccumulateGrad included), breadth first,
    each once, in a deterministic order."""
    start = root.grad_fn
    if start is None:
        return []
    seen = {id(start)}
    out = [start]
    i = 0
    while i < len(out):
        for nxt, _slot in out[i].next_functions:
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                out.append(nxt)
        i += 1
    return out
