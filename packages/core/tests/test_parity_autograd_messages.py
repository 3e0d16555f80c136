"""Autograd's errors as PyTorch raises them, for PyTorch's own tests (``assertRaisesRegex``):
each row runs one program on torch (the oracle) and on retrograd. retrograd must raise iff
torch raises, an instance of torch's class, and with the row's key phrase -- taken from
torch's first message line, in torch's spelling and capitalisation -- in its message
(compared case-sensitively; retrograd may add words of its own after it). Rows whose phrase
is None are controls: neither library may raise.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def row(name: str, call: Callable[[Any], Any], phrase: str | None) -> Any:
    return pytest.param(call, phrase, id=name)


# -- programs: each takes the library module (torch or retrograd) ------------------------------
def _post_acc(m: Any, hook: Callable[[Any, Any], Any]) -> None:
    x = m.ones(3, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: hook(m, t))
    (x * 2).sum().backward()


def _grad_shape(m: Any) -> None:
    x = m.ones(2, 3, requires_grad=True)
    m.autograd.grad(x * 2, x, grad_outputs=m.ones(3, 2))


def _backward_shape(m: Any) -> None:
    x = m.ones(2, 3, requires_grad=True)
    (x * 2).backward(m.ones(3))


def _scalar_seed_shape(m: Any) -> None:
    x = m.ones(2, requires_grad=True)
    m.autograd.grad((x * 2).sum(), [x], grad_outputs=[m.ones(2)])


def _grad_unused(m: Any) -> None:
    x, z = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
    m.autograd.grad((x * 2).sum(), [x, z])


def _grad(m: Any, inputs: Callable[[Any, Any], Any], **kw: Any) -> Any:
    x = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * 2).sum(), inputs(m, x), **kw)


def _backward_inputs(m: Any, inputs: Callable[[Any, Any], Any], roots: bool = True) -> None:
    x = m.ones(2, requires_grad=True)
    m.autograd.backward([(x * 2).sum()] if roots else [], inputs=inputs(m, x))


def _backward_twice(m: Any) -> None:
    x = m.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _legacy(m: Any) -> Any:
    class MyFunction(m.autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, g):
            return g * 2

    return MyFunction


def _static(m: Any) -> Any:
    class MyFunction(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return MyFunction


def _call_instance(m: Any, make: Callable[[Any], Any]) -> None:
    f = make(m)()
    f(m.ones(2, requires_grad=True))


def _instantiate(m: Any) -> None:
    _static(m)()


_LEGACY = "Legacy autograd function with non-static forward method is deprecated"
_UNUSED = ("appears to not have been used in the graph. Set allow_unused=True if this is the "
           "desired behavior.")
_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed)")


def _delete(m: Any, name: str) -> None:
    x = m.ones(2, requires_grad=True)
    delattr(x, name)


def _numpy_under_no_grad(m: Any) -> None:
    x = m.ones(2, requires_grad=True)
    with m.no_grad():
        x.numpy()


ROWS = [
    # -- post-accumulate-grad hooks (PyTorch's _call_hooks) -------------------------------------
    row("post_acc_hook_returns_its_grad", lambda m: _post_acc(m, lambda m, t: t.grad),
        "Tensor post accumulate grad hooks should return None."),
    row("post_acc_hook_returns_a_new_tensor", lambda m: _post_acc(m, lambda m, t: m.ones(3)),
        "should return None"),
    row("post_acc_hook_changes_the_size", lambda m: _post_acc(m, lambda m, t: m.ones(2)),
        "hook '<lambda>' has changed the size of value"),
    row("post_acc_hook_changes_the_dtype",
        lambda m: _post_acc(m, lambda m, t: m.ones(3, dtype=m.float64)),
        "hook '<lambda>' has changed the type of value"),
    row("post_acc_hook_returns_an_int", lambda m: _post_acc(m, lambda m, t: 5),
        "expected Variable, but hook returned 'int'"),
    row("post_acc_hook_returns_the_leaf_ok", lambda m: _post_acc(m, lambda m, t: t), None),
    row("post_acc_hook_returns_none_ok", lambda m: _post_acc(m, lambda m, t: None), None),
    # -- grad_outputs of the wrong shape or type ----------------------------------------------
    row("grad_seed_shape_mismatch", _grad_shape,
        "Mismatch in shape: grad_output[0] has a shape of "),
    row("backward_seed_shape_mismatch", _backward_shape,
        "Mismatch in shape: grad_output[0] has a shape of "),
    row("scalar_output_seed_shape_mismatch", _scalar_seed_shape,
        "Mismatch in shape: grad_output[0] has a shape of "),
    row("grad_seed_not_a_tensor",
        lambda m: _grad(m, lambda m, x: x, grad_outputs=[1.0]),
        "gradients can be either Tensors or None, but got float"),
    # -- unused and invalid inputs ------------------------------------------------------------
    row("grad_unused_input", _grad_unused,
        "The differentiated Tensor at index 1 " + _UNUSED),
    row("grad_no_outputs", lambda m: m.autograd.grad([], m.ones(2, requires_grad=True)),
        "The differentiated Tensor at index 0 " + _UNUSED),
    row("grad_no_outputs_allow_unused_ok",
        lambda m: m.autograd.grad([], m.ones(2, requires_grad=True), allow_unused=True), None),
    row("grad_no_outputs_materialize_ok",
        lambda m: m.autograd.grad([], m.ones(2, requires_grad=True), materialize_grads=True),
        None),
    row("grad_no_outputs_input_not_requiring_grad",
        lambda m: m.autograd.grad([], m.ones(2), allow_unused=True),
        "One of the differentiated Tensors does not require grad"),
    row("grad_input_none", lambda m: _grad(m, lambda m, x: [x, None]),
        "all inputs have to be Tensors or GradientEdges, but got NoneType"),
    row("grad_input_float", lambda m: _grad(m, lambda m, x: [x, 3.0]),
        "all inputs have to be Tensors or GradientEdges, but got float"),
    row("backward_input_none", lambda m: _backward_inputs(m, lambda m, x: [None]),
        "all inputs have to be Tensors or GradientEdges, but got NoneType"),
    row("backward_input_float", lambda m: _backward_inputs(m, lambda m, x: [x, 3.0]),
        "all inputs have to be Tensors or GradientEdges, but got float"),
    row("backward_no_tensors_input_none",
        lambda m: _backward_inputs(m, lambda m, x: [None], roots=False),
        "all inputs have to be Tensors or GradientEdges, but got NoneType"),
    row("backward_no_tensors_ok", lambda m: m.autograd.backward([]), None),
    row("backward_no_tensors_with_inputs_ok",
        lambda m: _backward_inputs(m, lambda m, x: [x], roots=False), None),
    # -- the graph walked twice ---------------------------------------------------------------
    row("backward_twice", _backward_twice, _FREED),
    # -- custom Functions called the legacy way -----------------------------------------------
    row("legacy_function_instance_call", lambda m: _call_instance(m, _legacy), _LEGACY),
    row("static_function_instance_call", lambda m: _call_instance(m, _static), _LEGACY),
    row("function_instantiation_ok", _instantiate, None),
    row("legacy_function_apply_ok", lambda m: _legacy(m).apply(m.ones(2, requires_grad=True)),
        None),
    # -- attributes that cannot be deleted, numpy() of a tensor that requires grad ------------
    row("del_data", lambda m: _delete(m, "data"), "Deleting tensor data is not allowed"),
    row("del_requires_grad", lambda m: _delete(m, "requires_grad"),
        "requires_grad must be a bool"),
    row("del_grad_ok", lambda m: _delete(m, "grad"), None),
    row("numpy_of_a_tensor_that_requires_grad", lambda m: m.ones(2, requires_grad=True).numpy(),
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    row("numpy_under_no_grad_ok", _numpy_under_no_grad, None),
]



def _outcome(lib: Any, call: Callable[[Any], Any]) -> BaseException | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib)
        except Exception as exc:  # noqa: BLE001 - the exception is the result
            return exc
    return None


@pytest.mark.parametrize("call, phrase", ROWS)
def test_autograd_error_as_torch_raises_it(call: Callable[[Any], Any],
                                          phrase: str | None) -> None:
    expected = _outcome(torch, call)
    got = _outcome(rg, call)
    if phrase is None:  # a control: torch accepts the call, so must retrograd
        assert expected is None, f"the row is wrong: torch raised {expected!r}"
        assert got is None, f"retrograd raised {type(got).__name__}: {got}"
        return
    assert expected is not None, "the row is wrong: torch does not raise"
    assert phrase in str(expected).splitlines()[0], f"the row is wrong: torch says {expected}"
    assert got is not None, f"retrograd does not raise; torch raises {expected!r}"
    assert isinstance(got, type(expected)), (
        f"retrograd raised {type(got).__name__} ({got}); torch raises "
        f"{type(expected).__name__} ({expected})")
    assert phrase in str(got), f"{phrase!r} not in retrograd's message: {got}"


def test_instantiating_a_function_warns_as_in_torch() -> None:
    for lib in (torch, rg):
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            _static(lib)()


def test_a_later_post_acc_hook_sees_what_an_earlier_one_returned() -> None:
    """PyTorch's _call_hooks hands each hook the previous one's result (then refuses it)."""
    def program(lib: Any) -> list[tuple[int, ...]]:
        seen: list[tuple[int, ...]] = []
        x = lib.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: lib.zeros(3))
        x.register_post_accumulate_grad_hook(lambda t: seen.append(tuple(t.shape)))
        with pytest.raises(RuntimeError, match="should return None"):
            (x * 2).sum().backward()
        return seen

    assert program(rg) == program(torch) == [(3,)]


@pytest.mark.parametrize("lib", [torch, rg], ids=["torch", "retrograd"])
def test_shape_mismatch_message_prints_shapes_as_shape_does(lib: Any) -> None:
    """PyTorch's own test builds the expected message from the tensors' ``.shape``
    (``str(torch.Size)``): retrograd's message must equal the one built from its ``.shape``."""
    x = lib.ones(2, 2, requires_grad=True)
    out = x * 2
    seed = lib.ones(2)
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad(out, x, grad_outputs=seed)
    assert str(info.value) == (
        f"Mismatch in shape: grad_output[0] has a shape of {seed.shape} and output[0] has a "
        f"shape of {out.shape}.")
