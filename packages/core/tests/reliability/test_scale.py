"""Deep and wide graphs: no recursion anywhere (E1), exact gradients, and the time per node
printed for the report (figures only: no timed assertions).
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import retrograd as rg

from ._workloads import (
    build_chain,
    build_fanout_interior,
    build_fanout_leaf,
    build_random_dag,
    chain_expected_grad,
    leaf,
    python_depth,
    time_chain,
    to_np,
)


class shallow_stack:
    """Lower the recursion limit to (current depth + headroom): any engine that recurses per
    node dies with RecursionError on a graph much deeper than the headroom."""

    def __init__(self, headroom: int = 300) -> None:
        self.headroom = headroom

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(python_depth() + self.headroom)

    def __exit__(self, *exc: object) -> None:
        sys.setrecursionlimit(self.old)


@pytest.mark.parametrize("n", [20_000, pytest.param(1_000_000, marks=pytest.mark.stress)])
def test_chain_backpropagates_without_recursion(n):
    """E1: a chain far deeper than the stack allows for recursion; d(out)/dx is exact. The
    forward, the backward and dropping the graph all run under a shallow recursion limit."""
    x = leaf([0.5, -2.0])
    with shallow_stack():
        y = build_chain(n, x)
        loss = y.sum()
        loss.backward()
        del y, loss  # freeing a deep graph must not recurse either
        gc.collect()
    np.testing.assert_array_equal(to_np(x.grad), [chain_expected_grad(n)] * 2)


@pytest.mark.parametrize("n", [20_000, pytest.param(1_000_000, marks=pytest.mark.stress)])
def test_chain_engine_grad_and_retain(n):
    """The same depth through ``autograd.grad`` with ``retain_graph=True``, twice."""
    x = leaf([1.5])
    with shallow_stack():
        loss = build_chain(n, x).sum()
        (g1,) = rg.autograd.grad(loss, [x], retain_graph=True)
        (g2,) = rg.autograd.grad(loss, [x])
    assert x.grad is None
    assert to_np(g1)[0] == to_np(g2)[0] == chain_expected_grad(n)


@pytest.mark.parametrize("n", [10_000, pytest.param(100_000, marks=pytest.mark.stress)])
def test_fanout_of_one_interior_tensor(n):
    """One interior tensor feeding ``n`` consumers: ``n`` contributions summed in the pending
    map before its node runs once (E2)."""
    x = leaf([1.0, -3.0])
    with shallow_stack():
        root, expected = build_fanout_interior(n, x)
        root.backward()
    np.testing.assert_array_equal(to_np(x.grad), [expected] * 2)


@pytest.mark.parametrize("n", [10_000, pytest.param(100_000, marks=pytest.mark.stress)])
def test_fanout_of_one_leaf(n):
    """A leaf used ``n`` times: ``n`` edges into one AccumulateGrad, counted with multiplicity."""
    x = leaf([2.0, 0.5, -1.0])
    with shallow_stack():
        root, expected = build_fanout_leaf(n, x)
        root.backward()
    np.testing.assert_array_equal(to_np(x.grad), [expected] * 3)


@pytest.mark.parametrize("n", [10_000, pytest.param(100_000, marks=pytest.mark.stress)])
def test_random_dag_matches_numpy(n):
    """A random DAG of ``n`` nodes (long and short edges, shared values, repeated operands)
    against a NumPy reverse pass over the same program."""
    with shallow_stack():
        dag = build_random_dag(n, seed=n)
        dag.root.backward()
    assert dag.nodes >= n
    for i, (t, ref) in enumerate(zip(dag.leaves, dag.expected)):
        np.testing.assert_allclose(to_np(t.grad), ref, rtol=1e-9, atol=1e-12,
                                   err_msg=f"leaf {i}")


@pytest.mark.stress
def test_report_time_per_node():
    """Prints the per-node cost at 10^4, 10^5 and 10^6 nodes (run with ``-s`` to see it;
    ``tools/reliability_report.py`` prints the same table). Only exactness is asserted."""
    rows = [time_chain(n) for n in (10_000, 100_000, 1_000_000)]
    for r in rows:
        print(f"chain {r['nodes']:>9,} nodes: forward {r['forward_us_per_node']:.2f} us/node, "
              f"backward {r['backward_us_per_node']:.2f} us/node")
        assert r["exact"]
