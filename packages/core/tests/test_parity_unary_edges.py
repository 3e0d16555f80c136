"""The corners around the elementwise, reduction, linalg and nn ops, each program run on
PyTorch (the oracle) and on retrograd and compared: the value and dtype of the result (or of
the gradients), or -- where PyTorch raises -- that retrograd raises an instance of PyTorch's
class, with its key phrase.

* bool and integer inputs to the unary ops (PyTorch computes some in the default float dtype,
  refuses others with its own class: ``abs`` NotImplementedError, ``relu`` and ``-``
  RuntimeError);
* NaN, infinities and signed zeros at the kinks of the derivatives (``abs`` at NaN is 0:
  PyTorch's ``sgn(nan)``; ``relu``, ``clamp``, ``maximum``, ``amax``, ``where``, ``sqrt``);
* numbers against tensors (``maximum(t, 2.0)`` is a TypeError; ``2 - x``, ``2 / x``,
  ``2 ** x``, ``x ** 2`` make PyTorch's nodes, with one edge);
* shapes that do not fit (broadcasting, matmul, linear, mse_loss, ragged lists) and empty
  reductions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


# -- the comparison -----------------------------------------------------------------------------
def _plain(v: Any) -> Any:
    """Tensors as (dtype name, shape, values); nested sequences alike."""
    if isinstance(v, (torch.Tensor, rg.Tensor)):
        return ("T", str(v.dtype).rsplit(".", 1)[-1], tuple(v.shape),
                np.asarray(v.detach().tolist(), dtype=object if v.dtype in (torch.bool, rg.bool_)
                           else float))
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, (torch.dtype, rg.DType)):
        return str(v).rsplit(".", 1)[-1]
    return v


def _outcome(lib: Any, program: Callable[[Any], Any]) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", _plain(program(lib))
        except Exception as exc:  # noqa: BLE001 - compared with torch's
            return "raised", exc


def _same(want: Any, got: Any, rtol: float, path: str = "result") -> None:
    if isinstance(want, tuple) and want and want[0] == "T":
        assert isinstance(got, tuple) and got and got[0] == "T", f"{path}: {got!r}"
        assert got[1] == want[1], f"{path}: dtype {got[1]}, torch {want[1]}"
        assert got[2] == want[2], f"{path}: shape {got[2]}, torch {want[2]}"
        if want[3].dtype == object:
            assert got[3].tolist() == want[3].tolist(), f"{path}: {got[3]} != {want[3]}"
        else:
            np.testing.assert_allclose(got[3], want[3], rtol=rtol, atol=0, equal_nan=True,
                                       err_msg=path)
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{path}: {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            _same(w, g, rtol, f"{path}[{i}]")
        return
    if isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), path
        return
    assert got == want, f"{path}: {got!r}, torch {want!r}"


def like_torch(program: Callable[[Any], Any], phrase: str | None = None,
               rtol: float = 0.0) -> None:
    """Both return equal results (values within ``rtol``: 0 is exact), or both raise,
    retrograd an instance of torch's class; ``phrase``, if given, is in both messages."""
    want, got = _outcome(torch, program), _outcome(rg, program)
    if want[0] == "raised":
        assert got[0] == "raised", f"torch raised {want[1]!r}; retrograd returned {got[1]!r}"
        assert isinstance(got[1], type(want[1])), (
            f"torch raised {type(want[1]).__name__} ({want[1]}), retrograd "
            f"{type(got[1]).__name__} ({got[1]})")
        if phrase is not None:
            assert phrase.lower() in str(want[1]).lower(), f"the case is wrong: {want[1]}"
            assert phrase.lower() in str(got[1]).lower(), f"{phrase!r} not in: {got[1]}"
        return
    assert phrase is None, f"the case is wrong: torch returned {want[1]!r}"
    assert got[0] == "ok", f"torch returned {want[1]!r}; retrograd raised {got[1]!r}"
    _same(want[1], got[1], rtol)


def grads_of(fn: Callable[[Any, Any], Any], values: list[float],
             dtype: str = "float64") -> Callable[[Any], Any]:
    """A program: ``fn(lib, x)`` summed and differentiated; returns (value, x.grad)."""
    def program(lib: Any) -> Any:
        x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        y = fn(lib, x)
        y.sum().backward()
        return y, x.grad
    return program


def graph_of(fn: Any) -> Any:
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return (name, tuple(None if f is None else (graph_of(f), nr) for f, nr in fn.next_functions))


# -- unary ops on bool, integer and float tensors --------------------------------------------------
UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu"]
INPUTS = {
    "bool": lambda m: m.tensor([True, False]),
    "bool_0d": lambda m: m.tensor(True),
    "bool_empty": lambda m: m.zeros(0, dtype=m.bool),
    "int64": lambda m: m.tensor([3, -2, 0]),
    "int32": lambda m: m.tensor([3, -2, 0], dtype=m.int32),
    "float16": lambda m: m.tensor([0.5, -2.0, 0.0], dtype=m.float16),
    "float32": lambda m: m.tensor([0.5, -2.0, 0.0]),
}
_BOOL_ALIAS = {"bool": "bool"}


@pytest.mark.parametrize("kind", list(INPUTS))
@pytest.mark.parametrize("op", UNARY)
def test_unary_op_on_each_dtype(op: str, kind: str) -> None:
    # float32 transcendentals may differ from PyTorch's vectorized ones by an ulp or so
    rtol = 0.0 if op in ("neg", "abs", "relu") else 2e-3 if kind == "float16" else 1e-6
    like_torch(lambda m: getattr(INPUTS[kind](m), op)(), rtol=rtol)
    like_torch(lambda m: getattr(m, op)(INPUTS[kind](m)), rtol=rtol)


@pytest.mark.parametrize("op, phrase", [
    ("abs", "not implemented for 'Bool'"),
    ("relu", "Boolean inputs not supported for relu"),
    ("neg", "Negation, the `-` operator, on a bool tensor is not supported"),
])
def test_unary_refusals_of_bool_name_the_problem(op: str, phrase: str) -> None:
    like_torch(lambda m: getattr(m.tensor([True, False]), op)(), phrase)


def test_functional_relu_of_bool_is_refused() -> None:
    like_torch(lambda m: m.nn.functional.relu(m.tensor([True])),
               "Boolean inputs not supported for relu")


@pytest.mark.parametrize("op", ["abs", "relu", "exp", "neg"])
def test_unary_of_a_number_is_a_type_error(op: str) -> None:
    like_torch(lambda m: getattr(m, op)(1.5))


# -- NaN, infinities and zeros at the kinks -----------------------------------------------------
KINKS = [NAN, INF, -INF, 0.0, -0.0, 1.5, -2.0]
KINK_OPS = {
    "abs": lambda m, x: x.abs(),
    "relu": lambda m, x: x.relu(),
    "neg": lambda m, x: -x,
    "sqrt_of_abs": lambda m, x: x.abs().sqrt(),
    "clamp": lambda m, x: x.clamp(-1.0, 1.0),
    "clamp_min": lambda m, x: x.clamp(min=0.0),
    "clamp_max": lambda m, x: x.clamp(max=0.0),
    "clamp_at_bounds": lambda m, x: x.clamp(0.0, 1.5),
    "maximum_self": lambda m, x: m.maximum(x, x),
    "minimum_zero": lambda m, x: m.minimum(x, m.zeros_like(x)),
    "maximum_zero": lambda m, x: m.maximum(x, m.zeros_like(x)),
    "where_positive": lambda m, x: m.where(x > 0, x, x * 2.0),
    "tanh": lambda m, x: x.tanh(),
    "sigmoid": lambda m, x: x.sigmoid(),
    "exp": lambda m, x: x.exp(),
    "square": lambda m, x: x ** 2,
    "cube": lambda m, x: x ** 3.0,
    "pow_half_of_abs": lambda m, x: x.abs() ** 0.5,
    "pow_zero": lambda m, x: x ** 0,
    "mul_self": lambda m, x: x * x,
    "div_by_two": lambda m, x: x / 2.0,
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", list(KINK_OPS))
def test_gradient_at_nan_inf_and_zeros(op: str, dtype: str) -> None:
    # tanh, sigmoid and exp may differ from PyTorch's by an ulp; so may sqrt (docs/semantics.md:
    # ours is IEEE's, PyTorch's CPU kernel is within an ulp; which values differ depends on the
    # CPU's MKL code path: sqrt(2.0) is 1.414213562373095 on an AVX-512 Xeon)
    ulp = ("tanh", "sigmoid", "exp", "sqrt_of_abs", "pow_half_of_abs")
    rtol = 0.0 if op not in ulp else 1e-14 if dtype == "float64" else 1e-6
    like_torch(grads_of(KINK_OPS[op], KINKS, dtype), rtol=rtol)


def test_abs_backward_at_nan_is_zero() -> None:
    like_torch(grads_of(lambda m, x: x.abs(), [NAN, 1.0, -2.0, 0.0]))


def test_abs_double_backward_at_nan() -> None:
    def program(m: Any) -> Any:
        x = m.tensor([NAN, -1.0, 0.0, 2.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad((x.abs() * x).sum(), x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x)
        return g, h
    like_torch(program)


@pytest.mark.parametrize("values", [[1.0, 3.0, 3.0], [INF, 1.0, INF], [-INF, -INF],
                                    [1.0, NAN, 3.0], [0.0, -0.0]])
def test_amax_gradient_at_ties_and_non_finite_values(values: list[float]) -> None:
    like_torch(grads_of(lambda m, x: x.amax(), values))
    like_torch(grads_of(lambda m, x: x.amax(0, keepdim=True), values))


@pytest.mark.parametrize("values", [[1.0, INF, 3.0], [-INF, -INF], [0.0, 1.0]])
def test_logsumexp_at_infinities(values: list[float]) -> None:
    like_torch(grads_of(lambda m, x: x.logsumexp(0), values))


# -- numbers against tensors ---------------------------------------------------------------------
@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("other", [
    lambda m: 2.0, lambda m: 2, lambda m: True, lambda m: np.float64(2.0),
    lambda m: np.array([2.0, 1.0]), lambda m: [2.0, 1.0], lambda m: None,
])
def test_maximum_minimum_take_tensors_only(op: str, other: Any) -> None:
    like_torch(lambda m: getattr(m, op)(m.tensor([1.0, 3.0]), other(m)), "must be Tensor")
    like_torch(lambda m: getattr(m, op)(other(m), m.tensor([1.0, 3.0])), "must be Tensor")
    like_torch(lambda m: getattr(m.tensor([1.0, 3.0]), op)(other(m)), "must be Tensor")


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_of_tensors(op: str) -> None:
    like_torch(lambda m: getattr(m, op)(m.tensor([1.0, 3.0]), m.tensor(2.0, dtype=m.float64)))
    like_torch(lambda m: getattr(m, op)(m.tensor([True, False]), m.tensor([False, False])))
    like_torch(lambda m: getattr(m, op)(m.tensor([1, 5]), m.tensor([2.5, 2.5])))
    like_torch(lambda m: getattr(m, op)(m.ones(3), m.ones(4)), "must match the size")

    def grads(m: Any) -> Any:
        a = m.tensor([1.0, 2.0, NAN, 4.0], requires_grad=True)
        b = m.tensor([2.0, 2.0, 0.0, NAN], dtype=m.float64, requires_grad=True)
        y = getattr(m, op)(a, b)
        y.sum().backward()
        return y, a.grad, b.grad, graph_of(y.grad_fn)
    like_torch(grads)


NUMBER_PROGRAMS = {
    "rsub": lambda m, x: 2 - x,
    "rsub_float": lambda m, x: 2.5 - x,
    "rsub_0d_tensor": lambda m, x: m.tensor(2.0, dtype=m.float64) - x,
    "sub_number": lambda m, x: x - 2,
    "rdiv": lambda m, x: 2 / x,
    "div_number": lambda m, x: x / 2,
    "pow_number": lambda m, x: x ** 2,
    "pow_float": lambda m, x: x ** 2.5,
    "pow_zero": lambda m, x: x ** 0,
    "pow_bool": lambda m, x: x ** True,
    "pow_0d_tensor": lambda m, x: x ** m.tensor(2.0, dtype=m.float64),
    "pow_int_tensor": lambda m, x: x ** m.tensor([2, 3, 1, 0]),
    "rpow": lambda m, x: 2 ** x,
    "rpow_zero_base": lambda m, x: 0.0 ** x,
    "rpow_0d_tensor": lambda m, x: m.tensor(2.0, dtype=m.float64) ** x,
    "pow_tensors": lambda m, x: x.abs() ** x,
    "radd": lambda m, x: 2 + x,
    "rmul": lambda m, x: 2 * x,
    "full_sum": lambda m, x: x.sum(),
    "sum_dim_none": lambda m, x: x.sum(dim=None),
    "sum_dim": lambda m, x: x.sum(0),
    "sum_empty_dims": lambda m, x: x.sum(()),
    "full_mean": lambda m, x: x.mean(),
    "mean_dim_none": lambda m, x: x.mean(dim=None),
    "mean_keepdim": lambda m, x: x.mean(dim=None, keepdim=True),
    "mean_dim": lambda m, x: x.mean(0),
}


@pytest.mark.parametrize("name", list(NUMBER_PROGRAMS))
def test_numbers_against_tensors(name: str) -> None:
    """The value, the gradient (at a zero and a negative base too) and PyTorch's graph: its
    node names and edges (one edge for the tensor of ``2 - x``, ``2 / x``, ``x ** 2``)."""
    fn = NUMBER_PROGRAMS[name]

    def program(m: Any) -> Any:
        x = m.tensor([0.5, -2.0, 0.0, 3.0], dtype=m.float64, requires_grad=True)
        y = fn(m, x)
        y.sum().backward()
        return y, x.grad, graph_of(y.grad_fn)
    like_torch(program)


def test_full_reductions_of_a_parameter() -> None:
    def program(m: Any) -> Any:
        p = m.nn.Parameter(m.ones(2, 3, dtype=m.float64))
        return [graph_of(y.grad_fn) for y in (p.sum(), p.mean(), p.sum(dim=None), p.sum(0),
                                               p.mean(dim=None, keepdim=True))]
    like_torch(program)


@pytest.mark.parametrize("name", ["rsub", "rdiv", "pow_number", "rpow", "pow_tensors"])
def test_numbers_against_tensors_twice_differentiated(name: str) -> None:
    fn = NUMBER_PROGRAMS[name]

    def program(m: Any) -> Any:
        x = m.tensor([0.5, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(fn(m, x).sum(), x, create_graph=True)
        (h,) = m.autograd.grad(g.sum(), x)
        return g, h
    like_torch(program)


def test_number_operand_of_a_float16_tensor() -> None:
    def program(m: Any) -> Any:
        x = m.tensor([0.5, 2.0], dtype=m.float16, requires_grad=True)
        y = (2.0 - x) + 3.0 / x + 2 ** x + x ** 2
        y.sum().backward()
        return y, x.grad
    like_torch(program, rtol=1e-3)


@pytest.mark.parametrize("cond", [
    lambda m: m.ones(3), lambda m: m.tensor([1, 0, 1]), lambda m: m.tensor([1, 0, 1],
                                                                          dtype=m.int32)])
def test_where_condition_must_be_bool(cond: Any) -> None:
    like_torch(lambda m: m.where(cond(m), m.ones(3), m.zeros(3)),
               "where expected condition to be a boolean tensor")


def test_where_with_numbers() -> None:
    like_torch(lambda m: m.where(m.tensor([True, False]), 1.0, m.tensor([2, 3])))
    like_torch(lambda m: m.where(m.tensor([True, False]), m.tensor([2, 3]), 0))
    like_torch(lambda m: m.where(True, m.ones(2), m.zeros(2)))


@pytest.mark.parametrize("bounds", [(0, 1), (0.5, None), (None, -1), (True, None),
                                    (None, True), (True, False), (False, 1)])
@pytest.mark.parametrize("x", [lambda m: m.tensor([True, False]), lambda m: m.tensor([3, -2]),
                               lambda m: m.tensor([0.25, -2.0])])
def test_clamp_of_each_dtype(x: Any, bounds: tuple[Any, Any]) -> None:
    like_torch(lambda m: x(m).clamp(*bounds))


def test_clamp_without_bounds() -> None:
    like_torch(lambda m: m.ones(3).clamp(), "At least one of 'min' or 'max' must not be None")
    like_torch(lambda m: m.clamp(m.ones(3)), "At least one of 'min' or 'max' must not be None")


# -- shapes that do not fit ----------------------------------------------------------------------
BROADCAST = {
    "add": lambda m, a, b: a + b,
    "sub": lambda m, a, b: a - b,
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "pow": lambda m, a, b: a ** b,
    "eq": lambda m, a, b: a == b,
    "lt": lambda m, a, b: a < b,
    "logical_and": lambda m, a, b: m.logical_and(a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b),
    "int_add": lambda m, a, b: a.long() + b.int(),
    "int_pow": lambda m, a, b: a.long() ** b.long(),
    "mixed_mul": lambda m, a, b: a.double() * b,
    "where": lambda m, a, b: m.where(a > 0, a, b),
    "where_cond": lambda m, a, b: m.where(b > 0, a, a),
}


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((2, 3), (2,)), ((2, 3), (4, 1, 2)),
                                    ((2, 1, 3), (4, 2))])
@pytest.mark.parametrize("op", list(BROADCAST))
def test_shapes_that_do_not_broadcast(op: str, shapes: tuple[Any, Any]) -> None:
    sa, sb = shapes
    like_torch(lambda m: BROADCAST[op](m, m.ones(*sa), m.ones(*sb)),
               "must match the size of tensor b")


def test_where_broadcasts_the_condition_first() -> None:
    like_torch(lambda m: m.where(m.tensor([True, False]), m.zeros(3), m.zeros(3)),
               "The size of tensor a (2) must match the size of tensor b (3)")
    like_torch(lambda m: m.where(m.tensor([True, False, True]), m.zeros(2, 3), m.zeros(4, 1)),
               "The size of tensor a (2) must match the size of tensor b (4)")


MATMUL_SHAPES = [((2, 3), (4, 5)), ((3,), (4,)), ((2, 2, 3), (2, 4, 5)), ((3,), (4, 5)),
                 ((2, 3), (4,)), ((2, 2, 3), (4, 5)), ((2, 3), (2, 4, 5)), ((3,), (2, 4, 5)),
                 ((2, 2, 3), (4,)), ((2, 1, 2, 3), (3, 4, 5)), ((2, 2, 3), (3, 4, 5)),
                 ((0, 3), (4, 0)), ((2, 2, 3), (3, 2, 3, 5)), ((4,), (2, 3, 4, 5))]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_shapes(shapes: tuple[Any, Any], requires_grad: bool) -> None:
    """PyTorch's message is the one of the kernel it picks (dot, mv, mm, bmm), after folding
    a batched operand into a matrix; which it folds depends on ``requires_grad``."""
    sa, sb = shapes

    def program(m: Any) -> Any:
        return m.ones(*sa, requires_grad=requires_grad) @ m.ones(*sb)
    want = _outcome(torch, program)
    like_torch(program, None if want[0] == "ok" else str(want[1]).split(" (")[0])


def test_matmul_of_a_0d_tensor() -> None:
    like_torch(lambda m: m.tensor(1.0) @ m.ones(2),
               "both arguments to matmul need to be at least 1D, but they are 0D and 1D")
    like_torch(lambda m: m.ones(2) @ m.tensor(1.0), "but they are 1D and 0D")


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (3,)), ((3,), (3, 2)),
                                    ((2, 3), (3, 2))], ids=str)
def test_matmul_node_names(shapes: tuple[Any, Any]) -> None:
    sa, sb = shapes

    def program(m: Any) -> Any:
        a = m.ones(*sa, dtype=m.float64, requires_grad=True)
        b = m.ones(*sb, dtype=m.float64, requires_grad=True)
        y = a @ b
        y.sum().backward()
        return a.grad, b.grad, y.grad_fn.name() if sa != (3,) or sb != (3, 2) else None
    like_torch(program)


LINEAR = [((4, 3), (5, 4), None), ((2, 4, 3), (5, 4), None), ((3,), (5, 4), None),
          ((4, 3), (5, 3), (4,)), ((2, 4, 3), (5, 3), (4,)), ((3,), (5, 3), (4,)),
          ((4, 3), (5, 3), (1,)), ((4, 3), (5, 3), (4, 5)), ((4, 3), (5, 3), (2, 5)),
          ((4, 3), (5, 3), (1, 5)), ((4, 3), (3,), None), ((4, 3), (2, 5, 3), None),
          ((4, 3), (5, 3), (5, 1)), ((2, 4, 3), (5, 3), (1, 4, 5)), ((4, 3), (5, 3), (2, 4, 5)),
          ((3,), (3,), None), ((3,), (4,), None), ((3,), (3,), (2,)), ((2, 4, 3), (5, 3), (3, 5)),
          ((2, 4, 3), (5, 3), (2, 1, 5)), ((2, 4, 3), (5, 3), (1, 2, 4, 5)),
          ((4, 3), (5, 3), (5,)), ((4, 3), (5, 3), ()), ((4, 3), (4,), None)]


@pytest.mark.parametrize("shapes", LINEAR, ids=str)
def test_linear_shapes(shapes: tuple[Any, Any, Any]) -> None:
    sx, sw, sb = shapes

    def program(m: Any) -> Any:
        x = m.tensor(np.arange(math.prod(sx), dtype=float).reshape(sx).tolist(),
                     dtype=m.float64, requires_grad=True)
        w = m.ones(*sw, dtype=m.float64, requires_grad=True)
        b = None if sb is None else m.ones(sb, dtype=m.float64, requires_grad=True)
        y = m.nn.functional.linear(x, w, b)
        y.sum().backward()
        return y, x.grad, w.grad, None if b is None else b.grad
    want = _outcome(torch, program)
    # PyTorch's expand message starts with the expand call, in its C++ type names
    like_torch(program, None if want[0] == "ok" else str(want[1]).split("): ")[-1][:40])


def test_linear_of_a_0d_tensor() -> None:
    like_torch(lambda m: m.nn.functional.linear(m.tensor(1.0), m.ones(2, 2)),
               "both arguments to linear need to be at least 1D")


@pytest.mark.parametrize("data", [
    [[1.0, 2.0], [3.0]], [[1.0], [2.0, 3.0]], [1.0, [2.0]], [[1.0], 2.0],
    [[[1, 2], [3, 4]], [[1, 2], [3]]], [[[1, 2], [3, 4]], [[1, 2]]], [[1, 2], []],
    [[1, 2], (3, 4)], [[True], [False, True]],
], ids=str)
def test_ragged_lists(data: Any) -> None:
    want = _outcome(torch, lambda m: m.tensor(data))
    like_torch(lambda m: m.tensor(data), None if want[0] == "ok" else str(want[1]))


@pytest.mark.parametrize("text", ["cpu:x", "cpu:", "cpu:-1", "cpu:1x", ":0", "cpu:0:1",
                                  "cpu:01", "cpu: 0"])
def test_bad_device_strings(text: str) -> None:
    like_torch(lambda m: m.ones(2).to(text), "device string")


# -- empty reductions ----------------------------------------------------------------------------
EMPTY = {
    "amax": lambda m: m.ones(0).amax(),
    "amax_dim0": lambda m: m.ones(0).amax(0),
    "amax_rows": lambda m: m.ones(0, 3).amax(1),
    "amax_empty_axis": lambda m: m.ones(0, 3).amax(0),
    "amax_both": lambda m: m.ones(0, 3).amax((0, 1)),
    "amax_no_dims": lambda m: m.ones(0, 3).amax(()),
    "amax_cols": lambda m: m.ones(3, 0).amax(0),
    "amax_cols_keepdim": lambda m: m.ones(3, 0).amax(0, keepdim=True),
    "amax_cols_empty_axis": lambda m: m.ones(3, 0).amax(1),
    "logsumexp": lambda m: m.ones(0).logsumexp(0),
    "logsumexp_rows": lambda m: m.ones(0, 3).logsumexp(1),
    "logsumexp_empty_axis": lambda m: m.ones(3, 0).logsumexp(1),
    "logsumexp_keepdim": lambda m: m.ones(3, 0).logsumexp(1, keepdim=True),
    "logsumexp_int": lambda m: m.zeros(3, 0, dtype=m.int64).logsumexp(1),
    "sum": lambda m: m.ones(0).sum(),
    "mean": lambda m: m.ones(0).mean(),
    "mean_dim": lambda m: m.ones(3, 0).mean(1),
}


@pytest.mark.parametrize("name", list(EMPTY))
def test_empty_reductions(name: str) -> None:
    want = _outcome(torch, EMPTY[name])
    like_torch(EMPTY[name], None if want[0] == "ok" else str(want[1]).split(".")[0])


def test_empty_logsumexp_backward() -> None:
    like_torch(grads_of(lambda m, x: x.reshape(2, 0).logsumexp(1), []))


# -- mse_loss and cross_entropy --------------------------------------------------------------------
MSE = {
    "mean": lambda m, x, t: m.nn.functional.mse_loss(x, t),
    "sum": lambda m, x, t: m.nn.functional.mse_loss(x, t, reduction="sum"),
    "none": lambda m, x, t: m.nn.functional.mse_loss(x, t, reduction="none"),
}


@pytest.mark.parametrize("target_dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("reduction", list(MSE))
def test_mse_loss_value_gradients_and_node(reduction: str, target_dtype: str) -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0, 4.0, NAN], requires_grad=True)
        vals = [0.5, 2.0, 1.0, 3.0] if target_dtype != "bool" else [True, False, True, True]
        t = m.tensor(vals, dtype=getattr(m, target_dtype if target_dtype != "bool" else "bool"),
                     requires_grad=target_dtype.startswith("float"))
        y = MSE[reduction](m, x, t)
        y.sum().backward()
        return y, x.grad, t.grad, graph_of(y.grad_fn)
    like_torch(program, rtol=1e-6)


def test_mse_loss_twice_differentiated() -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0, 4.0], dtype=m.float64, requires_grad=True)
        t = m.tensor([0.5, 2.5, 1.0], dtype=m.float64, requires_grad=True)
        (gx, gt) = m.autograd.grad(m.nn.functional.mse_loss(x * x, t), (x, t), create_graph=True)
        (hx, ht) = m.autograd.grad((gx * gx).sum() + gt.sum(), (x, t))
        return gx, gt, hx, ht
    like_torch(program, rtol=1e-15)  # PyTorch's double backward multiplies in another order


@pytest.mark.parametrize("shapes", [((3,), (2, 3)), ((2, 1), (2, 3)), ((3,), (4,))], ids=str)
def test_mse_loss_of_other_shapes_warns_and_broadcasts(shapes: tuple[Any, Any]) -> None:
    sx, st = shapes

    def program(m: Any) -> Any:
        x = m.ones(*sx, dtype=m.float64, requires_grad=True)
        t = m.zeros(*st, dtype=m.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = m.nn.functional.mse_loss(x * 3.0, t, reduction="sum")
        y.backward()
        return y, x.grad, t.grad, [str(w.message).split(" (")[0][:24] for w in caught]
    want = _outcome(torch, program)
    like_torch(program, None if want[0] == "ok" else "must match the size of tensor b")


def test_mse_loss_refusals() -> None:
    like_torch(lambda m: m.nn.functional.mse_loss(m.tensor([1, 2]), m.tensor([1, 3])),
               "not implemented for 'Long'")
    like_torch(lambda m: m.nn.functional.mse_loss(m.ones(2), m.ones(2), reduction="avg"),
               "avg is not a valid value for reduction")


def test_mse_loss_target_changed_in_place_is_refused() -> None:
    def program(m: Any) -> Any:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        t = m.tensor([0.0, 1.0])
        loss = m.nn.functional.mse_loss(x, t)
        t.add_(1.0)
        loss.backward()
        return x.grad
    like_torch(program, "modified by an inplace operation")


CE = {
    "target_out_of_range": (lambda m: (m.ones(2, 3), m.tensor([0, 5])), "Target 5 is out"),
    "negative_target": (lambda m: (m.ones(2, 3), m.tensor([0, -1])), "Target -1 is out"),
    "first_bad_target": (lambda m: (m.ones(3, 3), m.tensor([0, -3, 7])), "Target -3 is out"),
    "skips_ignore_index": (lambda m: (m.ones(3, 3), m.tensor([-100, 7, 0])), "Target 7 is out"),
    "batch_sizes": (lambda m: (m.ones(2, 3), m.tensor([0, 1, 2])),
                    "Expected input batch_size (2) to match target batch_size (3)"),
    "batch_before_dtype": (lambda m: (m.ones(2, 3), m.ones(3)), "Expected input batch_size"),
    "int32_target": (lambda m: (m.ones(2, 3), m.tensor([0, 1], dtype=m.int32)),
                     "expected target dtype to be Long or Byte, but got Int"),
    "bool_target": (lambda m: (m.ones(2, 3), m.tensor([True, False])),
                    "expected target dtype to be Long or Byte, but got Bool"),
    "float_target": (lambda m: (m.ones(2, 3), m.ones(2)),
                     "expected target dtype to be Long or Byte, but got Float"),
    "2d_target": (lambda m: (m.ones(2, 3), m.zeros(2, 1, dtype=m.int64)),
                  "0D or 1D target tensor expected"),
    "int_probabilities": (lambda m: (m.ones(2, 3), m.zeros(2, 3, dtype=m.int64)),
                          "Expected floating point type for target with class probabilities"),
    "1d_input_two_targets": (lambda m: (m.ones(3), m.tensor([1, 2])),
                             "For 1D input, 1D target must have size 1"),
    "1d_input": (lambda m: (m.ones(3), m.tensor(1)), None),
    "1d_input_one_target": (lambda m: (m.ones(3), m.tensor([1])), None),
    "int_input": (lambda m: (m.ones(2, 3, dtype=m.int64), m.tensor([0, 1])),
                  "not implemented for 'Long'"),
    "empty_batch": (lambda m: (m.ones(0, 3), m.zeros(0, dtype=m.int64)), None),
}


@pytest.mark.parametrize("name", list(CE))
def test_cross_entropy_checks(name: str) -> None:
    make, phrase = CE[name]
    like_torch(lambda m: m.nn.functional.cross_entropy(*make(m), reduction="sum"), phrase,
               rtol=1e-6)


def test_cross_entropy_bad_reduction() -> None:
    like_torch(lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 1]),
                                                       reduction="avg"),
               "avg is not a valid value for reduction")


@pytest.mark.parametrize("dim, phrase", [
    (2, "Dimension out of range (expected to be in range of [-1, 0], but got 2)"),
    (-2, "Dimension out of range (expected to be in range of [-1, 0], but got -2)"),
    (1.0, "must be int, not float"),
])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_dim_checks(op: str, dim: Any, phrase: str) -> None:
    like_torch(lambda m: getattr(m.ones(3), op)(dim=dim), phrase)
    like_torch(lambda m: getattr(m.nn.functional, op)(m.tensor(1.0), dim=dim), phrase)
