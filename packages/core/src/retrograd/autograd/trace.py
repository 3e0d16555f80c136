"""``retrograd.autograd.trace()``: record what the engine does during a backward walk.

Inside ``with trace() as t:`` every backward walk of this thread reports its events through the
engine's tracer hook (``engine.set_tracer``, thread-local): the order it chose, each gradient
contribution arriving at a node's input slot (value and running total), a node becoming ready
(all contributions in), running, releasing its saved tensors, and ``.grad`` written at the end.
The recorder turns each event into plain text and numbers at once, so a trace keeps no arrays
and, once the block exits, no reference to the graph.

``t.text()`` prints the walk; ``t.html()`` / ``t.save_html(path)`` write a self-contained page
that steps through it on a picture of the graph (docs/images/shared-branch-walk.html, made
from a real run of the shared-branch example in docs/engine.md)::

    with rg.autograd.trace(names={"x": x, "u": u}) as t:
        loss.backward()
    print(t.text())
    t.save_html("walk.html")
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..viz import Graph, GraphNode, array_summary, collect_graph, format_bytes, graph_to_dot

__all__ = ["trace", "Trace", "TraceWalk", "TraceStep"]


@dataclass
class TraceStep:
    """One engine event, already in words. ``changes`` maps a node id to the fields of its
    display state that this event sets (the HTML page replays them; ``TraceWalk.states`` too).
    """

    kind: str
    text: str
    node: str | None = None
    edge: int | None = None  # index into the walk's graph edges for an arrival, -1 for a seed
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class TraceWalk:
    """One backward walk: the graph as it stood at the start, its order, and its steps."""

    graph: Graph
    order: list[str]
    roots: list[str]
    steps: list[TraceStep] = field(default_factory=list)
    expected: dict[str, int] = field(default_factory=dict)
    ok: bool | None = None
    # bookkeeping while recording; dropped at the end of the walk
    _ids: dict[int, str] = field(default_factory=dict, repr=False)
    _leaf_ids: dict[int, str] = field(default_factory=dict, repr=False)
    _arrived: dict[str, int] = field(default_factory=dict, repr=False)
    _edge_uses: dict[tuple[str, str, int], int] = field(default_factory=dict, repr=False)

    def entry(self, node_id: str) -> GraphNode:
        for entry in self.graph.nodes:
            if entry.id == node_id:
                return entry
        raise KeyError(node_id)

    def display(self, node_id: str | None) -> str:
        """``MulBackward0 (u)``, or ``MulBackward0 [n3]`` for a node without a user name."""
        if node_id is None:
            return "seed"
        entry = self.entry(node_id)
        return f"{entry.name} ({entry.label})" if entry.label else f"{entry.name} [{entry.id}]"

    def states(self) -> list[dict[str, dict[str, Any]]]:
        """The display state of every node after each step (what the page shows at step i)."""
        current: dict[str, dict[str, Any]] = {
            n.id: {"status": "idle" if n.id in self.order else "skipped", "totals": {}}
            for n in self.graph.nodes
        }
        out = []
        for step in self.steps:
            for node_id, change in step.changes.items():
                state = current.setdefault(node_id, {"status": "idle", "totals": {}})
                for key, value in change.items():
                    if key == "totals":
                        state["totals"] = {**state["totals"], **value}
                    else:
                        state[key] = value
            out.append({k: {**v, "totals": dict(v["totals"])} for k, v in current.items()})
        return out


class Trace:
    """The recorder that ``trace()`` installs; also the result you read afterwards."""

    def __init__(self, names: Mapping[str, Any] | None = None) -> None:
        self.names = dict(names or {})
        self.walks: list[TraceWalk] = []
        self._open: list[TraceWalk] = []

    # -- the tracer protocol (called by the engine) ---------------------------------------
    def event(self, kind: str, **data: Any) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if kind == "begin":
            self._on_begin(**data)
            return
        walk = self._open[-1] if self._open else None
        if walk is None:
            return  # an event outside a walk we saw begin (tracer set mid-walk): ignore
        if handler is None:
            walk.steps.append(TraceStep(kind, f"{kind} {_kv(data)}"))
            return
        handler(walk, **data)

    def _on_begin(self, roots: Any = (), order: Any = (), **_: Any) -> None:
        roots = list(roots)
        order = list(order)
        fused_of: dict[int, Any] = {}
        for node in order:
            if getattr(node, "fused", False):
                for part in getattr(node, "parts", ()):
                    fused_of[id(part)] = node
        graph = collect_graph(
            roots or order[:1],
            names=self.names,
            alias=lambda n: fused_of.get(id(n), n),
            max_nodes=10_000,
        )
        ids = {id(entry.node): entry.id for entry in graph.nodes}
        for part_id, fused in fused_of.items():  # contributions addressed to a part
            if id(fused) in ids:
                ids[part_id] = ids[id(fused)]
        leaf_ids = {
            id(entry.node.variable): entry.id for entry in graph.nodes if entry.kind == "leaf"
        }
        order_ids = [ids[id(n)] for n in order if id(n) in ids]
        walk = TraceWalk(graph=graph, order=order_ids, roots=[r[2] for r in graph.roots])
        walk._ids = ids
        walk._leaf_ids = leaf_ids
        in_order = set(order_ids)
        for edge in graph.edges:
            if edge.src in in_order:
                walk.expected[edge.dst] = walk.expected.get(edge.dst, 0) + 1
        for root_id in walk.roots:
            if root_id:
                walk.expected[root_id] = walk.expected.get(root_id, 0) + 1
        self.walks.append(walk)
        self._open.append(walk)
        names = ", ".join(walk.display(i) for i in order_ids) or "(nothing to run)"
        root_text = ", ".join(f"{label} {text}".strip() for label, text, _ in graph.roots)
        changes = {
            i: {"expected": walk.expected.get(i, 0), "arrived": 0, "position": k + 1}
            for k, i in enumerate(order_ids)
        }
        walk.steps.append(
            TraceStep(
                "begin",
                f"backward from {root_text}: order {names}",
                changes=changes,
            )
        )

    def _node_id(self, walk: TraceWalk, node: Any) -> str | None:
        if node is None:
            return None
        return walk._ids.get(id(node))

    def _on_arrive(
        self,
        walk: TraceWalk,
        node: Any = None,
        slot: int = 0,
        value: Any = None,
        total: Any = None,
        source: Any = None,
        **_: Any,
    ) -> None:
        dst = self._node_id(walk, node)
        src = self._node_id(walk, source)
        value_text = array_summary(value)
        total_text = array_summary(total)
        edge_index: int | None = None
        if dst is not None:
            if source is None:
                edge_index = -1
            elif src is not None:
                key = (src, dst, int(slot))
                nth = walk._edge_uses.get(key, 0)
                walk._edge_uses[key] = nth + 1
                matching = [
                    k
                    for k, e in enumerate(walk.graph.edges)
                    if e.src == src and e.dst == dst and e.input_nr == int(slot)
                ]
                if matching:
                    edge_index = matching[min(nth, len(matching) - 1)]
        changes: dict[str, dict[str, Any]] = {}
        count_text = ""
        if dst is not None:
            arrived = walk._arrived.get(dst, 0) + 1
            walk._arrived[dst] = arrived
            expected = walk.expected.get(dst, 0)
            changes[dst] = {
                "status": "receiving",
                "arrived": arrived,
                "totals": {str(int(slot)): total_text},
            }
            count_text = f", {arrived} of {expected} edges" if expected else ""
        where = walk.display(dst) if dst else _node_text(node)
        who = (
            walk.display(src)
            if source is not None and src
            else ("seed" if source is None else _node_text(source))
        )
        walk.steps.append(
            TraceStep(
                "arrive",
                f"{where} slot {int(slot)} <- {who}: {value_text} (total {total_text}{count_text})",
                node=dst,
                edge=edge_index,
                changes=changes,
            )
        )

    def _on_ready(self, walk: TraceWalk, node: Any = None, grads: Any = (), **_: Any) -> None:
        dst = self._node_id(walk, node)
        inputs = ", ".join("None" if g is None else array_summary(g) for g in list(grads or ()))
        changes = {dst: {"status": "ready"}} if dst else {}
        where = walk.display(dst) if dst else _node_text(node)
        walk.steps.append(
            TraceStep("ready", f"{where} is ready: inputs [{inputs}]", node=dst, changes=changes)
        )

    def _on_run(self, walk: TraceWalk, node: Any = None, outputs: Any = (), **_: Any) -> None:
        dst = self._node_id(walk, node)
        outs = ", ".join("None" if g is None else array_summary(g) for g in list(outputs or ()))
        changes = {dst: {"status": "ran", "outputs": outs}} if dst else {}
        where = walk.display(dst) if dst else _node_text(node)
        walk.steps.append(
            TraceStep("run", f"{where} ran: outputs [{outs}]", node=dst, changes=changes)
        )

    def _on_release(self, walk: TraceWalk, node: Any = None, **_: Any) -> None:
        dst = self._node_id(walk, node)
        where = walk.display(dst) if dst else _node_text(node)
        if not getattr(node, "released", True):
            # AccumulateGrad is shared by every graph of its leaf: the engine never frees it
            walk.steps.append(
                TraceStep("release", f"{where} keeps its state (shared, never released)", node=dst)
            )
            return
        freed = ""
        if dst:
            entry = walk.entry(dst)
            entry.released = True
            total = sum(size for _, _, size in entry.saved)
            freed = f" (frees {format_bytes(total)})" if total else ""
        changes = {dst: {"status": "released"}} if dst else {}
        walk.steps.append(
            TraceStep(
                "release", f"{where} released its saved tensors{freed}", node=dst, changes=changes
            )
        )

    def _on_grad_written(
        self, walk: TraceWalk, tensor: Any = None, value: Any = None, **_: Any
    ) -> None:
        target = walk._leaf_ids.get(id(tensor))
        grad_fn = getattr(tensor, "grad_fn", None)
        if target is None and grad_fn is not None:
            target = walk._ids.get(id(grad_fn))  # retain_grad on an interior tensor
        label = next((k for k, v in self.names.items() if v is tensor), None)
        if label is None and target is not None:
            label = walk.entry(target).label or None
        label = label or f"tensor {_shape(tensor)}"
        text = array_summary(value)
        changes: dict[str, dict[str, Any]] = {}
        if target:
            changes[target] = {"grad": f"{label}.grad = {text}"}
            if walk.entry(target).kind == "leaf":
                changes[target]["status"] = "ran"  # the accumulator's work is this write
        walk.steps.append(
            TraceStep("grad_written", f"{label}.grad = {text}", node=target, changes=changes)
        )

    def _on_end(self, walk: TraceWalk, ok: bool = True, **_: Any) -> None:
        walk.ok = bool(ok)
        walk.steps.append(
            TraceStep("end", "walk finished" if ok else "walk failed: no .grad was changed")
        )
        self._open.pop()
        # Drop every reference to the graph: a trace must not keep a model's graph alive.
        for entry in walk.graph.nodes:
            entry.node = None
        walk._leaf_ids = {}

    # -- reading the result ---------------------------------------------------------------
    def node_id(self, node: Any, walk: int = -1) -> str:
        """The id (``n3``) that the text, the DOT and the page use for ``node`` (valid while the
        graph is alive: ids are matched by object identity)."""
        found = self.walks[walk]._ids.get(id(node))
        if found is None:
            raise KeyError(f"{_node_text(node)} is not in walk {walk}")
        return found

    def text(self) -> str:
        """The walks as numbered lines, one per event."""
        lines = []
        for w, walk in enumerate(self.walks):
            lines.append(f"walk {w + 1} of {len(self.walks)}")
            for k, step in enumerate(walk.steps):
                lines.append(f"{k:4d}  {step.kind:<12s} {step.text}")
        return "\n".join(lines) + ("\n" if lines else "")

    __str__ = text

    def to_dot(self, walk: int = -1) -> str:
        """The walk's graph as DOT (fused nodes as the walk ran them; released nodes greyed)."""
        return graph_to_dot(self.walks[walk].graph)

    def html(self, title: str = "retrograd backward walk") -> str:
        """A self-contained HTML page (no external files) stepping through the walks."""
        from .trace_page import render_page

        return render_page(self, title)

    def save_html(self, path: str | Path, title: str = "retrograd backward walk") -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.html(title), encoding="utf-8")
        return target


def _shape(tensor: Any) -> str:
    return str(tuple(getattr(tensor, "shape", ())))


def _node_text(node: Any) -> str:
    if node is None:
        return "seed"
    name = getattr(node, "name", None)
    return str(name()) if callable(name) else type(node).__name__


def _kv(data: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v!r}"[:80] for k, v in data.items())


def _engine_module() -> Any:
    from . import engine

    return engine


@contextlib.contextmanager
def trace(names: Mapping[str, Any] | None = None) -> Iterator[Trace]:
    """Record every backward walk run by this thread inside the block.

    ``names`` labels tensors in the text and the pictures (``{"x": x, "u": u}``). The tracer
    is thread-local, like grad mode: walks in other threads are not recorded. Blocks nest; the
    inner one records, and the outer one resumes when it exits.
    """
    engine = _engine_module()
    recorder = Trace(names)
    get_tracer = getattr(engine, "get_tracer", None)
    previous = get_tracer() if callable(get_tracer) else None
    engine.set_tracer(recorder)
    try:
        yield recorder
    finally:
        engine.set_tracer(previous)
