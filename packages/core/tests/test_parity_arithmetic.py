"""The arithmetic ops (hypot, fmod, remainder, lerp, addcmul, addcdiv, logaddexp, xlogy, erfc,
sgn, round, nan_to_num, clamp with tensor bounds, clamp_min, clamp_max, clip) and their
in-place forms against PyTorch: values, dtypes, gradients, double backward, node names,
errors (class and key phrase). Each program is written once against ``lib``."""

from __future__ import annotations

import math

import pytest
from torch_parity import same

A = [[1.5, -2.25, 3.0], [0.5, 4.0, -1.75]]
B = [[0.75, 1.25, -2.5], [2.0, -0.5, 1.5]]
C = [[0.3, 0.6, -0.2], [1.2, -0.4, 0.9]]
INF = math.inf
NAN = math.nan


def leaf(lib, data=A, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


def grads_and_second(lib, out_of, *inputs):
    """The output, its grad_fn name, the first gradients (create_graph) and the gradients
    of the sum of their squares plus the output (a double backward)."""
    out = out_of()
    w = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) * 0.25 + 1.0
    loss = (out * w).sum()
    firsts = lib.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in firsts if g is not None) + (out * out).sum()
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return {"out": out, "name": out.grad_fn.name(), "first": firsts, "second": second}


# -- values, gradients, double backward, node names --------------------------------------------
DIFF = {
    "hypot": (lambda lib, a, b: lib.hypot(a, b), (A, B)),
    "hypot_method_broadcast": (lambda lib, a, b: a.hypot(b), (A, B[0])),
    "fmod": (lambda lib, a, b: lib.fmod(a, b), (A, B)),
    "fmod_scalar": (lambda lib, a: lib.fmod(a, 1.5), (A,)),
    "fmod_negative_scalar": (lambda lib, a: a.fmod(-0.7), (A,)),
    "fmod_broadcast": (lambda lib, a, b: lib.fmod(a, b), (A, [[0.7], [-1.1]])),
    "remainder": (lambda lib, a, b: lib.remainder(a, b), (A, B)),
    "remainder_scalar": (lambda lib, a: a.remainder(-0.7), (A,)),
    "mod_operator": (lambda lib, a, b: a % b + a % 0.6, (A, B)),
    "remainder_broadcast": (lambda lib, a, b: lib.remainder(a, b), (A[0], B)),
    "lerp_scalar": (lambda lib, a, b: lib.lerp(a, b, 0.3), (A, B)),
    "lerp_scalar_big": (lambda lib, a, b: a.lerp(b, 0.8), (A, B)),
    "lerp_scalar_negative": (lambda lib, a, b: a.lerp(b, -1.5), (A, B)),
    "lerp_tensor": (lambda lib, a, b, w: lib.lerp(a, b, w), (A, B, C)),
    "lerp_tensor_broadcast": (lambda lib, a, b, w: lib.lerp(a, b, w), (A, B[1], [[0.2], [0.7]])),
    "lerp_0d_weight": (lambda lib, a, b, w: lib.lerp(a, b, w), (A, B, 0.6)),
    "addcmul": (lambda lib, s, a, b: lib.addcmul(s, a, b), (A, B, C)),
    "addcmul_value": (lambda lib, s, a, b: s.addcmul(a, b, value=-2.5), (A, B, C)),
    "addcmul_broadcast": (lambda lib, s, a, b: lib.addcmul(s, a, b, value=0.5),
                          (A[0], [[1.0], [2.0]], C)),
    "addcdiv": (lambda lib, s, a, b: lib.addcdiv(s, a, b), (A, B, C)),
    "addcdiv_value": (lambda lib, s, a, b: s.addcdiv(a, b, value=3), (A, B, C)),
    "addcdiv_broadcast": (lambda lib, s, a, b: lib.addcdiv(s, a, b, value=-0.5),
                          (A, B[0], [[0.5], [-2.0]])),
    "logaddexp": (lambda lib, a, b: lib.logaddexp(a, b), (A, B)),
    "logaddexp_broadcast": (lambda lib, a, b: a.logaddexp(b), (A, [[1.0], [-3.0]])),
    "xlogy": (lambda lib, a, b: lib.xlogy(a, b), (A, [[0.5, 1.5, 2.5], [3.0, 0.25, 4.0]])),
    "xlogy_scalar_other": (lambda lib, a: lib.xlogy(a, 2.5), (A,)),
    "xlogy_scalar_self": (lambda lib, b: lib.xlogy(1.5, b), ([[0.5, 1.5, 2.5]],)),
    "xlogy_method": (lambda lib, a, b: a.xlogy(b), (A, [0.5, 1.5, 2.5])),
    "erfc": (lambda lib, a: lib.erfc(a), (A,)),
    "erfc_method": (lambda lib, a: a.erfc(), ([0.1, 2.5, -0.3, 5.0],)),
    "sgn": (lambda lib, a: lib.sgn(a) * a, (A,)),
    "round": (lambda lib, a: lib.round(a) + a, (A,)),
    "round_decimals": (lambda lib, a: a.round(decimals=1) * a, ([0.123, 2.456, -1.789],)),
    "nan_to_num": (lambda lib, a: lib.nan_to_num(a * 2), (A,)),
    "clamp_tensor_min": (lambda lib, a, lo: lib.clamp(a, min=lo), (A, B)),
    "clamp_tensor_max": (lambda lib, a, hi: lib.clamp(a, max=hi), (A, B)),
    "clamp_tensor_both": (lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
                          (A, [[0.0, -3.0, 0.5], [1.0, 5.0, -2.0]],
                           [[1.0, -1.0, 4.0], [0.8, 6.0, -1.0]])),
    "clamp_tensor_crossed": (lambda lib, a, lo, hi: a.clamp(lo, hi), (A, B, C)),
    "clamp_tensor_broadcast": (lambda lib, a, lo, hi: lib.clamp(a, lo, hi),
                               (A, [[-1.0], [0.0]], [2.0, 1.0, 0.5])),
    "clip_tensor": (lambda lib, a, lo, hi: lib.clip(a, lo, hi), (A, B, [[3.0, 3.0, 3.0]])),
    "clip_method_tensor": (lambda lib, a, lo: a.clip(min=lo), (A, B)),
    "clip_scalar": (lambda lib, a: lib.clip(a, -1.0, 2.0), (A,)),
    "clamp_min_scalar": (lambda lib, a: lib.clamp_min(a, 0.7), (A,)),
    "clamp_min_tensor": (lambda lib, a, lo: a.clamp_min(lo), (A, B)),
    "clamp_max_scalar": (lambda lib, a: a.clamp_max(0.7), (A,)),
    "clamp_max_tensor": (lambda lib, a, hi: lib.clamp_max(a, hi), (A, [[1.0], [0.0]])),
}


@pytest.mark.parametrize("name", sorted(DIFF))
def test_values_grads_and_double_backward(name):
    fn, datas = DIFF[name]

    def program(lib):
        ins = [leaf(lib, d) for d in datas]
        return grads_and_second(lib, lambda: fn(lib, *ins), *ins)

    same(program)


@pytest.mark.parametrize("name", sorted(DIFF))
def test_float32(name):
    fn, datas = DIFF[name]

    def program(lib):
        ins = [leaf(lib, d, lib.float32) for d in datas]
        out = fn(lib, *ins)
        out.sum().backward()
        return out, [t.grad for t in ins]

    same(program, tol=1e-6)


def test_clamp_ties_and_nan_bounds():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0, 4.0, 5.0])
        lo = leaf(lib, [1.0, 2.5, NAN, 4.0, 6.0])
        hi = leaf(lib, [1.0, 2.5, 3.5, 3.0, 7.0])
        out = lib.clamp(x, lo, hi)
        out.sum().backward()
        return out, x.grad, lo.grad, hi.grad

    same(program)


def test_clamp_min_max_ties():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        b = leaf(lib, [1.0, 3.0, 2.0])
        out = lib.clamp_min(x, b) + lib.clamp_max(x, b) * 2
        out.sum().backward()
        return out, x.grad, b.grad

    same(program)


def test_maximum_shaped_0d_bounds_and_promoted_gradients():
    def program(lib):
        x = leaf(lib, A, lib.float32)
        lo = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        hi = lib.tensor([2.0, 1.0, 0.0], dtype=lib.float64, requires_grad=True)
        out = lib.clamp(x, lo, hi)
        out.sum().backward()
        return out, x.grad, lo.grad, hi.grad

    same(program)


def test_lerp_0d_weight_other_dtype():
    def program(lib):
        a = leaf(lib, A, lib.float32)
        b = leaf(lib, B, lib.float32)
        w = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        out = lib.lerp(a, b, w)
        out.sum().backward()
        return out, a.grad, b.grad, w.grad, out.grad_fn.name()

    same(program, tol=1e-6)


def test_promoted_binary_gradients():
    def program(lib):
        a = leaf(lib, A, lib.float32)
        b = leaf(lib, B)
        outs = [lib.hypot(a, b), lib.fmod(a, b), lib.remainder(b, a), lib.logaddexp(a, b),
                lib.xlogy(a, b.abs()), lib.addcmul(a, b, a), lib.addcdiv(b, a, b)]
        sum(o.sum() for o in outs).backward()
        return outs, a.grad, b.grad

    same(program, tol=1e-6)


# -- values and dtypes without gradients --------------------------------------------------------
VALUES = {
    "fmod_int": lambda lib: lib.fmod(lib.tensor([5, -7, 3, -4]), lib.tensor([2, 3, -2, 2])),
    "fmod_int_scalar": lambda lib: lib.fmod(lib.tensor([5, -7, 3]), 2),
    "fmod_int_float_scalar": lambda lib: lib.fmod(lib.tensor([5, -7, 3]), 2.5),
    "fmod_float_zero": lambda lib: lib.fmod(lib.tensor([5.0, -7.0]), 0),
    "fmod_inf": lambda lib: lib.fmod(lib.tensor([5.0, -7.0, INF]), lib.tensor([INF, INF, 2.0])),
    "remainder_int": lambda lib: lib.remainder(lib.tensor([5, -7, 3, -4]),
                                               lib.tensor([2, 3, -2, 2])),
    "remainder_scalar_first": lambda lib: lib.remainder(2, lib.tensor([5, -7, 3])),
    "remainder_float_scalar_first": lambda lib: lib.remainder(2.5, lib.tensor([5, -7, 3])),
    "remainder_int_by_float_zero": lambda lib: lib.remainder(lib.tensor([5, -7]), 0.0),
    "remainder_signs": lambda lib: lib.remainder(lib.tensor([-4.0, 4.0, -3.5, 3.5]),
                                                 lib.tensor([2.0, -2.0, 2.0, -2.0])),
    "remainder_inf": lambda lib: lib.remainder(lib.tensor([5.0, -7.0]), INF),
    "addcmul_int": lambda lib: lib.addcmul(lib.tensor([5, -7, 3]), lib.tensor([5, -7, 3]),
                                           lib.tensor([2, 0, -2]), value=2.5),
    "addcmul_bool_value": lambda lib: lib.addcmul(lib.tensor([1.5]), lib.tensor([2.0]),
                                                  lib.tensor([3.0]), value=True),
    "addcdiv_0d_value": lambda lib: lib.addcdiv(lib.tensor([1.5]), lib.tensor([2.0]),
                                                lib.tensor([3.0]), value=lib.tensor(2.0)),
    "addcdiv_int_float": lambda lib: lib.addcdiv(lib.tensor([1, 2]), lib.tensor([2.0, 3.0]),
                                                 lib.tensor([4, 5])),
    "logaddexp_inf": lambda lib: lib.logaddexp(lib.tensor([INF, -INF, INF, 1.0, 1000.0]),
                                               lib.tensor([INF, -INF, -INF, 1.0, 999.0])),
    "xlogy_int": lambda lib: lib.xlogy(lib.tensor([5, 0, 3]), lib.tensor([2, 0, -2])),
    "xlogy_zero_nan": lambda lib: lib.xlogy(lib.tensor([0.0, 0.0, 1.0, 0.0]),
                                            lib.tensor([NAN, 0.0, NAN, -1.0])),
    "xlogy_number_self": lambda lib: lib.xlogy(2.5, lib.tensor([5, -7, 3])),
    "xlogy_number_other": lambda lib: lib.xlogy(lib.tensor([5, 0, 3]), 2),
    "xlogy_bool": lambda lib: lib.xlogy(True, lib.tensor([1.5, 3.0])),
    "erfc_int": lambda lib: lib.erfc(lib.tensor([5, -7, 3])),
    "erfc_bool": lambda lib: lib.erfc(lib.tensor([True, False])),
    "erfc_range": lambda lib: lib.erfc(lib.tensor([-30.0, -2.0, -0.5, 0.0, 0.5, 1.0, 1.9, 2.0,
                                                   2.1, 3.0, 5.0, 10.0, 26.0, 30.0, INF, -INF,
                                                   NAN], dtype=lib.float64)),
    "erfc_float32": lambda lib: lib.erfc(lib.tensor([0.5, 2.0, 5.0, 9.0])),
    "sgn_values": lambda lib: lib.sgn(lib.tensor([NAN, -0.0, 2.0, -3.0, INF])),
    "sgn_int": lambda lib: lib.sgn(lib.tensor([5, -7, 0])),
    "sgn_bool": lambda lib: lib.sgn(lib.tensor([True, False])),
    "round_halves": lambda lib: lib.round(lib.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999])),
    "round_int": lambda lib: lib.round(lib.tensor([5, -7, 3])),
    "round_decimals": lambda lib: lib.round(lib.tensor([0.5, 1.25, 1.35, -2.675, 12.3456]),
                                            decimals=2),
    "round_negative_decimals": lambda lib: lib.round(lib.tensor([15.0, 25.0, -35.0, 1234.5]),
                                                     decimals=-1),
    "round_decimals_f64": lambda lib: lib.round(lib.tensor([1.23456789, -9.87654321],
                                                           dtype=lib.float64), decimals=3),
    "round_0d": lambda lib: lib.round(lib.tensor(2.5)),
    "nan_to_num_defaults": lambda lib: lib.nan_to_num(lib.tensor([NAN, INF, -INF, 1.5])),
    "nan_to_num_f64": lambda lib: lib.nan_to_num(lib.tensor([NAN, INF, -INF],
                                                            dtype=lib.float64)),
    "nan_to_num_f16": lambda lib: lib.nan_to_num(lib.tensor([NAN, INF, -INF],
                                                            dtype=lib.float16)),
    "nan_to_num_given": lambda lib: lib.nan_to_num(lib.tensor([NAN, INF, -INF]), nan=1.0,
                                                   posinf=2, neginf=-3.5),
    "nan_to_num_int": lambda lib: lib.nan_to_num(lib.tensor([5, -7])),
    "nan_to_num_bool": lambda lib: lib.nan_to_num(lib.tensor([True])),
    "clamp_int_tensor": lambda lib: lib.clamp(lib.tensor([5, -7, 3]), lib.tensor([2, 0, -2])),
    "clamp_int_float_tensor": lambda lib: lib.clamp(lib.tensor([5, -7, 3]),
                                                    min=lib.tensor(1.5)),
    "clamp_bool_tensor": lambda lib: lib.clamp(lib.tensor([True, False]),
                                               lib.tensor([False, True])),
    "clamp_max_int_tensor": lambda lib: lib.clamp_max(lib.tensor([5, -7, 3]),
                                                      lib.tensor(1.5)),
    "clamp_min_int_scalar": lambda lib: lib.clamp_min(lib.tensor([5, -7, 3]), 1.5),
    "clamp_0d": lambda lib: lib.clamp(lib.tensor(2.0), lib.tensor(3.0), lib.tensor(4.0)),
    "empty": lambda lib: [lib.hypot(lib.ones(0), lib.ones(0)), lib.fmod(lib.ones(0, 2), 2),
                          lib.lerp(lib.ones(0), lib.ones(0), 0.5), lib.erfc(lib.ones(0)),
                          lib.clamp(lib.ones(0), lib.ones(0)), lib.round(lib.ones(0))],
    "0d": lambda lib: [lib.hypot(lib.tensor(3.0), lib.tensor(4.0)),
                       lib.remainder(lib.tensor(-3.0), 2), lib.xlogy(lib.tensor(2.0), 3),
                       lib.logaddexp(lib.tensor(1.0, dtype=lib.float64), lib.tensor(2.0))],
    "hypot_int_float": lambda lib: lib.hypot(lib.tensor([3.0, 5.0]), lib.tensor([4, 12])),
    "lerp_values": lambda lib: lib.lerp(lib.tensor([1.0, 2.0]), lib.tensor([3.0, -4.0]),
                                        lib.tensor([0.49, 0.51])),
    "mod_operator": lambda lib: [lib.tensor([5.0, -3.0]) % 2,
                                 lib.tensor([5.0, -3.0]) % lib.tensor([-2.0, 2.0]),
                                 7 % lib.tensor([5, -3])],
    "imod_operator": lambda lib: (lambda t: (t.__imod__(3), t)[1])(lib.tensor([5, -7])),
    "lerp_int_weight_0d": lambda lib: lib.lerp(lib.tensor([1.5, -2.0]), lib.tensor([1.5, 3.0]),
                                               lib.tensor(1)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values(name):
    same(VALUES[name])


# -- errors --------------------------------------------------------------------------------------
ERRORS = {
    "fmod_int_zero": (lambda lib: lib.fmod(lib.tensor([5, -7]), lib.tensor([2, 0])),
                      "ZeroDivisionError"),
    "fmod_int_zero_scalar": (lambda lib: lib.fmod(lib.tensor([5, -7]), 0), "ZeroDivisionError"),
    "remainder_int_zero": (lambda lib: lib.remainder(lib.tensor([5]), lib.tensor(0)),
                           "ZeroDivisionError"),
    "fmod_bool": (lambda lib: lib.fmod(lib.tensor(True), lib.tensor(True)),
                  "not implemented for 'Bool'"),
    "fmod_number_first": (lambda lib: lib.fmod(2, lib.tensor([1.0])),
                          "received an invalid combination of arguments"),
    "remainder_numbers": (lambda lib: lib.remainder(2, 3), None),
    "remainder_number_first_backward": (
        lambda lib: lib.remainder(2.0, leaf(lib, [1.5, 2.5])).sum().backward(),
        "derivative for aten::remainder is not implemented"),
    "hypot_int": (lambda lib: lib.hypot(lib.tensor([1]), lib.tensor([2])),
                  "not implemented for 'Long'"),
    "hypot_number": (lambda lib: lib.hypot(lib.tensor([1.0]), 2), "must be Tensor"),
    "hypot_shapes": (lambda lib: lib.hypot(lib.ones(3), lib.ones(2)),
                     "must match the size of tensor b"),
    "logaddexp_int": (lambda lib: lib.logaddexp(lib.tensor([1]), lib.tensor([2])),
                      "not implemented for 'Long'"),
    "logaddexp_number": (lambda lib: lib.logaddexp(lib.tensor([1.0]), 2), "must be Tensor"),
    "xlogy_numbers": (lambda lib: lib.xlogy(2, 3),
                      "received an invalid combination of arguments"),
    "lerp_end_dtype": (lambda lib: lib.lerp(lib.ones(2), lib.ones(2, dtype=lib.float64), 0.5),
                       "for `end` but got dtype double"),
    "lerp_weight_dtype": (lambda lib: lib.lerp(lib.ones(2), lib.ones(2),
                                               lib.ones(2, dtype=lib.float64)),
                          "for `weight` but got dtype double"),
    "lerp_int": (lambda lib: lib.lerp(lib.tensor([1]), lib.tensor([2]), 0.5),
                 "not implemented for 'Long'"),
    "lerp_shapes": (lambda lib: lib.lerp(lib.ones(3), lib.ones(3), lib.ones(2)),
                    "must match the size of tensor b"),
    "addcdiv_int": (lambda lib: lib.addcdiv(lib.tensor([1.0]), lib.tensor([1]), lib.tensor([2])),
                    "Integer division with addcdiv is no longer supported"),
    "addcmul_tensor_value": (lambda lib: lib.addcmul(lib.ones(2), lib.ones(2), lib.ones(2),
                                                     value=lib.ones(2)),
                             "argument 'value' must be Number, not Tensor"),
    "addcmul_bool": (lambda lib: lib.addcmul(lib.tensor([True]), lib.tensor([True]),
                                             lib.tensor([True])), "not implemented for 'Bool'"),
    "addcmul_shapes": (lambda lib: lib.addcmul(lib.ones(3), lib.ones(2), lib.ones(3)),
                       "must match the size of tensor b"),
    "round_int_decimals": (lambda lib: lib.round(lib.tensor([1]), decimals=1),
                           "not implemented for 'Long'"),
    "round_bool": (lambda lib: lib.round(lib.tensor([True])), "not implemented for 'Bool'"),
    "clamp_mixed_bounds": (lambda lib: lib.clamp(lib.ones(2), min=lib.zeros(2), max=1.0),
                           "received an invalid combination of arguments"),
    "clamp_no_bounds": (lambda lib: lib.clamp(lib.ones(2)),
                        "At least one of 'min' or 'max' must not be None"),
    "clamp_tensor_shapes": (lambda lib: lib.clamp(lib.ones(3), lib.ones(2)),
                            "must match the size of tensor b"),
    "clamp_min_missing": (lambda lib: lib.clamp_min(lib.ones(2)), None),
    "erfc_inplace_int": (lambda lib: lib.tensor([1, 2]).erfc_(),
                         "result type Float can't be cast to the desired output type Long"),
    "xlogy_inplace_int": (lambda lib: lib.tensor([1, 2]).xlogy_(lib.tensor([1.5, 2.0])),
                          "can't be cast to the desired output type Long"),
    "fmod_inplace_int_float": (lambda lib: lib.tensor([1, 2]).fmod_(2.5),
                               "can't be cast to the desired output type Long"),
    "hypot_inplace_int": (lambda lib: lib.tensor([1, 2]).hypot_(lib.tensor([1, 2])),
                          "not implemented for 'Long'"),
    "remainder_inplace_shape": (lambda lib: lib.ones(3).remainder_(lib.ones(2, 3)),
                                "doesn't match the broadcast shape"),
    "addcmul_inplace_shape": (lambda lib: lib.ones(3).addcmul_(lib.ones(3), lib.ones(2, 3)),
                              "doesn't match the broadcast shape"),
    "clamp_inplace_int_float_tensor": (lambda lib: lib.tensor([1, 2]).clamp_(min=lib.ones(2)),
                                       "can't be cast to the desired output type Long"),
    "clamp_min_inplace_leaf": (lambda lib: leaf(lib).clamp_min_(1.0),
                               "a leaf Variable that requires grad"),
    "lerp_inplace_leaf": (lambda lib: leaf(lib).lerp_(leaf(lib), 0.5),
                          "a leaf Variable that requires grad"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    fn, phrase = ERRORS[name]
    same(fn, phrase)


# -- in-place forms ------------------------------------------------------------------------------
INPLACE = {
    "hypot_": lambda lib, x, o: x.hypot_(o),
    "fmod_": lambda lib, x, o: x.fmod_(o),
    "fmod_scalar_": lambda lib, x, o: x.fmod_(0.7),
    "remainder_": lambda lib, x, o: x.remainder_(o),
    "remainder_scalar_": lambda lib, x, o: x.remainder_(-0.7),
    "lerp_": lambda lib, x, o: x.lerp_(o, 0.3),
    "lerp_tensor_": lambda lib, x, o: x.lerp_(o, o * 0.1),
    "addcmul_": lambda lib, x, o: x.addcmul_(o, o, value=0.5),
    "addcdiv_": lambda lib, x, o: x.addcdiv_(o, o + 5, value=2),
    "xlogy_": lambda lib, x, o: x.xlogy_(o.abs()),
    "xlogy_scalar_": lambda lib, x, o: lib.xlogy_(x, 3.0),
    "erfc_": lambda lib, x, o: x.erfc_(),
    "erfc_function_": lambda lib, x, o: lib.erfc_(x),
    "round_": lambda lib, x, o: x.round_(),
    "round_decimals_": lambda lib, x, o: lib.round_(x, decimals=1),
    "nan_to_num_": lambda lib, x, o: x.nan_to_num_(0.0),
    "nan_to_num_function_": lambda lib, x, o: lib.nan_to_num_(x, 1.0, 2.0),
    "clamp_min_": lambda lib, x, o: x.clamp_min_(o),
    "clamp_min_scalar_": lambda lib, x, o: lib.clamp_min_(x, 0.6),
    "clamp_max_": lambda lib, x, o: x.clamp_max_(o),
    "clamp_max_scalar_": lambda lib, x, o: lib.clamp_max_(x, 0.6),
    "clamp_tensor_": lambda lib, x, o: x.clamp_(o, o + 1),
    "clamp_tensor_min_": lambda lib, x, o: lib.clamp_(x, min=o),
    "clip_tensor_": lambda lib, x, o: x.clip_(max=o),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_recorded(name):
    """On a non-leaf: the values, the version, the node and the gradients to both leaves."""
    fn = INPLACE[name]

    def program(lib):
        a, o = leaf(lib), leaf(lib, B)
        x = a * 1.5
        before = x._version
        res = fn(lib, x, o)
        assert res is x
        name = x.grad_fn.name()
        (x * lib.tensor(C, dtype=lib.float64)).sum().backward()
        return x, x._version - before, name, a.grad, o.grad

    same(program)


@pytest.mark.parametrize("name", sorted(INPLACE) + ["sgn_"])
def test_inplace_no_grad(name):
    fn = INPLACE.get(name, lambda lib, x, o: x.sgn_())

    def program(lib):
        x = lib.tensor(A)
        o = lib.tensor(B)
        res = fn(lib, x, o)
        return res is x, x, x._version

    same(program, tol=1e-6)


def test_inplace_saved_input_changed():
    def program(lib):
        a = leaf(lib)
        b = leaf(lib, B)
        x = a * 1.0
        y = lib.hypot(x, b)
        x.fmod_(2.0)
        y.sum().backward()

    same(program, "modified by an inplace operation")


def test_inplace_through_view():
    def program(lib):
        a, o = leaf(lib), leaf(lib, B[0])
        x = a * 1.0
        x[0].lerp_(o, 0.25)
        x[1].clamp_min_(o)
        x.sum().backward()
        return x, a.grad, o.grad

    same(program)


def test_out_keyword():
    def program(lib):
        out = lib.empty(2, 3, dtype=lib.float64)
        a = lib.tensor(A, dtype=lib.float64)
        b = lib.tensor(B, dtype=lib.float64)
        r1 = lib.hypot(a, b, out=out).clone()
        r2 = lib.fmod(a, b, out=out).clone()
        r3 = lib.xlogy(a, b.abs(), out=out).clone()
        r4 = lib.lerp(a, b, 0.5, out=out).clone()
        return r1, r2, r3, r4, out

    same(program)


def test_out_keyword_refused_with_grad():
    def program(lib):
        return lib.logaddexp(leaf(lib), leaf(lib, B), out=lib.empty(2, 3, dtype=lib.float64))

    same(program, "don't support automatic differentiation")


def test_functions_and_methods_exist():
    import torch

    import retrograd as rg

    for name in ("hypot", "fmod", "remainder", "lerp", "addcmul", "addcdiv", "logaddexp",
                 "xlogy", "erfc", "sgn", "round", "nan_to_num", "clamp_min", "clamp_max",
                 "clip", "xlogy_", "erfc_", "round_", "nan_to_num_", "clamp_min_",
                 "clamp_max_", "clip_", "clamp_"):
        assert hasattr(torch, name) and hasattr(rg, name), name
    for name in ("hypot_", "fmod_", "remainder_", "lerp_", "addcmul_", "addcdiv_", "sgn_",
                 "hypot", "clamp_min", "clamp_max", "clip", "round_", "nan_to_num_"):
        assert hasattr(torch.Tensor, name) and hasattr(rg.Tensor, name), name
    for name in ("softplus", "silu", "gelu", "leaky_relu", "elu"):
        assert name in rg.ops.registry()


def test_activations_registered_and_node_names():
    def program(lib):
        F = lib.nn.functional
        x = leaf(lib)
        outs = [F.softplus(x, beta=2.0, threshold=2.5), F.silu(x),
                F.gelu(x, approximate="tanh"), F.gelu(x), F.leaky_relu(x, 0.2),
                F.elu(x, alpha=0.5)]
        first = lib.autograd.grad(sum(o.sum() for o in outs), x, create_graph=True)[0]
        second = lib.autograd.grad((first * first).sum(), x)[0]
        return [o.grad_fn.name() for o in outs], outs, first, second

    same(program)
