"""The ``semantics`` family: autograd corners PyTorch users rely on, replayed against PyTorch.

Each case is a small program written once against the library handle ``lib`` (see
:mod:`retrograd_conformance.adapter`), run on retrograd-with-a-backend and on PyTorch in the
same dtype, and compared name by name: values *and dtypes* of tensors, bools, numbers, strings
(the order hooks ran in), lists, and errors captured with ``lib.capture`` (compared by kind).
``expected`` holds values known from PyTorch for some names, so a change of PyTorch's own
behaviour is noticed as well. The groups:

- ``hooks``: tensor hooks, node pre/post hooks, AccumulateGrad hooks, post-accumulate-grad hooks,
  ``retain_grad``, the order they run in and what they see;
- ``grad-mode``: ``no_grad`` / ``enable_grad`` / ``set_grad_enabled`` as context managers,
  decorators (bare, on generators) and plain calls; ``inference_mode``;
- ``function``: custom ``autograd.Function`` (``mark_dirty``, ``mark_non_differentiable``,
  materialized grads, ``once_differentiable``, ``setup_context``, ...);
- ``inplace``: in-place ops against leaves, views made under ``no_grad``, retained grads;
  ``pow`` at base 0;
- ``seeds``: the gradient handed to ``backward`` / ``grad`` (dtype cast, shape), and
  ``materialize_grads``;
- ``promotion``: result dtypes of mixed-dtype arithmetic and the dtypes of the gradients;
- ``warnings``: what warns (class and a key phrase) and what does not;
- ``engine``: undefined gradients (nodes still run, hooks see None), ``GradientEdge``,
  ``register_multi_grad_hook``, the first ``.grad`` under ``create_graph``,
  ``queue_callback``.

A program that stops with an error where PyTorch runs to completion fails the case with that
error and the line it was raised on; a case whose ``requires`` names something the library
handle lacks fails saying so. Nothing is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Raises


@dataclass(frozen=True)
class SemanticsCase:
    """One program of the ``semantics`` family.

    ``program(lib)`` returns a dict of named results; every name is compared with PyTorch run
    in the same dtype, and those in ``expected`` also with the value written here (PyTorch's,
    checked when PyTorch itself is run). ``requires`` lists dotted attributes of the library
    handle the program needs (``"inference_mode"``); a library without one fails the case.
    """

    id: str
    group: str
    title: str
    checks: str
    program: Callable[[Any], dict[str, Any]]
    expected: dict[str, Any] = field(default_factory=dict)
    dtypes: tuple[str, ...] = ("float32", "float64")
    requires: tuple[str, ...] = ()


ONE_DTYPE = ("float32",)  # the program names every dtype itself: one run is enough


# ---- helpers -------------------------------------------------------------------------------


def _warned(caught: list[tuple[str, str]], phrase: str) -> list[str]:
    """``[(category, message)]`` -> comparable lines: the class, and whether the key phrase
    is in the message (the message itself when it is not, so a report shows it)."""
    out = []
    for category, message in caught:
        if phrase.lower() in message.lower():
            out.append(f"{category} mentioning {phrase!r}")
        else:
            out.append(f"{category} not mentioning {phrase!r}: {message[:100]}")
    return out


# ---- hooks ---------------------------------------------------------------------------------


def accumulate_prehook(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    a = lib.tensor(1.0, requires_grad=True)
    b = a.clone()
    acc = b.grad_fn.next_functions[0][0]

    def pre(grads: Any) -> Any:
        log.append(f"AccumulateGrad prehook saw {grads[0].item():g}")
        return (grads[0] * 10,)

    def tensor_hook(g: Any) -> Any:
        log.append(f"tensor hook saw {g.item():g}")
        return g + 1

    acc.register_prehook(pre)  # registered first, runs second: tensor hooks come first
    a.register_hook(tensor_hook)
    b.backward()
    return {"is AccumulateGrad": lib.is_accumulate_grad(acc), "order": log, "a.grad": a.grad}


def accumulate_post_hooks(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    acc = b.grad_fn.next_functions[0][0]

    def grad_of(p: Any) -> str:
        return "None" if p.grad is None else str(p.grad.tolist())

    def post(grad_inputs: Any, grad_outputs: Any) -> None:
        log.append(f"AccumulateGrad hook: grad_outputs {grad_outputs[0].tolist()}, "
                   f"a.grad {grad_of(a)}")

    def post_acc(p: Any) -> None:
        log.append(f"post-accumulate hook: p is a {p is a}, a.grad {grad_of(p)}")

    def pre(grads: Any) -> None:
        log.append(f"AccumulateGrad prehook: a.grad {grad_of(a)}")

    acc.register_hook(post)
    a.register_post_accumulate_grad_hook(post_acc)
    acc.register_prehook(pre)
    a.register_hook(lambda g: log.append(f"tensor hook: a.grad {grad_of(a)}"))
    b.sum().backward()
    return {"order": log, "a.grad": a.grad}


def interior_hook_order(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    x = lib.tensor(1.0, requires_grad=True)
    b = x * 2
    c = b * 3
    b.grad_fn.register_hook(
        lambda gi, go: log.append(f"post hook: grad_inputs {gi[0].item():g}, "
                                  f"grad_outputs {go[0].item():g}"))
    b.grad_fn.register_prehook(
        lambda gs: (log.append(f"prehook saw {gs[0].item():g}"), (gs[0] + 1,))[1])
    b.register_hook(lambda g: (log.append(f"tensor hook saw {g.item():g}"), g * 2)[1])
    b.retain_grad()
    c.backward()
    return {"order": log, "b.grad": b.grad, "x.grad": x.grad}


def grad_interior_prehook(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    x = lib.tensor(1.0, requires_grad=True)
    b = x * 2
    c = b * 3
    b.grad_fn.register_prehook(lambda g: (log.append("prehook"), (g[0] * 10,))[1])
    (g,) = lib.autograd.grad(c, b)
    return {"grad(c, b)": g, "prehook calls": log, "x.grad": x.grad}


def grad_interior_tensor_hook(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    b = x * 2
    c = b * 3
    b.register_hook(lambda g: g * 10)
    (g,) = lib.autograd.grad(c, b)
    return {"grad(c, b)": g}


def grad_leaf_tensor_hook(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    y = x * 3
    x.register_hook(lambda g: g * 10)
    (g,) = lib.autograd.grad(y, x)
    return {"grad(y, x)": g, "x.grad": x.grad}


def hook_chain(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    def make(name: str, fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def hook(g: Any) -> Any:
            log.append(f"{name} saw {g.tolist()}")
            return fn(g)
        return hook

    x.register_hook(make("first", lambda g: g * 2))
    x.register_hook(make("second", lambda g: None))  # observes only
    x.register_hook(make("third", lambda g: g + 1))
    (x * lib.tensor([3.0, 4.0])).sum().backward()
    return {"order": log, "x.grad": x.grad}


def hook_remove(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x
    keep = y.register_hook(lambda g: (log.append("kept"), g * 3)[1])
    gone = y.register_hook(lambda g: (log.append("removed"), g * 100)[1])
    gone.remove()
    y.backward()
    keep.remove()
    return {"calls": log, "x.grad": x.grad}


def hook_fires_once(lib: Any) -> dict[str, Any]:
    seen: list[Any] = []
    x = lib.tensor(2.0, requires_grad=True)
    u = x * 1
    u.register_hook(lambda g: seen.append(g.item()))
    x.register_hook(lambda g: seen.append(g.item()))
    (u * 2 + u * 3 + x * 4).backward()
    return {"hook calls (u then x)": seen, "x.grad": x.grad}


def post_hook_replaces(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    b = x * 2
    b.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g * 10 for g in gi))
    b.sum().backward()
    return {"x.grad": x.grad}


def retain_grad_after_hook(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    b = x * 2
    b.retain_grad()  # registered before the hook: .grad still holds the hook's result
    b.register_hook(lambda g: g * 5)
    c = x * 2
    c.register_hook(lambda g: g * 5)
    c.retain_grad()
    (b * 3 + c * 3).backward()
    return {"b.grad (retain_grad first)": b.grad, "c.grad (hook first)": c.grad,
            "x.grad": x.grad}


def post_accumulate_no_grad(lib: Any) -> dict[str, Any]:
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    seen: dict[str, Any] = {}

    def step(param: Any) -> None:
        seen["grad mode inside the hook"] = lib.is_grad_enabled()
        param.sub_(0.1 * param.grad)  # an optimizer step, in backward
        seen["update requires grad"] = (0.1 * param.grad).requires_grad

    p.register_post_accumulate_grad_hook(step)
    (p * p).sum().backward()
    return {**seen, "p": p, "p.grad": p.grad, "p.is_leaf": p.is_leaf,
            "p.requires_grad": p.requires_grad, "grad mode after": lib.is_grad_enabled()}


def post_accumulate_nonleaf(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    b = x * 2
    return {"register on a non-leaf": lib.capture(
        lambda: b.register_post_accumulate_grad_hook(lambda p: None))}


def hook_on_no_grad_tensor(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0)
    return {"register_hook without requires_grad": lib.capture(
        lambda: x.register_hook(lambda g: g))}


def leaf_hook_accumulates(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (x * 3).backward()
    first = x.grad.item()
    (x * 4).backward()
    return {"after first": first, "after second": x.grad}


# ---- grad mode -----------------------------------------------------------------------------


def _generator_modes(lib: Any, decorator: Any, outer: Any) -> dict[str, Any]:
    body: list[bool] = []
    caller: list[bool] = []
    x = lib.tensor(1.0, requires_grad=True)
    made: list[bool] = []

    @decorator
    def gen(n: int) -> Any:
        for i in range(n):
            body.append(lib.is_grad_enabled())
            made.append((x * 2).requires_grad)
            yield i

    with outer():
        for _ in gen(3):
            caller.append(lib.is_grad_enabled())
        g = gen(5)
        next(g)
        early = lib.is_grad_enabled()
        g.close()
        after_close = lib.is_grad_enabled()
    return {"mode in the body, per step": body, "x*2 requires grad in the body": made,
            "mode in the caller between resumes": caller,
            "mode in the caller after one step of a new generator": early,
            "mode after close()": after_close, "mode after the block": lib.is_grad_enabled()}


def no_grad_generator(lib: Any) -> dict[str, Any]:
    return _generator_modes(lib, lib.no_grad(), lib.enable_grad)


def enable_grad_generator(lib: Any) -> dict[str, Any]:
    return _generator_modes(lib, lib.enable_grad(), lib.no_grad)


def set_grad_enabled_generator(lib: Any) -> dict[str, Any]:
    return _generator_modes(lib, lib.set_grad_enabled(False), lib.enable_grad)


def bare_decorators(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)

    @lib.no_grad
    def off(t: Any) -> Any:
        return t * 2, lib.is_grad_enabled()

    @lib.enable_grad
    def on(t: Any) -> Any:
        return t * 2, lib.is_grad_enabled()

    y, inside = off(x)
    with lib.no_grad():
        z, inside_on = on(x)
        still_off = lib.is_grad_enabled()
    return {"@no_grad: mode inside": inside, "@no_grad: y.requires_grad": y.requires_grad,
            "@enable_grad under no_grad: mode inside": inside_on,
            "@enable_grad: z.requires_grad": z.requires_grad,
            "mode back in the no_grad block": still_off,
            "mode after": lib.is_grad_enabled()}


def set_grad_enabled_decorator(lib: Any) -> dict[str, Any]:
    modes = {"before": lib.is_grad_enabled()}

    @lib.set_grad_enabled(False)
    def f(t: Any) -> Any:
        modes["inside"] = lib.is_grad_enabled()
        return t * 2

    modes["after decorating"] = lib.is_grad_enabled()
    y = f(lib.tensor(1.0, requires_grad=True))
    modes["after the call"] = lib.is_grad_enabled()
    return {**modes, "y.requires_grad": y.requires_grad}


def set_grad_enabled_call(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    try:
        lib.set_grad_enabled(False)  # a plain call switches the mode, no block needed
        off = lib.is_grad_enabled()
        y = x * 2
    finally:
        lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        inside = lib.is_grad_enabled()
    return {"after set_grad_enabled(False)": off, "y.requires_grad": y.requires_grad,
            "after set_grad_enabled(True)": lib.is_grad_enabled(),
            "inside `with set_grad_enabled(False)`": inside}


def grad_mode_exception(lib: Any) -> dict[str, Any]:
    @lib.no_grad()
    def fails() -> None:
        raise ValueError("boom")

    err = lib.capture(fails)
    after_decorated = lib.is_grad_enabled()

    def in_block() -> None:
        with lib.no_grad():
            raise KeyError("boom")

    lib.capture(in_block)
    return {"decorated function raised": err, "mode after it": after_decorated,
            "mode after a block that raised": lib.is_grad_enabled()}


def nested_modes(lib: Any) -> dict[str, Any]:
    x = lib.tensor(1.0, requires_grad=True)
    with lib.no_grad():
        a = x * 2
        with lib.enable_grad():
            b = x * 2
            inner = lib.is_grad_enabled()
        c = x * 2
        outer = lib.is_grad_enabled()
    b.backward()
    return {"a.requires_grad": a.requires_grad, "b.requires_grad": b.requires_grad,
            "c.requires_grad": c.requires_grad, "inner mode": inner, "outer mode": outer,
            "a.grad_fn is None": a.grad_fn is None, "x.grad": x.grad}


def inference_mode(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.inference_mode():
        y = x * 2
        mode = lib.is_grad_enabled()

    @lib.inference_mode()
    def f(t: Any) -> Any:
        return t * 3

    z = f(x)
    return {"grad mode inside": mode, "y.requires_grad": y.requires_grad, "y": y,
            "decorated: z.requires_grad": z.requires_grad, "mode after": lib.is_grad_enabled()}


# ---- custom Functions ----------------------------------------------------------------------


def _fn(lib: Any, name: str, forward: Callable[..., Any], backward: Callable[..., Any],
        **extra: Any) -> Any:
    """A Function subclass of ``lib`` named ``name`` (so both libraries name it alike)."""
    body = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    body.update({k: staticmethod(v) for k, v in extra.items()})
    return type(name, (lib.autograd.Function,), body)


def function_mark_dirty(lib: Any) -> dict[str, Any]:
    def forward(ctx: Any, t: Any) -> Any:
        t.mul_(2)
        ctx.mark_dirty(t)
        return t

    Double = _fn(lib, "DoubleInPlace", forward, lambda ctx, g: 2 * g)
    x = lib.tensor([1.0, 3.0], requires_grad=True)
    a = x.clone()
    b = Double.apply(a)
    (b * b).sum().backward()
    return {"b is a": b is a, "a": a, "a.grad_fn is b.grad_fn": a.grad_fn is b.grad_fn,
            "x.grad": x.grad}


def function_mark_dirty_leaf(lib: Any) -> dict[str, Any]:
    def forward(ctx: Any, t: Any) -> Any:
        t.mul_(2)
        ctx.mark_dirty(t)
        return t

    Double = _fn(lib, "DoubleInPlace", forward, lambda ctx, g: 2 * g)
    x = lib.tensor([1.0, 3.0], requires_grad=True)
    return {"apply on a leaf that requires grad": lib.capture(lambda: Double.apply(x))}


def function_non_differentiable(lib: Any) -> dict[str, Any]:
    seen: list[Any] = []

    def forward(ctx: Any, x: Any) -> Any:
        big = x * 2
        mask = (x > 1.5) * 1.0
        ctx.mark_non_differentiable(mask)
        return big, mask

    def backward(ctx: Any, g_big: Any, g_mask: Any) -> Any:
        seen.append("None" if g_mask is None else str(g_mask.tolist()))
        return g_big * 2

    Split = _fn(lib, "SplitMask", forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    big, mask = Split.apply(x)
    big.sum().backward()
    return {"mask.requires_grad": mask.requires_grad, "mask.grad_fn is None": mask.grad_fn is None,
            "big.requires_grad": big.requires_grad, "grad backward got for the mask": seen,
            "x.grad": x.grad}


def _two_outputs(lib: Any, materialize: bool | None) -> dict[str, Any]:
    seen: list[str] = []

    def forward(ctx: Any, x: Any) -> Any:
        if materialize is not None:
            ctx.set_materialize_grads(materialize)
        return x * 2, x * 3

    def backward(ctx: Any, g1: Any, g2: Any) -> Any:
        seen.append("None" if g2 is None else f"{g2.tolist()}")
        return g1 * 2 + (0 if g2 is None else g2 * 3)

    Two = _fn(lib, "TwoOutputs", forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y1, y2 = Two.apply(x)
    y1.sum().backward()
    return {"grad backward got for the unused output": seen, "x.grad": x.grad}


def function_materialized(lib: Any) -> dict[str, Any]:
    return _two_outputs(lib, None)


def function_not_materialized(lib: Any) -> dict[str, Any]:
    return _two_outputs(lib, False)


def function_trailing_none(lib: Any) -> dict[str, Any]:
    Scale = _fn(lib, "ScaleExtraNones", lambda ctx, x: x * 2,
                lambda ctx, g: (g * 2, None, None))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x).sum().backward()
    return {"x.grad": x.grad}


def function_none_for_non_tensor(lib: Any) -> dict[str, Any]:
    def forward(ctx: Any, x: Any, k: float, w: Any) -> Any:
        ctx.k = k
        ctx.save_for_backward(w)
        return x * k * w

    def backward(ctx: Any, g: Any) -> Any:
        (w,) = ctx.saved_tensors
        return g * ctx.k * w, None, None

    Mul = _fn(lib, "ScaleBy", forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0])
    Mul.apply(x, 0.5, w).sum().backward()
    return {"x.grad": x.grad, "w.grad": w.grad}


def function_wrong_count(lib: Any) -> dict[str, Any]:
    Add = _fn(lib, "AddOneGrad", lambda ctx, a, b: a + b, lambda ctx, g: g)
    a = lib.tensor(1.0, requires_grad=True)
    b = lib.tensor(2.0, requires_grad=True)
    y = Add.apply(a, b)
    return {"backward with too few gradients": lib.capture(y.backward)}


def function_once_differentiable(lib: Any) -> dict[str, Any]:
    once = lib.autograd.function.once_differentiable

    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @once
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x * x

    Cube = _fn(lib, "OnceCube", forward, backward)
    out: dict[str, Any] = {}
    # the incoming gradient has no history: the first order is a plain tensor
    x = lib.tensor(2.0, requires_grad=True)
    first = lib.capture(lambda: lib.autograd.grad(Cube.apply(x), x, create_graph=True)[0])
    out["grad(cube(x), x, create_graph=True)"] = first
    if lib.is_tensor(first):
        out["... requires grad"] = first.requires_grad
    # the incoming gradient (2y) has history: the first order records, differentiating it raises
    x2 = lib.tensor(2.0, requires_grad=True)
    y = Cube.apply(x2)
    second = lib.capture(lambda: lib.autograd.grad(y * y, x2, create_graph=True)[0])
    out["grad(cube(x)**2, x, create_graph=True)"] = second
    if lib.is_tensor(second):
        out["... requires grad "] = second.requires_grad
        out["differentiating it again: backward()"] = lib.capture(second.backward)
        out["x.grad after the refused backward"] = x2.grad
    return out


def function_double_backward(lib: Any) -> dict[str, Any]:
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x * x

    Cube = _fn(lib, "Cube", forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return {"first": g, "second": h}


def function_same_tensor_twice(lib: Any) -> dict[str, Any]:
    Twice = _fn(lib, "Twice", lambda ctx, x: (x, x), lambda ctx, g1, g2: g1 + g2)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a, b = Twice.apply(x)
    (a * 1 + b * 2).sum().backward()
    return {"a is b": a is b, "a is x": a is x, "a.grad_fn is b.grad_fn": a.grad_fn is b.grad_fn,
            "a.grad_fn is None": a.grad_fn is None, "a": a, "b": b, "x.grad": x.grad}


def function_identity(lib: Any) -> dict[str, Any]:
    Ident = _fn(lib, "Identity", lambda ctx, x: x, lambda ctx, g: g * 5)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Ident.apply(x)
    y.sum().backward()
    return {"y is x": y is x, "x.is_leaf": x.is_leaf, "y.grad_fn is None": y.grad_fn is None,
            "x.grad": x.grad}


def function_setup_context(lib: Any) -> dict[str, Any]:
    def forward(x: Any, k: float) -> Any:
        return x * x * k

    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 2 * x * ctx.k, None

    Sq = _fn(lib, "ScaledSquare", forward, backward, setup_context=setup_context)
    x = lib.tensor([1.0, 3.0], requires_grad=True)
    y = Sq.apply(x, 0.5)
    y.sum().backward()
    return {"y": y, "x.grad": x.grad}


def function_needs_input_grad(lib: Any) -> dict[str, Any]:
    seen: list[Any] = []

    def forward(ctx: Any, a: Any, k: float, b: Any) -> Any:
        return a * b * k

    def backward(ctx: Any, g: Any) -> Any:
        seen.append(list(ctx.needs_input_grad))
        return g, None, None

    F = _fn(lib, "NeedsGrad", forward, backward)
    a = lib.tensor(1.0, requires_grad=True)
    b = lib.tensor(2.0)
    F.apply(a, 3.0, b).backward()
    return {"needs_input_grad": seen, "a.grad": a.grad}


def function_saved_modified(lib: Any) -> dict[str, Any]:
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return 2 * x * g

    Sq = _fn(lib, "SavedSquare", forward, backward)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Sq.apply(x)
    with lib.no_grad():
        x.add_(1)
    return {"backward after modifying the saved input": lib.capture(y.sum().backward),
            "x.grad": x.grad}


def function_under_no_grad(lib: Any) -> dict[str, Any]:
    calls: list[str] = []

    def forward(ctx: Any, x: Any) -> Any:
        calls.append(f"forward, grad mode {lib.is_grad_enabled()}")
        return x * 2

    F = _fn(lib, "Doubler", forward, lambda ctx, g: g * 2)
    x = lib.tensor(1.0, requires_grad=True)
    with lib.no_grad():
        y = F.apply(x)
    z = F.apply(x)
    return {"calls": calls, "under no_grad: requires_grad": y.requires_grad,
            "under no_grad: grad_fn is None": y.grad_fn is None,
            "with grad: requires_grad": z.requires_grad}


# ---- in-place, views, pow ------------------------------------------------------------------


def retain_grad_inplace(lib: Any) -> dict[str, Any]:
    a = lib.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    return {"a.grad": a.grad, "a.retains_grad": a.retains_grad}


def no_grad_view_inplace(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    with lib.no_grad():
        v = a[:2]
    err = lib.capture(lambda: v.mul_(2))
    with lib.no_grad():
        v.mul_(3)  # allowed with grad mode off
    return {"in-place on the view with grad mode on": err, "v.requires_grad": v.requires_grad,
            "a after the no_grad in-place": a}


def inplace_leaf(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    err = lib.capture(lambda: x.add_(1))
    v0 = x._version
    with lib.no_grad():
        x.add_(1)
    return {"x.add_(1) on a leaf that requires grad": err, "x after the refusal and no_grad add":
            x, "version bumped by the no_grad add": x._version > v0, "x.is_leaf": x.is_leaf,
            "x.requires_grad": x.requires_grad}


def inplace_leaf_view(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    err = lib.capture(lambda: x[0].mul_(2))
    return {"x[0].mul_(2) on a leaf that requires grad": err, "x": x}


def inplace_saved_output(lib: Any) -> dict[str, Any]:
    x = lib.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()  # exp saves its output
    y.add_(1)
    return {"backward": lib.capture(y.sum().backward), "x.grad": x.grad}


def late_view_follows_base(lib: Any) -> dict[str, Any]:
    x = lib.tensor([0.0, 0.0, 0.0])
    v = x[1]  # taken while x needs no gradient
    r = lib.tensor(2.0, requires_grad=True)
    x.add_(r * 2)  # x now has history: v follows it
    (v * 3).backward()
    return {"r.grad": r.grad, "v.requires_grad": v.requires_grad, "v.is_leaf": v.is_leaf,
            "v.grad_fn": v.grad_fn.name()}


def late_no_grad_view_refused(lib: Any) -> dict[str, Any]:
    x = lib.tensor([0.0, 0.0, 0.0])
    with lib.no_grad():
        v = x[1]
    x.add_(lib.tensor(2.0, requires_grad=True))
    return {"using the no_grad view": lib.capture(lambda: v * 3)}


def multi_output_view_inplace(lib: Any) -> dict[str, Any]:
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    y = x * 1
    a, b, c = y.unbind()
    s0, s1 = y.split([1, 2])
    out = {"a.mul_(2)": lib.capture(lambda: a.mul_(2)),
           "a view of b, add_(1)": lib.capture(lambda: b.view(-1).add_(1)),
           "split output zero_()": lib.capture(lambda: s1.zero_()),
           "chunk output t_()": lib.capture(lambda: y.chunk(3)[0].t_())}
    with lib.no_grad():
        c.mul_(10)  # allowed with grad mode off: writes y
    out["y after the no_grad write"] = y
    out["using a after its base changed"] = lib.capture(lambda: a * 2)
    p = lib.tensor([1.0, 2.0, 3.0])  # nothing requires grad: nothing recorded, nothing refused
    p.unbind()[1].add_(5)
    out["plain unbind output written"] = p
    u = x + x
    u0, u1, u2 = u.unsafe_split(1)  # no views for autograd: written in place freely
    u0.mul_(u1)
    u0.sum().backward()
    out["x.grad through unsafe_split"] = x.grad
    return out


def narrow_unbind_split_grads(lib: Any) -> dict[str, Any]:
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], requires_grad=True)
    n = x.narrow(1, -2, 2)
    a, b = x.unbind()
    s = x.split(2, 1)
    loss = (n * n).sum() + (b * 3).sum() + (s[1] * s[1]).sum() + x.diagonal().sum()
    (gx,) = lib.autograd.grad(loss, x, create_graph=True)
    (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
    return {"narrow node": n.grad_fn.name(), "unbind node": a.grad_fn.name(),
            "split node": s[0].grad_fn.name(), "diagonal node": x.diagonal().grad_fn.name(),
            "one node for all outputs": a.grad_fn is b.grad_fn, "b.output_nr": b.output_nr,
            "grad": gx, "double backward": ggx}


def integer_history(lib: Any) -> dict[str, Any]:
    w = lib.tensor([1.5, -1.0], requires_grad=True)
    m = lib.tensor([1, 0], dtype=lib.int64)
    m.fill_(w[0])  # an int64 tensor with history
    return {"m.requires_grad": m.requires_grad, "m + 1": lib.capture(lambda: m + 1),
            "m[0]": lib.capture(lambda: m[0]), "(m * 1.5).requires_grad": (m * 1.5).requires_grad,
            "(m == 1).requires_grad": (m == 1).requires_grad}


def pow_zero_base_both(lib: Any) -> dict[str, Any]:
    base = lib.tensor([0.0, 0.0, 0.0, 0.0], requires_grad=True)
    expo = lib.tensor([0.0, 1.0, 2.0, 0.5], requires_grad=True)
    y = lib.pow(base, expo)
    y.sum().backward()
    return {"0 ** [0, 1, 2, 0.5]": y, "d/dbase": base.grad, "d/dexponent": expo.grad}


def pow_zero_base_scalar(lib: Any) -> dict[str, Any]:
    x = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
    y = x ** 0 + x ** 1 + x ** 2
    y.sum().backward()
    e = lib.tensor([0.0, 1.0, 2.0], requires_grad=True)
    z = 0.0 ** e
    z.sum().backward()
    return {"x**0 + x**1 + x**2 at 0": y, "d/dx": x.grad, "0.0 ** e": z, "d/de": e.grad}


# ---- seeds ---------------------------------------------------------------------------------


def seed_float32_for_float64(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * 3
    y.backward(lib.tensor([1.0, 1.0], dtype=lib.float32))
    w = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(w * 5, w, grad_outputs=lib.tensor([1.0, 2.0], dtype=lib.float32))
    return {"x.grad": x.grad, "x.grad dtype": lib.dtype_of(x.grad),
            "grad with a float32 grad_output": g, "its dtype": lib.dtype_of(g)}


def seed_wrong_shape(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    return {
        "seed of shape (3,) for (2,)": lib.capture(
            lambda: y.backward(lib.tensor([1.0, 1.0, 1.0]), retain_graph=True)),
        "seed of shape (1,) for (2,)": lib.capture(
            lambda: y.backward(lib.tensor([1.0]), retain_graph=True)),
        "grad_outputs of shape (2, 1) for (2,)": lib.capture(
            lambda: lib.autograd.grad(y, x, grad_outputs=lib.tensor([[1.0], [1.0]]),
                                      retain_graph=True)),
        "x.grad": x.grad,
    }


def seed_for_scalar(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(lib.tensor(3.0))
    return {"x.grad (seed 3)": x.grad}


def materialize_create_graph(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    z = lib.tensor(5.0, requires_grad=True)
    y = x ** 3
    gx, gz = lib.autograd.grad(y, [x, z], create_graph=True, materialize_grads=True)
    (h,) = lib.autograd.grad(gx, x)
    return {"dy/dx": gx, "dy/dz (materialized)": gz, "dy/dx requires grad": gx.requires_grad,
            "d2y/dx2": h}


def backward_inputs(lib: Any) -> dict[str, Any]:
    x = lib.tensor(2.0, requires_grad=True)
    w = lib.tensor(3.0, requires_grad=True)
    y = x * w
    y.backward(inputs=[x])
    return {"x.grad": x.grad, "w.grad": w.grad}


# ---- type promotion ------------------------------------------------------------------------


def int_times_half(lib: Any) -> dict[str, Any]:
    i = lib.int_tensor([1, 2, 3])
    y = i * 0.5
    return {"i * 0.5": y, "dtype": lib.dtype_of(y)}


def int_true_divide(lib: Any) -> dict[str, Any]:
    i = lib.int_tensor([1, 2, 3])
    y = i / 2
    return {"i / 2": y, "dtype": lib.dtype_of(y)}


def int_times_float32_leaf(lib: Any) -> dict[str, Any]:
    i = lib.int_tensor([1, 2, 3])
    w = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float32, requires_grad=True)
    y = i * w
    y.sum().backward()
    return {"i * w": y, "dtype": lib.dtype_of(y), "w.grad": w.grad,
            "w.grad dtype": lib.dtype_of(w.grad)}


def float32_times_0d_float64(lib: Any) -> dict[str, Any]:
    f = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    s = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
    y = f * s
    y.sum().backward()
    return {"f * s": y, "dtype": lib.dtype_of(y), "f.grad dtype": lib.dtype_of(f.grad),
            "s.grad dtype": lib.dtype_of(s.grad), "s.grad": s.grad}


def float32_times_np_float64(lib: Any) -> dict[str, Any]:
    f = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    y = f * np.float64(2.5)
    y.sum().backward()
    i = lib.int_tensor([1, 2])
    z = i * np.float64(2.5)
    return {"f * np.float64(2.5)": y, "dtype": lib.dtype_of(y), "f.grad": f.grad,
            "int * np.float64(2.5)": z, "its dtype": lib.dtype_of(z)}


def bool_plus_int(lib: Any) -> dict[str, Any]:
    b = lib.tensor([True, False], dtype=lib.bool)
    i = lib.int_tensor([2, 3])
    y = b + i
    z = b + 1
    return {"bool + int64": y, "dtype": lib.dtype_of(y), "bool + 1": z,
            "its dtype": lib.dtype_of(z)}


def float32_plus_float64(lib: Any) -> dict[str, Any]:
    a = lib.tensor([1.0, 2.0], dtype=lib.float32, requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    y = a * b
    y.sum().backward()
    return {"a * b": y, "dtype": lib.dtype_of(y), "a.grad": a.grad,
            "a.grad dtype": lib.dtype_of(a.grad), "b.grad dtype": lib.dtype_of(b.grad)}


def float64_times_int_scalar(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x * 3 + 1
    y.sum().backward()
    return {"x * 3 + 1": y, "dtype": lib.dtype_of(y), "x.grad": x.grad}


def int_tensor_requires_grad(lib: Any) -> dict[str, Any]:
    return {"int64 tensor with requires_grad=True": lib.capture(
        lambda: lib.tensor([1, 2], dtype=lib.int64, requires_grad=True))}


# ---- warnings ------------------------------------------------------------------------------


def nonleaf_grad_warns(lib: Any) -> dict[str, Any]:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.sum().backward()
    value, caught = lib.capture_warnings(lambda: b.grad)
    return {"b.grad": value, "warnings": _warned(caught, "leaf")}


def no_warning_for_leaf_or_retained(lib: Any) -> dict[str, Any]:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.sum().backward()
    _, caught_leaf = lib.capture_warnings(lambda: a.grad)
    _, caught_retained = lib.capture_warnings(lambda: b.grad)
    return {"warnings reading a leaf's grad": _warned(caught_leaf, "leaf"),
            "warnings reading a retained grad": _warned(caught_retained, "leaf"),
            "b.grad": b.grad}


# ---- the engine: undefined gradients, edges, several tensors, callbacks --------------------


def _drop_first(lib: Any) -> Any:
    class DropFirst(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            return a + b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return None, g

    return DropFirst


def undefined_gradient_runs_nodes(lib: Any) -> dict[str, Any]:
    log: list[str] = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a * 3
    x.register_hook(lambda g: log.append(f"x hook saw {g}"))
    x.grad_fn.register_prehook(lambda gs: log.append(f"prehook saw {list(gs)}"))
    a.register_hook(lambda g: log.append(f"a hook saw {g}"))
    a.register_post_accumulate_grad_hook(lambda t: log.append(f"a post saw {t.grad}"))
    _drop_first(lib).apply(x, b).sum().backward()
    return {"order": log, "a.grad": a.grad, "b.grad": b.grad}


def undefined_gradient_into_a_function(lib: Any) -> dict[str, Any]:
    seen: list[Any] = []

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            seen.append(g)
            return g * 2

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    _drop_first(lib).apply(Twice.apply(a), b).sum().backward()
    return {"backward got": seen, "a.grad": a.grad}


def gradient_edge_before_inplace(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    edge = lib.autograd.graph.get_gradient_edge(x)
    x.mul_(2)
    old, new = lib.autograd.grad(x.sum(), (edge, x))
    return {"gradient at the old value": old, "gradient at the new value": new}


def multi_grad_hook_all(lib: Any) -> dict[str, Any]:
    calls: list[Any] = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c, d = a * b, a + b
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda gs: calls.append([g is not None for g in gs]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,))
    return {"calls": calls}


def first_grad_under_create_graph(lib: Any) -> dict[str, Any]:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    _, caught = lib.capture_warnings(lambda: (x * x).sum().backward(create_graph=True))
    fn = x.grad.grad_fn
    return {"x.grad node": fn.name().rpartition("::")[2],
            "its edges": [None if f is None else f.name() for f, _ in fn.next_functions],
            "x.grad": x.grad}


def callback_after_the_grads(lib: Any) -> dict[str, Any]:
    engine = lib.autograd.Variable._execution_engine
    seen: list[Any] = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: engine.queue_callback(lambda: seen.append(x.grad)))
    y.sum().backward()
    outside = lib.capture(lambda: engine.queue_callback(lambda: None))
    return {"the callback saw x.grad": seen, "outside a backward": outside}


# ---- the family ----------------------------------------------------------------------------

RT = Raises("runtime", "RuntimeError")
_ORDER_INTERIOR = ["tensor hook saw 3", "prehook saw 6",
                   "post hook: grad_inputs 14, grad_outputs 7"]
_MODES_OFF = {"mode in the body, per step": [False] * 4,
              "x*2 requires grad in the body": [False] * 4,
              "mode in the caller between resumes": [True] * 3,
              "mode in the caller after one step of a new generator": True,
              "mode after close()": True, "mode after the block": True}

SEMANTICS_CASES: tuple[SemanticsCase, ...] = (
    # hooks
    SemanticsCase(
        "hook-accumulate-grad-prehook", "hooks",
        "a leaf's tensor hook runs before a pre-hook on its AccumulateGrad node",
        "b = a.clone(); AccumulateGrad prehook *10, a.register_hook(g + 1) -> a.grad 20",
        accumulate_prehook,
        {"is AccumulateGrad": True, "a.grad": 20,
         "order": ["tensor hook saw 1", "AccumulateGrad prehook saw 2"]}),
    SemanticsCase(
        "hook-accumulate-grad-post", "hooks",
        "tensor hook, AccumulateGrad prehook, accumulation, post-accumulate hook, node hook",
        "the order of the five hooks around a leaf and the .grad each one sees",
        accumulate_post_hooks,
        {"a.grad": [3, 3],
         "order": ["tensor hook: a.grad None", "AccumulateGrad prehook: a.grad None",
                   "post-accumulate hook: p is a True, a.grad [3.0, 3.0]",
                   "AccumulateGrad hook: grad_outputs [3.0, 3.0], a.grad [3.0, 3.0]"]}),
    SemanticsCase(
        "hook-interior-order", "hooks",
        "interior tensor: tensor hook, then retain_grad, then grad_fn prehook, then post hook",
        "order of calls, what each hook sees, b.grad (after the tensor hook, before the "
        "prehook) and x.grad",
        interior_hook_order,
        {"order": _ORDER_INTERIOR, "b.grad": 6, "x.grad": 14}),
    SemanticsCase(
        "hook-grad-interior-prehook", "hooks",
        "autograd.grad(c, b) captures b's gradient before b.grad_fn's prehook",
        "b = x*2; c = b*3; prehook *10 on b.grad_fn; grad(c, b) -> 3, the prehook never runs",
        grad_interior_prehook, {"grad(c, b)": 3, "prehook calls": [], "x.grad": None}),
    SemanticsCase(
        "hook-grad-interior-tensor-hook", "hooks",
        "autograd.grad(c, b) returns b's gradient after b's tensor hooks",
        "b.register_hook(g*10); grad(c, b) -> 30", grad_interior_tensor_hook,
        {"grad(c, b)": 30}),
    SemanticsCase(
        "hook-grad-leaf-tensor-hook", "hooks",
        "autograd.grad(y, x) for a leaf x runs x's tensor hooks",
        "x.register_hook(g*10); grad(3x, x) -> 30; x.grad stays None", grad_leaf_tensor_hook,
        {"grad(y, x)": 30, "x.grad": None}),
    SemanticsCase(
        "hook-chain", "hooks", "hooks on one tensor run in registration order, chained",
        "each hook sees the previous one's result; a hook returning None passes it on",
        hook_chain,
        {"order": ["first saw [3.0, 4.0]", "second saw [6.0, 8.0]", "third saw [6.0, 8.0]"],
         "x.grad": [7, 9]}),
    SemanticsCase(
        "hook-remove", "hooks", "a removed hook does not run",
        "handle.remove() before backward; the kept hook still applies", hook_remove,
        {"calls": ["kept"], "x.grad": 12}),
    SemanticsCase(
        "hook-fires-once", "hooks",
        "a tensor used three times gets its hook called once, with the total gradient",
        "u used twice, x three times: each hook once, with the sum", hook_fires_once,
        {"hook calls (u then x)": [5, 9], "x.grad": 9}),
    SemanticsCase(
        "hook-post-replaces", "hooks",
        "a grad_fn post hook returning new grad_inputs replaces them downstream",
        "b = x*2; hook returns grad_inputs*10 -> x.grad 20", post_hook_replaces,
        {"x.grad": [20, 20]}),
    SemanticsCase(
        "hook-retain-grad-order", "hooks",
        "retain_grad keeps the gradient after every tensor hook, whatever the order",
        "retain_grad before or after register_hook(g*5): .grad is 15 both ways",
        retain_grad_after_hook,
        {"b.grad (retain_grad first)": 15, "c.grad (hook first)": 15, "x.grad": 60}),
    SemanticsCase(
        "hook-post-accumulate-no-grad", "hooks",
        "a post-accumulate-grad hook runs with grad mode off and may update the leaf in place",
        "hook does p.sub_(0.1 * p.grad) during backward: no error, p updated, p stays a leaf",
        post_accumulate_no_grad,
        {"grad mode inside the hook": False, "update requires grad": False,
         "p": [0.8, 1.6], "p.grad": [2, 4], "p.is_leaf": True, "p.requires_grad": True,
         "grad mode after": True}),
    SemanticsCase(
        "hook-post-accumulate-nonleaf", "hooks",
        "register_post_accumulate_grad_hook on a non-leaf is refused",
        "a RuntimeError, as torch", post_accumulate_nonleaf,
        {"register on a non-leaf": RT}),
    SemanticsCase(
        "hook-on-tensor-without-grad", "hooks",
        "register_hook on a tensor that does not require grad is refused",
        "a RuntimeError, as torch", hook_on_no_grad_tensor,
        {"register_hook without requires_grad": RT}),
    SemanticsCase(
        "hook-leaf-accumulates", "hooks",
        "a leaf's hook modifies each pass's gradient before it accumulates",
        "g*2 hook; backward of 3x then 4x -> 6, then 14", leaf_hook_accumulates,
        {"after first": 6, "after second": 14}),
    # grad mode
    SemanticsCase(
        "mode-no-grad-generator", "grad-mode",
        "@no_grad() on a generator: off in the body across yields, restored for the caller",
        "the mode seen in the body at each step, in the caller between resumes, after close()",
        no_grad_generator, dict(_MODES_OFF)),
    SemanticsCase(
        "mode-enable-grad-generator", "grad-mode",
        "@enable_grad() on a generator run under no_grad: on in the body, off for the caller",
        "the mode seen in the body and in the caller between resumes", enable_grad_generator,
        {"mode in the body, per step": [True] * 4,
         "x*2 requires grad in the body": [True] * 4,
         "mode in the caller between resumes": [False] * 3, "mode after close()": False,
         "mode after the block": True}),
    SemanticsCase(
        "mode-set-grad-enabled-generator", "grad-mode",
        "@set_grad_enabled(False) on a generator behaves as @no_grad()",
        "the mode seen in the body and in the caller between resumes",
        set_grad_enabled_generator, dict(_MODES_OFF)),
    SemanticsCase(
        "mode-bare-decorators", "grad-mode", "@no_grad and @enable_grad without parentheses",
        "the decorated function runs in the mode; the caller's mode is restored",
        bare_decorators,
        {"@no_grad: mode inside": False, "@no_grad: y.requires_grad": False,
         "@enable_grad under no_grad: mode inside": True, "@enable_grad: z.requires_grad": True,
         "mode back in the no_grad block": False, "mode after": True}),
    SemanticsCase(
        "mode-set-grad-enabled-decorator", "grad-mode",
        "@set_grad_enabled(False) leaves the mode unchanged after decorating",
        "on before and after decorating and after the call, off inside",
        set_grad_enabled_decorator,
        {"before": True, "after decorating": True, "inside": False, "after the call": True,
         "y.requires_grad": False}),
    SemanticsCase(
        "mode-set-grad-enabled-call", "grad-mode",
        "set_grad_enabled(False) as a plain call switches the mode until switched back",
        "plain call, then the same as a with-block", set_grad_enabled_call,
        {"after set_grad_enabled(False)": False, "y.requires_grad": False,
         "after set_grad_enabled(True)": True, "inside `with set_grad_enabled(False)`": False}),
    SemanticsCase(
        "mode-restored-after-error", "grad-mode",
        "an exception inside @no_grad() or `with no_grad()` restores the mode",
        "the error propagates (ValueError) and grad mode is on again", grad_mode_exception,
        {"decorated function raised": Raises("value", "ValueError"), "mode after it": True,
         "mode after a block that raised": True}),
    SemanticsCase(
        "mode-nested", "grad-mode", "enable_grad inside no_grad records; the outer block does not",
        "requires_grad of results in each block, and backward through the inner one",
        nested_modes,
        {"a.requires_grad": False, "b.requires_grad": True, "c.requires_grad": False,
         "inner mode": True, "outer mode": False, "a.grad_fn is None": True, "x.grad": 2}),
    SemanticsCase(
        "mode-inference-mode", "grad-mode",
        "inference_mode(): nothing recorded, as a block and as a decorator",
        "needs lib.inference_mode (PyTorch has it)", inference_mode,
        {"grad mode inside": False, "y.requires_grad": False, "y": [2, 4],
         "decorated: z.requires_grad": False, "mode after": True},
        requires=("inference_mode",)),
    # custom Functions
    SemanticsCase(
        "function-mark-dirty", "function",
        "mark_dirty: forward modifies its input in place and returns it",
        "the same object comes back, with the Function's grad_fn; gradients flow through 2*g",
        function_mark_dirty,
        {"b is a": True, "a": [2, 6], "a.grad_fn is b.grad_fn": True, "x.grad": [8, 24]}),
    SemanticsCase(
        "function-mark-dirty-leaf", "function",
        "mark_dirty on a leaf that requires grad is refused", "a RuntimeError, as torch",
        function_mark_dirty_leaf, {"apply on a leaf that requires grad": RT}),
    SemanticsCase(
        "function-non-differentiable", "function",
        "mark_non_differentiable: the output does not require grad; backward gets zeros for it",
        "mask.requires_grad False; its gradient arrives materialized as zeros",
        function_non_differentiable,
        {"mask.requires_grad": False, "mask.grad_fn is None": True, "big.requires_grad": True,
         "grad backward got for the mask": ["[0.0, 0.0]"], "x.grad": [2, 2]}),
    SemanticsCase(
        "function-materialize-grads", "function",
        "an unused output's gradient reaches backward as zeros (materialized by default)",
        "two outputs, only the first used", function_materialized,
        {"grad backward got for the unused output": ["[0.0, 0.0]"], "x.grad": [2, 2]}),
    SemanticsCase(
        "function-set-materialize-grads-false", "function",
        "ctx.set_materialize_grads(False): an unused output's gradient reaches backward as None",
        "two outputs, only the first used", function_not_materialized,
        {"grad backward got for the unused output": ["None"], "x.grad": [2, 2]}),
    SemanticsCase(
        "function-trailing-none", "function",
        "backward may return extra trailing None gradients",
        "one input, backward returns (g*2, None, None)", function_trailing_none,
        {"x.grad": [2, 2]}),
    SemanticsCase(
        "function-none-for-non-tensor", "function",
        "backward returns None for a float argument and a tensor that needs no grad",
        "x * k * w with ctx.k and a saved w", function_none_for_non_tensor,
        {"x.grad": [1.5, 2], "w.grad": None}),
    SemanticsCase(
        "function-wrong-gradient-count", "function",
        "backward returning fewer gradients than inputs is an error",
        "a RuntimeError naming the count, as torch", function_wrong_count,
        {"backward with too few gradients": RT}),
    SemanticsCase(
        "function-once-differentiable", "function",
        "@once_differentiable under create_graph: first order works, the second raises",
        "first order of cube(x) is 12 (no history: the seed has none); of cube(x)**2 it is 192 "
        "with history, whose backward() raises",
        function_once_differentiable,
        {"grad(cube(x), x, create_graph=True)": 12, "... requires grad": False,
         "grad(cube(x)**2, x, create_graph=True)": 192, "... requires grad ": True,
         "differentiating it again: backward()": RT, "x.grad after the refused backward": None}),
    SemanticsCase(
        "function-double-backward", "function",
        "a backward written with differentiable ops can be differentiated again",
        "Cube: first 3x^2, second 6x", function_double_backward,
        {"first": [3, 12], "second": [6, 12]}),
    SemanticsCase(
        "function-same-tensor-twice", "function",
        "forward returning its input twice: two distinct outputs sharing one grad_fn",
        "a is not b, neither is x, both have the grad_fn; gradients g1 + g2 -> 3",
        function_same_tensor_twice,
        {"a is b": False, "a is x": False, "a.grad_fn is b.grad_fn": True,
         "a.grad_fn is None": False, "a": [1, 2], "b": [1, 2], "x.grad": [3, 3]}),
    SemanticsCase(
        "function-identity", "function",
        "forward returning its input unchanged: a new tensor with the Function's grad_fn",
        "y is not x, x stays a leaf, backward's g*5 reaches x.grad", function_identity,
        {"y is x": False, "x.is_leaf": True, "y.grad_fn is None": False, "x.grad": [5, 5]}),
    SemanticsCase(
        "function-setup-context", "function",
        "setup_context-style Function: forward without ctx, setup_context saves",
        "y = x*x*k; x.grad = 2*x*k", function_setup_context,
        {"y": [0.5, 4.5], "x.grad": [1, 3]}),
    SemanticsCase(
        "function-needs-input-grad", "function",
        "ctx.needs_input_grad has one flag per forward argument",
        "(tensor that requires grad, float, tensor that does not)", function_needs_input_grad,
        {"needs_input_grad": [[True, False, False]], "a.grad": 1}),
    SemanticsCase(
        "function-saved-modified", "function",
        "a saved input modified in place makes backward raise",
        "save_for_backward(x); x.add_(1) under no_grad; backward raises", function_saved_modified,
        {"backward after modifying the saved input": Raises("runtime/version-mismatch"),
         "x.grad": None}),
    SemanticsCase(
        "function-under-no-grad", "function",
        "apply under no_grad records nothing; forward always runs with grad mode off",
        "requires_grad of the outputs and the mode forward sees", function_under_no_grad,
        {"calls": ["forward, grad mode False", "forward, grad mode False"],
         "under no_grad: requires_grad": False, "under no_grad: grad_fn is None": True,
         "with grad: requires_grad": True}),
    # in-place, views, pow
    SemanticsCase(
        "inplace-retain-grad", "inplace",
        "retain_grad then an in-place op: .grad is the gradient of the modified tensor",
        "a = leaf.clone(); a.retain_grad(); a.mul_(2); a.sum().backward() -> a.grad [1]",
        retain_grad_inplace, {"a.grad": [1], "a.retains_grad": True}),
    SemanticsCase(
        "inplace-no-grad-view", "inplace",
        "a view made under no_grad, modified in place with grad mode on, is refused",
        "RuntimeError; the same in-place under no_grad is allowed and writes the base",
        no_grad_view_inplace,
        {"in-place on the view with grad mode on": RT, "v.requires_grad": True,
         "a after the no_grad in-place": [3, 6, 3]}),
    SemanticsCase(
        "inplace-leaf", "inplace", "in-place on a leaf that requires grad is refused",
        "x.add_(1) raises and leaves x unchanged; under no_grad it works and bumps the version",
        inplace_leaf,
        {"x.add_(1) on a leaf that requires grad": RT,
         "x after the refusal and no_grad add": [2, 3], "version bumped by the no_grad add": True,
         "x.is_leaf": True, "x.requires_grad": True}),
    SemanticsCase(
        "inplace-leaf-view", "inplace",
        "in-place on a view of a leaf that requires grad is refused",
        "x[0].mul_(2) raises and leaves x unchanged", inplace_leaf_view,
        {"x[0].mul_(2) on a leaf that requires grad": RT, "x": [1, 2]}),
    SemanticsCase(
        "inplace-saved-output", "inplace",
        "modifying an output that its op saved (exp) makes backward raise",
        "y = x.exp(); y.add_(1); backward raises the version error", inplace_saved_output,
        {"backward": Raises("runtime/version-mismatch"), "x.grad": None}),
    SemanticsCase(
        "inplace-multi-output-view", "inplace",
        "outputs of unbind/split/chunk may not be changed in place while recording",
        "in-place on one (or a view of one, or an in-place view op) raises; allowed under "
        "no_grad, which makes the output unusable; unsafe_split outputs may be written",
        multi_output_view_inplace,
        {"a.mul_(2)": RT, "a view of b, add_(1)": RT, "split output zero_()": RT,
         "chunk output t_()": RT, "y after the no_grad write": [[1, 2], [3, 4], [50, 60]],
         "using a after its base changed": RT, "plain unbind output written": [1, 7, 3],
         "x.grad through unsafe_split": [[12, 16], [4, 8], [0, 0]]}),
    SemanticsCase(
        "view-ops-narrow-unbind-split", "inplace",
        "narrow, unbind, split and diagonal: PyTorch's nodes, one node for several outputs",
        "gradients, also of a double backward; unused outputs get zeros",
        narrow_unbind_split_grads,
        {"narrow node": "SliceBackward0", "unbind node": "UnbindBackward0",
         "split node": "SplitBackward0", "diagonal node": "DiagonalBackward0",
         "one node for all outputs": True, "b.output_nr": 1}),
    SemanticsCase(
        "pow-zero-base-tensor-exponent", "inplace",
        "pow(base, exponent) at base 0, both tensors requiring grad: no NaN from 0 * log(0)",
        "0**[0,1,2,0.5] = [1,0,0,0]; d/dbase [0,1,0,inf]; d/dexponent all 0 (log 0 masked)",
        pow_zero_base_both,
        {"0 ** [0, 1, 2, 0.5]": [1, 0, 0, 0], "d/dbase": [0, 1, 0, np.inf],
         "d/dexponent": [0, 0, 0, 0]}),
    SemanticsCase(
        "pow-zero-base-scalar", "inplace",
        "x**0, x**1, x**2 at x = 0 and 0.0 ** e: the masked derivatives",
        "d/dx(x^0 + x^1 + x^2) at 0 is 1; d/de 0^e is 0", pow_zero_base_scalar,
        {"d/dx": [1, 1, 1], "d/de": [0, 0, 0], "0.0 ** e": [1, 0, 0]}),
    # seeds
    SemanticsCase(
        "seed-float32-for-float64", "seeds",
        "a float32 seed for a float64 output is cast, as torch does",
        "y.backward(float32 seed) and grad(grad_outputs=float32) on float64: float64 grads",
        seed_float32_for_float64,
        {"x.grad": [3, 3], "x.grad dtype": "float64", "grad with a float32 grad_output": [5, 10],
         "its dtype": "float64"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "seed-wrong-shape", "seeds", "a seed whose shape differs from the output's is refused",
        "(3,) and (1,) for a (2,) output (no broadcasting), (2, 1) as grad_outputs",
        seed_wrong_shape,
        {"seed of shape (3,) for (2,)": RT, "seed of shape (1,) for (2,)": RT,
         "grad_outputs of shape (2, 1) for (2,)": RT, "x.grad": None}),
    SemanticsCase(
        "seed-scalar", "seeds", "an explicit 0-d seed scales a scalar output's gradients",
        "y = x*x at 2, seed 3 -> 12", seed_for_scalar, {"x.grad (seed 3)": 12}),
    SemanticsCase(
        "seed-materialize-create-graph", "seeds",
        "materialize_grads=True under create_graph, then a second-order grad",
        "unused input gets zeros; dy/dx still differentiable: 12 then 12", materialize_create_graph,
        {"dy/dx": 12, "dy/dz (materialized)": 0, "dy/dx requires grad": True, "d2y/dx2": 12}),
    SemanticsCase(
        "seed-backward-inputs", "seeds", "backward(inputs=[x]) accumulates only into x",
        "x.grad 3, w.grad stays None", backward_inputs, {"x.grad": 3, "w.grad": None}),
    # views taken before their base needed gradient; integer tensors with history
    SemanticsCase(
        "view-taken-before-base-had-history", "inplace",
        "a view taken while its base needed no gradient follows the base once it gets history",
        "v = x[1]; x.add_(2r); (3v).backward() -> r.grad 6, v an AsStridedBackward0 non-leaf",
        late_view_follows_base,
        {"r.grad": 6, "v.requires_grad": True, "v.is_leaf": False,
         "v.grad_fn": "AsStridedBackward0"}),
    SemanticsCase(
        "no-grad-view-before-base-had-history", "inplace",
        "a view made under no_grad is refused once its base is given history with grad on",
        "a RuntimeError, as torch", late_no_grad_view_refused,
        {"using the no_grad view": RT}),
    SemanticsCase(
        "integer-tensor-with-history", "promotion",
        "an int64 tensor given history by fill_ from a value that requires grad: ops with an "
        "integer result refuse, float results record", "RuntimeError for m + 1 and m[0], as torch",
        integer_history,
        {"m.requires_grad": True, "m + 1": RT, "m[0]": RT, "(m * 1.5).requires_grad": True,
         "(m == 1).requires_grad": False}, dtypes=ONE_DTYPE),
    # type promotion
    SemanticsCase(
        "promote-int-times-half", "promotion", "int64 tensor * 0.5 is float32",
        "values and dtype", int_times_half,
        {"i * 0.5": [0.5, 1, 1.5], "dtype": "float32"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-int-true-divide", "promotion", "int64 tensor / 2 is float32 (true division)",
        "values and dtype", int_true_divide,
        {"i / 2": [0.5, 1, 1.5], "dtype": "float32"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-int-times-float32-leaf", "promotion",
        "int64 tensor * float32 leaf is float32, and so is the leaf's grad",
        "values, result dtype, grad dtype", int_times_float32_leaf,
        {"dtype": "float32", "w.grad": [1, 2, 3], "w.grad dtype": "float32"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-float32-times-0d-float64", "promotion",
        "float32 tensor * 0-d float64 tensor stays float32; each grad has its leaf's dtype",
        "a 0-d operand does not promote within the same category", float32_times_0d_float64,
        {"dtype": "float32", "f.grad dtype": "float32", "s.grad dtype": "float64",
         "s.grad": 3}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-np-float64-scalar", "promotion",
        "a NumPy float64 scalar acts as a Python float: float32 stays float32, int -> float32",
        "values and dtypes", float32_times_np_float64,
        {"dtype": "float32", "f.grad": [2.5, 2.5], "int * np.float64(2.5)": [2.5, 5],
         "its dtype": "float32"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-bool-plus-int", "promotion", "bool tensor + int64 tensor (or + 1) is int64",
        "values and dtypes", bool_plus_int,
        {"bool + int64": [3, 3], "dtype": "int64", "bool + 1": [2, 1], "its dtype": "int64"},
        dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-float32-times-float64", "promotion",
        "float32 * float64 (both 1-d) is float64; each leaf's grad keeps the leaf's dtype",
        "result dtype float64, a.grad float32, b.grad float64", float32_plus_float64,
        {"dtype": "float64", "a.grad": [3, 4], "a.grad dtype": "float32",
         "b.grad dtype": "float64"}, dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-float64-times-int-scalar", "promotion",
        "float64 tensor * Python int stays float64", "values and dtype",
        float64_times_int_scalar, {"x * 3 + 1": [4, 7], "dtype": "float64", "x.grad": [3, 3]},
        dtypes=ONE_DTYPE),
    SemanticsCase(
        "promote-int-requires-grad", "promotion",
        "an int64 tensor cannot require grad", "a RuntimeError, as torch",
        int_tensor_requires_grad, {"int64 tensor with requires_grad=True": RT},
        dtypes=ONE_DTYPE),
    # the engine
    SemanticsCase(
        "engine-undefined-gradient-runs-nodes", "engine",
        "a node that gets only undefined gradients still runs: hooks see None",
        "a Function returns None for x = a * 3: x's hook, MulBackward0's prehook, a's hook "
        "and post-accumulate hook all run with None; a.grad stays None",
        undefined_gradient_runs_nodes,
        {"a.grad": None, "b.grad": [1, 1],
         "order": ["x hook saw None", "prehook saw [None]", "a hook saw None",
                   "a post saw None"]}),
    SemanticsCase(
        "engine-undefined-gradient-into-function", "engine",
        "a custom Function reached only by an undefined gradient is called with zeros",
        "Twice.backward gets zeros, so a.grad is zeros (not None)",
        undefined_gradient_into_a_function, {"backward got": [[0, 0]], "a.grad": [0, 0]}),
    SemanticsCase(
        "engine-gradient-edge", "engine",
        "a GradientEdge taken before an in-place op names the old value's history",
        "x *= 2 after get_gradient_edge(x): grad(x.sum(), (edge, x)) -> 2s and 1s",
        gradient_edge_before_inplace,
        {"gradient at the old value": [2, 2], "gradient at the new value": [1, 1]}),
    SemanticsCase(
        "engine-multi-grad-hook", "engine",
        "register_multi_grad_hook calls once per backward, None for tensors not reached",
        "c = a*b, d = a+b: backward(c) -> [T, T, T, F]; backward(c, inputs=(a,)) -> "
        "[T, F, T, F]", multi_grad_hook_all,
        {"calls": [[True, True, True, False], [True, False, True, False]]}),
    SemanticsCase(
        "engine-first-grad-copy", "engine",
        "under create_graph the first .grad is a copy recorded as CopyBackwards",
        "x.grad.grad_fn is CopyBackwards with edges (None, AddBackward0)",
        first_grad_under_create_graph,
        {"x.grad node": "CopyBackwards", "its edges": [None, "AddBackward0"],
         "x.grad": [2, 4]}),
    SemanticsCase(
        "engine-queue-callback", "engine",
        "a callback queued during backward runs after the .grad writes; outside one it raises",
        "the callback sees x.grad [2, 2]; queue_callback outside a backward is a RuntimeError",
        callback_after_the_grads,
        {"the callback saw x.grad": [[2, 2]], "outside a backward": RT}),
    # warnings
    SemanticsCase(
        "warn-nonleaf-grad", "warnings",
        "reading .grad of a non-leaf that does not retain it warns (UserWarning)",
        "the value is None; one UserWarning whose message mentions 'leaf'",
        nonleaf_grad_warns,
        {"b.grad": None, "warnings": ["UserWarning mentioning 'leaf'"]}),
    SemanticsCase(
        "warn-none-for-leaf-or-retained", "warnings",
        "reading .grad of a leaf or of a retained non-leaf does not warn",
        "no warning at all", no_warning_for_leaf_or_retained,
        {"warnings reading a leaf's grad": [], "warnings reading a retained grad": [],
         "b.grad": [1, 1]}),
)

SEMANTICS_BY_ID: dict[str, SemanticsCase] = {c.id: c for c in SEMANTICS_CASES}
