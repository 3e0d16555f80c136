"""Misuse catalogue: bad input across the public API. Each case asserts the error class, that
the message names the culprit (the type, shape, dtype, device, node or function at fault),
and that nothing changed: ``.grad``, ``_version``, ``requires_grad``, ``grad_fn`` and the data
of every tensor involved are exactly as before the call.

A case is a function that sets up its tensors and returns ``(act, watch[, extra_mentions])``;
``@case`` records the allowed error classes and what the message must mention (a string: a
case-insensitive substring; a tuple: any one of them; ``Shape(...)``: that shape, spelled
``(7, 3)``, ``[7, 3]`` or ``7x3``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import Backend

from ._state import assert_unchanged, message_of, names_shape, snapshot, tensors_in
from ._workloads import leaf

F = rg.nn.functional
ALT = "reliability-alt"
RGE = rg.RetrogradError


@dataclass(frozen=True)
class Shape:
    dims: tuple[int, ...]


CASES: dict[str, tuple[Callable[[], tuple], tuple[type[BaseException], ...], tuple]] = {}


def case(*exc: type[BaseException], mentions: tuple = ()):
    def deco(fn: Callable[[], tuple]) -> Callable[[], tuple]:
        CASES[fn.__name__] = (fn, exc, mentions)
        return fn

    return deco


@pytest.fixture(scope="module", autouse=True)
def alt_backend() -> Iterator[None]:
    """A second backend (NumPy under another name) so device mixing can be tested on CPU."""
    rg.backends.register_backend(ALT, Backend(ALT, np))
    yield
    unregister = getattr(rg.backends.registry, "unregister_backend", None)
    if unregister is not None:
        unregister(ALT)


def with_grad(values: Any = (1.0, 2.0, 3.0)) -> rg.Tensor:
    """A leaf whose ``.grad`` already holds a value (so 'unchanged' means something)."""
    x = leaf(list(values))
    (x * x).sum().backward()
    return x


def fn_hook(result: Callable[[rg.Tensor], Any]) -> Callable[[rg.Tensor], Any]:
    def hook(g: rg.Tensor) -> Any:
        return result(g)

    return hook


# ---------------------------------------------------------------------------- construction

@case(TypeError, mentions=("dict",))
def tensor_from_dict():
    return (lambda: rg.tensor({"a": 1.0})), []


@case(TypeError, ValueError, mentions=("float99",))
def tensor_unknown_dtype():
    return (lambda: rg.tensor([1.0], dtype="float99")), []


@case(TypeError, ValueError, mentions=(("shape", "ragged", "inhomogeneous", "sequence"),))
def tensor_ragged_data():
    return (lambda: rg.tensor([[1.0, 2.0], [3.0]])), []


@case(ValueError, RGE, mentions=("nosuchdev",))
def tensor_unknown_device():
    return (lambda: rg.tensor([1.0], device="nosuchdev")), []


@case(ValueError, RGE, mentions=("-1",))
def zeros_negative_size():
    return (lambda: rg.zeros(-1)), []


@case(TypeError, ValueError, RGE, mentions=("int64",))
def int_tensor_requires_grad():
    return (lambda: rg.tensor([1, 2], requires_grad=True)), []


@case(TypeError, ValueError, RGE, mentions=("int64",))
def requires_grad_on_int_leaf():
    t = rg.tensor([1, 2])
    return (lambda: t.requires_grad_()), [t]


@case(RGE, mentions=("leaf",))
def requires_grad_set_on_non_leaf():
    x = with_grad()
    y = x * 2.0

    def act():
        y.requires_grad = False

    return act, [x, y]


@case(TypeError, mentions=("str",))
def requires_grad_set_to_string():
    x = with_grad()

    def act():
        x.requires_grad = "yes"

    return act, [x]


@case(ValueError, RGE, mentions=("nosuchdev",))
def to_unknown_device():
    x = with_grad()
    return (lambda: x.to("nosuchdev")), [x]


# ---------------------------------------------------------------------------- .grad setter

@case(ValueError, RGE, mentions=(Shape((3,)), Shape((7,))))
def grad_set_wrong_shape():
    x = with_grad()

    def act():
        x.grad = rg.zeros(7, dtype=rg.float64)

    return act, [x]


@case(TypeError, mentions=("list",))
def grad_set_to_list():
    x = with_grad()

    def act():
        x.grad = [0.0, 0.0, 0.0]

    return act, [x]


@case(TypeError, mentions=("ndarray",))
def grad_set_to_numpy_array():
    x = with_grad()

    def act():
        x.grad = np.zeros(3)

    return act, [x]


@case(TypeError, ValueError, RGE, mentions=("float32", "float64"))
def grad_set_wrong_dtype():
    x = with_grad()

    def act():
        x.grad = rg.zeros(3, dtype=rg.float32)

    return act, [x]


@case(TypeError, ValueError, RGE, mentions=("cpu", ALT))
def grad_set_other_device():
    x = with_grad()
    g = rg.zeros(3, dtype=rg.float64, device=ALT)

    def act():
        x.grad = g

    return act, [x, g]


# ---------------------------------------------------------------------------- backward calls

@case(rg.GraphFreedError, mentions=("retain_graph=True",))
def backward_twice_on_freed_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward()
    return (lambda: y.backward()), [x, y]


@case(rg.GraphFreedError, mentions=("retain_graph=True",))
def backward_twice_nodes_saved_nothing():
    """E5, stricter than PyTorch: nodes that saved nothing are released too."""
    x = leaf([1.0, 2.0, 3.0])
    y = (x + 1.0).sum()
    y.backward()
    return (lambda: y.backward()), [x, y]


@case(RGE, mentions=("implicitly created only for scalar outputs",))
def backward_non_scalar_without_gradient():
    x = with_grad()
    y = x * 2.0
    return (lambda: y.backward()), [x, y]


@case(ValueError, RGE, mentions=(Shape((3,)), Shape((4,))))
def backward_seed_wrong_shape():
    x = with_grad()
    y = x * 2.0
    return (lambda: y.backward(rg.ones(4, dtype=rg.float64))), [x, y]


@case(TypeError, mentions=("list",))
def backward_seed_is_a_list():
    x = with_grad()
    y = x * 2.0
    return (lambda: y.backward([1.0, 1.0, 1.0])), [x, y]


@case(RGE, mentions=("require",))
def backward_on_tensor_without_grad():
    t = leaf([1.0, 2.0], requires_grad=False)
    y = (t * 2.0).sum()
    return (lambda: y.backward()), [t, y]


@case(RGE, mentions=(("None", "null"),))
def engine_backward_none_root():
    return (lambda: rg.autograd.Engine.backward(None)), []


@case(RGE, mentions=(("None", "null"),))
def engine_grad_none_root():
    x = with_grad()
    return (lambda: rg.autograd.Engine.grad(None, [x])), [x]


@case(RGE, mentions=(("None", "null"),))
def engine_grad_none_input():
    x = with_grad()
    y = (x * x).sum()
    return (lambda: rg.autograd.Engine.grad(y, [x, None])), [x, y]


@case(RGE, mentions=("allow_unused",))
def grad_of_unused_input():
    x = with_grad()
    z = with_grad([4.0])
    y = (x * 2.0).sum()
    return (lambda: rg.autograd.grad(y, [x, z])), [x, z, y]


@case(ValueError, RGE, mentions=(Shape((3,)), Shape((5,))))
def grad_outputs_wrong_shape():
    x = with_grad()
    y = x * 2.0
    return (lambda: rg.autograd.grad(y, [x], grad_outputs=[rg.ones(5, dtype=rg.float64)])), [x, y]


@case(ValueError, TypeError, RGE, mentions=(("grad_outputs", "grad_tensors", "length", "number"),))
def grad_outputs_wrong_count():
    x = with_grad()
    y1, y2 = x * 2.0, x * 3.0
    g = rg.ones(3, dtype=rg.float64)
    return (lambda: rg.autograd.grad([y1, y2], [x], grad_outputs=[g])), [x, y1, y2]


@case(ValueError, TypeError, RGE, mentions=(("grad_tensors", "grad_outputs", "length", "number"),))
def backward_grad_tensors_wrong_count():
    x = with_grad()
    y1, y2 = x * 2.0, x * 3.0
    g = rg.ones(3, dtype=rg.float64)
    return (lambda: rg.autograd.backward([y1, y2], [g])), [x, y1, y2]


# ---------------------------------------------------------------------------- in-place

@case(RGE, mentions=("leaf",))
def inplace_on_leaf_requiring_grad():
    x = with_grad()
    return (lambda: x.add_(1.0)), [x]


@case(RGE, mentions=("leaf",))
def setitem_on_leaf_requiring_grad():
    x = with_grad()

    def act():
        x[0] = 5.0

    return act, [x]


@case(RGE, mentions=(("leaf", "view"),))
def inplace_through_view_of_leaf():
    x = with_grad()
    return (lambda: x[0:2].mul_(2.0)), [x]


@case(RGE, mentions=("leaf",))
def zero_on_leaf_requiring_grad():
    x = with_grad()
    return (lambda: x.zero_()), [x]


@case(rg.VersionMismatch, mentions=(Shape((3,)), "0", "1"))
def saved_input_modified_under_no_grad():
    x = with_grad()
    y = (x * x).sum()
    with rg.no_grad():
        x.add_(1.0)
    node = y.grad_fn.next_functions[0][0]
    return (lambda: y.backward()), [x, y], [node.name()]


@case(rg.VersionMismatch, mentions=(Shape((3,)),))
def saved_input_modified_through_detach_alias():
    """``detach`` shares the version counter: the change is seen by the node that saved x."""
    x = with_grad()
    y = (x * x).sum()
    x.detach().add_(1.0)
    node = y.grad_fn.next_functions[0][0]
    return (lambda: y.backward()), [x, y], [node.name()]


@case(rg.VersionMismatch, mentions=(Shape((3,)),))
def saved_interior_modified_through_slice_view():
    x = with_grad()
    h = x * 2.0
    y = (h * h).sum()
    with rg.no_grad():
        h[0:2].mul_(3.0)
    node = y.grad_fn.next_functions[0][0]
    return (lambda: y.backward()), [x, h, y], [node.name()]


# ---------------------------------------------------------------------------- hooks

@case(ValueError, RGE, mentions=(Shape((3,)), Shape((5,))))
def hook_returns_wrong_shape():
    x = with_grad()
    h = x * 2.0
    h.register_hook(fn_hook(lambda g: rg.ones(5, dtype=rg.float64)))
    y = (h * h).sum()
    return (lambda: y.backward()), [x, h, y]


@case(TypeError, mentions=("list",))
def hook_returns_a_list():
    x = with_grad()
    h = x * 2.0
    h.register_hook(fn_hook(lambda g: [1.0, 1.0, 1.0]))
    y = (h * h).sum()
    return (lambda: y.backward()), [x, h, y]


@case(TypeError, ValueError, RGE, mentions=("float32",))
def hook_returns_wrong_dtype():
    x = with_grad()
    h = x * 2.0
    h.register_hook(fn_hook(lambda g: g.to(rg.float32)))
    y = (h * h).sum()
    return (lambda: y.backward()), [x, h, y]


@case(RGE, mentions=("require",))
def register_hook_on_tensor_without_grad():
    t = leaf([1.0], requires_grad=False)
    return (lambda: t.register_hook(fn_hook(lambda g: g))), [t]


@case(TypeError, mentions=("not callable",))
def register_hook_not_callable():
    # accepted at registration, as in PyTorch; the backward that calls it fails
    x = with_grad()
    x.register_hook(42)
    return (lambda: (x * 2.0).sum().backward()), [x]


@case(RGE, mentions=("require",))
def retain_grad_on_tensor_without_grad():
    t = leaf([1.0], requires_grad=False)
    return (lambda: t.retain_grad()), [t]


@case(RGE, mentions=("leaf",))
def post_accumulate_hook_on_non_leaf():
    x = with_grad()
    y = x * 2.0
    return (lambda: y.register_post_accumulate_grad_hook(lambda t: None)), [x, y]


# ---------------------------------------------------------------------------- custom Function

class TwoInOneGrad(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g


class WrongShapeGrad(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        return rg.ones(7, dtype=rg.float64)


class StringGrad(rg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        return "not a gradient"


@case(RGE, ValueError, mentions=("TwoInOneGrad",))
def function_returns_too_few_grads():
    a, b = with_grad(), with_grad([0.5, 0.5, 0.5])
    y = TwoInOneGrad.apply(a, b).sum()
    return (lambda: y.backward()), [a, b, y]


@case(RGE, ValueError, mentions=("WrongShapeGrad", Shape((3,)), Shape((7,))))
def function_returns_wrong_shape():
    a = with_grad()
    y = WrongShapeGrad.apply(a).sum()
    return (lambda: y.backward()), [a, y]


@case(TypeError, RGE, mentions=("StringGrad", "str"))
def function_returns_non_tensor():
    a = with_grad()
    y = StringGrad.apply(a).sum()
    return (lambda: y.backward()), [a, y]


# ---------------------------------------------------------------------------- ops

@case(ValueError, RGE, mentions=(Shape((3,)), Shape((4,))))
def add_mismatched_shapes():
    x, z = with_grad(), with_grad([1.0, 2.0, 3.0, 4.0])
    return (lambda: x + z), [x, z]


@case(ValueError, RGE, mentions=(Shape((2, 3)), Shape((4, 5))))
def matmul_mismatched_shapes():
    a = leaf(np.ones((2, 3)))
    b = leaf(np.ones((4, 5)))
    return (lambda: a @ b), [a, b]


@case(ValueError, RGE, mentions=(Shape((4, 3)), Shape((5, 4))))
def linear_weight_wrong_shape():
    x = leaf(np.ones((4, 3)), requires_grad=False)
    w = leaf(np.ones((5, 4)))
    return (lambda: F.linear(x, w)), [x, w]


@case(ValueError, RGE, mentions=(Shape((2, 3)), Shape((2, 4))))
def cat_mismatched_shapes():
    a = leaf(np.ones((2, 3)))
    b = leaf(np.ones((2, 4)))
    return (lambda: rg.cat([a, b], dim=0)), [a, b]


@case(ValueError, RGE, mentions=(Shape((3,)), Shape((2, 2))))
def reshape_to_incompatible_shape():
    x = with_grad()
    return (lambda: x.reshape(2, 2)), [x]


@case(ValueError, RGE, mentions=(Shape((3,)), Shape((2, 4))))
def expand_to_incompatible_shape():
    x = with_grad()
    return (lambda: x.expand(2, 4)), [x]


@case(IndexError, ValueError, RGE, mentions=("5",))
def sum_over_missing_dim():
    x = with_grad()
    return (lambda: x.sum(dim=5)), [x]


@case(IndexError, ValueError, RGE, mentions=("10",))
def index_out_of_range():
    x = with_grad()
    return (lambda: x[10]), [x]


@case(ValueError, RGE, mentions=("3",))
def item_of_many_elements():
    x = with_grad()
    return (lambda: x.item()), [x]


@case(TypeError, mentions=("str",))
def add_a_string():
    x = with_grad()
    return (lambda: x + "a"), [x]


@case(TypeError, mentions=("None",))
def multiply_by_none():
    x = with_grad()
    return (lambda: x * None), [x]


@case(TypeError, ValueError, RGE, mentions=("cpu", ALT))
def mix_devices_in_one_op():
    x = with_grad()
    z = rg.ones(3, dtype=rg.float64, device=ALT)
    return (lambda: x + z), [x, z]


@case(TypeError, ValueError, RGE, mentions=(".cpu()",))
def numpy_on_other_device():
    z = rg.ones(3, dtype=rg.float64, device=ALT)
    return (lambda: z.numpy()), [z]


# ---------------------------------------------------------------------------- the test

def _mentions(msg: str, want: Any) -> bool:
    if isinstance(want, Shape):
        return names_shape(msg, want.dims)
    if isinstance(want, tuple):
        return any(_mentions(msg, w) for w in want)
    return str(want).lower() in msg.lower()


def test_catalogue_has_at_least_30_kinds():
    assert len(CASES) >= 30, len(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_misuse(name):
    fn, exc_types, mentions = CASES[name]
    out = fn()
    act, watch = out[0], out[1]
    extra = tuple(out[2]) if len(out) > 2 else ()
    snap = snapshot(tensors_in(watch))
    with pytest.raises(BaseException) as info:
        act()
    exc = info.value
    assert isinstance(exc, exc_types), (
        f"{name}: expected {' or '.join(e.__name__ for e in exc_types)}, got "
        f"{type(exc).__name__}: {exc}")
    msg = message_of(exc)
    missing = [w for w in (*mentions, *extra) if not _mentions(msg, w)]
    assert not missing, f"{name}: message does not name {missing}: {msg!r}"
    assert_unchanged(snap, name)
    assert rg.is_grad_enabled(), f"{name}: left grad mode off"
