"""The engine's corners against PyTorch: each program runs on torch and on retrograd and the
results (values, error class and key phrase, warnings, hook order) are compared.

Each case is written once against a library handle ``lib`` (``torch`` or ``retrograd``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings

import pytest
import torch
from torch_parity import same as _same

import retrograd as rg


def same(program, phrase=None):
    """``torch_parity.same``, values compared exactly (both libraries run the same float
    arithmetic in these programs)."""
    _same(program, phrase, tol=0)

def warned(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [(w.category.__name__, str(w.message)) for w in caught]


# -- 1. autograd.grad on an interior tensor: captured before the node's pre-hooks ---------
def test_grad_of_interior_tensor_ignores_its_nodes_prehook():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        b.grad_fn.register_prehook(lambda g: (g[0] * 10,))
        return lib.autograd.grad(c, b)

    same(program)


def test_grad_of_interior_tensor_sees_its_tensor_hooks():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        b.register_hook(lambda g: g * 100)
        return lib.autograd.grad(c, b, retain_graph=True), lib.autograd.grad(c, x)

    same(program)


def test_grad_of_leaf_sees_tensor_hooks_not_accumulator_prehooks():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        c = x * 3
        x.register_hook(lambda g: g * 100)
        c.grad_fn.next_functions[0][0].register_prehook(lambda g: (g[0] * 10,))
        return lib.autograd.grad(c, x)

    same(program)


def test_backward_inputs_interior_tensor_gets_hooked_gradient():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        b.retain_grad()
        b.register_hook(lambda g: g * 100)
        c.backward(inputs=[b])
        return b.grad, x.grad

    same(program)


# -- 2. hook order at a leaf -----------------------------------------------------------------
def test_leaf_hook_order_tensor_then_accumulator_pre_then_post():
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()
        order = []
        acc = b.grad_fn.next_functions[0][0]

        def acc_pre(gs):
            order.append("acc pre")
            return (gs[0] * 10,)

        def tensor_hook(g):
            order.append("tensor")
            return g + 1

        def acc_post(gi, go):
            order.append(("acc post", a.grad.item(), go[0].item()))

        def post_acc(t):
            order.append(("post accumulate", t.grad.item()))

        acc.register_prehook(acc_pre)
        a.register_hook(tensor_hook)
        acc.register_hook(acc_post)
        a.register_post_accumulate_grad_hook(post_acc)
        b.backward()
        return a.grad, order

    same(program)


def test_accumulator_post_hook_sees_and_may_set_grad():
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a.clone()

        def post(gi, go):
            a.grad = 10 * go[0]

        b.grad_fn.next_functions[0][0].register_hook(post)
        b.backward()
        return a.grad

    same(program)


def test_retain_grad_runs_after_every_tensor_hook_and_before_prehooks():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        b.register_hook(lambda g: g * 100)
        b.retain_grad()
        b.register_hook(lambda g: g + 1)
        b.grad_fn.register_prehook(lambda g: (g[0] * 2,))
        c.backward()
        return b.grad, x.grad

    same(program)


# -- 3. retain_grad follows the tensor's current version -------------------------------------
@pytest.mark.parametrize("extra_use", [False, True])
def test_retain_grad_then_in_place(extra_use):
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        b = a * 3
        a.mul_(2)
        loss = a.sum() + (b.sum() if extra_use else 0)
        loss.backward()
        return a.grad

    same(program)


# -- 6. in-place through a view made under no_grad -------------------------------------------
@pytest.mark.parametrize("make", ["slice", "view", "of_non_leaf"])
def test_in_place_through_a_no_grad_view_is_refused(make):
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        base = x * 2 if make == "of_non_leaf" else x
        with lib.no_grad():
            v = base[:] if make != "view" else base.view(3)
        v.zero_()
        return x

    same(program, "A view was created in no_grad mode")


def test_in_place_on_a_no_grad_view_under_no_grad_and_detach_are_allowed():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = x[:]
            v.mul_(2)
        x.detach()[0:1].zero_()
        return x.detach()

    same(program)


# -- 8. hooks run with grad mode as during the walk ------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_run_with_grad_mode_of_the_walk(create_graph):
    def program(lib):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        modes = []

        def post(t):
            modes.append(("post", lib.is_grad_enabled()))
            if not create_graph:
                t.sub_(0.1 * t.grad)  # an optimizer step inside the hook

        p.register_post_accumulate_grad_hook(post)
        p.register_hook(lambda g: modes.append(("tensor", lib.is_grad_enabled())))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (p * p).sum().backward(create_graph=create_graph)
        return p.detach(), modes

    same(program)


def test_post_accumulate_hook_returning_a_value_is_an_error():
    def program(lib):
        q = lib.tensor([1.0, 2.0], requires_grad=True)
        q.register_post_accumulate_grad_hook(lambda t: 5)
        q.sum().backward()

    same(program, "hook returned 'int'")


# -- 10. seeds of another dtype are cast; of another shape refused ---------------------------
@pytest.mark.parametrize("seed", [[1.0, 1.0], [1, 1], [True, True]])
def test_seed_of_another_dtype_is_cast(seed):
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x * 2).backward(lib.tensor(seed))
        g = lib.autograd.grad(x * 3, x, lib.tensor(seed))
        return x.grad, g

    same(program)


@pytest.mark.parametrize("shape", [[3], [1, 2]])
def test_seed_of_another_shape_is_refused(shape):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.grad(x * 2, x, lib.ones(*shape))

    same(program, "Mismatch in shape")


# -- 13. materialized zeros under create_graph can be differentiated again ------------------
def test_materialized_zeros_require_grad_under_create_graph():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.tensor([3.0], requires_grad=True)
        g = lib.autograd.grad((x * 2).sum(), [x, z], create_graph=True, materialize_grads=True)
        again = lib.autograd.grad(g[1].sum(), z, allow_unused=True)
        return g, [t.requires_grad for t in g], again

    same(program)


# -- 14. deep re-entrant backward ----------------------------------------------------------------
def _reentrant(lib, depth):
    class Reenter(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, level):
            ctx.level = level
            return x * 1

        @staticmethod
        def backward(ctx, g):
            if ctx.level > 0:
                with lib.enable_grad():
                    y = lib.tensor(1.0, requires_grad=True)
                    Reenter.apply(y, ctx.level - 1).backward()
            return g * 2, None

    x = lib.tensor(1.0, requires_grad=True)
    Reenter.apply(x, depth).backward()
    return x.grad


def test_reentrant_backward_2000_levels():
    assert sys.getrecursionlimit() < 2000 * 5  # deep enough to overflow a nested walk
    same(lambda lib: _reentrant(lib, 2000))


def test_reentrant_backward_error_surfaces_from_a_fresh_thread():
    class Boom(rg.autograd.Function):
        @staticmethod
        def forward(ctx, x, level):
            ctx.level = level
            return x * 1

        @staticmethod
        def backward(ctx, g):
            if ctx.level == 0:
                raise KeyError("deep failure")
            y = rg.tensor(1.0, requires_grad=True)
            with rg.enable_grad():
                Boom.apply(y, ctx.level - 1).backward()
            return g, None

    x = rg.tensor(1.0, requires_grad=True)
    before = threading.active_count()
    with pytest.raises(KeyError, match="deep failure"):
        Boom.apply(x, 100).backward()
    assert x.grad is None
    assert threading.active_count() == before


# -- 15. validation torch does -----------------------------------------------------------------
def test_data_of_another_category_on_a_leaf_that_requires_grad():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        a.data = lib.tensor([1, 2])

    same(program, "must be floating point")


def test_data_of_another_shape_or_float_dtype_is_accepted():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        a.data = lib.tensor([1.0, 2.0, 3.0])
        b = lib.tensor([1.0, 2.0], requires_grad=True)
        b.data = lib.tensor([1.0, 2.0], dtype=lib.float64)
        return list(a.shape), b.dtype == lib.float64

    same(program)


@pytest.mark.parametrize("count", [0, 2])
def test_grad_fn_called_with_the_wrong_number_of_gradients(count):
    def program(lib):
        y = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        y.grad_fn(*[lib.ones(2)] * count)

    same(program, f"expected 1 arguments, got {count} instead")


def test_detach_in_place_of_a_saved_tensor():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * y
        y.detach_()
        z.sum().backward()

    same(program, "detached in-place")


def test_detach_in_place_of_an_unsaved_tensor_is_fine():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y + 1
        y.detach_()
        z.sum().backward()
        return x.grad, y.requires_grad

    same(program)


@pytest.mark.parametrize("value", ["self", "shape", "dtype", "int"])
def test_grad_assignment_errors(value):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = {"self": x, "shape": lib.ones(3), "dtype": lib.ones(2, dtype=lib.float64),
                  "int": 3}[value]

    phrase = {"self": "can't assign Variable as its own grad",
              "shape": "attempting to assign a gradient of size", "dtype": None,
              "int": None}[value]
    same(program, phrase)


def test_del_grad():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.sum().backward()
        del x.grad
        return x.grad

    same(program)


# -- 16. non-callables are accepted at registration and fail when called -------------------------
@pytest.mark.parametrize("where", ["leaf", "interior", "node", "prehook", "post_accumulate"])
def test_registering_a_non_callable(where):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        if where == "leaf":
            x.register_hook(5)
        elif where == "interior":
            y.register_hook(5)
        elif where == "node":
            y.grad_fn.register_hook(5)
        elif where == "prehook":
            y.grad_fn.register_prehook(5)
        else:
            x.register_post_accumulate_grad_hook(5)
        y.sum().backward()

    same(program, "object is not callable")


# -- node hooks' results are checked as torch checks them ---------------------------------------
HOOK_RESULTS = {
    "bigger": lambda lib, g: lib.ones(3),
    "double": lambda lib, g: g.double(),
    "int": lambda lib, g: 5,
}


@pytest.mark.parametrize("kind", sorted(HOOK_RESULTS))
def test_tensor_hook_results_checked(kind):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: HOOK_RESULTS[kind](lib, g))
        y.sum().backward()

    same(program, {"bigger": "has changed the size of value",
                   "double": "has changed the type of value",
                   "int": "hook returned 'int'"}[kind])


@pytest.mark.parametrize("result", ["tensor", "two", "int"])
def test_prehook_results_checked(result):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = (x * 2).sum()
        z.grad_fn.register_prehook(
            lambda g: {"tensor": g[0], "two": (g[0], g[0]), "int": 3}[result])
        z.backward()

    same(program, {"tensor": "expected tuple, but hook returned 'Tensor'",
                   "two": "has returned an incorrect number of values",
                   "int": "expected tuple, but hook returned 'int'"}[result])


# -- 19. warnings -----------------------------------------------------------------------------------
def test_reading_grad_of_a_non_leaf_warns():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.grad  # noqa: B018 - the read is what warns
        z = x * 3
        z.retain_grad()
        z.grad  # noqa: B018 - retained: no warning

    want, got = warned(program, torch), warned(program, rg)
    assert [w[0] for w in got] == [w[0] for w in want] == ["UserWarning"]
    assert "not a leaf Tensor is being accessed" in got[0][1]


def test_backward_create_graph_on_leaves_warns_of_the_cycle_once(monkeypatch):
    from retrograd.autograd import engine

    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward(create_graph=True)

    # torch warns once per process: ask a fresh one
    script = ("import torch, warnings\nwarnings.simplefilter('always')\n"
              "with warnings.catch_warnings(record=True) as w:\n"
              "    warnings.simplefilter('always')\n"
              "    for _ in range(2):\n"
              "        x = torch.tensor([1., 2.], requires_grad=True)\n"
              "        (x * x).sum().backward(create_graph=True)\n"
              "print(len(w), w[0].category.__name__, w[0].message)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    count, category, message = out.split(" ", 2)
    monkeypatch.setattr(engine, "_cycle_warned", False)
    got = warned(program, rg) + warned(program, rg)
    assert [w[0] for w in got] == [category] and int(count) == 1
    assert "will create a reference cycle" in got[0][1] and "will create a reference cycle" \
        in message


def test_anomaly_mode_warns_on_enable_and_with_the_forward_trace_on_error():
    def program(lib):
        with lib.autograd.detect_anomaly():
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x * x
            with lib.no_grad():
                x.add_(1)
            try:
                y.sum().backward()
            except RuntimeError:
                pass

    want, got = warned(program, torch), warned(program, rg)
    assert [w[0] for w in got] == [w[0] for w in want]
    assert "Anomaly Detection has been enabled" in got[0][1]
    assert got[1][1].startswith("Error detected in MulBackward0. Traceback of forward call")
    assert "y = x * x" in got[1][1]


# -- 20. Engine.backward seeds ones of any shape ------------------------------------------------------
def test_engine_backward_seeds_ones_of_the_roots_shape():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    rg.autograd.Engine.backward(x * 3)
    rg.autograd.Engine.backward(x)
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    (t * 3).backward(torch.ones(2))
    t.backward(torch.ones(2))
    assert x.grad.tolist() == t.grad.tolist()
    assert rg.autograd.Engine.grad(x * x, [x])[0].tolist() == [2.0, 4.0]


def test_autograd_backward_keeps_the_scalar_rule():
    def program(lib):
        lib.autograd.backward(lib.tensor([1.0, 2.0], requires_grad=True) * 2)

    same(program, "grad can be implicitly created only for scalar outputs")


# -- argument errors of backward / grad ---------------------------------------------------------------
API_MISUSE = {
    "backward inputs empty": (lambda lib, x: (x * 2).sum().backward(inputs=[]),
                              "argument to `backward()` cannot be empty"),
    "grad inputs empty": (lambda lib, x: lib.autograd.grad((x * 2).sum(), []),
                          "argument to `grad()` cannot be empty"),
    "input without grad": (lambda lib, x: lib.autograd.grad((x * 2).sum(), lib.tensor(1.0)),
                           "One of the differentiated Tensors does not require grad"),
    "root without grad": (lambda lib, x: lib.autograd.grad(lib.tensor(1.0), x),
                          "does not require grad and does not have a grad_fn"),
    "fewer seeds": (lambda lib, x: lib.autograd.grad([(x * 2).sum(), (x * 3).sum()], x,
                                                     [lib.tensor(1.0)]),
                    "got 2 tensors and 1 gradients"),
    "fewer seeds backward": (lambda lib, x: lib.autograd.backward(
        [(x * 2).sum(), (x * 3).sum()], [lib.tensor(1.0)]), "got 2 tensors and 1 gradients"),
    "more seeds": (lambda lib, x: lib.autograd.grad([(x * 2).sum()], x,
                                                    [lib.tensor(1.0), lib.tensor(2.0)]), None),
    "materialize without allow_unused": (
        lambda lib, x: lib.autograd.grad((x * 2).sum(), x, allow_unused=False,
                                         materialize_grads=True),
        "Expected allow_unused to be True or not passed when materialize_grads=True"),
    "unused input": (lambda lib, x: lib.autograd.grad((x * 2).sum(),
                                                      lib.tensor(1.0, requires_grad=True)),
                     "appears to not have been used in the graph"),
    "second walk": (lambda lib, x: [(y := (x * x).sum()).backward(), y.backward()],
                    "Trying to backward through the graph a second time"),
}


@pytest.mark.parametrize("name", sorted(API_MISUSE))
def test_backward_and_grad_argument_errors(name):
    call, phrase = API_MISUSE[name]
    same(lambda lib: call(lib, lib.tensor([1.0, 2.0], requires_grad=True)), phrase)


# -- a view made under no_grad of a tensor that requires grad -----------------------------------------
def test_no_grad_view_requires_grad_but_sends_gradient_nowhere():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            v = x[:]
        flags = (v.requires_grad, v.is_leaf, v.grad_fn is None)
        v.sum().backward()
        v[0].backward()
        return flags, x.grad, v.grad

    same(program)


def test_integer_index_of_a_vector_is_a_view():
    def program(lib):
        a = lib.tensor([1.0, 2.0])
        a[0].mul_(2)
        b = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        b[1, 1].zero_()
        return a, b

    same(program)
