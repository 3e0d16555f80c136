"""retrograd.autograd.trace: the recorded walk of the shared-branch example, its text, its page
in a browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

import retrograd as rg
from retrograd.autograd import engine
from retrograd.autograd.trace import trace


def shared_branch(x_value: float = 2.0, mirrored: bool = False):
    """The shared-branch program (docs/conformance.md#shared-branch); ``mirrored`` writes the
    sum as ``b + a`` (the same graph, with the root's edges in the other order)."""
    x = rg.tensor(x_value, requires_grad=True)
    u = x * x
    u.retain_grad()
    a, b = 2 * u, 3 * u
    loss = b + a if mirrored else a + b
    return x, u, a, b, loss


def traced_shared_branch(mirrored: bool = False):
    x, u, a, b, loss = shared_branch(mirrored=mirrored)
    with trace(names={"x": x, "u": u, "a": a, "b": b, "loss": loss}) as t:
        loss.backward()
    return t, (x, u, a, b, loss)


def test_trace_is_exported_where_the_lead_exports_it():
    from retrograd.autograd import trace as exported

    assert exported is trace or exported.__module__ == trace.__module__


def test_shared_branch_walk_events_in_engine_order():
    t, (x, u, a, b, loss) = traced_shared_branch()
    assert len(t.walks) == 1
    walk = t.walks[0]
    assert walk.ok is True
    kinds = [s.kind for s in walk.steps]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    shared = t.node_id(u.grad_fn)
    # the shared node receives two contributions before it becomes ready, and runs once
    mine = [s for s in walk.steps if s.node == shared]
    assert [s.kind for s in mine] == ["arrive", "arrive", "ready", "run", "release", "grad_written"]
    # the engine (like PyTorch, see test_branch_order_is_pytorchs) runs b = 3*u first
    assert [s.changes[shared]["totals"]["0"] for s in mine[:2]] == ["3", "5"]
    assert "inputs [5]" in mine[2].text
    assert "outputs [10, 10]" in mine[3].text
    assert x.grad.item() == 20 and u.grad.item() == 5


def test_every_node_runs_after_all_its_contributions():
    t, _ = traced_shared_branch()
    walk = t.walks[0]
    arrived: dict[str, int] = {}
    ready = []
    for step in walk.steps:
        if step.kind == "arrive":
            arrived[step.node] = arrived.get(step.node, 0) + 1
        if step.kind in ("ready", "run"):
            assert arrived.get(step.node, 0) == walk.expected[step.node]
        if step.kind == "ready":
            ready.append(step.node)
    assert sorted(walk.expected.values()) == [1, 1, 1, 2, 2]  # add, a, b; square; leaf (x*x)
    assert len(ready) == len(set(ready)) == 5  # each node once
    # the four formula nodes run; the leaf's accumulator writes x.grad at the commit
    assert sum(1 for s in walk.steps if s.kind == "run") == 4


def test_branch_order_on_the_shared_branch_program_is_pytorchs():
    """Which branch reaches the shared node first is the engine's choice (E1: any order that
    respects the dependencies). On this program both engines run b = 3*u first: PyTorch
    because b was created last, retrograd because its reverse DFS post-order visits the root's
    last edge first (so ``b + a`` runs a first here, where PyTorch still runs b first)."""
    torch = pytest.importorskip("torch")
    x = torch.tensor(2.0, requires_grad=True)
    u = x * x
    a, b = 2 * u, 3 * u
    ran = []
    a.grad_fn.register_hook(lambda gi, go: ran.append("a"))
    b.grad_fn.register_hook(lambda gi, go: ran.append("b"))
    (a + b).backward()
    t, (_, _, a2, b2, _) = traced_shared_branch()
    names = {t.node_id(a2.grad_fn): "a", t.node_id(b2.grad_fn): "b"}
    ours = [names[s.node] for s in t.walks[0].steps if s.kind == "run" and s.node in names]
    assert ours == ran == ["b", "a"]


@pytest.mark.parametrize(("mirrored", "first"), [(False, "3"), (True, "2")])
def test_states_replay_the_shared_node_receiving_its_contributions(mirrored, first):
    t, (x, u, *_) = traced_shared_branch(mirrored)
    walk = t.walks[0]
    shared = t.node_id(u.grad_fn)
    seen = []
    for state in walk.states():
        total = state[shared]["totals"].get("0")
        if total is not None and (not seen or seen[-1] != total):
            seen.append(total)
    assert seen == [first, "5"]
    final = walk.states()[-1]
    leaf_id = next(n.id for n in walk.graph.nodes if n.kind == "leaf")
    assert final[leaf_id]["grad"] == "x.grad = 20"
    assert final[shared]["grad"] == "u.grad = 5"
    assert final[shared]["status"] == "released"


def test_text_rendering():
    t, _ = traced_shared_branch()
    text = t.text()
    assert text.startswith("walk 1 of 1")
    assert "order AddBackward0 (loss)" in text
    assert "MulBackward0 (u) slot 0 <- MulBackward0 (b): 3 (total 3, 1 of 2 edges)" in text
    assert "MulBackward0 (u) slot 0 <- MulBackward0 (a): 2 (total 5, 2 of 2 edges)" in text
    assert "AccumulateGrad (x) slot 0 <- MulBackward0 (u): 10 (total 20, 2 of 2 edges)" in text
    assert "x.grad = 20" in text and "u.grad = 5" in text
    assert "released its saved tensors" in text
    assert str(t) == text


def test_trace_keeps_no_graph_alive():
    import gc
    import weakref

    x, u, a, b, loss = shared_branch()
    ref = weakref.ref(u.grad_fn)
    with trace() as t:
        loss.backward()
    del u, a, b, loss
    gc.collect()
    assert ref() is None
    assert all(n.node is None for n in t.walks[0].graph.nodes)


def test_tracer_is_removed_on_exit_and_nesting_restores_the_outer_one():
    with trace() as outer:
        with trace() as inner:
            shared_branch()[-1].backward()
        assert engine.get_tracer() is outer
        shared_branch()[-1].backward()
    assert engine.get_tracer() is None
    shared_branch()[-1].backward()
    assert len(inner.walks) == 1 and len(outer.walks) == 1


def test_tracer_is_thread_local():
    with trace() as t:
        worker = threading.Thread(target=lambda: shared_branch()[-1].backward())
        worker.start()
        worker.join()
    assert t.walks == []


def test_failed_walk_is_recorded_and_grads_untouched():
    x = rg.tensor(2.0, requires_grad=True)
    y = x * x
    with rg.no_grad():
        x.add_(1)
    with trace() as t, pytest.raises(rg.VersionMismatch):
        y.backward()
    assert t.walks[0].ok is False
    assert "walk failed" in t.text()
    assert x.grad is None


def test_grad_walk_marks_nodes_off_the_path_as_skipped():
    x = rg.tensor(2.0, requires_grad=True)
    w = rg.tensor(3.0, requires_grad=True)
    h = x * x
    loss = h * w
    with trace(names={"x": x, "w": w, "h": h}) as t:
        (g,) = rg.autograd.grad(loss, [h])
    assert g.item() == 3.0
    walk = t.walks[0]
    first = walk.states()[0]
    leaves = [n.id for n in walk.graph.nodes if n.kind == "leaf"]
    assert len(leaves) == 2 and all(first[i]["status"] == "skipped" for i in leaves)
    square = t.node_id(h.grad_fn)
    assert first[square]["status"] == "idle"  # it receives the captured gradient
    assert not any(s.kind == "run" and s.node == square for s in walk.steps)
    assert not any(s.kind == "grad_written" for s in walk.steps)


def test_html_is_self_contained_and_carries_the_steps():
    t, (x, u, *_) = traced_shared_branch()
    page = t.html(title="shared-branch <walk>")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>shared-branch &lt;walk&gt;</title>" in page
    # no external resource of any kind
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<link" not in page and "@import" not in page
    payload = re.search(
        r'<script type="application/json" id="trace-data">(.*?)</script>', page, re.S
    ).group(1)
    data = json.loads(payload)
    assert len(data["walks"]) == 1 and len(data["walks"][0]["steps"]) == len(t.walks[0].steps)
    shared = t.node_id(u.grad_fn)
    assert f'data-node="{shared}"' in page


def test_save_html(tmp_path):
    t, _ = traced_shared_branch()
    path = t.save_html(tmp_path / "out" / "walk.html")
    assert path.read_text(encoding="utf-8") == t.html()


def test_page_with_no_walk():
    with trace() as t:
        pass
    assert "No backward walk was recorded" in t.html()
    assert t.text() == ""


# -- the page in a real browser ------------------------------------------------------------
CHROMIUM = os.environ.get("RETROGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs Playwright: pip install playwright"
    )
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not executable:
        pytest.skip(
            f"the browser test needs Debian's chromium at {CHROMIUM} (apt-get install chromium) "
            "or RETROGRAD_CHROMIUM pointing at a Chromium binary"
        )
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on(
        "request",
        lambda req: (
            errors.append(f"request to {req.url}")
            if not req.url.startswith(("file:", "data:", "about:"))
            else None
        ),
    )
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, errors


@pytest.mark.parametrize(
    ("mirrored", "first"),
    [(True, "2"), (False, "3")],
    ids=["b+a: the shared node receives 2 then 5", "a+b: 3 then 5"],
)
def test_browser_steps_through_shared_branch_and_shows_the_shared_node_receive_2_then_5(
    browser, tmp_path, mirrored, first
):
    t, (x, u, *_) = traced_shared_branch(mirrored)
    shared = t.node_id(u.grad_fn)
    leaf = next(n.id for n in t.walks[0].graph.nodes if n.kind == "leaf")
    page, errors = open_page(browser, t.save_html(tmp_path / "walk.html"))
    node = f'svg [data-node="{shared}"]'

    assert page.text_content("#counter") == f"step 1 / {len(t.walks[0].steps)}"
    assert page.get_attribute(node, "data-total") == ""
    totals, statuses = [], []
    for _ in range(len(t.walks[0].steps) - 1):
        page.click("#next")
        total = page.get_attribute(node, "data-total")
        if total and (not totals or totals[-1] != total):
            totals.append(total)
        statuses.append(page.get_attribute(node, "data-status"))
    # first the 2 from one branch, then the running total 5 once the other branch arrives
    assert totals[:2] == [f"slot 0: {first}", "slot 0: 5"]
    assert totals[-1] == "u.grad = 5"
    # it waits, receives, becomes ready, runs and is released, in that order
    order = [s for i, s in enumerate(statuses) if i == 0 or statuses[i - 1] != s]
    assert order == ["idle", "receiving", "ready", "ran", "released"]
    assert page.get_attribute(f'svg [data-node="{leaf}"]', "data-total") == "x.grad = 20"
    assert "end" in page.text_content("#narration")

    # stepping back returns to the moment only one contribution had arrived
    first_arrival = next(
        i for i, s in enumerate(t.walks[0].steps) if s.kind == "arrive" and s.node == shared
    )
    page.click("#first")
    for _ in range(first_arrival):
        page.click("#next")
    assert page.get_attribute(node, "data-total") == f"slot 0: {first}"
    assert "receiving" in page.get_attribute(node, "class")
    assert "current" in page.get_attribute(node, "class")
    active = page.locator("svg g.edge.active")
    assert active.count() == 1 and active.get_attribute("data-dst") == shared
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute(node, "data-total") == ""
    assert errors == []
