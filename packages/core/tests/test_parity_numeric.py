"""The numeric extras against PyTorch (``torch_parity.same``): logical and bitwise ops and
their operators, floor division, ``logit``, ``fmax``/``fmin``, ``copysign``,
``deg2rad``/``rad2deg``, ``float_power``, ``heaviside``, ``isneginf``/``isposinf`` and the
synonyms -- values, dtypes, gradients (and double backward), node names, errors."""

from __future__ import annotations

import pytest
from torch_parity import same

X = [1.5, -2.0, 3.0, 0.0, -0.5]
Y = [0.5, 4.0, -1.0, 2.0, -0.5]
NAN = float("nan")
INF = float("inf")


def _x(lib, data=X, dtype=None, grad=False):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=grad)


def grads(lib, fn, *tensors):
    """Value, node name, first and second gradients of ``fn(*tensors)``."""
    out = fn(*tensors)
    first = lib.autograd.grad((out * out).sum(), tensors, create_graph=True, allow_unused=True)
    used = [g for g in first if g is not None]
    second = lib.autograd.grad(sum((g * g).sum() for g in used), tensors, allow_unused=True)
    return out, out.grad_fn.name(), first, second


# -- logical and bitwise ------------------------------------------------------------------
LOGICAL = {
    "and/or/xor/not": lambda lib: (lib.logical_or(_x(lib), _x(lib, Y) > 0),
                                   lib.logical_xor(_x(lib) > 0, _x(lib, Y) > 0),
                                   lib.logical_not(_x(lib)), _x(lib).logical_and(_x(lib, Y)),
                                   _x(lib).logical_or(_x(lib, Y)), _x(lib).logical_not()),
    "operators on bools": lambda lib: ((_x(lib) > 0) & (_x(lib, Y) > 0),
                                       (_x(lib) > 0) | (_x(lib, Y) > 0),
                                       (_x(lib) > 0) ^ (_x(lib, Y) > 0), ~(_x(lib) > 0)),
    "operators on ints": lambda lib: (lib.tensor([3, 5, -2]) & 6, lib.tensor([3, 5, -2]) | 8,
                                      lib.tensor([3, 5, -2]) ^ lib.tensor([1, 1, 1]),
                                      ~lib.tensor([3, 5, -2]), 1 & lib.tensor([3, 2]),
                                      6 | lib.tensor([1]), 7 ^ lib.tensor([2])),
    "bitwise functions": lambda lib: (lib.bitwise_and(lib.tensor([12, 10]), lib.tensor([10])),
                                      lib.bitwise_or(lib.tensor([True, False]), True),
                                      lib.bitwise_xor(lib.tensor([5]), 3),
                                      lib.bitwise_not(lib.tensor([True, False])),
                                      lib.tensor([4, 1]).bitwise_and(5)),
    "broadcast": lambda lib: lib.logical_or(_x(lib).reshape(5, 1) > 0, _x(lib, Y) > 0),
    "mixed int and bool": lambda lib: lib.tensor([True, False]) & lib.tensor([3, 2]),
}


@pytest.mark.parametrize("case", sorted(LOGICAL))
def test_logical_and_bitwise(case):
    same(LOGICAL[case])


def test_logical_and_bitwise_errors():
    same(lambda lib: lib.bitwise_and(lib.ones(2), 1), "not implemented for 'Float'")
    same(lambda lib: lib.bitwise_not(lib.ones(2)), "not implemented for 'Float'")
    same(lambda lib: lib.ones(2) | lib.ones(2), "not implemented for 'Float'")
    same(lambda lib: lib.logical_or(lib.ones(2), 1), "must be Tensor")
    same(lambda lib: lib.logical_or(lib.ones(2), lib.ones(3)), "must match the size")


def test_logical_results_have_no_history():
    same(lambda lib: (lib.logical_not(_x(lib, grad=True)).grad_fn,
                      lib.logical_or(_x(lib, grad=True), _x(lib)).requires_grad))


# -- floor division ---------------------------------------------------------------------------
FLOOR = {
    "float by number": lambda lib: _x(lib) // 2,
    "float by tensor": lambda lib: lib.floor_divide(_x(lib), _x(lib, Y)),
    "by zero (float)": lambda lib: lib.tensor([5.0, -5.0, 0.0]) // 0,
    "ints": lambda lib: lib.tensor([7, -7, 6]) // lib.tensor([2, 2, -4]),
    "number by tensor": lambda lib: (7 // lib.tensor([2, 3]), 7.5 // lib.tensor([2, 3]),
                                     lib.floor_divide(7, lib.tensor([2, 3]))),
    "int by float": lambda lib: lib.tensor([7, -7]) // 2.0,
    "method": lambda lib: _x(lib).floor_divide(0.75),
}


@pytest.mark.parametrize("case", sorted(FLOOR))
def test_floor_divide(case):
    same(FLOOR[case])


def test_floor_divide_records_a_node_that_refuses_backward():
    same(lambda lib: (_x(lib, grad=True) // 2).grad_fn.name())
    same(lambda lib: (_x(lib, grad=True) // 2).sum().backward(),
         "derivative for aten::floor_divide is not implemented")
    same(lambda lib: lib.tensor([5, 3]) // 0, "ZeroDivisionError")
    same(lambda lib: lib.tensor([True]) // lib.tensor([True]), "not implemented for 'Bool'")


# -- differentiable extras --------------------------------------------------------------------
P = [0.2, 0.5, 0.9, 0.03, 0.99]

DIFFERENTIABLE = {
    "logit": lambda lib: grads(lib, lambda p: lib.logit(p), _x(lib, P, grad=True)),
    "logit eps": lambda lib: grads(lib, lambda p: p.logit(eps=0.05), _x(lib, P, grad=True)),
    "logit outside [0, 1]": lambda lib: grads(lib, lambda p: lib.logit(p * 3 - 1),
                                              _x(lib, P, grad=True)),
    "fmax": lambda lib: grads(lib, lib.fmax, _x(lib, grad=True), _x(lib, Y, grad=True)),
    "fmin": lambda lib: grads(lib, lib.fmin, _x(lib, grad=True), _x(lib, Y, grad=True)),
    "fmax broadcast": lambda lib: grads(lib, lib.fmax, _x(lib, grad=True).reshape(5, 1),
                                        _x(lib, Y[:3], grad=True)),
    "fmax float32 and float64": lambda lib: grads(
        lib, lib.fmax, _x(lib, dtype=lib.float32, grad=True), _x(lib, Y, grad=True)),
    "copysign tensor": lambda lib: grads(lib, lib.copysign, _x(lib, grad=True),
                                         _x(lib, Y, grad=True)),
    "copysign number": lambda lib: grads(lib, lambda a: a.copysign(-2.0), _x(lib, grad=True)),
    "deg2rad": lambda lib: grads(lib, lib.deg2rad, _x(lib, grad=True)),
    "rad2deg": lambda lib: grads(lib, lambda a: a.rad2deg(), _x(lib, grad=True)),
    "float_power": lambda lib: grads(lib, lambda a: lib.float_power(a, 3),
                                     _x(lib, dtype=lib.float32, grad=True)),
    "float_power tensor exponent": lambda lib: grads(
        lib, lambda a, b: a.abs().float_power(b), _x(lib, grad=True), _x(lib, Y, grad=True)),
}


@pytest.mark.parametrize("case", sorted(DIFFERENTIABLE))
def test_differentiable_extras(case):
    same(DIFFERENTIABLE[case])


def test_nan_and_ties():
    same(lambda lib: (lib.fmax(lib.tensor([NAN, 1.0, NAN]), lib.tensor([2.0, NAN, NAN])),
                      lib.fmin(lib.tensor([NAN, 1.0, 3.0]), lib.tensor([2.0, NAN, 3.0]))))

    def ties(lib):
        a = lib.tensor([1.0, 2.0, NAN], requires_grad=True)
        b = lib.tensor([1.0, NAN, 3.0], requires_grad=True)
        lib.fmax(a, b).sum().backward()
        return a.grad, b.grad

    same(ties)
    same(lambda lib: lib.copysign(lib.tensor([1.0, 2.0, 0.0]), lib.tensor([-0.0, 0.0, -1.0])))


def test_integer_and_bool_inputs():
    same(lambda lib: (lib.deg2rad(lib.tensor([180, 90])), lib.rad2deg(lib.tensor([True])),
                      lib.logit(lib.tensor([1, 0])), lib.copysign(lib.tensor([1, 2]), -1),
                      lib.fmax(lib.tensor([1, 2]), lib.tensor([3.0, 0.0])),
                      lib.fmax(lib.tensor([True, False]), lib.tensor([False, False])),
                      lib.float_power(lib.tensor([2]), 2), lib.float_power(2, lib.tensor([3]))))


def test_heaviside_and_infinities():
    same(lambda lib: lib.heaviside(_x(lib), lib.tensor([0.5], dtype=lib.float64)))
    same(lambda lib: lib.heaviside(lib.tensor([1, 0, -3]), lib.tensor([7])))
    same(lambda lib: lib.heaviside(lib.tensor([1, 0]), lib.tensor([1.0])),
         "different dtypes")
    same(lambda lib: lib.heaviside(_x(lib, grad=True), _x(lib)).sum().backward(),
         "derivative for aten::heaviside is not implemented")
    same(lambda lib: (lib.isneginf(lib.tensor([-INF, INF, NAN, 1.0])),
                      lib.isposinf(lib.tensor([-INF, INF, NAN, 1.0])),
                      lib.isneginf(lib.tensor([1, 0])), lib.tensor([INF]).isposinf()))


def test_synonyms():
    def program(lib):
        a, b = _x(lib, grad=True), _x(lib, Y, grad=True)
        outs = (lib.multiply(a, b), lib.subtract(a, b, alpha=2), lib.negative(a),
                lib.absolute(b), lib.true_divide(a, b), a.multiply(2.0), b.subtract(a),
                lib.ger(a, b))
        total = sum(o.sum() for o in outs)
        total.backward()
        cmp = (lib.greater(a, b), lib.greater_equal(a, b), lib.less(a, b),
               lib.less_equal(a, b), lib.not_equal(a, b), a.greater(0))
        return [o.grad_fn.name() for o in outs], a.grad, b.grad, cmp

    same(program)
