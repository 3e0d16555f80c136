"""Pictures of the backward graph: Graphviz DOT text, and SVG/PNG when Graphviz is installed.

``to_dot(loss)`` needs nothing but retrograd: it walks ``grad_fn.next_functions`` from the
roots (iteratively, like the engine) and writes one DOT node per backward ``Node`` and one DOT
edge per ``Edge``, labelled with its ``input_nr``. Edges are drawn with multiplicity, so
``x * x`` shows two arrows into the same ``AccumulateGrad``, as the engine counts them (rule E2
in docs/semantics.md). Leaves show their shape and dtype, nodes list the tensors they still hold
for backward (and how many bytes), fused nodes (``node.fused``) are double-bordered with their
parts listed, and nodes whose saved tensors were released by a backward without
``retain_graph`` are greyed out.

``render(loss, "graph.svg")`` and ``draw(loss)`` turn the DOT text into a picture with the
``graphviz`` Python package and the ``dot`` program; where either is missing they raise
``GraphvizUnavailable``, which says what to install.
"""

from __future__ import annotations

import math
import os
import shutil
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "GraphvizUnavailable",
    "GraphNode",
    "GraphEdge",
    "collect_graph",
    "to_dot",
    "render",
    "draw",
    "array_summary",
]


class GraphvizUnavailable(RuntimeError):
    """Rendering needs the ``graphviz`` Python package and Graphviz's ``dot`` program."""


@dataclass
class GraphNode:
    """One backward node as drawn: a stable id (``n0``, ``n1``... in breadth-first order from
    the roots), the node itself, and the words shown for it."""

    id: str
    node: Any
    name: str
    kind: str  # "node", "leaf" (AccumulateGrad) or "fused"
    label: str = ""  # the user's name for the tensor this node produced, if known
    shape: tuple[int, ...] | None = None  # leaves: the variable's shape
    dtype: str | None = None
    saved: list[tuple[tuple[int, ...], str, int]] = field(default_factory=list)
    released: bool = False
    parts: list[str] = field(default_factory=list)


@dataclass
class GraphEdge:
    """``src`` sends its ``position``-th gradient output to slot ``input_nr`` of ``dst``."""

    src: str
    dst: str
    input_nr: int
    position: int


@dataclass
class Graph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    roots: list[tuple[str, str, str]]  # (root label, shape/dtype text, node id or "")
    truncated: int = 0  # nodes not drawn because of max_nodes

    def by_node(self) -> dict[int, GraphNode]:
        return {id(n.node): n for n in self.nodes}


# -- reading nodes ----------------------------------------------------------------------------
def _node_name(node: Any) -> str:
    name = getattr(node, "name", None)
    if callable(name):
        try:
            return str(name())
        except Exception:  # a broken custom node must not break the picture
            pass
    return type(node).__name__


def _is_leaf_node(node: Any) -> bool:
    return hasattr(node, "variable") and not getattr(node, "fused", False)


def _shape_of(array: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in getattr(array, "shape", ()))


def _nbytes(array: Any) -> int:
    nbytes = getattr(array, "nbytes", None)
    if nbytes is not None:
        return int(nbytes)
    itemsize = getattr(getattr(array, "dtype", None), "itemsize", None)
    if itemsize is None:
        try:
            import numpy

            itemsize = numpy.dtype(str(array.dtype).rsplit(".", 1)[-1]).itemsize
        except Exception:
            itemsize = 0
    return int(math.prod(_shape_of(array))) * int(itemsize)


def _dtype_name(obj: Any) -> str:
    dtype = getattr(obj, "dtype", None)
    if dtype is None:
        return "?"
    return str(getattr(dtype, "name", dtype)).rsplit(".", 1)[-1]


def _saved_of(node: Any) -> list[tuple[tuple[int, ...], str, int]]:
    saved = getattr(node, "saved_arrays", None)
    if saved is None:
        return []
    try:
        arrays = saved() if callable(saved) else saved
    except Exception:
        return []
    return [(_shape_of(a), _dtype_name(a), _nbytes(a)) for a in arrays if a is not None]


def _next_functions(node: Any) -> Sequence[tuple[Any, int]]:
    found = getattr(node, "next_functions", None)
    if found is None:
        return ()
    return tuple(found)


def _grad_fn_index(names: Mapping[str, Any] | None) -> tuple[dict[int, str], dict[int, str]]:
    """``names`` ({"x": x, "u": u}) as two maps: leaf tensor id -> name, grad_fn id -> name."""
    leaves: dict[int, str] = {}
    interior: dict[int, str] = {}
    for label, tensor in (names or {}).items():
        grad_fn = getattr(tensor, "grad_fn", None)
        if grad_fn is None:
            leaves[id(tensor)] = label
        else:
            interior[id(grad_fn)] = label
    return leaves, interior


def describe(
    node: Any, node_id: str, leaf_names: Mapping[int, str], interior_names: Mapping[int, str]
) -> GraphNode:
    """Read everything the pictures show about ``node`` now (saved sizes change on release)."""
    fused = bool(getattr(node, "fused", False))
    entry = GraphNode(
        id=node_id,
        node=node,
        name=_node_name(node),
        kind="fused" if fused else ("leaf" if _is_leaf_node(node) else "node"),
        released=bool(getattr(node, "released", False)),
        saved=_saved_of(node),
    )
    if fused:
        entry.parts = [_node_name(p) for p in getattr(node, "parts", ())]
        labels = [
            interior_names[id(p)] for p in getattr(node, "parts", ()) if id(p) in interior_names
        ]
        entry.label = ", ".join(labels)
    elif entry.kind == "leaf":
        variable = node.variable
        entry.shape = _shape_of(variable)
        entry.dtype = _dtype_name(variable)
        entry.label = leaf_names.get(id(variable), "")
    else:
        entry.label = interior_names.get(id(node), "")
    return entry


# -- the walk ---------------------------------------------------------------------------------
def _as_roots(roots: Any) -> list[Any]:
    if isinstance(roots, (list, tuple)):
        return list(roots)
    return [roots]


def collect_graph(
    roots: Any,
    *,
    names: Mapping[str, Any] | None = None,
    alias: Callable[[Any], Any] | None = None,
    max_nodes: int = 2000,
) -> Graph:
    """Breadth-first over ``next_functions`` from the roots' ``grad_fn`` (no recursion).

    ``roots`` is a tensor, a backward node, or a list of them. ``alias`` maps a node to the node
    drawn in its place (the trace uses it to draw a walk's fused nodes instead of their parts).
    At most ``max_nodes`` nodes are drawn; the rest are counted in ``Graph.truncated``.
    """
    alias = alias or (lambda n: n)
    leaf_names, interior_names = _grad_fn_index(names)
    root_label = {id(t): label for label, t in (names or {}).items()}
    nodes: list[GraphNode] = []
    ids: dict[int, str] = {}
    edges: list[GraphEdge] = []
    root_entries: list[tuple[str, str, str]] = []
    queue: deque[Any] = deque()
    truncated = 0

    def visit(node: Any) -> str | None:
        nonlocal truncated
        key = id(node)
        if key in ids:
            return ids[key]
        if len(nodes) >= max_nodes:
            truncated += 1
            ids[key] = ""
            return None
        node_id = f"n{len(nodes)}"
        ids[key] = node_id
        nodes.append(describe(node, node_id, leaf_names, interior_names))
        queue.append(node)
        return node_id

    for k, root in enumerate(_as_roots(roots)):
        grad_fn = getattr(root, "grad_fn", None) if not _looks_like_node(root) else root
        if _looks_like_node(root):
            label, text = _node_name(root), ""
        else:
            label = root_label.get(id(root), "output" if k == 0 else f"output {k}")
            text = f"{_shape_of(root)} {_dtype_name(root)}"
        node_id = visit(alias(grad_fn)) if grad_fn is not None else None
        root_entries.append((label, text, node_id or ""))

    while queue:
        node = queue.popleft()
        src = ids[id(node)]
        for position, (nxt, input_nr) in enumerate(_next_functions(node)):
            if nxt is None:
                continue
            target = alias(nxt)
            if target is node:
                continue  # an edge inside a fused node
            dst = visit(target)
            if dst:
                edges.append(GraphEdge(src, dst, int(input_nr), position))
    return Graph(nodes, edges, root_entries, truncated)


def _looks_like_node(obj: Any) -> bool:
    return hasattr(obj, "next_functions") and not hasattr(obj, "grad_fn")


# -- DOT --------------------------------------------------------------------------------------
def _html(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def format_bytes(n: int) -> str:
    """``48 B``, ``3.1 KiB``, ``2.0 MiB``: sizes as a person reads them."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024.0
        if value < 1024.0 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{n} B"  # unreachable


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


_STYLE = {
    "node": ("#ffffff", "#37474f"),
    "leaf": ("#dcedc8", "#33691e"),
    "fused": ("#fff3cd", "#8d6e00"),
    "released": ("#eeeeee", "#9e9e9e"),
}


def _node_dot(entry: GraphNode, show_saved: bool) -> str:
    rows = [f"<b>{_html(entry.name)}</b>"]
    if entry.label:
        rows.append(f"<i>{_html(entry.label)}</i>")
    if entry.kind == "leaf" and entry.shape is not None:
        rows.append(f"{_html(shape_text(entry.shape))} {_html(entry.dtype or '')}")
    if entry.kind == "fused":
        rows.append("fused: " + _html(" + ".join(entry.parts)))
    if show_saved and entry.kind != "leaf":
        if entry.saved:
            total = sum(size for _, _, size in entry.saved)
            shapes = ", ".join(shape_text(s) for s, _, _ in entry.saved[:4])
            more = f" +{len(entry.saved) - 4}" if len(entry.saved) > 4 else ""
            rows.append(
                f'<font point-size="9">saved {_html(shapes)}{more}: {format_bytes(total)}</font>'
            )
        elif entry.released:
            rows.append('<font point-size="9">released</font>')
        else:
            rows.append('<font point-size="9">saved: nothing</font>')
    style = "released" if entry.released else entry.kind
    fill, line = _STYLE[style]
    attrs = [
        f"label=<{'<br/>'.join(rows)}>",
        f'fillcolor="{fill}"',
        f'color="{line}"',
    ]
    if entry.released:
        attrs.append('fontcolor="#9e9e9e"')
        attrs.append('style="rounded,filled,dashed"')
    if entry.kind == "fused":
        attrs.append("peripheries=2")
    if entry.kind == "leaf":
        attrs.append('shape="box"')
    return f"  {entry.id} [{', '.join(attrs)}];"


def graph_to_dot(graph: Graph, *, title: str | None = None, show_saved: bool = True) -> str:
    """The DOT text of a collected graph (``to_dot`` = ``collect_graph`` + this)."""
    lines = [
        "digraph retrograd {",
        '  graph [rankdir=TB, fontname="Helvetica", nodesep=0.35, ranksep=0.45'
        + (f", label={_quote(title)}, labelloc=t" if title else "")
        + "];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9, color="#546e7a", fontcolor="#546e7a"];',
    ]
    for k, (label, text, node_id) in enumerate(graph.roots):
        body = f"<b>{_html(label)}</b>" + (f"<br/>{_html(text)}" if text else "")
        lines.append(
            f'  root{k} [label=<{body}>, shape=ellipse, fillcolor="#bbdefb", color="#0d47a1"];'
        )
        if node_id:
            lines.append(f'  root{k} -> {node_id} [label="seed", style=dashed];')
    for entry in graph.nodes:
        lines.append(_node_dot(entry, show_saved))
    for edge in graph.edges:
        lines.append(
            f'  {edge.src} -> {edge.dst} [label="input_nr={edge.input_nr}", '
            f'tooltip="output {edge.position} of {edge.src} '
            f'to slot {edge.input_nr} of {edge.dst}"];'
        )
    if graph.truncated:
        lines.append(
            f'  more [label="... {graph.truncated} more nodes not drawn", shape=plaintext];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(
    roots: Any,
    *,
    names: Mapping[str, Any] | None = None,
    title: str | None = None,
    show_saved: bool = True,
    max_nodes: int = 2000,
) -> str:
    """The backward graph of ``roots`` (a tensor, a node, or a list) as Graphviz DOT text.

    ``names`` labels tensors in the picture, e.g. ``names={"x": x, "u": u, "loss": loss}``
    (leaves label their ``AccumulateGrad``, other tensors their ``grad_fn``, roots their box);
    ``dict(model.named_parameters())`` labels a model's weights.
    """
    graph = collect_graph(roots, names=names, max_nodes=max_nodes)
    return graph_to_dot(graph, title=title, show_saved=show_saved)


# -- rendering --------------------------------------------------------------------------------
def _graphviz_source(dot: str) -> Any:
    try:
        import graphviz
    except ImportError as exc:
        raise GraphvizUnavailable(
            "rendering the graph needs the 'graphviz' Python package: "
            "pip install graphviz (or pip install 'retrograd[viz]'), plus Graphviz's 'dot' "
            "program (apt-get install graphviz, brew install graphviz, conda install graphviz). "
            "retrograd.viz.to_dot() works without either and returns the DOT text."
        ) from exc
    if shutil.which("dot") is None:
        raise GraphvizUnavailable(
            "rendering the graph needs Graphviz's 'dot' program on PATH, and it was not found: "
            "install Graphviz (apt-get install graphviz, brew install graphviz, "
            "conda install graphviz). retrograd.viz.to_dot() works without it and returns the "
            "DOT text."
        )
    return graphviz.Source(dot)


def draw(roots: Any, **options: Any) -> Any:
    """A ``graphviz.Source`` of the graph: displays inline in Jupyter, ``.pipe()``s to bytes."""
    return _graphviz_source(to_dot(roots, **options))


def render_dot(dot: str, path: str | os.PathLike[str], format: str | None = None) -> Path:
    """Render DOT text to ``path``; the format comes from the suffix (``.svg``, ``.png``...)."""
    target = Path(path)
    fmt = (format or target.suffix.lstrip(".") or "svg").lower()
    source = _graphviz_source(dot)
    data = source.pipe(format=fmt)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def render(
    roots: Any, path: str | os.PathLike[str], *, format: str | None = None, **options: Any
) -> Path:
    """Draw the backward graph of ``roots`` into ``path`` (SVG, PNG, PDF: from the suffix
    unless ``format`` is given). Raises ``GraphvizUnavailable`` when Graphviz is missing."""
    return render_dot(to_dot(roots, **options), path, format)


def array_summary(array: Any, max_items: int = 8) -> str:
    """A short text for a raw backend array: its values when small, else shape and statistics.

    Works for any backend: CPU arrays are read directly, device arrays (CuPy) through
    ``.get()``, others through DLPack; if none works, only the shape and dtype are shown.
    """
    values = _to_host(array)
    shape = _shape_of(array)
    if values is None:
        return f"<{shape_text(shape)} {_dtype_name(array)}>"
    if values.size == 0:
        return f"<empty {shape_text(shape)}>"
    if values.ndim == 0:
        return _num(values.item())
    if values.size <= max_items:
        return "[" + ", ".join(_num(v) for v in values.reshape(-1).tolist()) + "]"
    flat = values.astype("float64").reshape(-1)
    return (
        f"<{shape_text(shape)} mean {_num(float(flat.mean()))}, "
        f"|max| {_num(float(abs(flat).max()))}>"
    )


def _num(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return str(value)


def _to_host(array: Any) -> Any:
    import numpy

    if array is None:
        return None
    if isinstance(array, numpy.ndarray):
        return array
    getter = getattr(array, "get", None)
    if callable(getter) and type(array).__module__.startswith("cupy"):
        try:
            return numpy.asarray(getter())
        except Exception:
            return None
    try:
        return numpy.from_dlpack(array)
    except Exception:
        pass
    try:
        return numpy.asarray(array)
    except Exception:
        return None


def iter_saved_bytes(nodes: Iterable[Any]) -> int:
    """Total bytes still held for backward by ``nodes`` (what ``retain_graph`` keeps alive)."""
    return sum(size for node in nodes for _, _, size in _saved_of(node))
