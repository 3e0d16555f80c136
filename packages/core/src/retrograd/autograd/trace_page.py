"""The HTML page of a trace: a layered drawing of the graph (no Graphviz needed) and a player.

The picture is plain SVG computed here: layers by longest path from the root (so a shared node
sits below every branch that feeds it), nodes ordered in each layer by the barycentre of their
parents, parallel edges (``x * x``) bent apart so both stay visible. The page embeds the steps
that ``Trace`` recorded (each one a small set of display changes) and a few lines of JavaScript
replay them: Next, Back, Play, a slider, and the arrow keys. Nothing is loaded from outside.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..viz import Graph, shape_text

if TYPE_CHECKING:
    from .trace import Trace, TraceWalk

__all__ = ["render_page", "layout", "walk_svg"]

NODE_W = 210
NODE_H = 86
GAP_X = 36
GAP_Y = 70
MARGIN = 24


@dataclass
class Box:
    id: str
    x: float  # centre
    y: float  # top
    layer: int


def layout(graph: Graph) -> tuple[dict[str, Box], float, float]:
    """Positions for the root boxes (``r0``...) and the nodes; returns (boxes, width, height)."""
    ids = [f"r{k}" for k in range(len(graph.roots))] + [n.id for n in graph.nodes]
    children: dict[str, list[str]] = {i: [] for i in ids}
    parents: dict[str, list[str]] = {i: [] for i in ids}
    for k, (_, _, node_id) in enumerate(graph.roots):
        if node_id:
            children[f"r{k}"].append(node_id)
            parents[node_id].append(f"r{k}")
    for e in graph.edges:
        children[e.src].append(e.dst)
        parents[e.dst].append(e.src)
    # Kahn's algorithm gives a topological order; layer = longest path from a root box.
    indegree = {i: len(set(parents[i])) for i in ids}
    ready = [i for i in ids if indegree[i] == 0]
    layer = {i: 0 for i in ids}
    seen_pairs: set[tuple[str, str]] = set()
    while ready:
        current = ready.pop(0)
        for child in children[current]:
            if (current, child) in seen_pairs:
                continue
            seen_pairs.add((current, child))
            layer[child] = max(layer[child], layer[current] + 1)
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    rows: dict[int, list[str]] = {}
    for i in ids:  # ids are in breadth-first order: a stable first guess
        rows.setdefault(layer[i], []).append(i)
    position = {i: float(k) for row in rows.values() for k, i in enumerate(row)}
    for _ in range(2):  # barycentre sweeps, top to bottom
        for depth in sorted(rows)[1:]:
            row = rows[depth]

            def key(i: str, row: list[str] = row) -> float:
                ps = [position[p] for p in parents[i]]
                return sum(ps) / len(ps) if ps else position[i]

            row.sort(key=key)
            for k, i in enumerate(row):
                position[i] = float(k)
    widest = max((len(r) for r in rows.values()), default=1)
    width = widest * NODE_W + (widest - 1) * GAP_X + 2 * MARGIN
    boxes: dict[str, Box] = {}
    for depth, row in rows.items():
        row_width = len(row) * NODE_W + (len(row) - 1) * GAP_X
        left = (width - row_width) / 2
        for k, i in enumerate(row):
            boxes[i] = Box(
                i,
                left + k * (NODE_W + GAP_X) + NODE_W / 2,
                MARGIN + depth * (NODE_H + GAP_Y),
                depth,
            )
    height = MARGIN * 2 + (max(rows) + 1) * NODE_H + max(rows) * GAP_Y if rows else 2 * MARGIN
    return boxes, width, height


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _edge_path(a: Box, b: Box, offset: float) -> tuple[str, float, float]:
    """A quadratic curve from the bottom of ``a`` to the top of ``b``, bent sideways by
    ``offset``; returns the path and the point halfway along it (for the label)."""
    x1, y1 = a.x, a.y + NODE_H
    x2, y2 = b.x, b.y
    cx, cy = (x1 + x2) / 2 + offset, (y1 + y2) / 2
    lx = 0.25 * x1 + 0.5 * cx + 0.25 * x2
    ly = 0.25 * y1 + 0.5 * cy + 0.25 * y2
    return f"M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}", lx, ly


def walk_svg(walk: TraceWalk, index: int) -> str:
    """The SVG of one walk's graph, with ids and classes the player's script updates."""
    graph = walk.graph
    boxes, width, height = layout(graph)
    in_order = set(walk.order)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" data-walk="{index}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        'role="img" aria-label="backward graph">',
        f'<defs><marker id="arrow{index}" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" '
        'orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>',
    ]
    # edges first, so nodes are drawn on top of them
    groups: dict[tuple[str, str], list[int]] = {}
    for k, e in enumerate(graph.edges):
        groups.setdefault((e.src, e.dst), []).append(k)
    for k, (_, _, node_id) in enumerate(graph.roots):
        if node_id:
            d, lx, ly = _edge_path(boxes[f"r{k}"], boxes[node_id], 0.0)
            parts.append(
                f'<g class="edge seed" id="w{index}-edge-seed{k}" data-edge="seed{k}">'
                f'<path d="{d}" marker-end="url(#arrow{index})"/>'
                f'<text x="{lx + 6:.1f}" y="{ly:.1f}">seed</text></g>'
            )
    for (src, dst), members in groups.items():
        for m, k in enumerate(members):
            e = graph.edges[k]
            offset = (m - (len(members) - 1) / 2) * 110.0
            d, lx, ly = _edge_path(boxes[src], boxes[dst], offset)
            anchor = "end" if offset < 0 else "start"
            lx += -4 if offset < 0 else 4
            parts.append(
                f'<g class="edge" id="w{index}-edge-{k}" data-edge="{k}" data-src="{src}" '
                f'data-dst="{dst}"><title>output {e.position} of {_e(src)} to slot {e.input_nr} '
                f'of {_e(dst)}</title><path d="{d}" marker-end="url(#arrow{index})"/>'
                f'<text x="{lx:.1f}" y="{ly:.1f}" style="text-anchor:{anchor}">'
                f"input_nr={e.input_nr}"
                "</text></g>"
            )
    for k, (label, text, _) in enumerate(graph.roots):
        box = boxes[f"r{k}"]
        parts.append(
            f'<g class="root" id="w{index}-root-{k}">'
            f'<rect x="{box.x - NODE_W / 2:.1f}" y="{box.y + 16:.1f}" width="{NODE_W}" '
            f'height="{NODE_H - 32}" rx="27"/>'
            f'<text class="name" x="{box.x:.1f}" y="{box.y + 40:.1f}">{_e(label)}</text>'
            f'<text class="sub" x="{box.x:.1f}" y="{box.y + 57:.1f}">{_e(text)}</text></g>'
        )
    for entry in graph.nodes:
        box = boxes[entry.id]
        if entry.kind == "leaf":
            prefix = f"{entry.label} " if entry.label else ""
            sub = f"{prefix}{shape_text(entry.shape or ())} {entry.dtype}"
        elif entry.kind == "fused":
            sub = "fused: " + " + ".join(entry.parts)
        else:
            sub = entry.label
        status = "idle" if entry.id in in_order else "skipped"
        saved = sum(size for _, _, size in entry.saved)
        parts.append(
            f'<g class="node {entry.kind} st-{status}" id="w{index}-node-{entry.id}" '
            f'data-node="{entry.id}" data-name="{_e(entry.name)}" data-label="{_e(entry.label)}" '
            f'data-saved-bytes="{saved}">'
            f"<title>{_e(entry.name)} [{entry.id}]</title>"
            f'<rect x="{box.x - NODE_W / 2:.1f}" y="{box.y:.1f}" width="{NODE_W}" '
            f'height="{NODE_H}" rx="8"/>'
            f'<text class="name" x="{box.x:.1f}" y="{box.y + 18:.1f}"{_fit(entry.name, 8.2)}>'
            f"{_e(entry.name)}</text>"
            f'<text class="sub" x="{box.x:.1f}" y="{box.y + 34:.1f}"{_fit(sub, 6.6)}>'
            f"{_e(sub)}</text>"
            f'<text class="total" x="{box.x:.1f}" y="{box.y + 55:.1f}"></text>'
            f'<text class="status" x="{box.x:.1f}" y="{box.y + 75:.1f}"></text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _fit(text: str, char_width: float) -> str:
    """Squeeze a label that would overflow its box (SVG text does not wrap)."""
    if len(text) * char_width <= NODE_W - 14:
        return ""
    return f' textLength="{NODE_W - 14}" lengthAdjust="spacingAndGlyphs"'


def _walk_data(walk: TraceWalk) -> dict[str, Any]:
    return {
        "order": walk.order,
        "expected": walk.expected,
        "nodes": {n.id: {"kind": n.kind, "inOrder": n.id in walk.order} for n in walk.graph.nodes},
        "steps": [
            {"kind": s.kind, "text": s.text, "node": s.node, "edge": s.edge, "changes": s.changes}
            for s in walk.steps
        ],
    }


def render_page(trace: Trace, title: str) -> str:
    """The whole page as one string."""
    data = {"title": title, "walks": [_walk_data(w) for w in trace.walks]}
    payload = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
    svgs = "".join(
        f'<div class="walk" id="walk-{k}" data-walk="{k}"{"" if k == 0 else " hidden"}>'
        f"{walk_svg(w, k)}</div>"
        for k, w in enumerate(trace.walks)
    )
    options = "".join(
        f'<option value="{k}">walk {k + 1}: {len(w.steps)} steps</option>'
        for k, w in enumerate(trace.walks)
    )
    fields = {
        "TITLE": _e(title),
        "SVGS": svgs or "<p>No backward walk was recorded.</p>",
        "OPTIONS": options,
        "DATA": payload,
        "CSS": _CSS,
        "JS": _JS,
    }
    # one pass, so text coming from the user can never be taken for a placeholder
    return re.sub(r"__([A-Z]+)__", lambda m: fields.get(m.group(1), m.group(0)), _PAGE)


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 0; color: #263238; background: #fafafa; }
header { padding: 12px 20px; background: #263238; color: #eceff1; }
header h1 { font-size: 18px; margin: 0; }
.controls { display: flex; gap: 8px; align-items: center; padding: 10px 20px; flex-wrap: wrap;
            background: #eceff1; border-bottom: 1px solid #cfd8dc; }
.controls button { font-size: 14px; padding: 4px 12px; cursor: pointer; }
#slider { flex: 1; min-width: 160px; }
#counter { font-variant-numeric: tabular-nums; min-width: 90px; }
#narration { padding: 10px 20px; font-size: 16px; min-height: 24px; background: #fff;
             border-bottom: 1px solid #cfd8dc; font-family: ui-monospace, monospace; }
main { display: flex; gap: 16px; padding: 16px 20px; align-items: flex-start; }
.stage { flex: 3; overflow: auto; background: #fff; border: 1px solid #cfd8dc; border-radius: 6px; }
aside { flex: 2; max-height: 75vh; overflow: auto; font-family: ui-monospace, monospace;
        font-size: 12px; background: #fff; border: 1px solid #cfd8dc; border-radius: 6px; }
aside ol { margin: 0; padding: 8px 8px 8px 40px; }
aside li { padding: 2px 4px; cursor: pointer; white-space: pre-wrap; }
aside li.done { color: #78909c; }
aside li.current { background: #fff3cd; color: #263238; font-weight: bold; }
.legend { display: flex; gap: 14px; padding: 0 20px 16px; font-size: 12px; flex-wrap: wrap; }
.legend span::before { content: ""; display: inline-block; width: 12px; height: 12px;
                       margin-right: 4px; vertical-align: -2px; border: 1px solid #546e7a; }
.legend .l-receiving::before { background: #bbdefb; }
.legend .l-ready::before { background: #c8e6c9; }
.legend .l-ran::before { background: #ffe082; } .legend .l-released::before { background: #e0e0e0; }
.legend .l-skipped::before { background: #fff; border-style: dotted; }
@media (max-width: 1000px) {
  main { flex-direction: column; }
  aside { max-height: 260px; width: 100%; }
  .stage { width: 100%; }
}
svg.graph text { font-size: 12px; text-anchor: middle; fill: #263238; }
svg.graph .name { font-weight: bold; font-size: 13px; }
svg.graph .sub { font-style: italic; fill: #455a64; }
svg.graph .total { font-family: ui-monospace, monospace; font-size: 13px; fill: #0d47a1; }
svg.graph .status { font-size: 11px; fill: #546e7a; }
svg.graph .node rect { fill: #fff; stroke: #546e7a; stroke-width: 1.5; transition: fill .25s; }
svg.graph .node.leaf rect { stroke: #33691e; }
svg.graph .node.fused rect { stroke: #8d6e00; stroke-width: 3; stroke-dasharray: 8 2; }
svg.graph .root rect { fill: #bbdefb; stroke: #0d47a1; }
svg.graph .st-receiving rect { fill: #bbdefb; }
svg.graph .st-ready rect { fill: #c8e6c9; }
svg.graph .st-ran rect { fill: #ffe082; }
svg.graph .st-released rect { fill: #e0e0e0; stroke: #9e9e9e; stroke-dasharray: 4 3; }
svg.graph .st-released text { fill: #9e9e9e; }
svg.graph .st-skipped { opacity: .45; }
svg.graph .st-skipped rect { stroke-dasharray: 2 3; }
svg.graph .node.current rect { stroke: #e65100; stroke-width: 4; }
svg.graph .node.has-grad .total { fill: #1b5e20; font-weight: bold; }
svg.graph .edge path { fill: none; stroke: #90a4ae; stroke-width: 1.6; }
svg.graph .edge text { font-size: 10px; fill: #78909c; text-anchor: start; }
svg.graph .edge.delivered path { stroke: #1565c0; }
svg.graph .edge.active path { stroke: #e65100; stroke-width: 4; }
svg.graph .edge.active text { fill: #e65100; font-weight: bold; }
"""

_JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("trace-data").textContent);
  var walkIndex = 0, step = 0, timer = null;
  var slider = document.getElementById("slider");
  var counter = document.getElementById("counter");
  var narration = document.getElementById("narration");
  var log = document.getElementById("log");
  var select = document.getElementById("walk-select");

  function walk() { return DATA.walks[walkIndex]; }
  function svgRoot() { return document.querySelector('#walk-' + walkIndex + ' svg'); }

  function buildLog() {
    log.innerHTML = "";
    walk().steps.forEach(function (s, i) {
      var li = document.createElement("li");
      li.textContent = s.kind + "  " + s.text;
      li.dataset.step = i;
      li.addEventListener("click", function () { go(i); });
      log.appendChild(li);
    });
  }

  function stateAt(n) {
    var w = walk(), state = {};
    Object.keys(w.nodes).forEach(function (id) {
      state[id] = { status: w.nodes[id].inOrder ? "idle" : "skipped", totals: {} };
    });
    var delivered = {};
    for (var i = 0; i <= n && i < w.steps.length; i++) {
      var s = w.steps[i];
      if (s.edge !== null && s.edge !== undefined) delivered[s.edge] = true;
      Object.keys(s.changes).forEach(function (id) {
        var st = state[id] || (state[id] = { status: "idle", totals: {} });
        var ch = s.changes[id];
        Object.keys(ch).forEach(function (k) {
          if (k === "totals") { Object.assign(st.totals, ch.totals); } else { st[k] = ch[k]; }
        });
      });
    }
    return { nodes: state, delivered: delivered };
  }

  function totalsText(st) {
    if (st.grad) return st.grad;
    var slots = Object.keys(st.totals);
    if (!slots.length) return "";
    return slots.map(function (k) { return "slot " + k + ": " + st.totals[k]; }).join("  ");
  }

  function statusText(st) {
    var parts = [];
    if (st.expected) parts.push((st.arrived || 0) + "/" + st.expected + " in");
    var words = { idle: "waiting", receiving: "receiving", ready: "ready", ran: "ran",
                  released: "released", skipped: "not run" };
    parts.push(words[st.status] || st.status);
    if (st.position) parts.push("order #" + st.position);
    return parts.join(" \u00b7 ");
  }

  function render() {
    var w = walk(), n = w.steps.length;
    var snap = stateAt(step), svg = svgRoot(), cur = w.steps[step] || null;
    slider.max = Math.max(0, n - 1);
    slider.value = step;
    counter.textContent = "step " + (n ? step + 1 : 0) + " / " + n;
    narration.textContent = cur ? cur.kind + ": " + cur.text : "";
    if (svg) {
      svg.querySelectorAll("g.node").forEach(function (g) {
        var id = g.dataset.node, st = snap.nodes[id] || { status: "idle", totals: {} };
        g.setAttribute("class", "node " + w.nodes[id].kind + " st-" + st.status +
          (st.grad ? " has-grad" : "") + (cur && cur.node === id ? " current" : ""));
        g.dataset.status = st.status;
        var total = totalsText(st);
        g.querySelector(".total").textContent =
          total.length > 24 ? total.slice(0, 23) + "\u2026" : total;
        g.dataset.total = total;
        g.querySelector(".status").textContent = statusText(st);
      });
      svg.querySelectorAll("g.edge").forEach(function (g) {
        var key = g.dataset.edge, idx = key.indexOf("seed") === 0 ? -1 : Number(key);
        var cls = "edge" + (idx === -1 ? " seed" : "");
        if (snap.delivered[idx]) cls += " delivered";
        if (cur && cur.kind === "arrive" && cur.edge === idx) cls += " active";
        g.setAttribute("class", cls);
      });
    }
    Array.prototype.forEach.call(log.children, function (li, i) {
      li.className = i === step ? "current" : (i < step ? "done" : "");
    });
    var li = log.children[step];
    if (li && li.scrollIntoView) li.scrollIntoView({ block: "nearest" });
    document.body.dataset.step = step;
  }

  function go(i) {
    var n = walk().steps.length;
    step = Math.max(0, Math.min(n - 1, i));
    render();
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } play.textContent = "Play"; }
  var play = document.getElementById("play");
  document.getElementById("next").addEventListener("click", function () { stop(); go(step + 1); });
  document.getElementById("prev").addEventListener("click", function () { stop(); go(step - 1); });
  document.getElementById("first").addEventListener("click", function () { stop(); go(0); });
  document.getElementById("last").addEventListener("click", function () { stop(); go(1e9); });
  play.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (step >= walk().steps.length - 1) go(0);
    play.textContent = "Pause";
    timer = setInterval(function () {
      if (step >= walk().steps.length - 1) { stop(); return; }
      go(step + 1);
    }, 900);
  });
  slider.addEventListener("input", function () { stop(); go(Number(slider.value)); });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowRight") { stop(); go(step + 1); }
    else if (ev.key === "ArrowLeft") { stop(); go(step - 1); }
  });
  if (select) select.addEventListener("change", function () {
    stop();
    document.getElementById("walk-" + walkIndex).hidden = true;
    walkIndex = Number(select.value);
    document.getElementById("walk-" + walkIndex).hidden = false;
    buildLog(); go(0);
  });
  window.retrogradTrace = { go: go, step: function () { return step; }, data: DATA };
  if (DATA.walks.length) { buildLog(); go(0); }
  document.body.dataset.ready = "1";
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__CSS__</style>
</head>
<body>
<header><h1>__TITLE__</h1></header>
<div class="controls">
  <button id="first" title="first step">First</button>
  <button id="prev" title="previous step (left arrow)">&#x25C0; Back</button>
  <button id="next" title="next step (right arrow)">Next &#x25B6;</button>
  <button id="play">Play</button>
  <button id="last" title="last step">Last</button>
  <input type="range" id="slider" min="0" max="0" value="0" aria-label="step">
  <span id="counter"></span>
  <select id="walk-select" aria-label="walk">__OPTIONS__</select>
</div>
<div id="narration" aria-live="polite"></div>
<main>
  <div class="stage">__SVGS__</div>
  <aside><ol id="log"></ol></aside>
</main>
<div class="legend">
  <span class="l-receiving">receiving contributions</span>
  <span class="l-ready">ready (all arrived)</span>
  <span class="l-ran">ran</span><span class="l-released">released saved tensors</span>
  <span class="l-skipped">not run in this walk</span>
</div>
<script type="application/json" id="trace-data">__DATA__</script>
<script>__JS__</script>
</body>
</html>
"""
