"""What a walk hands back and writes besides the leaves' ``.grad``, against PyTorch.

``autograd.grad`` and ``backward(inputs=)`` follow PyTorch's engine (its ``exec_info``):

- a node *runs* when one of its edges leads to a node that runs or to a requested input; a
  requested node that nothing upstream needs is *idle*: its tensors' hooks and
  ``retain_grad`` run, then what ``autograd.grad`` captures, and nothing more;
- ``autograd.grad`` captures a requested interior tensor's gradient *before* its hooks when
  its node runs anyway (something upstream is requested too), *after* them when it is idle;
- a lone root (one root, not a list of several) always gets its tensors' hooks and
  ``retain_grad`` with the seed, even on no path to the inputs;
- ``retain_grad`` fills ``.grad`` under ``autograd.grad`` too (leaves' ``.grad`` stay
  untouched);
- ``backward(inputs=)`` makes each input ``retain_grad()`` for good and runs its node;
- a tensor hook of an output that got no gradient (another output of its node did) is
  called with None, and may not replace it;
- a view made under ``no_grad`` of a tensor that requires grad cannot be a root.

Each program is written once against a library handle ``lib`` (``torch`` or ``retrograd``)
and returns its values, the hook log and the ``.grad`` fields; the two runs must agree (or
both raise, retrograd with torch's class or a subclass).
"""

from __future__ import annotations

import warnings

import pytest
import torch_parity
from torch_parity import plain

import retrograd as rg


def _round(v):
    """Floats rounded to 5 places, recursively: float32 results (``exp`` among them) may be
    an ulp apart between torch and NumPy."""
    if isinstance(v, (list, tuple)):
        return [_round(x) for x in v]
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    return round(v, 5) if isinstance(v, float) else v


def same(program, phrase=None):
    """``torch_parity.same`` on the results rounded, with warnings silenced (reading a
    non-leaf's ``.grad`` warns on both)."""
    def rounded(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _round(plain(program(lib)))

    torch_parity.same(rounded, phrase)


def logger(log, tag, scale=None):
    """A tensor hook that logs what it sees (None included) and maybe scales it."""
    def hook(g):
        log.append((tag, None if g is None else g.detach().tolist()))
        return None if scale is None or g is None else g * scale
    return hook


def node_hooks(log, fn, tag=""):
    fn.register_prehook(lambda go: log.append(f"pre{tag}"))
    fn.register_hook(lambda gi, go: log.append(f"post{tag}"))


def two_outputs(lib):
    """A custom Function with two outputs: ``(2x, 3x)``."""
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            out = None
            for g, k in ((ga, 2), (gb, 3)):
                if g is not None:
                    out = g * k if out is None else out + g * k
            return out

    return Two


# -- 1. retain_grad under autograd.grad ------------------------------------------------------
def test_grad_fills_a_retained_tensor_on_the_path():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        b.retain_grad()
        c = b * 3
        return lib.autograd.grad(c, [x]), b.grad, x.grad

    same(program)


def test_grad_fills_a_retained_tensor_that_is_requested():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        b.retain_grad()
        c = b * 3
        (g,) = lib.autograd.grad(c, [b])
        return g, b.grad, g is b.grad

    same(program)


def test_grad_leaves_a_retained_tensor_off_the_path_and_every_leaf_alone():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        w = lib.tensor(2.0, requires_grad=True)
        w.grad = lib.tensor(100.0)
        b = x * 2
        b.retain_grad()
        c = b * w
        return lib.autograd.grad(c, [w]), b.grad, x.grad, w.grad

    same(program)


def test_grad_accumulates_into_a_retained_grad_and_backward_adds_on():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x.exp()
        b.retain_grad()
        b.grad = lib.tensor(1.0)
        c = b * 3
        c.retain_grad()
        lib.autograd.grad(c, [x], retain_graph=True)
        first = (b.grad.item(), c.grad.item())
        c.backward()
        return first, b.grad, c.grad, x.grad

    same(program)


def test_grad_retained_sees_the_hooks_and_the_result_does_not_when_the_node_runs():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = x * 2
        b.retain_grad()
        b.register_hook(logger(log, "b", 10))
        c = (b * 3).sum()
        return lib.autograd.grad(c, [b, x]), b.grad, log

    same(program)


@pytest.mark.parametrize("square", [False, True])
def test_grad_retained_under_create_graph(square):
    def program(lib):
        x = lib.tensor(2.0, requires_grad=True)
        b = x * x
        b.retain_grad()
        c = b * b if square else b * 5
        r = lib.autograd.grad(c, [x], create_graph=True)
        return r, [t.requires_grad for t in r], b.grad, b.grad.requires_grad

    same(program)


def test_grad_of_a_retained_root_copies_the_seed():
    def program(lib):
        x = lib.tensor(2.0, requires_grad=True)
        y = x * x
        y.retain_grad()
        seed = lib.tensor(5.0)
        r = lib.autograd.grad(y, [x], seed, retain_graph=True)
        seed.mul_(2)
        r2 = lib.autograd.grad(y, [y])
        return r, r2, y.grad

    same(program)


def test_a_failed_grad_leaves_retained_grads_as_they_were():
    """E13, where retrograd differs on purpose: torch's retain_grad writes during the walk, so
    after the failure ``b.grad`` is 12 there; retrograd commits nothing."""
    x = rg.tensor(2.0, requires_grad=True)
    w = rg.tensor(3.0, requires_grad=True)
    b = x * w
    b.retain_grad()
    c = b * b
    with rg.no_grad():
        w.mul_(2)
    with pytest.raises(rg.VersionMismatch):
        rg.autograd.grad(c, [x])
    assert b._grad is None


# -- 2. when autograd.grad captures a requested interior gradient -----------------------------
def test_capture_before_the_hook_when_an_upstream_input_is_requested_too():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = x.clone()
        b.register_hook(logger(log, "b", 2))
        c = (b * 3).sum()
        return lib.autograd.grad(c, [b, x]), log

    same(program)


def test_capture_after_the_hook_when_the_node_is_idle():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = x.clone()
        b.register_hook(logger(log, "b", 2))
        node_hooks(log, b.grad_fn)
        c = (b * 3).sum()
        return lib.autograd.grad(c, [b]), log

    same(program)


def test_capture_order_with_node_hooks_when_the_node_runs():
    def program(lib):
        log = []
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        b.register_hook(logger(log, "b", 10))
        b.grad_fn.register_prehook(lambda g: log.append("pre") or (g[0] * 7,))
        b.grad_fn.register_hook(lambda gi, go: log.append("post"))
        c = b * 3
        return lib.autograd.grad(c, [b, x]), log

    same(program)


def test_capture_of_two_requested_tensors_on_a_chain():
    """``d`` runs (``b`` is upstream): before its hook; ``b`` is idle: after its own."""
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        b = x * 2
        b.register_hook(logger(log, "b", 10))
        d = b * 1
        d.register_hook(logger(log, "d", 100))
        c = d * 2
        first = lib.autograd.grad(c, [d, b], retain_graph=True)
        return first, lib.autograd.grad(c * 1, [b, d]), log

    same(program)


def test_capture_through_a_leaf_upstream_of_two_products():
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        w = lib.tensor(3.0, requires_grad=True)
        b = x * w
        b.register_hook(logger(log, "b", 10))
        c = b * 2
        return lib.autograd.grad(c, [b, w]), log

    same(program)


@pytest.mark.parametrize("with_x", [False, True])
def test_root_requested_as_an_input(with_x):
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        y = x * x
        y.register_hook(logger(log, "y", 3))
        y.retain_grad()
        return lib.autograd.grad(y, [y, x] if with_x else [y]), log, y.grad

    same(program)


def test_leaf_root_requested_as_its_input():
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        x.register_hook(logger(log, "x", 3))
        return lib.autograd.grad(x, [x]), log, x.grad

    same(program)


@pytest.mark.parametrize("inputs", ["y,x", "z", "z,y"])
def test_capture_at_a_slot_of_a_two_output_node(inputs):
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = two_outputs(lib).apply(x)
        y.register_hook(logger(log, "y", 5))
        z.register_hook(logger(log, "z", 7))
        z.retain_grad()
        y.grad_fn.register_prehook(lambda g: log.append("pre"))
        c = (y * 3 + z).sum()
        env = {"x": x, "y": y, "z": z}
        return lib.autograd.grad(c, [env[k] for k in inputs.split(",")]), log, z.grad

    same(program)


def test_capture_under_create_graph_then_differentiated_again():
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        b = x * x
        b.register_hook(logger(log, "b", 10))
        b.retain_grad()
        c = b * b
        r = lib.autograd.grad(c, [b, x], create_graph=True)
        return r, lib.autograd.grad(r[1], [x]), log, b.grad

    same(program)


# -- 3. the lone root's hooks ----------------------------------------------------------------
def test_lone_root_off_the_path_runs_its_hooks_and_retain_grad_only():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x.sum() * 1.0
        y.register_hook(logger(log, "y", 3))
        y.retain_grad()
        node_hooks(log, y.grad_fn)
        return lib.autograd.grad(y, [w], allow_unused=True), log, y.grad, x.grad

    same(program)


def test_lone_root_in_a_list_of_one_counts_as_lone():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x.sum() * 1.0
        y.register_hook(logger(log, "y"))
        return lib.autograd.grad([y], [w], allow_unused=True), log

    same(program)


def test_lone_leaf_root_off_the_path_runs_its_hooks_only():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        x.register_hook(logger(log, "x", 2))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
        return lib.autograd.grad(x, [w], lib.ones(2), allow_unused=True), log, x.grad

    same(program)


def test_lone_root_off_the_path_under_create_graph():
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x * 3
        y.register_hook(logger(log, "y", 10))
        y.retain_grad()
        y.grad_fn.register_prehook(lambda g: log.append("pre"))
        return (lib.autograd.grad(y, [w], allow_unused=True, create_graph=True), log,
                y.grad, y.grad.requires_grad)

    same(program)


@pytest.mark.parametrize("twice", [False, True])
def test_several_roots_off_the_path_run_no_hooks(twice):
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x.sum() * 1.0
        y.register_hook(logger(log, "y"))
        y.retain_grad()
        z = w * 2
        z.register_hook(logger(log, "z"))
        roots = [y, y] if twice else [y, z]
        return lib.autograd.grad(roots, [w], allow_unused=True), log, y.grad

    same(program)


def test_two_roots_one_of_them_requested():
    def program(lib):
        log = []
        x = lib.tensor(2.0, requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x * 3
        y.register_hook(logger(log, "y", 10))
        y.retain_grad()
        z = w * 4
        z.register_hook(logger(log, "z"))
        return lib.autograd.grad([y, z], [y], allow_unused=True), log, y.grad

    same(program)


def test_backward_with_inputs_and_a_root_off_their_path():
    def program(lib):
        log = []
        x = lib.tensor(1.0, requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x * 2
        y.register_hook(logger(log, "y", 3))
        y.retain_grad()
        y.grad_fn.register_prehook(lambda g: log.append("pre"))
        y.backward(inputs=[w])
        return log, y.grad, w.grad, x.grad

    same(program)


def test_backward_with_inputs_and_a_leaf_root_off_their_path():
    def program(lib):
        log = []
        x = lib.tensor(1.0, requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        x.register_hook(logger(log, "x", 3))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
        x.backward(inputs=[w])
        x.backward(inputs=[x])
        return log, w.grad, x.grad

    same(program)


def test_backward_with_inputs_and_two_roots_one_off_their_path():
    def program(lib):
        log = []
        x = lib.tensor(1.0, requires_grad=True)
        w = lib.tensor(1.0, requires_grad=True)
        y = x * 2
        y.register_hook(logger(log, "y", 3))
        z = w * 2
        z.register_hook(logger(log, "z", 3))
        lib.autograd.backward([y, z], inputs=[w])
        return log, w.grad, x.grad

    same(program)


# -- 4. backward(inputs=) on an interior tensor -----------------------------------------------
def test_backward_inputs_retains_the_interior_input_for_good():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        c.backward(inputs=[b], retain_graph=True)
        first = (b.grad.item(), b.retains_grad)
        c.backward()
        return first, b.grad, x.grad

    same(program)


@pytest.mark.parametrize("order", ["b_first", "nograd_first"])
def test_backward_inputs_retains_before_refusing_a_later_input(order):
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        c = b * 3
        z = lib.tensor(1.0)
        try:
            c.backward(inputs=[b, z] if order == "b_first" else [z, b])
        except RuntimeError:
            pass
        return b.retains_grad, b.grad, x.grad

    same(program)


def test_backward_inputs_refuses_an_input_without_grad_as_retain_grad_does():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        (x * 2).backward(inputs=[lib.tensor(1.0)])

    same(program, "can't retain_grad on")


def test_backward_inputs_runs_the_interior_inputs_node():
    def program(lib):
        log = []
        x = lib.tensor(1.0, requires_grad=True)
        b = x * 2
        b.register_hook(logger(log, "b", 10))
        node_hooks(log, b.grad_fn)
        c = b * 3
        c.backward(inputs=[b])
        return b.grad, x.grad, log, b.retains_grad

    same(program)


def test_backward_inputs_releases_the_interior_inputs_node():
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        b = x.exp()
        c = b * 3
        c.backward(inputs=[b])
        b.backward()  # exp saved its result, freed by the walk that ran its node
        return x.grad

    same(program, "second time")


def test_backward_inputs_at_a_slot_of_a_two_output_node():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = two_outputs(lib).apply(x)
        z.register_hook(logger(log, "z", 7))
        c = (y * 3 + z).sum()
        c.backward(inputs=[y])
        return log, y.grad, x.grad, y.retains_grad, z.retains_grad

    same(program)


# -- 5. hooks of an output that got no gradient --------------------------------------------
@pytest.mark.parametrize("call", ["backward", "grad_y", "grad_x", "grad_z_y"])
def test_hook_of_an_output_without_gradient_sees_none(call):
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = two_outputs(lib).apply(x)
        y.register_hook(logger(log, "y"))
        z.register_hook(logger(log, "z"))
        z.retain_grad()
        c = (y * 3).sum()
        if call == "backward":
            c.backward()
            return log, x.grad, z.grad
        inputs = {"grad_y": [y], "grad_x": [x], "grad_z_y": [z, y]}[call]
        return lib.autograd.grad(c, inputs, allow_unused=True), log, z.grad

    same(program)


def test_hook_may_not_replace_a_none_gradient():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = two_outputs(lib).apply(x)
        z.register_hook(lambda g: lib.ones(2))
        (y * 3).sum().backward()
        return x.grad

    same(program, "can't replace a None gradient with a non-None value")


def test_node_hooks_may_not_replace_a_none_gradient():
    def post(lib):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * lib.tensor(2.0)
        y.grad_fn.register_hook(lambda gi, go: (gi[0], lib.tensor(5.0)))
        y.backward()
        return x.grad

    def pre(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = two_outputs(lib).apply(x)
        y.grad_fn.register_prehook(lambda go: (go[0], lib.ones(2)))
        (y * 3).sum().backward()
        return x.grad

    same(post, "can't replace a None gradient with a non-None value")
    same(pre, "can't replace a None gradient with a non-None value")


# -- 6. a view made under no_grad as a root ---------------------------------------------------
@pytest.mark.parametrize("call", ["backward", "grad", "second_of_two"])
def test_no_grad_view_cannot_be_a_root(call):
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            v = x.reshape(-1)
        result = (v.requires_grad, v.is_leaf)
        try:
            if call == "backward":
                v.backward(lib.ones(2))
            elif call == "grad":
                lib.autograd.grad(v, [x], lib.ones(2))
            else:
                lib.autograd.backward([x.sum(), v], [None, lib.ones(2)])
        except RuntimeError as exc:
            return result, str(exc).split(" (")[0], x.grad
        return result, "no error", x.grad

    same(program)


def test_no_grad_view_inside_a_graph_sends_nothing():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            v = x.reshape(-1)
        s = v.sum()
        s.backward()
        return s.requires_grad, x.grad, v.grad

    same(program)
