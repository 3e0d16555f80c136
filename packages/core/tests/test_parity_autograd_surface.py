"""The rest of ``torch.autograd``'s surface that PyTorch-written programs reach for, each as a
small program run on torch and on retrograd:

* ``autograd.graph.GradientEdge`` / ``get_gradient_edge`` as inputs of ``grad`` and
  ``backward`` (an edge taken before an in-place op keeps the old history);
* ``autograd.graph.register_multi_grad_hook`` (``all`` and ``any``; per backward call);
* ``autograd.graph.allow_mutation_on_saved_tensors``;
* ``autograd.set_multithreading_enabled``, ``set_warn_always``;
* the first ``.grad`` under ``create_graph`` is a copy recorded as ``CopyBackwards``, and a
  ``@once_differentiable`` backward's gradients hang off an ``Error`` node;
* undefined gradients: a node that gets only None still runs -- its hooks see None, a custom
  Function's backward gets zeros -- as PyTorch's engine runs it;
* anomaly mode's warnings up the chain of nodes made by a backward ("Previous calculation
  was induced by ...");
* a custom Function that marks a view dirty and saves it leaves no reference cycle.
"""

from __future__ import annotations

import warnings
import weakref

import pytest
from torch_parity import same


def _graph(lib):
    return lib.autograd.graph


# -- gradient edges -------------------------------------------------------------------------
def edge_taken_before_inplace(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    edge = _graph(lib).get_gradient_edge(x)
    x *= 2
    return lib.autograd.grad(x.sum(), (edge, x))


def edge_of_a_leaf(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    edge = _graph(lib).get_gradient_edge(a)
    g = lib.autograd.grad((a * 3).sum(), edge)
    return type(edge.node).__name__, edge.output_nr, g


def edges_built_by_hand(lib):
    ge = _graph(lib).GradientEdge
    x = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    y = lib.tensor([3.0, 4.0], requires_grad=True).clone()
    out = (x * y).sum()
    return lib.autograd.grad(out, (ge(x.grad_fn, x.output_nr), ge(y.grad_fn, y.output_nr)))


def backward_to_an_edge(lib):
    ge = _graph(lib).GradientEdge
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a * 2
    y = lib.tensor([3.0, 4.0], requires_grad=True)
    (x * y).sum().backward(inputs=(ge(x.grad_fn, 0), y))
    return a.grad, y.grad


def edge_of_a_constant(lib):
    _graph(lib).get_gradient_edge(lib.ones(2))


def unused_edge(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    lib.autograd.grad((a * 2).sum(), _graph(lib).get_gradient_edge(b))


# -- multi-grad hooks -----------------------------------------------------------------------
def multi_grad_all(lib):
    class Foo(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    t1 = lib.tensor([1.0, 2.0], requires_grad=True).mul(2)
    t2 = Foo.apply(lib.tensor([1.0, 2.0], requires_grad=True))
    t3 = lib.tensor([1.0, 2.0], requires_grad=True).mul(3)
    t4 = Foo.apply(lib.tensor([1.0, 2.0], requires_grad=True))
    calls = []
    handle = _graph(lib).register_multi_grad_hook(
        (t1, t2, t3, t4), lambda grads: calls.append([g is not None for g in grads]))
    out = t2 * t3
    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    out.sum().backward(inputs=(t1, t4), retain_graph=True)  # reaches none of them
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    out.sum().backward(retain_graph=True)
    handle.remove()
    out.sum().backward(retain_graph=True)
    return calls


def multi_grad_all_values(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    d = a + b
    got = []
    _graph(lib).register_multi_grad_hook((a, b, c, d), lambda gs: got.append(gs))
    c.sum().backward()
    return got


def multi_grad_any(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    s, c = a.sin(), a.cos()
    order = []
    _graph(lib).register_multi_grad_hook((s, c), lambda g: order.append(("any", g)),
                                         mode="any")
    a.register_hook(lambda g: order.append(("a", g)))
    (s + c).sum().backward()
    return order


def multi_grad_bad_mode(lib):
    a = lib.tensor([1.0], requires_grad=True)
    _graph(lib).register_multi_grad_hook((a,), lambda gs: None, mode="foo")


def multi_grad_after_a_failed_backward(lib):
    class Boom(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("boom")

    a = lib.tensor([1.0], requires_grad=True).clone()
    b = lib.tensor([2.0], requires_grad=True).clone()
    calls = []
    _graph(lib).register_multi_grad_hook((a, b), lambda gs: calls.append(len(gs)))
    try:  # (retain_graph: retrograd releases what ran before the failure, E5)
        (Boom.apply(a) * b).sum().backward(retain_graph=True)
    except RuntimeError:
        calls.append("raised")
    (a * b).sum().backward()
    return calls


# -- allow_mutation_on_saved_tensors --------------------------------------------------------
def mutation_refused_without_it(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    out.backward()


def mutation_allowed(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    with _graph(lib).allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
    return a.grad, b


def mutation_of_a_base_of_a_saved_view(lib):
    with _graph(lib).allow_mutation_on_saved_tensors():
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = a.clone()
        c = b[:]
        out = (c ** 2).sum()
        b *= 2
        out.backward()
    return a.grad


def mutation_contexts_nested(lib):
    with _graph(lib).allow_mutation_on_saved_tensors():
        with _graph(lib).allow_mutation_on_saved_tensors():
            pass


def backward_after_the_context(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with _graph(lib).allow_mutation_on_saved_tensors():
        out = (a.clone() ** 2).sum()
    out.backward()


# -- switches -------------------------------------------------------------------------------
def multithreading_switch(lib):
    seen = []
    with lib.autograd.set_multithreading_enabled(False):
        seen.append(lib.autograd.is_multithreading_enabled())
    seen.append(lib.autograd.is_multithreading_enabled())
    with lib.autograd.set_multithreading_enabled(False):
        lib.autograd.set_multithreading_enabled(True)
        seen.append(lib.autograd.is_multithreading_enabled())
    seen.append(lib.autograd.is_multithreading_enabled())
    lib.autograd.set_multithreading_enabled(False)
    seen.append(lib.autograd.is_multithreading_enabled())
    lib.autograd.set_multithreading_enabled(True)
    seen.append(lib.autograd.is_multithreading_enabled())
    return seen


def cycle_warning_every_time(lib):
    prev = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    counts = []
    try:
        for _ in range(2):
            b = lib.tensor([1.0, 2.0], requires_grad=True)
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                (b * b).sum().backward(create_graph=True)
                lib.autograd.grad((b * b).sum(), b, create_graph=True)
            counts.append(sum("Using backward() with create_graph=True" in str(w.message)
                              for w in ws))
    finally:
        lib.set_warn_always(prev)
    return counts, lib.is_warn_always_enabled() == prev


def queue_callback_outside_backward(lib):
    lib.autograd.Variable._execution_engine.queue_callback(lambda: None)


def queue_callback_runs_after_the_grads(lib):
    engine = lib.autograd.Variable._execution_engine
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        engine.queue_callback(lambda: seen.append(("first", x.grad)))
        engine.queue_callback(lambda: engine.queue_callback(lambda: seen.append("queued")))
        return g

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    z = x * 3
    z.register_hook(lambda g: engine.queue_callback(lambda: seen.append("in grad")))
    lib.autograd.grad(z.sum(), x)
    return seen, isinstance(x, lib.autograd.Variable)


# -- grad_dtype ----------------------------------------------------------------------------
def grad_dtype_casts_the_accumulated_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    before = x.grad_dtype
    x.grad_dtype = lib.float64
    (x * 2).sum().backward()
    first = (x.grad.dtype, x.grad)
    x.grad = None
    x.grad_dtype = None
    (x * 2).sum().backward()
    x.grad = lib.zeros(2, dtype=lib.float64)  # any dtype once grad_dtype is None
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    y.grad_dtype = lib.float64
    got = (before, first[0], x.grad.dtype, lib.autograd.grad((y * 2).sum(), y)[0].dtype,
           lib.tensor([1, 2]).grad_dtype)
    return [str(d).rpartition(".")[2] for d in got], first[1]


def grad_dtype_refuses_a_grad_of_another_dtype(lib):
    y = lib.tensor([1.0, 2.0], requires_grad=True)
    y.grad = lib.zeros(2, dtype=lib.float64)


def grad_dtype_of_a_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    return (x * 2).grad_dtype


def grad_dtype_set_on_a_non_leaf(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).grad_dtype = lib.float16


def grad_dtype_of_a_wrong_type(lib):
    lib.tensor([1.0, 2.0], requires_grad=True).grad_dtype = "float64"


# -- .grad under create_graph ---------------------------------------------------------------
def desc(fn):
    if fn is None:
        return "None"
    inner = ", ".join(desc(f) for f, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


def first_grad_is_a_copy(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * x).sum().backward(create_graph=True)
        first = desc(x.grad.grad_fn)
        (x * x).sum().backward(create_graph=True)
    return first, desc(x.grad.grad_fn), x.grad


def first_grad_without_history(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * 2).sum().backward(create_graph=True)
    return x.grad.grad_fn is None, x.grad.requires_grad, x.grad


def once_differentiable_graph(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t1, scalar, t2):
            ctx.save_for_backward(t1, t2)
            return t1 * t2 + scalar * t2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            t1, t2 = ctx.saved_tensors
            return g * t2, None, g * t1

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.apply(x, 2.0, y).sum().backward(lib.ones((), requires_grad=True),
                                          create_graph=True)
    node = x.grad.grad_fn.next_functions[1][0]
    return desc(x.grad.grad_fn), node.name().rpartition("::")[2]


# -- undefined gradients --------------------------------------------------------------------
def _drops_first(lib):
    class DropFirst(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return None, g

    return DropFirst


def undefined_reaches_hooks(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x = a * 3
    x.register_hook(lambda g: seen.append(("x", g)))
    x.grad_fn.register_prehook(lambda gs: seen.append(("pre", gs)))
    x.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi, go)))
    a.register_hook(lambda g: seen.append(("a", g)))
    a.register_post_accumulate_grad_hook(lambda t: seen.append(("a-post", t.grad)))
    _drops_first(lib).apply(x, b).sum().backward()
    return seen, a.grad, b.grad


def undefined_into_a_custom_function(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(g)
            return g * 2

    seen = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    _drops_first(lib).apply(Twice.apply(a), b).sum().backward()
    return seen, a.grad


def undefined_without_materialized_grads(lib):
    class Raw(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(g)
            return None if g is None else g * 2

    seen = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    _drops_first(lib).apply(Raw.apply(a), b).sum().backward()
    return seen, a.grad


def undefined_hook_cannot_define(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a * 3
    x.register_hook(lambda g: lib.ones(2))
    _drops_first(lib).apply(x, b).sum().backward()


def undefined_still_checks_versions(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    c = a.clone()
    x = c * c
    c.add_(1)  # x's node saved c: refused even though only undefined gradients reach it
    _drops_first(lib).apply(x, b).sum().backward()
    return a.grad, b.grad


def gradcheck_undefined_grad(lib):
    def hook(g):
        if g is None:
            raise RuntimeError("x is undefined")

    def fn(x):
        y = x.clone()
        y.register_hook(hook)
        return y

    x = lib.ones(1, dtype=lib.float64, requires_grad=True)
    out = []
    for fast in (True, False):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            try:
                lib.autograd.gradcheck(fn, (x,), fast_mode=fast)
                out.append("passed")
            except RuntimeError as exc:
                out.append("Expected backward function to handle undefined output grads"
                           in str(exc))
            out.append(lib.autograd.gradcheck(fn, (x,), raise_exception=False, fast_mode=fast))
        out.append(any("New undefined gradient support checking" in str(w.message)
                       for w in ws))
    return out


def gradcheck_undefined_grad_of_several_outputs(lib):
    def fn(x):
        return x * 2, x.sin()

    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    return lib.autograd.gradcheck(fn, (x,)), lib.autograd.gradcheck(fn, (x,), fast_mode=True)


def gradcheck_output_shape_or_dtype_changes(lib):
    def grows(x):
        return lib.cat([x, x]) if float(x.sum()) >= 1 else x

    def casts(x):
        return x.to(lib.float32) if float(x.sum()) >= 1 else x

    a = lib.ones(1, dtype=lib.float64, requires_grad=True)
    out = []
    for fn, phrase in ((grows, "return outputs with the same shape when inputs are perturbed"),
                       (casts, "return outputs with the same dtype when inputs are perturbed")):
        for fast in (True, False):
            try:
                lib.autograd.gradcheck(fn, (a,), fast_mode=fast)
            except AssertionError as exc:
                out.append(phrase in str(exc))
    return out


# -- anomaly mode: the chain of nodes made by a backward -------------------------------------
def nested_anomaly(lib):
    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Inner.apply(g.expand(3) * x)

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, y):
            return y * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    messages = []
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            with lib.autograd.detect_anomaly():
                (gx,) = lib.autograd.grad(Outer.apply(x), x, create_graph=True)
                gx.sum().backward()
        except RuntimeError as exc:
            messages.append(str(exc).splitlines()[0])
    for w in ws:
        text = str(w.message)
        if "Error detected" in text:
            messages.append(text.split(".")[0])
        elif "Previous calculation" in text:
            messages.append(text.strip().split(".")[0])
    return messages


# -- a custom Function marked as a pure view (ctx._is_pure_view) ----------------------------
def _pure_view_fn(lib, calls, of_temp=False):
    class Narrow(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx._is_pure_view = True
            if of_temp:
                return a.clone().narrow(0, 0, 2)
            return a.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, g):
            calls.append(g)
            return lib.cat([g, lib.zeros(1, dtype=g.dtype)])

    return Narrow


def pure_view_written_in_place(lib):
    calls = []
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    v = _pure_view_fn(lib, calls).apply(a.clone())
    v.mul_(3)
    (v * v).sum().backward()
    return a.grad, len(calls), v.grad_fn.name()


def pure_view_used_out_of_place(lib):
    calls = []
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    v = _pure_view_fn(lib, calls).apply(a.clone())
    (v * 3).sum().backward()
    return a.grad, len(calls)


def pure_view_of_a_temporary_written_in_place(lib):
    a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    v = _pure_view_fn(lib, [], of_temp=True).apply(a.clone())
    v.mul_(3)


def pure_view_of_two_inputs(lib):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx._is_pure_view = True
            return a.narrow(0, 0, 1)

        @staticmethod
        def backward(ctx, g):
            return g, None

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    Two.apply(a.clone(), a.clone())


# -- a dirty view saved by its Function ------------------------------------------------------
def dirty_view_saved_is_freed(lib):
    class Test(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    def scope():
        x = lib.tensor(1.0, requires_grad=True).clone()
        x = x.view_as(x)
        Test.apply(x)
        return weakref.ref(x)

    ref = scope()
    return ref() is None


PROGRAMS = [
    edge_taken_before_inplace, edge_of_a_leaf, edges_built_by_hand, backward_to_an_edge,
    edge_of_a_constant, unused_edge,
    multi_grad_all, multi_grad_all_values, multi_grad_any, multi_grad_bad_mode,
    multi_grad_after_a_failed_backward,
    mutation_refused_without_it, mutation_allowed, mutation_of_a_base_of_a_saved_view,
    mutation_contexts_nested, backward_after_the_context,
    multithreading_switch, cycle_warning_every_time, queue_callback_outside_backward,
    queue_callback_runs_after_the_grads,
    grad_dtype_casts_the_accumulated_grad, grad_dtype_refuses_a_grad_of_another_dtype,
    grad_dtype_of_a_non_leaf, grad_dtype_set_on_a_non_leaf, grad_dtype_of_a_wrong_type,
    first_grad_is_a_copy, first_grad_without_history, once_differentiable_graph,
    undefined_reaches_hooks, undefined_into_a_custom_function,
    undefined_without_materialized_grads, undefined_hook_cannot_define,
    undefined_still_checks_versions, gradcheck_undefined_grad,
    gradcheck_undefined_grad_of_several_outputs, gradcheck_output_shape_or_dtype_changes,
    pure_view_written_in_place, pure_view_used_out_of_place,
    pure_view_of_a_temporary_written_in_place, pure_view_of_two_inputs, nested_anomaly, dirty_view_saved_is_freed,
]

PHRASES = {
    "edge_of_a_constant": "It is not possible to get the gradient edge",
    "unused_edge": "appears to not have been used in the graph",
    "queue_callback_outside_backward": "Final callbacks can only be installed during "
                                       "backward pass",
    "grad_dtype_refuses_a_grad_of_another_dtype": "The gradient must match the tensor's "
                                                  "grad_dtype",
    "grad_dtype_of_a_non_leaf": "grad_dtype can only be accessed on leaf tensors",
    "grad_dtype_set_on_a_non_leaf": "grad_dtype can only be set on leaf tensors",
    "grad_dtype_of_a_wrong_type": "dtype or None, but got str",
    "pure_view_of_a_temporary_written_in_place": "a view of a leaf Variable that requires "
                                                 "grad is being used in an in-place",
    "pure_view_of_two_inputs": "Pure view custom Function can only have one input Tensor",
    "multi_grad_bad_mode": "Expects mode to be one of ('all', 'any') but got foo",
    "mutation_refused_without_it": "modified by an inplace operation",
    "mutation_contexts_nested": "allow_mutation_on_saved_tensors contexts cannot be nested",
    "backward_after_the_context": "Trying to backward outside of the "
                                  "'allow_mutation_on_saved_tensors' context",
    "undefined_hook_cannot_define": "can't replace a None gradient with a non-None value",
    "undefined_still_checks_versions": "modified by an inplace operation",
}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    same(program, PHRASES.get(program.__name__))


def test_a_failing_callback_undoes_the_grads():
    """E13 (a deliberate difference, docs/semantics.md): PyTorch keeps the ``.grad`` written
    before a queued callback raised; retrograd undoes the backward's writes."""
    import retrograd as rg

    engine = rg.autograd.Variable._execution_engine
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    x.grad = rg.tensor([5.0, 5.0])
    y = x * 2
    y.register_hook(lambda g: engine.queue_callback(lambda: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
