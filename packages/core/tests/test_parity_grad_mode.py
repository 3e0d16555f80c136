"""Grad mode, its decorators, and inference mode against PyTorch: each program runs on torch
and on retrograd and the results (values, error class and key phrase, warnings) are compared.

Each case is written once against a library handle ``lib`` (``torch`` or ``retrograd``)."""

from __future__ import annotations

import asyncio
import threading
import warnings

import pytest
import torch
import torch_parity
from torch_parity import plain

import retrograd as rg


def same(program, phrase=None):
    """``torch_parity.same``, each run under ``enable_grad`` (the mode is restored after it);
    a ``phrase`` says torch must raise."""
    returned = []

    def run(lib):
        with lib.enable_grad():
            result = program(lib)
        returned.append(lib)
        return result

    torch_parity.same(run, phrase, tol=0)
    assert phrase is None or torch not in returned, "torch did not raise"


def warned(program, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = plain(program(lib))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


SWITCHES = {
    "no_grad()": lambda lib: lib.no_grad(),
    "enable_grad()": lambda lib: lib.enable_grad(),
    "set_grad_enabled(False)": lambda lib: lib.set_grad_enabled(False),
    "set_grad_enabled(True)": lambda lib: lib.set_grad_enabled(True),
    "inference_mode()": lambda lib: lib.inference_mode(),
    "inference_mode(False)": lambda lib: lib.inference_mode(False),
}


def modes(lib):
    return (lib.is_grad_enabled(), lib.is_inference_mode_enabled())


# -- 1. decorated generators: the mode around every resume, the caller's mode in between ----
@pytest.mark.parametrize("caller_grad", [True, False])
@pytest.mark.parametrize("switch", list(SWITCHES))
def test_decorated_generator_runs_its_body_in_the_mode(switch, caller_grad):
    def program(lib):
        seen = []

        def gen(n):
            seen.append(("start", modes(lib)))
            got = yield n
            seen.append(("sent", got, modes(lib)))
            try:
                yield "again"
            except ValueError:
                seen.append(("thrown", modes(lib)))
                yield "caught"
            return "done"

        lib.set_grad_enabled(caller_grad)
        decorated = SWITCHES[switch](lib)(gen)
        seen.append(("decorated", modes(lib)))
        it = decorated(7)
        seen.append(("made", modes(lib)))
        seen.append(("first", next(it), modes(lib)))
        seen.append(("second", it.send("x"), modes(lib)))
        lib.set_grad_enabled(not caller_grad)  # the caller's mode changes between resumes
        seen.append(("third", it.throw(ValueError("v")), modes(lib)))
        try:
            next(it)
        except StopIteration as stop:
            seen.append(("returned", stop.value, modes(lib)))
        return seen

    same(program)


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_decorated_generator_closed_early_runs_its_cleanup_in_the_mode(switch):
    def program(lib):
        seen = []

        @SWITCHES[switch](lib)
        def gen():
            try:
                yield 1
                yield 2
            finally:
                seen.append(("cleanup", modes(lib)))

        it = gen()
        next(it)
        it.close()
        seen.append(("after", modes(lib)))
        return seen

    same(program)


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_decorated_generator_error_reaches_the_caller_in_its_mode(switch):
    def program(lib):
        @SWITCHES[switch](lib)
        def gen():
            yield modes(lib)
            raise KeyError("boom")

        it = gen()
        first = next(it)
        try:
            next(it)
        except KeyError:
            return first, modes(lib)

    same(program)


@pytest.mark.parametrize("switch", ["no_grad()", "enable_grad()", "inference_mode()"])
def test_decorated_coroutine_body_runs_in_the_callers_mode_as_in_torch(switch):
    # PyTorch wraps a coroutine function like a plain function: the mode covers making the
    # coroutine, not running it.
    def program(lib):
        @SWITCHES[switch](lib)
        async def co():
            return modes(lib)

        with lib.no_grad():
            return asyncio.run(co())

    same(program)


# -- 2. bare decorators, set_grad_enabled as a decorator, decorated classes ----------------------
@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_bare_decorator(name):
    def program(lib):
        x = lib.ones(2, requires_grad=True)

        @getattr(lib, name)
        def f(k):
            return modes(lib), (x * k).requires_grad, f.__name__

        with lib.set_grad_enabled(name != "enable_grad"):
            return f(2), modes(lib)

    same(program)


@pytest.mark.parametrize("mode", [False, True])
def test_set_grad_enabled_as_a_decorator_leaves_the_mode_alone(mode):
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.set_grad_enabled(not mode):
            @lib.set_grad_enabled(mode)
            def f():
                return modes(lib), (x * 2).requires_grad

            before = modes(lib)
            inside = f()
            return before, inside, modes(lib), f.__name__

    same(program)


def test_set_grad_enabled_called_bare_switches_and_as_a_context_restores():
    def program(lib):
        seen = [modes(lib)]
        lib.set_grad_enabled(False)
        seen.append(modes(lib))
        with lib.set_grad_enabled(True):
            seen.append(modes(lib))
        seen.append(modes(lib))
        switch = lib.set_grad_enabled(True)  # switches when made
        seen.append(modes(lib))
        with switch:
            seen.append(modes(lib))
        seen.append(modes(lib))  # back to the mode found when it was made
        return seen

    same(program)


def test_set_grad_enabled_refuses_a_non_bool():
    same(lambda lib: lib.set_grad_enabled(1))


def test_decorated_recursive_function_restores_each_level():
    def program(lib):
        @lib.no_grad()
        def down(n):
            with lib.enable_grad():
                inner = lib.is_grad_enabled()
            return [(n, lib.is_grad_enabled(), inner)] + (down(n - 1) if n else [])

        return down(2), modes(lib)

    same(program)


@pytest.mark.parametrize("switch", list(SWITCHES))
def test_decorating_a_class_warns_and_wraps_its_constructor(switch):
    def program(lib):
        class C:
            def __init__(self, k):
                self.k = k
                self.seen = modes(lib)

        decorated = SWITCHES[switch](lib)(C)
        made = decorated(3)
        return isinstance(decorated, type), type(made) is C, made.k, made.seen, modes(lib)

    assert warned(program, torch) == warned(program, rg)


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_decorating_a_class_bare_warns(name):
    def program(lib):
        class C:
            pass

        return isinstance(getattr(lib, name)(C), type)

    assert warned(program, torch) == warned(program, rg)


# -- 3. inference mode: the flags ------------------------------------------------------------
def test_inference_mode_flags_and_nesting():
    def program(lib):
        seen = [modes(lib)]
        with lib.inference_mode():
            seen.append(modes(lib))
            with lib.enable_grad():
                seen.append(modes(lib))
                with lib.inference_mode():
                    seen.append(modes(lib))
                seen.append(modes(lib))
            with lib.inference_mode(False):
                seen.append(modes(lib))
                with lib.no_grad():
                    seen.append(modes(lib))
                seen.append(modes(lib))
            lib.set_grad_enabled(True)
            seen.append(modes(lib))
        seen.append(modes(lib))
        with lib.no_grad():
            with lib.inference_mode(False):  # turning inference mode off turns grad on
                seen.append(modes(lib))
            seen.append(modes(lib))
        return seen

    same(program)


@pytest.mark.parametrize("caller", ["grad", "no_grad", "inference"])
def test_inference_mode_decorators(caller):
    def program(lib):
        @lib.inference_mode()
        def on():
            return modes(lib), lib.ones(1).is_inference()

        @lib.inference_mode(False)
        def off():
            return modes(lib), lib.ones(1).is_inference()

        ctx = {"grad": lib.enable_grad, "no_grad": lib.no_grad,
               "inference": lib.inference_mode}[caller]()
        with ctx:
            return on(), off(), modes(lib)

    same(program)


def test_inference_mode_records_nothing_even_under_enable_grad():
    def program(lib):
        w = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            a = w * 2
            with lib.enable_grad():
                b = w * 3
        return [(t.requires_grad, t.grad_fn is None, t.is_leaf) for t in (a, b)]

    same(program)


def test_inference_and_grad_modes_are_per_thread():
    def program(lib):
        seen = {}

        def other():
            seen["other"] = (modes(lib), lib.ones(1).is_inference())

        with lib.inference_mode():
            t = threading.Thread(target=other)
            t.start()
            t.join()
            seen["main"] = (modes(lib), lib.ones(1).is_inference())
        return seen

    same(program)


# -- 3. inference tensors --------------------------------------------------------------------
def made_inside(lib, **kwargs):
    with lib.inference_mode():
        return lib.ones(3, **kwargs)


def test_tensors_made_inside_are_inference_tensors():
    def program(lib):
        with lib.inference_mode():
            a = lib.ones(3)
            b = lib.tensor([1.0, 2.0], requires_grad=True)  # allowed inside
            c = lib.zeros(2)
            c.requires_grad_()  # allowed inside
        d = lib.ones(2)
        return [(t.is_inference(), t.requires_grad) for t in (a, b, c, d)]

    same(program)


def test_op_outputs_made_inside_are_inference_tensors():
    def program(lib):
        n = lib.ones(3)
        w = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            outs = [n * 2, w * 2, n.sum(), n.clone(), lib.cat([n, n])]
        return [(t.is_inference(), t.requires_grad) for t in outs]

    same(program)


def test_op_outputs_in_another_thread_are_not_inference_tensors():
    """Tensors made while another thread is in inference mode are normal ones."""
    def program(lib):
        entered, done = threading.Event(), threading.Event()

        def inside():
            with lib.inference_mode():
                entered.set()
                done.wait(10)

        th = threading.Thread(target=inside)
        th.start()
        try:
            assert entered.wait(10)
            t = lib.ones(3) * 2
            return t.is_inference(), (lib.ones(2, requires_grad=True) * 2).requires_grad
        finally:
            done.set()
            th.join(10)

    same(program)


def test_views_and_detach_of_an_inference_tensor_are_inference_tensors():
    def program(lib):
        x = made_inside(lib)
        return [x.is_inference(), x.view(3).is_inference(), x[1:].is_inference(),
                x.detach().is_inference(), x.reshape(1, 3).is_inference()]

    same(program)


def test_ops_outside_inference_mode_make_normal_tensors():
    def program(lib):
        x = made_inside(lib)
        w = lib.ones(3, requires_grad=True)
        outs = [x * 2, x.clone(), lib.cat([x, x]), x.sum(), w + x, x.tanh()]
        return [(t.is_inference(), t.requires_grad) for t in outs], (w + x).sum()

    same(program)


def test_a_view_of_a_normal_tensor_made_inside_is_normal():
    def program(lib):
        n = lib.ones(3)
        with lib.inference_mode():
            v = n.view(3)
        v.add_(1)
        return v.is_inference(), n._version, v._version, n

    same(program)


@pytest.mark.parametrize("saved", ["mul", "mul_view", "mul_left", "div", "matmul"])
def test_saving_an_inference_tensor_for_backward_is_refused(saved):
    def program(lib):
        x = made_inside(lib)
        w = lib.ones(3, requires_grad=True)
        ops = {"mul": lambda: w * x, "mul_view": lambda: w * x.view(3),
               "mul_left": lambda: x * w, "div": lambda: w / x,
               "matmul": lambda: lib.matmul(w, x)}
        return ops[saved]()

    same(program, "Inference tensors cannot be saved for backward")


def test_saving_an_inference_tensor_in_a_custom_function_is_refused():
    def program(lib):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g, None

        return Keep.apply(lib.ones(3, requires_grad=True), made_inside(lib))

    same(program, "Inference tensors cannot be saved for backward")


def test_an_inference_tensor_that_requires_grad_trains_where_nothing_saves_it():
    def program(lib):
        x = made_inside(lib, requires_grad=True)
        (x * 2 + 1).sum().backward()
        return x.grad, x.is_inference()

    same(program)


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("op", ["add_", "add_w", "mul_", "zero_", "fill_", "copy_", "setitem",
                                "view_add_", "iadd"])
def test_in_place_on_an_inference_tensor_outside_is_refused(op, grad):
    def program(lib):
        x = made_inside(lib)
        w = lib.ones(3, requires_grad=True)

        def iadd():
            y = x
            y += 1

        ops = {"add_": lambda: x.add_(1), "add_w": lambda: x.add_(w),
               "mul_": lambda: x.mul_(2), "zero_": lambda: x.zero_(),
               "fill_": lambda: x.fill_(2.0), "copy_": lambda: x.copy_(lib.zeros(3)),
               "setitem": lambda: x.__setitem__(0, 5.0), "view_add_": lambda: x[1:].add_(1),
               "iadd": iadd}
        with lib.set_grad_enabled(grad):
            ops[op]()

    same(program, "Inplace update to inference tensor outside InferenceMode is not allowed")


def test_in_place_on_an_inference_tensor_inside_inference_mode_is_allowed():
    def program(lib):
        x = made_inside(lib)
        n = lib.ones(3)
        with lib.inference_mode():
            x.add_(1)
            x[0] = 7.0
            x[1:].mul_(3)
            n.add_(1)  # a normal tensor changed inside still counts the change
        return x, x.is_inference(), n, n._version

    same(program)


def test_in_place_refusals_keep_torchs_order():
    def program(lib):  # a leaf that requires grad: the leaf check comes first with grad on
        x = made_inside(lib, requires_grad=True)
        return x.add_(1)

    same(program, "that requires grad is being used in an in-place operation")

    def program_no_grad(lib):
        x = made_inside(lib, requires_grad=True)
        with lib.no_grad():
            return x.add_(1)

    same(program_no_grad, "Inplace update to inference tensor outside InferenceMode")


def test_in_place_inside_inference_mode_off_is_refused():
    def program(lib):
        x = made_inside(lib)
        with lib.inference_mode():
            with lib.inference_mode(False):
                x.add_(1)

    same(program, "Inplace update to inference tensor outside InferenceMode")


@pytest.mark.parametrize("how", ["requires_grad_", "setter"])
def test_requires_grad_on_an_inference_tensor_outside_is_refused(how):
    def program(lib):
        x = made_inside(lib)
        if how == "setter":
            x.requires_grad = True
        else:
            x.requires_grad_()

    same(program, "Setting requires_grad=True on inference tensor outside InferenceMode is "
                  "not allowed")


def test_requires_grad_rules_that_allow():
    def program(lib):
        x = made_inside(lib)
        x.requires_grad_(False)  # turning it off is allowed outside
        with lib.inference_mode():
            x.requires_grad_()  # and on, inside
        return x.requires_grad, x.is_inference()

    same(program)


def test_requires_grad_on_an_integer_inference_tensor_fails_on_the_dtype_first():
    def program(lib):
        with lib.inference_mode():
            i = lib.ones(3, dtype=lib.int64)
        i.requires_grad_()

    same(program, "floating point")


def test_an_inference_tensor_has_no_version_counter():
    same(lambda lib: made_inside(lib)._version, "Inference tensors do not track version counter")
    same(lambda lib: made_inside(lib)[1:]._version,
         "Inference tensors do not track version counter")
