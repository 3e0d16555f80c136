"""retrograd.viz: the DOT text of real backward graphs, and rendering through Graphviz."""

from __future__ import annotations

import re
import shutil
import sys

import pytest

import retrograd as rg
from retrograd import viz


def shared_branch(x_value: float = 2.0):
    x = rg.tensor(x_value, requires_grad=True)
    u = x * x
    u.retain_grad()
    a, b = 2 * u, 3 * u
    loss = a + b
    return x, u, a, b, loss


def node_line(dot: str, node_id: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(f"{node_id} ["))


def edges(dot: str) -> list[tuple[str, str, str]]:
    return re.findall(r"(\w+) -> (\w+) \[label=\"([^\"]+)\"", dot)


def test_shared_branch_graph_has_every_node_once_and_every_edge_with_multiplicity():
    x, u, a, b, loss = shared_branch()
    graph = viz.collect_graph(loss, names={"x": x, "u": u})
    names = [n.name for n in graph.nodes]
    assert len(graph.nodes) == 5  # add, two scalings, the square, the leaf accumulator
    assert names.count("AccumulateGrad") == 1
    by_node = graph.by_node()
    square = by_node[id(u.grad_fn)]
    leaf = next(n for n in graph.nodes if n.kind == "leaf")
    assert square.label == "u" and leaf.label == "x"
    # x * x: two edges from the square to the same accumulator, both into slot 0
    into_leaf = [e for e in graph.edges if e.src == square.id and e.dst == leaf.id]
    assert [(e.input_nr, e.position) for e in into_leaf] == [(0, 0), (0, 1)]
    # both branches point at the shared square node
    assert sorted(e.src for e in graph.edges if e.dst == square.id) == sorted(
        [by_node[id(a.grad_fn)].id, by_node[id(b.grad_fn)].id]
    )


def test_dot_text_names_nodes_labels_edges_and_shows_leaf_shapes():
    x, u, a, b, loss = shared_branch()
    dot = viz.to_dot(loss, names={"x": x, "u": u, "loss": loss})
    assert dot.startswith("digraph retrograd {") and dot.rstrip().endswith("}")
    square = viz.collect_graph(loss).by_node()[id(u.grad_fn)].id
    leaf_edges = [e for e in edges(dot) if e[0] == square]
    assert len(leaf_edges) == 2 and {e[2] for e in leaf_edges} == {"input_nr=0"}
    assert "seed" in dot
    leaf_line = next(line for line in dot.splitlines() if "AccumulateGrad" in line)
    assert "<i>x</i>" in leaf_line and "() float32" in leaf_line
    assert "<b>loss</b>" in dot
    assert u.grad_fn.name() in dot


def test_saved_tensors_are_listed_with_their_size():
    x = rg.zeros(3, 4, requires_grad=True)
    y = (x * x).sum()
    square = y.grad_fn.next_functions[0][0]
    saved = square.saved_arrays()
    assert saved, "x * x must save its inputs"
    expected = sum(int(a.nbytes) for a in saved)
    line = node_line(viz.to_dot(y), viz.collect_graph(y).by_node()[id(square)].id)
    assert "saved (3, 4)" in line
    assert viz.format_bytes(expected) in line
    assert "dashed" not in line


def test_released_nodes_are_greyed_after_backward_and_not_with_retain_graph():
    x = rg.zeros(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    square_id = viz.collect_graph(y).by_node()[id(y.grad_fn.next_functions[0][0])].id
    assert "dashed" not in node_line(viz.to_dot(y), square_id)
    y.backward()
    line = node_line(viz.to_dot(y), square_id)
    assert "dashed" in line and "#9e9e9e" in line and "released" in line


def test_leaf_accumulator_is_never_greyed():
    x = rg.ones(2, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    leaf = next(n for n in viz.collect_graph(y).nodes if n.kind == "leaf")
    assert "dashed" not in node_line(viz.to_dot(y), leaf.id)


class _FakeNode:
    """A duck-typed node: viz reads only the introspection API, so any node type draws."""

    def __init__(self, name, nxt=(), fused=False, parts=()):
        self._name = name
        self.next_functions = tuple(nxt)
        self.fused = fused
        self.parts = tuple(parts)
        self.released = False

    def name(self):
        return self._name

    def saved_arrays(self):
        return []


def test_fused_nodes_are_marked_with_their_parts():
    leaf = _FakeNode("AccumulateGrad")
    fused = _FakeNode(
        "FusedLinearReluBackward",
        [(leaf, 0)],
        fused=True,
        parts=(_FakeNode("ReluBackward0"), _FakeNode("LinearBackward0")),
    )
    dot = viz.to_dot(fused)
    line = node_line(dot, "n0")
    assert "peripheries=2" in line
    assert "fused: ReluBackward0 + LinearBackward0" in line


def test_fused_node_of_a_real_walk_is_marked():
    from retrograd import nn

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = model(rg.randn(5, 3)).sum()
    with rg.autograd.trace() as t:
        loss.backward()
    fused = [n for n in t.walks[0].graph.nodes if n.kind == "fused"]
    assert fused, "Linear followed by ReLU must run as one fused node"
    dot = t.to_dot()
    assert "peripheries=2" in node_line(dot, fused[0].id)
    assert "fused: " in node_line(dot, fused[0].id)


def test_names_from_a_model_label_its_parameters():
    from retrograd import nn

    model = nn.Linear(3, 2)
    out = model(rg.randn(4, 3)).sum()
    dot = viz.to_dot(out, names=dict(model.named_parameters()))
    assert "<i>weight</i>" in dot and "(2, 3) float32" in dot
    assert "<i>bias</i>" in dot and "(2,) float32" in dot


def test_deep_graphs_are_walked_without_recursion_and_truncated():
    x = rg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(3 * sys.getrecursionlimit()):
        y = y * 1.0
    graph = viz.collect_graph(y, max_nodes=100_000)
    assert len(graph.nodes) == 3 * sys.getrecursionlimit() + 1
    small = viz.to_dot(y, max_nodes=10)
    assert small.count("[label=<<b>") == 10 + 1  # ten nodes plus the root box
    assert "more nodes not drawn" in small


def test_a_leaf_root_and_a_list_of_roots():
    x = rg.tensor(1.0, requires_grad=True)
    dot = viz.to_dot(x)
    assert "root0" in dot and "->" not in dot
    y1, y2 = x * 2, x * 3
    graph = viz.collect_graph([y1, y2])
    assert len(graph.roots) == 2 and len(graph.nodes) == 3


def test_array_summary():
    import numpy as np

    assert viz.array_summary(np.float32(5.0)) == "5"
    assert viz.array_summary(np.array([1.0, 2.5])) == "[1, 2.5]"
    assert viz.array_summary(np.zeros((0, 3))) == "<empty (0, 3)>"
    assert viz.array_summary(np.ones((10, 10))).startswith("<(10, 10) mean 1")


# -- rendering ----------------------------------------------------------------------------
HAVE_DOT = shutil.which("dot") is not None


def _have_graphviz_package() -> bool:
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return True


needs_graphviz = pytest.mark.skipif(
    not (HAVE_DOT and _have_graphviz_package()),
    reason="needs Graphviz's dot program (apt-get install graphviz) and pip install graphviz",
)


@needs_graphviz
def test_render_svg_and_png(tmp_path):
    x, u, a, b, loss = shared_branch()
    svg = viz.render(loss, tmp_path / "g.svg", names={"x": x, "u": u})
    text = svg.read_text()
    assert "<svg" in text and "AccumulateGrad" in text and "input_nr=0" in text
    png = viz.render(loss, tmp_path / "sub" / "g.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert viz.draw(loss).pipe(format="svg").startswith(b"<?xml")


def test_missing_dot_program_gives_a_clear_error(monkeypatch, tmp_path):
    if not _have_graphviz_package():
        pytest.skip("the graphviz package is not installed; the other error path is tested")
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    x, u, a, b, loss = shared_branch()
    with pytest.raises(viz.GraphvizUnavailable, match="apt-get install graphviz") as info:
        viz.render(loss, tmp_path / "g.svg")
    assert "to_dot()" in str(info.value)
    assert not (tmp_path / "g.svg").exists()


def test_missing_graphviz_package_gives_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    x, u, a, b, loss = shared_branch()
    with pytest.raises(viz.GraphvizUnavailable, match="pip install graphviz"):
        viz.render(loss, tmp_path / "g.png")
    assert isinstance(viz.GraphvizUnavailable("x"), RuntimeError)
