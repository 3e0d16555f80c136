"""API fuzzing with a hypothesis state machine against a NumPy model.

The machine creates leaves, runs ops (broadcasting, reductions, matmul, views), edits tensors
in place (recorded with grad mode on, unrecorded under ``no_grad``), retains grads, clears
``.grad``, and calls ``backward``, ``autograd.backward`` with several roots, and
``autograd.grad`` in random order. Beside it a model holds every value in NumPy and a
reference graph: each recorded op keeps the input values it saw at forward time, which
version-counter states its gradient depends on, and whether its node has been freed.

Judgement of every call:
- forward ops and setters never raise (except in-place on a leaf that requires grad, or on a
  view of one, with grad mode on, which must raise RetrogradError and change nothing);
- in-place ops through views write the base and every other view; recorded, the base is
  rebased as PyTorch does (CopySlices: its old history gets zero where the view covers it,
  the op's result the gradient read through the view), and every view of it is taken again
  from the base's new history. The model regenerates views at once; retrograd does it
  lazily, when a view is next used by a recorded op. A view not used since (``stale``) is
  not picked as a root, an input of ``autograd.grad`` or a ``retain_grad`` target: the
  engine reads those tensors' ``grad_fn`` directly;
- a walk that reaches a freed node must raise GraphFreedError; one that reaches a node whose
  saved values changed since forward may raise VersionMismatch; any other exception, or an
  exception where neither applies, fails the test (a walk that raises changes no ``.grad``);
- a walk that succeeds gives exactly the gradients of the model's reverse pass (float64,
  rtol 1e-9): a silently wrong gradient is a failure, whatever happened before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import retrograd as rg

from ._workloads import to_np

SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3)]
UNARY = ["neg", "tanh", "exp", "sigmoid", "relu"]
BINARY = ["add", "sub", "mul", "div"]
SCALAR = ["radd", "rmul", "rsub", "rdiv", "divc"]
RTOL, ATOL = 1e-9, 1e-9


def reduce_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    while g.ndim > len(shape):
        g = g.sum(0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdims=True)
    return g


@dataclass(eq=False)
class RefNode:
    kind: str
    inputs: tuple[int | None, ...]
    in_values: tuple[np.ndarray, ...]
    out_value: np.ndarray
    params: dict[str, Any]
    saves: tuple[tuple[int, int], ...]
    freed: str = "no"  # "no" | "maybe" (a failed walk may have released it) | "yes"


@dataclass(eq=False)
class Handle:
    t: rg.Tensor
    node: int | None  # the model node gradients reach; None: no gradient path
    value: np.ndarray
    counter: int
    is_leaf: bool
    retained: bool = False
    expect_grad: np.ndarray | None = None
    tracked: bool = field(default=False)  # .grad is modelled (leaf with grad, or retained)
    base: Handle | None = None  # a view: the tensor it views (never itself a view)
    chain: tuple[tuple[str, dict[str, Any]], ...] = ()  # a view: its (kind, params) steps
    stale: bool = False  # a view whose base was rebased since retrograd last took it again


def forward_np(kind: str, vals: list[np.ndarray], params: dict[str, Any]) -> np.ndarray:
    a = vals[0]
    b = vals[1] if len(vals) > 1 else None
    c = params.get("c")
    table = {
        "neg": lambda: -a, "tanh": lambda: np.tanh(a), "exp": lambda: np.exp(a),
        "sigmoid": lambda: 1.0 / (1.0 + np.exp(-a)), "relu": lambda: np.maximum(a, 0.0),
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
        "radd": lambda: a + c, "rmul": lambda: a * c, "rsub": lambda: c - a,
        "rdiv": lambda: c / a, "divc": lambda: a / c,
        "matmul": lambda: a @ b, "transpose": lambda: a.T, "flatten": lambda: a.reshape(-1),
        "row": lambda: a[params["i"]],
        "sum": lambda: a.sum(axis=params["dim"], keepdims=params["keepdim"]),
        "mean": lambda: a.mean(axis=params["dim"], keepdims=params["keepdim"]),
        "iadd": lambda: a + c, "imul": lambda: a * c,
    }
    return np.asarray(table[kind](), dtype=np.float64)


def vjp(node: RefNode, g: np.ndarray) -> list[np.ndarray]:
    """Gradients w.r.t. each input, from the values the op saw at forward time."""
    k, p = node.kind, node.params
    a = node.in_values[0]
    b = node.in_values[1] if len(node.in_values) > 1 else None
    y = node.out_value
    c = p.get("c")
    if k == "neg":
        return [-g]
    if k == "tanh":
        return [g * (1.0 - y * y)]
    if k == "exp":
        return [g * y]
    if k == "sigmoid":
        return [g * y * (1.0 - y)]
    if k == "relu":
        return [g * (a > 0)]
    if k in ("radd", "iadd", "transpose_unused"):
        return [g]
    if k in ("rmul", "imul"):
        return [g * c]
    if k == "rsub":
        return [-g]
    if k == "rdiv":
        return [-g * c / (a * a)]
    if k == "divc":
        return [g / c]
    if k == "add":
        return [reduce_to(g, a.shape), reduce_to(g, b.shape)]
    if k == "sub":
        return [reduce_to(g, a.shape), reduce_to(-g, b.shape)]
    if k == "mul":
        return [reduce_to(g * b, a.shape), reduce_to(g * a, b.shape)]
    if k == "div":
        return [reduce_to(g / b, a.shape), reduce_to(-g * a / (b * b), b.shape)]
    if k == "copyslices":  # the base's old history: zero where the view wrote
        kept = g.copy().reshape(-1)
        kept[view_positions(a.shape, p["chain"]).reshape(-1)] = 0.0
        return [kept.reshape(a.shape), apply_chain(g, p["chain"])]
    if k == "row":
        out = np.zeros_like(a)
        out[p["i"]] = g
        return [out]
    if k == "transpose":
        return [g.T]
    if k == "flatten":
        return [g.reshape(a.shape)]
    if k in ("sum", "mean"):
        dim, keep = p["dim"], p["keepdim"]
        if dim is not None and not keep:
            g = np.expand_dims(g, dim)
        out = np.broadcast_to(g, a.shape).copy()
        if k == "mean":
            out = out / (a.size if dim is None else a.shape[dim])
        return [out]
    if k == "matmul":
        a2 = a if a.ndim == 2 else a[None, :]
        b2 = b if b.ndim == 2 else b[:, None]
        g2 = g.reshape(a2.shape[0], b2.shape[1])
        return [(g2 @ b2.T).reshape(a.shape), (a2.T @ g2).reshape(b.shape)]
    raise AssertionError(k)


def apply_chain(a: np.ndarray, chain) -> np.ndarray:
    """A view's value from its base's: the chain's ``(kind, params)`` steps."""
    for kind, params in chain:
        a = forward_np(kind, [a], params)
    return a


def view_positions(shape: tuple[int, ...], chain) -> np.ndarray:
    """Where each element of the view sits in the (flattened) base."""
    return apply_chain(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape),
                       chain).astype(np.int64)


def write_through(base: np.ndarray, chain, value: np.ndarray) -> np.ndarray:
    """The base after ``value`` was written into its view ``chain``."""
    out = base.copy().reshape(-1)
    out[view_positions(base.shape, chain).reshape(-1)] = value.reshape(-1)
    return out.reshape(base.shape)


# Which saved values an op's gradient may depend on, given which inputs need a gradient.
# Binary ops follow what the gradient actually needs (as PyTorch does: ``x * c`` saves ``c``
# only, so changing ``x`` afterwards is legal); unary ops may save their input or their output.
def may_save(kind: str, needs: list[bool]) -> tuple[set[int], bool]:
    """(indices of inputs whose version may be checked, whether the output's may be)."""
    if kind in ("tanh", "exp", "sigmoid", "relu", "rdiv"):
        return {0}, True
    if kind in ("mul", "matmul"):
        return {1 - i for i, n in enumerate(needs) if n}, False
    if kind == "div":
        return ({1} if needs[0] else set()) | ({0, 1} if needs[1] else set()), needs[1]
    return set(), False


class AutogradMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.handles: list[Handle] = []
        self.nodes: list[RefNode] = []
        self.versions: list[int] = []  # per version counter
        self.members: list[int] = []  # handles sharing each counter

    # -- model helpers ------------------------------------------------------------------
    def _new_counter(self) -> int:
        self.versions.append(0)
        self.members.append(0)
        return len(self.versions) - 1

    def _add_handle(self, t: rg.Tensor, node: int | None, value: np.ndarray, counter: int,
                    is_leaf: bool) -> None:
        assert np.shape(to_np(t)) == value.shape, (t.shape, value.shape)
        np.testing.assert_allclose(to_np(t), value, rtol=1e-12, atol=1e-12,
                                   err_msg="forward value")
        assert t.requires_grad == (node is not None), "requires_grad propagation"
        self.members[counter] += 1
        h = Handle(t=t, node=node, value=to_np(t), counter=counter, is_leaf=is_leaf)
        h.tracked = is_leaf and node is not None
        self.handles.append(h)

    def _pick(self, data: Any, ok: Any = lambda h: True) -> Handle | None:
        cands = [h for h in self.handles if ok(h)]
        if not cands:
            return None
        return cands[data.draw(st.integers(0, len(cands) - 1))]

    def _record(self, kind: str, hs: list[Handle], out: rg.Tensor, params: dict[str, Any],
                view: bool = False) -> None:
        vals = [h.value for h in hs]
        expected = forward_np(kind, vals, params)
        np.testing.assert_allclose(to_np(out), expected, rtol=1e-12, atol=1e-12,
                                   err_msg=f"forward {kind}")
        counter = hs[0].counter if view else self._new_counter()
        node = None
        if rg.is_grad_enabled() and any(h.node is not None for h in hs):
            for h in hs:  # a recorded op takes its stale views again (ops._core.edge_of)
                h.stale = False
            ins, out_saved = may_save(kind, [h.node is not None for h in hs])
            saves = [(hs[i].counter, self.versions[hs[i].counter]) for i in sorted(ins)]
            if out_saved:
                saves.append((counter, self.versions[counter]))
            self.nodes.append(RefNode(kind, tuple(h.node for h in hs),
                                      tuple(v.copy() for v in vals), to_np(out), params,
                                      tuple(saves)))
            node = len(self.nodes) - 1
        self._add_handle(out, node, expected, counter, is_leaf=node is None)

    def _small(self, *hs: Handle) -> bool:
        return all(np.all(np.abs(h.value) < 1e3) for h in hs)

    # -- graph questions ----------------------------------------------------------------
    def _reach(self, roots: list[int]) -> set[int]:
        seen, stack = set(), list(roots)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(i for i in self.nodes[n].inputs if i is not None)
        return seen

    def _interior(self, ids: set[int]) -> set[int]:
        return {n for n in ids if self.nodes[n].kind != "leaf"}

    def _executed_for(self, reach: set[int], targets: set[int]) -> set[int]:
        """Nodes on a path from the root to a requested input (E9); ids ascend with creation,
        so inputs are decided before their consumers."""
        ex: set[int] = set()
        for n in sorted(reach):
            node = self.nodes[n]
            if node.kind != "leaf" and any(i is not None and (i in targets or i in ex)
                                           for i in node.inputs):
                ex.add(n)
        return ex

    def _mismatch(self, ids: set[int]) -> bool:
        return any(self.versions[c] != v for n in ids for c, v in self.nodes[n].saves)

    def _reverse(self, seeds: dict[int, np.ndarray], reach: set[int]) -> dict[int, np.ndarray]:
        grads: dict[int, np.ndarray] = {}
        for n, g in seeds.items():
            grads[n] = grads[n] + g if n in grads else g.copy()
        for n in sorted(reach, reverse=True):
            node = self.nodes[n]
            if node.kind == "leaf" or n not in grads:
                continue
            for i, gi in zip(node.inputs, vjp(node, grads[n])):
                if i is not None:
                    gi = np.asarray(gi, dtype=np.float64)
                    grads[i] = grads[i] + gi if i in grads else gi
        return grads

    def _grad_snapshot(self) -> list[np.ndarray | None]:
        return [to_np(h.t.grad) for h in self.handles]

    def _assert_grads_unchanged(self, snap: list[np.ndarray | None]) -> None:
        for h, before in zip(self.handles, snap):
            now = to_np(h.t.grad)
            if before is None:
                assert now is None, "a failed or functional call wrote a .grad"
            else:
                assert now is not None and np.array_equal(now, before), ".grad changed"

    def _walk(self, roots: list[int], targets: set[int] | None, retain: bool, call: Any) -> Any:
        """Run ``call`` and judge it; returns its result or None when it raised."""
        reach = self._reach(roots)
        ex = self._interior(reach) if targets is None else self._executed_for(reach, targets)
        others = self._interior(reach) - ex
        freed_must = any(self.nodes[n].freed == "yes" for n in ex)
        freed_may = freed_must or any(self.nodes[n].freed != "no" for n in ex | others)
        vm_may = self._mismatch(ex)
        snap = self._grad_snapshot()
        try:
            out = call()
        except rg.GraphFreedError:
            assert freed_may, "GraphFreedError on a graph that was never freed"
            outcome = "raised"
        except rg.VersionMismatch:
            assert vm_may, "VersionMismatch though no saved value changed (too strict)"
            outcome = "raised"
        else:
            outcome = "ok"
            assert not freed_must, "walked a freed graph without GraphFreedError (E5)"
        if outcome == "raised":
            self._assert_grads_unchanged(snap)
            if not retain:
                for n in ex:
                    if self.nodes[n].freed == "no":
                        self.nodes[n].freed = "maybe"
            return None
        if not retain:
            for n in ex:
                self.nodes[n].freed = "yes"
        return out

    # -- rules --------------------------------------------------------------------------
    @initialize()
    def start(self) -> None:
        for shape in ((3,), (2, 3)):
            self.new_leaf_impl(shape, True, 1)

    def new_leaf_impl(self, shape: tuple[int, ...], requires_grad: bool, seed: int) -> None:
        v = np.random.default_rng(seed).uniform(-1.5, 1.5, shape)
        t = rg.tensor(v.tolist(), dtype=rg.float64, requires_grad=requires_grad)
        node = None
        if requires_grad:
            self.nodes.append(RefNode("leaf", (), (), v, {}, ()))
            node = len(self.nodes) - 1
        self._add_handle(t, node, v, self._new_counter(), is_leaf=True)

    @rule(shape=st.sampled_from(SHAPES), requires_grad=st.booleans(),
          seed=st.integers(0, 2**16))
    def new_leaf(self, shape, requires_grad, seed):
        self.new_leaf_impl(shape, requires_grad, seed)

    @rule(data=st.data(), kind=st.sampled_from(UNARY), no_grad=st.booleans())
    def unary(self, data, kind, no_grad):
        h = self._pick(data)
        if h is None or not self._small(h):
            return
        if kind == "exp" and np.any(h.value > 4):
            return
        if kind == "relu" and np.any(np.abs(h.value) < 1e-3):
            return
        with rg.set_grad_enabled(not no_grad):
            out = {"neg": lambda t: -t, "tanh": lambda t: t.tanh(), "exp": rg.exp,
                   "sigmoid": rg.sigmoid, "relu": rg.relu}[kind](h.t)
            self._record(kind, [h], out, {})

    @rule(data=st.data(), kind=st.sampled_from(BINARY))
    def binary(self, data, kind):
        a = self._pick(data)
        if a is None:
            return

        def fits(h: Handle) -> bool:
            try:
                np.broadcast_shapes(a.value.shape, h.value.shape)
            except ValueError:
                return False
            return kind != "div" or bool(np.all(np.abs(h.value) > 0.25))

        b = self._pick(data, fits)
        if b is None or not self._small(a, b):
            return
        out = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
               "mul": lambda x, y: x * y, "div": lambda x, y: x / y}[kind](a.t, b.t)
        self._record(kind, [a, b], out, {})

    @rule(data=st.data(), kind=st.sampled_from(SCALAR),
          c=st.sampled_from([0.5, -2.0, 3.0, 1.25]))
    def scalar(self, data, kind, c):
        h = self._pick(data)
        if h is None or not self._small(h):
            return
        if kind == "rdiv" and np.any(np.abs(h.value) < 0.25):
            return
        out = {"radd": lambda t: t + c, "rmul": lambda t: c * t, "rsub": lambda t: c - t,
               "rdiv": lambda t: c / t, "divc": lambda t: t / c}[kind](h.t)
        self._record(kind, [h], out, {"c": c})

    @rule(data=st.data(), kind=st.sampled_from(["sum", "mean"]), keepdim=st.booleans(),
          use_dim=st.booleans())
    def reduce(self, data, kind, keepdim, use_dim):
        h = self._pick(data, lambda h: h.value.ndim > 0)
        if h is None:
            return
        dim = data.draw(st.integers(0, h.value.ndim - 1)) if use_dim else None
        if dim is None:
            out = h.t.sum() if kind == "sum" else h.t.mean()
            keepdim = False
        else:
            out = getattr(h.t, kind)(dim=dim, keepdim=keepdim)
        self._record(kind, [h], out, {"dim": dim, "keepdim": keepdim})

    @rule(data=st.data())
    def matmul(self, data):
        a = self._pick(data, lambda h: h.value.ndim in (1, 2))
        if a is None:
            return
        k = a.value.shape[-1]
        b = self._pick(data, lambda h: (h.value.ndim == 1 and h.value.shape[0] == k)
                       or (h.value.ndim == 2 and h.value.shape[0] == k))
        if b is None or not self._small(a, b):
            return
        self._record("matmul", [a, b], a.t @ b.t, {})

    @rule(data=st.data(), kind=st.sampled_from(["transpose", "flatten", "row"]))
    def view(self, data, kind):
        h = self._pick(data, lambda h: h.value.ndim == 2)
        if h is None:
            return
        params = {}
        if kind == "row":
            params["i"] = data.draw(st.integers(0, h.value.shape[0] - 1))
            out = h.t[params["i"]]
        else:
            out = h.t.T if kind == "transpose" else h.t.reshape(-1)
        is_view = out._base is not None  # reshape copies a non-contiguous tensor
        self._record(kind, [h], out, params, view=is_view)
        if is_view:
            v = self.handles[-1]
            v.base = h.base or h
            v.chain = h.chain + ((kind, params),)

    @rule(data=st.data(), kind=st.sampled_from(["iadd", "imul"]),
          c=st.sampled_from([0.5, -1.0, 2.0]), no_grad=st.booleans())
    def inplace(self, data, kind, c, no_grad):
        h = self._pick(data, lambda h: not any(m.retained for m in self._family(h)))
        self._inplace(h, kind, c, no_grad)

    @rule(data=st.data(), kind=st.sampled_from(["iadd", "imul"]),
          c=st.sampled_from([0.5, -1.0, 2.0]), no_grad=st.booleans())
    def inplace_through_view(self, data, kind, c, no_grad):
        h = self._pick(data, lambda h: h.base is not None
                       and not any(m.retained for m in self._family(h)))
        self._inplace(h, kind, c, no_grad)

    def _inplace(self, h: Handle | None, kind: str, c: float, no_grad: bool) -> None:
        if h is None or not self._small(h):
            return
        op = (lambda t: t.add_(c)) if kind == "iadd" else (lambda t: t.mul_(c))
        base = h.base or h
        leaf_with_grad = base.is_leaf and base.node is not None  # h itself, or h views it
        if leaf_with_grad and not no_grad:
            snap = self._grad_snapshot()
            version = h.t._version
            with pytest.raises(rg.RetrogradError, match="leaf"):
                op(h.t)
            assert h.t._version == version
            np.testing.assert_array_equal(to_np(h.t), h.value)
            self._assert_grads_unchanged(snap)
            return
        version = h.t._version
        with rg.set_grad_enabled(not no_grad):
            ret = op(h.t)
        assert ret is h.t, "in-place ops return self"
        assert h.t._version == version + 1, "in-place op must bump _version by one"
        new_value = forward_np(kind, [h.value], {"c": c})
        np.testing.assert_allclose(to_np(h.t), new_value, rtol=1e-12, atol=1e-12)
        self.versions[h.counter] += 1
        recorded = not no_grad and h.node is not None
        if h is base:
            if recorded:  # history rebased on a new node
                self.nodes.append(RefNode(kind, (h.node,), (h.value.copy(),), new_value,
                                          {"c": c}, ()))
                h.node = len(self.nodes) - 1
                h.is_leaf = False
            base.value = new_value
        else:
            base_value = write_through(base.value, h.chain, new_value)
            if recorded:  # through a view: CopySlices(base's old history, the op's result)
                self.nodes.append(RefNode(kind, (h.node,), (h.value.copy(),), new_value,
                                          {"c": c}, ()))
                self.nodes.append(RefNode("copyslices", (base.node, len(self.nodes) - 1),
                                          (base.value.copy(),), base_value,
                                          {"chain": h.chain}, ()))
                base.node = len(self.nodes) - 1
                base.is_leaf = False
            base.value = base_value
        for m in self._family(base):  # every view sees the write; recorded, a new history
            if m is base:
                continue
            m.value = apply_chain(base.value, m.chain)
            # any in-place change of the base, recorded or not, makes a view of a base with a
            # history take it again (as PyTorch): retrograd took h again at once after a
            # recorded write, the others (and h after an unrecorded one) lazily
            if recorded or (m.node is not None and base.node is not None):
                m.node = self._derive(base, m.chain)
                m.stale = m is not h or not recorded

    def _family(self, h: Handle) -> list[Handle]:
        """``h``'s base and every view of it."""
        root = h.base or h
        return [m for m in self.handles if m is root or m.base is root]

    def _derive(self, base: Handle, chain) -> int:
        """Model nodes for ``chain`` applied to ``base``'s current history."""
        node, value = base.node, base.value
        for kind, params in chain:
            out = forward_np(kind, [value], params)
            self.nodes.append(RefNode(kind, (node,), (value.copy(),), out, params, ()))
            node, value = len(self.nodes) - 1, out
        assert node is not None
        return node

    @rule(data=st.data())
    def retain_grad(self, data):
        h = self._pick(data, lambda h: not h.is_leaf and h.node is not None and not h.retained
                       and not h.stale)
        if h is None:
            return
        h.t.retain_grad()
        h.retained = h.tracked = True
        assert h.t.retains_grad

    @rule(data=st.data())
    def clear_grad(self, data):
        h = self._pick(data, lambda h: h.is_leaf and h.node is not None)
        if h is None:
            return
        h.t.grad = None
        h.expect_grad = None

    def _seed(self, h: Handle, data: Any, implicit_ok: bool = True) -> np.ndarray | None:
        if h.value.ndim == 0 and implicit_ok and data.draw(st.booleans()):
            return None
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        return rng.uniform(-1, 1, h.value.shape)

    def _commit(self, grads: dict[int, np.ndarray], reach: set[int]) -> None:
        for h in self.handles:
            if h.tracked and h.node in reach:
                g = grads[h.node]
                h.expect_grad = g.copy() if h.expect_grad is None else h.expect_grad + g

    def _run_walk(self, roots, targets, retain, call) -> tuple[bool, Any]:
        marker = object()

        def wrapped():
            out = call()
            return marker if out is None else out

        out = self._walk(roots, targets, retain, wrapped)
        if out is None:
            return False, None
        return True, (None if out is marker else out)

    @rule(data=st.data(), retain=st.booleans())
    def backward(self, data, retain):
        h = self._pick(data, lambda h: h.node is not None and not h.stale)
        if h is None:
            return
        seed = self._seed(h, data)
        if seed is None:
            ok, _ = self._run_walk([h.node], None, retain,
                                   lambda: h.t.backward(retain_graph=retain))
        else:
            g = rg.tensor(seed.tolist(), dtype=rg.float64)
            ok, _ = self._run_walk([h.node], None, retain,
                                   lambda: h.t.backward(g, retain_graph=retain))
        if ok:
            reach = self._reach([h.node])
            self._commit(self._reverse({h.node: np.ones(()) if seed is None else seed}, reach),
                         reach)

    @rule(data=st.data(), retain=st.booleans())
    def backward_two_roots(self, data, retain):
        a = self._pick(data, lambda h: h.node is not None and not h.stale)
        if a is None:
            return
        b = self._pick(data, lambda h: h.node is not None and not h.stale and h is not a)
        if b is None:
            return
        sa, sb = self._seed(a, data, False), self._seed(b, data, False)
        ga = rg.tensor(sa.tolist(), dtype=rg.float64)
        gb = rg.tensor(sb.tolist(), dtype=rg.float64)
        ok, _ = self._run_walk([a.node, b.node], None, retain,
                               lambda: rg.autograd.backward([a.t, b.t], [ga, gb],
                                                            retain_graph=retain))
        if ok:
            reach = self._reach([a.node, b.node])
            seeds = {a.node: sa}
            seeds[b.node] = seeds[b.node] + sb if b.node in seeds else sb
            self._commit(self._reverse(seeds, reach), reach)

    @rule(data=st.data(), retain=st.booleans(), n_inputs=st.integers(1, 3))
    def grad(self, data, retain, n_inputs):
        root = self._pick(data, lambda h: h.node is not None and not h.stale)
        if root is None:
            return
        inputs: list[Handle] = []
        for _ in range(n_inputs):
            h = self._pick(data, lambda h: h.node is not None and not h.stale
                           and h not in inputs and all(h.node != o.node for o in inputs))
            if h is not None:
                inputs.append(h)
        seed = self._seed(root, data)
        outs = None if seed is None else [rg.tensor(seed.tolist(), dtype=rg.float64)]
        snap = self._grad_snapshot()
        ok, res = self._run_walk(
            [root.node], {h.node for h in inputs}, retain,
            lambda: rg.autograd.grad(root.t, [h.t for h in inputs], grad_outputs=outs,
                                     retain_graph=retain, allow_unused=True))
        if not ok:
            self._assert_grads_unchanged(snap)  # E13: a failed grad changes no .grad
            return
        reach = self._reach([root.node])
        grads = self._reverse({root.node: np.ones(()) if seed is None else seed}, reach)
        # E9: no leaf's .grad is written; a retained non-leaf gets its gradient when its node
        # is reached: on a path to an input, an input itself, or the (single) root
        targets = {h.node for h in inputs}
        seen = self._executed_for(reach, targets) | (targets & reach) | {root.node}
        self._commit(grads, self._interior(seen))
        assert len(res) == len(inputs)
        for i, (h, r) in enumerate(zip(inputs, res)):
            if h.node not in reach:
                assert r is None, f"input {i} is outside the graph: expected None"
            else:
                assert r is not None, f"input {i} is in the graph: got None"
                np.testing.assert_allclose(to_np(r), grads[h.node], rtol=RTOL, atol=ATOL,
                                           err_msg=f"autograd.grad input {i}")

    # -- invariants ---------------------------------------------------------------------
    @invariant()
    def tensors_match_model(self):
        for i, h in enumerate(self.handles):
            assert h.t.requires_grad == (h.node is not None), f"handle {i}: requires_grad"
            np.testing.assert_array_equal(to_np(h.t), h.value, err_msg=f"handle {i}: value")
            assert h.t._version == self.versions[h.counter], f"handle {i}: _version"
            g = to_np(h.t.grad)
            if not h.tracked:
                assert g is None, f"handle {i}: unexpected .grad"
            elif h.expect_grad is None:
                assert g is None, f"handle {i}: .grad should be None"
            else:
                assert g is not None, f"handle {i}: .grad missing"
                np.testing.assert_allclose(g, h.expect_grad, rtol=RTOL, atol=ATOL,
                                           err_msg=f"handle {i}: .grad")


COMMON = dict(deadline=None, database=None, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])


class TestAutogradFuzzQuick(AutogradMachine.TestCase):
    settings = settings(max_examples=60, stateful_step_count=30, **COMMON)


@pytest.mark.stress
class TestAutogradFuzzFull(AutogradMachine.TestCase):
    settings = settings(max_examples=600, stateful_step_count=60, **COMMON)
