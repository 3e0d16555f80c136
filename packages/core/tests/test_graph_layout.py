"""The graph's storage layout: what ``record`` builds is what ``FormulaNode.__init__`` would
build, the bare ``_next`` form reads as PyTorch's ``next_functions``, and a deep graph costs the
cyclic garbage collector one tracked object per node."""

from __future__ import annotations

import gc

import numpy as np

import retrograd as rg
from retrograd.autograd.node import FormulaNode, next_entries
from retrograd.ops.elementwise import MulBackward


def _slots(node: object) -> dict[str, object]:
    names = [n for cls in type(node).__mro__ for n in getattr(cls, "__slots__", ())
             if n != "__weakref__"]
    return {n: getattr(node, n) for n in names}


def test_record_sets_every_slot_as_init_does():
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    y = rg.tensor(np.ones(3), requires_grad=True)
    for out in (x * y, x * 2.0, (x * 1.0).tanh(), x.sum(), rg.where(x > 1, x, y)):
        node = out.grad_fn
        twin = type(node)(node._backend, node._next, node._saved, node._sources,
                          node._versions, node._attrs)
        assert _slots(node) == _slots(twin), type(node).__name__


def test_bare_next_reads_as_one_entry_per_input():
    x = rg.tensor(np.arange(3.0), requires_grad=True)
    h = x * 1.0
    m = h * 2.0  # scalar operand: stored bare, read as two entries
    assert type(m.grad_fn._next) is not tuple
    assert m.grad_fn.next_functions == ((h.grad_fn, 0), (None, 0))
    assert next_entries(m.grad_fn) == (h.grad_fn, None)
    t = h.tanh()  # unary
    assert t.grad_fn.next_functions == ((h.grad_fn, 0),)
    r = 2.0 * h  # scalar on the left: reflected, still the tensor's edge first
    assert [e[0] for e in r.grad_fn.next_functions].count(h.grad_fn) == 1
    both = h * x  # two edges: a tuple
    assert type(both.grad_fn._next) is tuple
    assert both.grad_fn.next_functions[1][0] is not None
    # a bare node's rule still gets one "needs" per input: only input 0 wants a gradient
    assert isinstance(MulBackward, type) and issubclass(MulBackward, FormulaNode)
    (g,) = rg.autograd.grad(m.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.full(3, 2.0))


def test_deep_graph_is_one_tracked_object_per_node():
    x = rg.tensor(np.random.rand(16), requires_grad=True)
    gc.collect()
    before = len(gc.get_objects())
    y = x
    for _ in range(500):
        y = (y * 1.0001 + 0.001).tanh()  # 3 nodes a step; tanh saves its output (a stamp)
    gc.collect()  # untracks the tuples that hold only untracked objects
    grown = len(gc.get_objects()) - before
    assert grown <= 1500 + 50, grown  # the nodes, plus a little fixed overhead
    y.sum().backward()
    v, d = x.detach().numpy(), np.ones(16)
    for _ in range(500):
        v = np.tanh(v * 1.0001 + 0.001)
        d *= 1.0001 * (1.0 - v * v)
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=1e-12)


def _reference_order(*roots: object) -> list[object]:
    """Reverse DFS post-order, recursively, over next_functions (the definition of E1)."""
    seen: set[int] = set()
    post: list[object] = []

    def visit(node: object) -> None:
        seen.add(id(node))
        for child, _ in node.next_functions:  # type: ignore[attr-defined]
            if child is not None and id(child) not in seen:
                visit(child)
        post.append(node)

    for root in roots:
        if id(root) not in seen:
            visit(root)
    return post[::-1]


def test_topo_order_matches_recursive_dfs_on_mixed_bare_and_tuple_nodes():
    from retrograd.autograd.engine import topo_order

    rng = np.random.default_rng(0)
    for trial in range(30):
        leaves = [rg.tensor(rng.random(3), requires_grad=True) for _ in range(3)]
        pool = list(leaves)
        for _ in range(40):
            a = pool[rng.integers(len(pool))]
            kind = rng.integers(4)
            if kind == 0:
                pool.append(a * float(rng.random()))  # bare
            elif kind == 1:
                pool.append(a.tanh())  # bare, saves its output
            elif kind == 2:
                pool.append(a * pool[rng.integers(len(pool))])  # two edges (maybe shared)
            else:
                pool.append(a + pool[rng.integers(len(pool))])
        root = pool[-1] + pool[-2] + pool[len(pool) // 2]
        assert topo_order([root.grad_fn]) == _reference_order(root.grad_fn), trial
        others = [pool[-3].grad_fn, root.grad_fn, pool[5].grad_fn, pool[-3].grad_fn]
        assert topo_order(others) == _reference_order(*others), trial
