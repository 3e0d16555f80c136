"""The document cases: worked examples of how reverse-mode autodiff behaves, each with the
numbers it must produce.

Each program is written against the adapter (``lib``), so it runs unchanged on every retrograd
backend and on PyTorch; ``expected`` holds the example's own numbers, and every result is also
compared with PyTorch run live. ``docs/conformance.md`` explains every case (what is computed,
the expected numbers, and why); a case's caption names its topic and that section. Where the
contract (``docs/semantics.md``) settles a question differently from the example's first
telling (hook-replaces), the contract's value is expected and ``note`` says why.
"""

from __future__ import annotations

from typing import Any

from ..errors import Raises
from .base import TOPIC_BACKWARD, TOPIC_ENGINE, TOPIC_MEET, Case, Source

S_SHARED = Source(TOPIC_MEET, "a shared value receives two contributions")
S_CPP = Source(TOPIC_MEET, "each node runs once, after all its contributions arrived")
S_GRAPH = Source(TOPIC_MEET, "nodes, edges and input slots of the backward graph")
S_VJP = Source(TOPIC_MEET, "a backward call computes a weighted derivative (a VJP)")
S_ACCUM = Source(TOPIC_MEET, "accumulation into .grad across calls")
S_SAVED = Source(TOPIC_MEET, "saved tensors and the two errors they explain")
S_CREATE = Source(TOPIC_MEET, "recording a derivative (create_graph) is not retaining a graph")
S_RELEASE = Source(TOPIC_BACKWARD, "the graph is released after the walk")
S_VERSION = Source(TOPIC_BACKWARD, "the version check on saved tensors")
S_E2E = Source(TOPIC_BACKWARD, "seeds, broadcasting and hooks along the way")
S_BACKWARD = Source(TOPIC_ENGINE, "backward's parameters")
S_GRAD = Source(TOPIC_ENGINE, "grad computes without writing .grad")
S_GRAD_RET = Source(TOPIC_ENGINE, "what grad returns for an input it never reaches")
S_GRAD_NOTES = Source(TOPIC_ENGINE, "grad with respect to interior tensors")


def _count_runs(node: Any) -> list[int]:
    """Register a node hook that counts how many times ``node`` runs."""
    runs = [0]

    def hook(grad_inputs: Any, grad_outputs: Any) -> None:
        runs[0] += 1

    node.register_hook(hook)
    return runs


def _shared_branch(x0: float):
    def program(lib: Any) -> dict[str, Any]:
        x = lib.tensor(x0, requires_grad=True)
        u = x * x
        u.retain_grad()
        a, b = 2 * u, 3 * u
        loss = a + b
        runs = _count_runs(u.grad_fn)
        loss.backward()
        return {"u": u, "a": a, "b": b, "loss": loss, "u.grad": u.grad, "x.grad": x.grad,
                "square node runs": runs[0]}

    program.__name__ = f"shared_branch_x{x0:g}"
    return program


def graph_structure(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    u = x * x
    a, b = 2 * u, 3 * u
    edges = u.grad_fn.next_functions
    return {
        "a.grad_fn.next_functions[0][0] is u.grad_fn": a.grad_fn.next_functions[0][0] is u.grad_fn,
        "b.grad_fn.next_functions[0][0] is u.grad_fn": b.grad_fn.next_functions[0][0] is u.grad_fn,
        "len(u.grad_fn.next_functions)": len(edges),
        "edges are AccumulateGrad": [lib.is_accumulate_grad(node) for node, _ in edges],
        "edge slots": [float(slot) for _, slot in edges],
        "same leaf node": edges[0][0] is edges[1][0],
    }


def vjp(lib: Any) -> dict[str, Any]:
    x = lib.tensor([2.0, 3.0], requires_grad=True)
    y = lib.stack((x[0] ** 2, x[0] * x[1]))
    (g,) = lib.autograd.grad(y, x, grad_outputs=lib.tensor([1.0, 4.0]))
    return {"VJP": g, "x.grad": x.grad}


def accumulate(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    seen = []
    for _ in range(2):
        u = x * x  # a fresh forward graph each time
        (2 * u + 3 * u).backward()
        seen.append(x.grad.item())
    x.grad = None
    u = x * x
    (2 * u + 3 * u).backward()
    return {"accumulated (1)": seen[0], "accumulated (2)": seen[1], "after reset": x.grad}


def reused_graph(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    first = x.grad.item()
    return {"first backward: x.grad": first, "second backward": lib.capture(y.backward),
            "x.grad after the failed call": x.grad}


def modified_saved_input(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x
    with lib.no_grad():
        x.add_(1)
    return {"backward": lib.capture(y.backward), "x.grad": x.grad}


def double_backward(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    (g,) = lib.autograd.grad(5 * x * x, x, create_graph=True)
    (h,) = lib.autograd.grad(g, x)
    return {"first derivative": g, "second derivative": h, "x.grad": x.grad}


def grad_leaves_untouched(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    w = lib.tensor(3.0, requires_grad=True)
    b = lib.tensor(0.5, requires_grad=True)
    x.grad = lib.tensor(1.0)
    w.grad = lib.tensor(7.0)
    y = x * w + b * w
    (g_engine,) = lib.engine_grad(y, [x], retain_graph=True)
    (g_api,) = lib.autograd.grad(y, [x])
    return {"Engine.grad dy/dx": g_engine, "autograd.grad dy/dx": g_api,
            "x.grad": x.grad, "w.grad": w.grad, "b.grad": b.grad}


def grad_unreached(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    z = lib.tensor(5.0, requires_grad=True)
    y = x * x
    return {
        "Engine.grad([x, z])": lib.engine_grad(y, [x, z], retain_graph=True),
        "autograd.grad([x, z])": lib.capture(
            lambda: lib.autograd.grad(y, [x, z], retain_graph=True)),
        "autograd.grad([x, z], allow_unused=True)": list(
            lib.autograd.grad(y, [x, z], allow_unused=True)),
    }


def interior_capture(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    y = (h * 3).sum()
    g_h, g_x = lib.engine_grad(y, [h, x], retain_graph=True)
    a_h, a_x = lib.autograd.grad(y, [h, x])
    return {"Engine.grad dy/dh": g_h, "Engine.grad dy/dx": g_x,
            "autograd.grad dy/dh": a_h, "autograd.grad dy/dx": a_x}


A_34 = [[0.5, -1.0, 2.0, 1.5], [3.0, 0.25, -2.0, 1.0], [-0.5, 4.0, 1.0, -3.0]]


def broadcast_reduce(lib: Any) -> dict[str, Any]:
    a = lib.tensor(A_34)
    w = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    (a * w).sum().backward()
    return {"w.grad": w.grad, "a.sum(0)": a.sum(0), "a.grad": a.grad}


SEED_G = [[1.0, 2.0], [3.0, 4.0]]
X_22 = [[1.0, 2.0], [3.0, 4.0]]


def nonscalar_seed(lib: Any) -> dict[str, Any]:
    x1 = lib.tensor(X_22, requires_grad=True)
    y1 = x1 * x1 + x1
    y1.backward(lib.tensor(SEED_G))
    x2 = lib.tensor(X_22, requires_grad=True)
    y2 = x2 * x2 + x2
    (y2 * lib.tensor(SEED_G)).sum().backward()
    x3 = lib.tensor(X_22, requires_grad=True)
    y3 = x3 * x3
    return {"y.backward(g): x.grad": x1.grad, "(y*g).sum().backward(): x.grad": x2.grad,
            "y.backward() on a non-scalar": lib.capture(y3.backward)}


def retain_graph(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x * 3
    y.backward(retain_graph=True)
    first = x.grad.item()
    y.backward(retain_graph=True)
    return {"after 1": first, "after 2": x.grad}


def leaf_root(lib: Any) -> dict[str, Any]:
    x = lib.tensor(3.0, requires_grad=True)
    x.backward()
    return {"x.grad": x.grad}


def hook_replaces(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    u = x * 3
    u.retain_grad()
    u.register_hook(lambda g: 2 * g)
    y = u * u
    y.backward()
    return {"u.grad": u.grad, "x.grad": x.grad}


DOCUMENT_CASES: tuple[Case, ...] = (
    Case("shared-branch", "u = x*x feeds 2*u and 3*u; both contributions meet before the square",
         (S_SHARED,), _shared_branch(2.0),
         {"u": 4, "a": 8, "b": 12, "loss": 20, "u.grad": 5, "x.grad": 20},
         summary="values 4, 8, 12, 20; u.grad=5; x.grad=20"),
    Case("shared-branch-x3", "the same graph at x=3: 5*x*x differentiates to 30, one square run",
         (S_CPP,), _shared_branch(3.0), {"x.grad": 30, "square node runs": 1},
         summary="x.grad=30; the square node runs once"),
    Case("graph-structure", "both branches point at the square; two edges to one AccumulateGrad",
         (S_GRAPH,), graph_structure,
         {"a.grad_fn.next_functions[0][0] is u.grad_fn": True,
          "b.grad_fn.next_functions[0][0] is u.grad_fn": True,
          "len(u.grad_fn.next_functions)": 2, "edges are AccumulateGrad": [True, True],
          "edge slots": [0, 0], "same leaf node": True},
         summary="a/b point at u.grad_fn; two (AccumulateGrad, 0) edges to one node"),
    Case("vjp", "grad of a non-scalar output with grad_outputs is a VJP; x.grad stays None",
         (S_VJP,), vjp, {"VJP": [16, 8], "x.grad": None}, summary="[16, 8]; x.grad stays None"),
    Case("accumulate", "fresh forwards accumulate into .grad; x.grad = None resets",
         (S_ACCUM,), accumulate,
         {"accumulated (1)": 20, "accumulated (2)": 40, "after reset": 20},
         summary="20, 40, then 20"),
    Case("reused-graph", "a second backward through a released graph raises",
         (S_SAVED, S_RELEASE), reused_graph,
         {"first backward: x.grad": 4,
          "second backward": Raises("runtime/graph-freed", "RuntimeError (GraphFreedError)"),
          "x.grad after the failed call": 4},
         summary="second call raises (RuntimeError; here GraphFreedError)"),
    Case("modified-saved-input", "an in-place change under no_grad to a saved input is detected",
         (S_SAVED, S_VERSION), modified_saved_input,
         {"backward": Raises("runtime/version-mismatch", "RuntimeError (VersionMismatch)"),
          "x.grad": None},
         summary="raises (RuntimeError; here VersionMismatch)"),
    Case("double-backward", "create_graph=True: d(5x^2)/dx = 20, then 10",
         (S_CREATE,), double_backward,
         {"first derivative": 20, "second derivative": 10, "x.grad": None},
         summary="20, then 10"),
    Case("grad-leaves-untouched", "Engine.grad / autograd.grad write no .grad anywhere",
         (S_GRAD,), grad_leaves_untouched,
         {"Engine.grad dy/dx": 3, "autograd.grad dy/dx": 3, "x.grad": 1, "w.grad": 7,
          "b.grad": None},
         summary="no .grad anywhere changes"),
    Case("grad-unreached", "an input outside the graph: None from Engine.grad, error from grad",
         (S_GRAD_RET,), grad_unreached,
         {"Engine.grad([x, z])": [4, None],
          "autograd.grad([x, z])": Raises("runtime", "an error (RuntimeError)"),
          "autograd.grad([x, z], allow_unused=True)": [4, None]},
         summary="None from Engine.grad; error from autograd.grad unless allow_unused"),
    Case("interior-capture", "grad w.r.t. an interior tensor and a leaf below it, in one call",
         (S_GRAD_NOTES,), interior_capture,
         {"Engine.grad dy/dh": [3, 3], "Engine.grad dy/dx": [6, 12],
          "autograd.grad dy/dh": [3, 3], "autograd.grad dy/dx": [6, 12]},
         summary="both correct"),
    Case("broadcast-reduce", "a (3,4) * w (4,): w.grad is a.sum(0) (broadcasting undone)",
         (S_E2E,), broadcast_reduce,
         {"w.grad": [3.0, 3.25, 1.0, -0.5], "a.sum(0)": [3.0, 3.25, 1.0, -0.5], "a.grad": None},
         summary="w.grad == a.sum(0)"),
    Case("nonscalar-seed", "y.backward(g) equals (y*g).sum().backward()",
         (S_E2E,), nonscalar_seed,
         {"y.backward(g): x.grad": [[3, 10], [21, 36]],
          "(y*g).sum().backward(): x.grad": [[3, 10], [21, 36]],
          "y.backward() on a non-scalar": Raises("runtime", "RuntimeError (implicit seed)")},
         summary="equals (y*g).sum().backward()"),
    Case("retain-graph", "backward(retain_graph=True) twice accumulates twice",
         (S_BACKWARD, S_SAVED), retain_graph, {"after 1": 12, "after 2": 24},
         summary="grads double"),
    Case("leaf-root", "backward on a scalar leaf puts the seed in its .grad",
         (S_BACKWARD,), leaf_root, {"x.grad": 1}, summary="x.grad = 1"),
    Case("hook-replaces", "a tensor hook returning 2*g doubles everything downstream",
         (S_E2E,), hook_replaces, {"u.grad": 24, "x.grad": 72},
         summary="downstream grads doubled",
         note="an earlier telling replaced only u.grad; the contract (docs/semantics.md, E10) "
              "follows PyTorch: the hook's result flows downstream"),
)
