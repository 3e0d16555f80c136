"""The graphs of view ops and of indexing against PyTorch: each program runs on torch and on
retrograd, and the node names and edges (``grad_fn.name()`` and ``next_functions``,
recursively, as ``test_parity_functional.graph_of`` compares them), the values, the
gradients, whether the result is a view of its input, and the errors (retrograd's an instance
of torch's class) are compared.

Why: PyTorch records ``x[0, 1:]`` as a ``SelectBackward0`` followed by a ``SliceBackward0``,
``x.T.reshape(6)`` as ``UnsafeViewBackward0`` over ``CloneBackward0``, ``x[None]`` as an
``UnsqueezeBackward0``; programs (and tools that draw or walk graphs) read those names and
edges, and retrograd's must be the same. The indexing keys are generated: every combination
of a few ints, slices, None, Ellipsis, bools, lists and index tensors, on tensors of several
shapes, so the rules of PyTorch's ``applySlicing`` (which slices it skips, where a bool
unsqueezes, what a key that mixes ints and index arrays gives) are all exercised. In-place
ops written through such views, and double backward through them, are compared too."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg

# -- the harness --------------------------------------------------------------------------


def graph_of(fn):
    """grad_fn names and next_functions, recursively (AccumulateGrad under its class name:
    PyTorch's ``name()`` says ``torch::autograd::AccumulateGrad``)."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return (name, tuple(None if f is None else (graph_of(f), nr) for f, nr in fn.next_functions))


def arange(lib, shape, requires_grad=False):
    """1, 2, 3 ... in ``shape`` (float64), the same on both libraries."""
    data = np.asarray(np.arange(float(np.prod(shape, dtype=np.int64))).reshape(shape) + 1)
    t = lib.from_numpy(np.array(data))
    return t.requires_grad_() if requires_grad else t


def weights(lib, shape):
    """A fixed, non-constant weight of ``shape``: the loss ``(out * w).sum()`` tells every
    element's gradient apart."""
    return lib.from_numpy(np.asarray(np.arange(float(np.prod(shape, dtype=np.int64)))
                                     .reshape(shape) * 0.5 + 1))


def outcome(program, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of ``x.T`` on other than 2-d
        try:
            return ("ok", program(lib))
        except Exception as exc:  # noqa: BLE001 - compared with the oracle's
            return ("raised", exc)


def differences(want, got, path="result"):
    """Where ``got`` differs from ``want`` (nested tuples/lists/dicts, arrays, graphs)."""
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        if got.shape != want.shape:
            return [f"{path}: shape {got.shape} != {want.shape}"]
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True):
            return [f"{path}: {got.tolist()} != {want.tolist()}"]
        return []
    if isinstance(want, dict):
        if not isinstance(got, dict) or got.keys() != want.keys():
            return [f"{path}: {got!r} != {want!r}"]
        return [d for k in want for d in differences(want[k], got[k], f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} != {want!r}"]
        return [d for i, (w, g) in enumerate(zip(want, got))
                for d in differences(w, g, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def compare(program):
    """Run ``program(lib)`` on both: [] when they agree, else what differs. Both may raise:
    retrograd's error must be an instance of torch's class."""
    want = outcome(program, torch)
    got = outcome(program, rg)
    if want[0] == "raised":
        if got[0] != "raised":
            return [f"torch raised {want[1]!r}, retrograd returned {got[1]!r}"]
        if not isinstance(got[1], type(want[1])):
            return [f"torch raised {type(want[1]).__name__}, retrograd "
                    f"{type(got[1]).__name__}: {got[1]}"]
        return []
    if got[0] != "ok":
        return [f"torch returned, retrograd raised {got[1]!r}"]
    return differences(want[1], got[1])


def arr(t):
    return None if t is None else np.array(t.detach().numpy())


def report(out, x, w_shape=None):
    """What is compared of the result ``out`` of a view op or index of ``x``, after the
    backward of ``(out * w).sum()``."""
    graph = graph_of(out.grad_fn)
    is_view = out._base is (x if x._base is None else x._base)
    lib = torch if isinstance(out, torch.Tensor) else rg
    (out * weights(lib, tuple(out.shape))).sum().backward()
    return {"shape": list(out.shape), "graph": graph, "view": is_view,
            "value": arr(out), "grad": arr(x.grad)}


def check(programs):
    """``programs``: {label: program}. Every mismatch, each with its label, in one failure."""
    failures = []
    for label, program in programs.items():
        for d in compare(program):
            failures.append(f"{label}: {d}")
    assert not failures, "\n".join(failures[:20]) + (
        f"\n... and {len(failures) - 20} more" if len(failures) > 20 else "")


# -- 1. basic and advanced indexing: keys generated ---------------------------------------
ITEMS = ["0", "-1", "1", "1:", ":", "::2", "None", "...", ":1", "0:100", "-2:", "True", "False",
         "[1, 0]", "lib.tensor([1, 0])", "lib.tensor(1)", "np.int64(1)", "lib.tensor(True)"]
ITEMS_3 = ["0", "-1", "1:", ":", "None", "...", "0:100", "True", "[1, 0]"]
SHAPES = [(2, 3), (2, 3, 4), (), (0, 3), (3,)]


def index_program(shape, key):
    def program(lib):
        x = arange(lib, shape, requires_grad=True)
        out = eval(f"x[{key}]", {"lib": lib, "np": np, "x": x})  # noqa: S307 - test keys
        return report(out, x)

    return program


def keys(items, n):
    for combo in itertools.product(items, repeat=n):
        if combo.count("...") <= 1:
            yield ", ".join(combo) + ("," if n == 1 and combo[0] in ("0", ":") else "")


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("first", ITEMS)
def test_index_graphs_match_torch(shape, first):
    """Keys of one and two items (and a one-item tuple ``x[0,]``), the first ``first``."""
    programs = {f"x{list(shape)}[{first}]": index_program(shape, first)}
    for key in itertools.chain(keys(ITEMS, 1), keys(ITEMS, 2)):
        if key.split(",")[0].strip() == first:
            programs[f"x{list(shape)}[{key}]"] = index_program(shape, key)
    check(programs)


@pytest.mark.parametrize("first", ITEMS_3)
def test_index_graphs_of_three_items_match_torch(first):
    programs = {}
    for key in keys(ITEMS_3, 3):
        if key.split(",")[0].strip() == first:
            programs[f"x[2, 3, 4][{key}]"] = index_program((2, 3, 4), key)
    check(programs)


@pytest.mark.parametrize("key", [
    "0, 1:",  # the brief's chain: SelectBackward0 then SliceBackward0
    ":, 1:",  # the leading ``:`` of a tuple is skipped
    "slice(None)",  # one slice (no tuple) is never skipped: SliceBackward0
    "(slice(None),)",  # ... in a tuple it is: AliasBackward0
    "...", ":, :", "()",  # nothing changes: AliasBackward0
    "0:2", "0:3", ":3, :", "-2:",  # a whole dimension given explicitly
    "1:, None, 1:", "None, ..., None, 1", "0, ..., None",
    "0, :, [0, 1]",  # PyTorch's shape (3, 2), not NumPy's (2, 3): the ints first
    "[0, 1], :, 0", "lib.tensor([[True, False, True], [False, True, True]]), 0",
    "0, lib.tensor([True, False, True])", "..., lib.tensor([True, False, True, True])",
    "True, 0", "0, True", "None, True", "[0, 1], None, [1, 2]",
])
def test_named_index_keys(key):
    """Keys worth naming, on a (2, 3, 4) tensor."""
    check({f"x[{key}]": lambda lib: report(*_indexed(lib, key))})


def _indexed(lib, key):
    x = arange(lib, (2, 3, 4), requires_grad=True)
    return eval(f"x[{key}]", {"lib": lib, "x": x}), x  # noqa: S307 - test keys


def test_non_positive_step_is_refused():
    """PyTorch refuses a negative or zero step (NumPy would reverse); so does retrograd."""
    for key in ("::-1", ":, ::-1", "::0", "0, ::-2", "[0, 1], ::-1"):
        check({key: lambda lib, key=key: report(*_indexed(lib, key))})
    with pytest.raises(ValueError, match="step must be greater than zero"):
        rg.ones(3)[::-1]


def test_numpy_integer_keys_are_ints():
    """A NumPy integer (or 0-d integer array) in a key is an int: a select, a view; a 0-d
    bool array is a bool."""
    for key in ("np.int64(1), np.int32(0)", "np.array(1)", ":, np.array(2)", "np.array(True)",
                "np.bool_(False), 0", "np.float64(1.0)", "np.uint64(1), 0"):
        check({key: lambda lib, key=key: report(*_indexed_np(lib, key))})


def _indexed_np(lib, key):
    x = arange(lib, (2, 3, 4), requires_grad=True)
    return eval(f"x[{key}]", {"lib": lib, "np": np, "x": x}), x  # noqa: S307 - test keys


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_index_values_without_grad(shape):
    """The same keys on a tensor that needs no gradient: the same values and views (the
    two-step order of a key with index arrays holds without a graph too)."""
    def program(key):
        def run(lib):
            x = arange(lib, shape)
            out = eval(f"x[{key}]", {"lib": lib, "np": np, "x": x})  # noqa: S307 - test keys
            return {"value": arr(out), "view": out._base is x, "grad": out.requires_grad}

        return run

    check({f"x{list(shape)}[{key}]": program(key)
           for key in itertools.chain(keys(ITEMS, 1), keys(ITEMS, 2))})


def test_graph_is_not_recorded_without_grad():
    """Views of a tensor that needs no gradient get no node (and no grad_fn)."""
    x = arange(rg, (2, 3))
    for v in (x[0, 1:], x.T.reshape(6), x.unsqueeze(0), x[[0, 1], 1:], x.t()):
        assert v.grad_fn is None and not v.requires_grad
    y = arange(rg, (2, 3), requires_grad=True)
    with rg.no_grad():
        assert y[0, 1:].grad_fn is None


# -- 2. view ops, on views of every kind -----------------------------------------------------
PRE = ["x", "x.T", "x.mT", "x[:, 1:]", "x[:, ::2]", "x[:, :1]", "x[0]", "x[0, 0]", "x[:1]",
       "x.unsqueeze(1)", "x.transpose(0, -1)", "x.permute(2, 0, 1)", "x[..., 0]", "x[:, None]",
       "x.expand(2, 2, 3, 4)", "x[1:, 1:, 1:]", "x.reshape(4, 6)", "x.flatten(1)"]
OPS = ["v.reshape(-1)", "v.reshape(v.shape)", "v.reshape(1, -1)", "v.reshape(-1, 1)",
       "v.view(-1)", "v.view(v.shape)", "v.view(1, *v.shape)", "v.flatten()", "v.flatten(0, 0)",
       "v.flatten(1)", "v.flatten(-2)", "v.squeeze()", "v.squeeze(0)", "v.squeeze(-1)",
       "v.squeeze((0, -1))", "v.squeeze(())", "v.squeeze([0])", "v.unsqueeze(0)",
       "v.unsqueeze(-1)", "v.transpose(0, -1)", "v.transpose(-1, 0)", "v.transpose(0, 0)",
       "v.t()", "v.T", "v.mT", "v.permute(*reversed(range(v.ndim)))", "v.expand(2, *v.shape)",
       "v.view_as(v)", "v.expand_as(v)", "v.reshape(*reversed(v.shape))",
       "v.view(*reversed(v.shape))", "v[None].squeeze(0)", "v.T.reshape(-1)", "v.T.flatten()",
       "v.reshape()", "v.view()", "v.permute()", "v.expand()"]
VIEW_SHAPES = [(2, 3, 4), (1, 3, 1), (2, 3), (3,), (), (0, 3, 2)]


def view_program(shape, pre, op):
    def program(lib):
        x = arange(lib, shape, requires_grad=True)
        v = eval(pre, {"x": x})  # noqa: S307 - test programs
        out = eval(op, {"v": v})  # noqa: S307
        return report(out, x)

    return program


@pytest.mark.parametrize("shape", VIEW_SHAPES, ids=str)
@pytest.mark.parametrize("pre", PRE)
def test_view_op_graphs_match_torch(shape, pre):
    """reshape (a view of a contiguous tensor: ViewBackward0; of a non-contiguous one:
    ReshapeAliasBackward0; a copy: UnsafeViewBackward0 over CloneBackward0), view, flatten,
    squeeze (SqueezeBackward0/1/2), unsqueeze, transpose (TransposeBackward0), t (TBackward0),
    .T (PermuteBackward0), .mT, permute, expand, on a tensor ``pre`` made of ``x``."""
    check({f"{list(shape)} {pre} -> {op}": view_program(shape, pre, op) for op in OPS})


@pytest.mark.parametrize("program", [
    lambda lib: arange(lib, (2, 3), True).T.reshape(6),
    lambda lib: arange(lib, (2, 3), True).T.flatten(),
    lambda lib: arange(lib, (2, 3, 4), True).transpose(1, 2).flatten(0, 1),
    lambda lib: arange(lib, (2, 3), True)[:, 1:].reshape(4),
], ids=["T.reshape", "T.flatten", "transpose.flatten", "slice.reshape"])
def test_reshape_that_copies_is_no_view(program):
    """UnsafeViewBackward0(CloneBackward0(...)), and the result shares no memory."""
    def run(lib):
        out = program(lib)
        return {"graph": graph_of(out.grad_fn), "view": out._base is not None}

    check({"copy": run})
    assert graph_of(program(rg).grad_fn)[0] == "UnsafeViewBackward0"


# -- 3. in-place ops through such views: values, gradients, versions -----------------------
VIEWS = ["y[0]", "y[-1, 1:]", "y[:, 1]", "y[..., ::2]", "y[None, 1]", "y[1:, None, :2]",
         "y[0, 0]", "y[:, :]", "y[...]", "y[:]", "y[0:100]", "y.T", "y.mT", "y.transpose(0, 1)",
         "y.t()", "y.permute(1, 0)", "y.reshape(-1)", "y.view(3, 2)", "y.flatten()",
         "y.unsqueeze(0)", "y[:1].squeeze(0)", "y[:1].squeeze()", "y[:1].squeeze((0,))",
         "y.T[1:]", "y.T.reshape(3, 2)", "y[:, :1].reshape(2)", "y.view(-1)[::2]",
         "y[0].unsqueeze(1)", "y.T[0, None]", "y.unsqueeze(1)[:, 0]", "y[0][1:][0]",
         "y.expand(2, 2, 3)[0]", "y[:, 1:].T", "y.T.reshape(-1)"]
WRITES = ["v.mul_(w)", "v.add_(1.5)", "v.zero_()", "v.copy_(w * 3)", "v.fill_(s)",
          "v.mul_(v.detach() + 1)"]
STALE = [None, "y[1]", "y.T[:, 0]", "y.view(-1)", "y[0, 1:]"]


def inplace_program(view, write, stale):
    def program(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=lib.float64,
                       requires_grad=True)
        s = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
        y = x * 1
        ns = {"lib": lib, "x": x, "s": s, "y": y}
        v = eval(view, ns)  # noqa: S307 - test programs
        ns["v"] = v
        ns["w"] = s * lib.ones(tuple(v.shape), dtype=lib.float64)
        other = eval(stale, ns) if stale else None  # noqa: S307 - a view taken before
        eval(write, ns)  # noqa: S307
        loss = (y * y).sum() + (v * v * 0.5).sum()
        if other is not None:
            loss = loss + (other * other * 0.25).sum()
        loss.backward()
        return {"y": arr(y), "v": arr(v), "x.grad": arr(x.grad), "s.grad": arr(s.grad),
                "base": y.grad_fn.name().replace("torch::autograd::", ""), "shared version": y._version == v._version,
                "view": v._base is y}

    return program


@pytest.mark.parametrize("view", VIEWS)
def test_writes_through_views_match_torch(view):
    """Each write through the view ``view`` of a non-leaf ``y``, alone and with another view
    of ``y`` taken before (stale after the write, so taken again from ``y``'s history)."""
    check({f"{view} {write} (stale {stale})": inplace_program(view, write, stale)
           for write in WRITES for stale in STALE})


# -- 4. double backward through the chains ---------------------------------------------------
@pytest.mark.parametrize("expr", [
    "x[0, 1:]", "x[:, None, ::2]", "x[..., -1]", "x.T.reshape(-1)", "x.T.flatten()",
    "x[:, 1:].reshape(-1)", "x[None].squeeze(0)", "x.t()[1:]", "x[0, [0, 2]]", "x[[1, 0], 1:]",
    "x[True, 0]", "x[:, :1].reshape(2)", "x.mT[..., 0]", "x[0][None, 1]", "x[1:, 1:][0, 0]",
    "x.transpose(0, 1).unsqueeze(1).squeeze()",
])
def test_double_backward_through_views(expr):
    def program(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=lib.float64,
                       requires_grad=True)
        out = eval(expr, {"x": x})  # noqa: S307 - test programs
        (g,) = lib.autograd.grad((out ** 3).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return {"graph": graph_of(out.grad_fn), "g": arr(g), "h": arr(h),
                "g has history": g.grad_fn is not None}

    check({expr: program})


# -- 5. the nodes of a chain are real nodes: hooks, retain_grad ------------------------------
def test_hooks_on_the_nodes_of_a_chain():
    """``x[0, 1:]``: the hooks of the SelectBackward0 node (the chain's inner node) and of
    the SliceBackward0 node see PyTorch's gradients, in PyTorch's order."""
    def program(lib):
        x = arange(lib, (2, 3), requires_grad=True)
        out = x[0, 1:]
        out.retain_grad()
        seen = []
        inner = out.grad_fn.next_functions[0][0]
        for name, node in (("slice", out.grad_fn), ("select", inner)):
            node.register_prehook(lambda g, name=name: seen.append((f"{name} pre", arr(g[0]))))
            node.register_hook(lambda gi, go, name=name: seen.append(
                (f"{name} post", arr(gi[0]), arr(go[0]))))
        (out * weights(lib, (2,))).sum().backward()
        return {"seen": [list(e) for e in seen], "x.grad": arr(x.grad),
                "out.grad": arr(out.grad)}

    check({"hooks": program})


def test_retain_grad_and_hooks_on_views_and_index_results():
    def program(lib):
        x = arange(lib, (2, 3, 4), requires_grad=True)
        a = x[0, 1:, None]
        b = x.transpose(0, 2).reshape(-1)
        c = x[1, :, [0, 3]]
        for t in (a, b, c):
            t.retain_grad()
        a.register_hook(lambda g: g * 2)
        (a.sum() * 3 + (b * weights(lib, (24,))).sum() + (c ** 2).sum()).backward()
        return {"a": arr(a.grad), "b": arr(b.grad), "c": arr(c.grad), "x": arr(x.grad)}

    check({"retain": program})


def test_index_tensor_changed_in_place_is_caught_after_a_basic_prefix():
    """``x[0, idx]``: the index tensor is saved by the IndexBackward0 that follows the
    SelectBackward0, and changing it in place before the backward raises, as in PyTorch."""
    def program(lib):
        x = arange(lib, (2, 3), requires_grad=True)
        idx = lib.tensor([0, 2])
        out = x[0, idx]
        idx.add_(0)
        out.sum().backward()
        return arr(x.grad)

    check({"index version": program})


def test_chains_on_a_backend_without_strides():
    """The chain nodes use only the kernel table (``zeros``, ``setitem``, ``reshape`` ...,
    with keys that name every dimension): on the Array API strict backend the values and
    gradients, also of a double backward, are PyTorch's, and the nodes are too."""
    xp = pytest.importorskip("array_api_strict")
    from retrograd.backends.base import Backend
    from retrograd.backends.registry import register_backend, unregister_backend

    exprs = ["x[0, 1:]", "x[1:]", "x[:, None, ::2]", "x[None, ..., 1]", "x[...]", "x[-1, -1]",
             "x.t()[1:, 0]", "x.unsqueeze(0).squeeze(0)[1]", "x.transpose(0, 1)[::2]"]

    def run(lib, **device):
        out = {}
        for e in exprs:
            x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=lib.float64,
                           requires_grad=True, **device)
            v = eval(e, {"x": x})  # noqa: S307 - test programs
            (g,) = lib.autograd.grad((v * v * v).sum(), x, create_graph=True)
            (g * g).sum().backward()
            out[e] = {"graph": graph_of(v.grad_fn), "v": np.array(v.tolist()),
                      "g": np.array(g.tolist()), "x.grad": np.array(x.grad.tolist())}
        return out

    register_backend("strict", Backend("strict", xp))
    try:
        got = run(rg, device="strict")
    finally:
        unregister_backend("strict")
    want = run(torch)
    assert not differences(want, got), differences(want, got)
