"""The activations (``mish``, ``selu``, ``hardtanh``, ``relu6``, ``logsigmoid``) and the unary
elementwise ops ``exp2``, ``log2``, ``log10``, ``isnan``, ``isinf``, ``isfinite`` against
PyTorch: values, dtypes, gradients, double backward, node names, in-place forms, kinks and
errors. Each program is written once against a library handle ``lib``."""

from __future__ import annotations

import pytest
from torch_parity import same

XS = [-7.0, -6.0, -1.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0, 6.0, 7.5]
ACTS = {
    "mish": lambda F, x: F.mish(x),
    "selu": lambda F, x: F.selu(x),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh(-2, 3)": lambda F, x: F.hardtanh(x, -2.0, 3.0),
    "hardtanh(min_val=max_val)": lambda F, x: F.hardtanh(x, min_val=1.0, max_val=1.0),
    "relu6": lambda F, x: F.relu6(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
}


def leaf(lib, data=XS, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=True)


@pytest.mark.parametrize("name", list(ACTS))
def test_values_grads_double_backward(name):
    act = ACTS[name]

    def program(lib):
        x = leaf(lib)
        y = act(lib.nn.functional, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
        return y, y.grad_fn.name(), g, gg

    same(program)


@pytest.mark.parametrize("name", list(ACTS))
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_shapes_and_float32(name, shape):
    act = ACTS[name]

    def program(lib):
        x = (lib.arange(6, dtype=lib.float32) * 1.25 - 3.0).reshape(2, 3)
        if shape == ():
            x = x[1, 1]
        elif shape == (0,):
            x = x.reshape(-1)[:0]
        x.requires_grad_(True)
        y = act(lib.nn.functional, x)
        y.sum().backward()
        return str(y.dtype)[-7:], tuple(y.shape), tuple(x.grad.shape), [round(v, 5) for v in y.reshape(-1).tolist()]

    same(program)


@pytest.mark.parametrize("name", ["mish", "selu", "hardtanh", "relu6"])
def test_inplace(name):
    def program(lib):
        x = leaf(lib)
        y = x * 1
        out = getattr(lib.nn.functional, name)(y, inplace=True)
        (g,) = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
        return out is y, y, y.grad_fn.name(), y._version, g, gg

    same(program)


def test_inplace_no_grad():
    def program(lib):
        F = lib.nn.functional
        outs = []
        for name in ("mish", "selu", "hardtanh", "relu6"):
            y = lib.tensor(XS, dtype=lib.float64)
            getattr(F, name)(y, inplace=True)
            outs.append(y)
        return outs

    same(program)


def test_selu_function_and_large_inputs():
    def program(lib):
        x = lib.tensor([-200.0, -30.0, 30.0, 200.0], requires_grad=True)
        y1, y2 = lib.selu(x), lib.nn.functional.mish(x)
        y3 = lib.nn.functional.logsigmoid(x)
        (y1.sum() + y2.sum() + y3.sum()).backward()
        return y1, y2, y3, x.grad

    same(program)


def test_hardtanh_integers():
    def program(lib):
        F = lib.nn.functional
        a = lib.tensor([1, 2, -3, 9])
        return F.hardtanh(a, -1.5, 1.5), F.relu6(a), F.hardtanh(a.to(lib.int32), -2, 3)

    same(program)


@pytest.mark.parametrize("case,phrase", [
    (lambda lib: lib.nn.functional.hardtanh(lib.ones(2), 2.0, 1.0), "cannot be greater"),
    (lambda lib: lib.nn.functional.hardtanh(lib.ones(2, dtype=lib.bool)), "Bool inputs"),
    (lambda lib: lib.nn.functional.relu6(lib.ones(2, dtype=lib.bool)), "Bool inputs"),
    (lambda lib: lib.nn.functional.mish(lib.ones(2, dtype=lib.int64)), "not implemented for"),
    (lambda lib: lib.selu(lib.ones(2, dtype=lib.int64)), "not implemented for"),
    (lambda lib: lib.nn.functional.logsigmoid(lib.ones(2, dtype=lib.bool)),
     "not implemented for"),
    (lambda lib: lib.nn.functional.mish([1.0]), "must be Tensor"),
])
def test_errors(case, phrase):
    same(case, phrase)


# -- exp2, log2, log10 --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["exp2", "log2", "log10"])
def test_unary_log_exp(name):
    data = [0.25, 0.5, 1.0, 2.0, 3.5, 8.0]

    def program(lib):
        x = leaf(lib, data)
        y = getattr(lib, name)(x)
        m = getattr(x, name)()
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        xi = lib.tensor([1, 2, 4])
        f32 = getattr(lib, name)(lib.tensor(data, dtype=lib.float32))
        return (y, m, y.grad_fn.name(), g, gg, getattr(lib, name)(xi), str(f32.dtype)[-7:],
                getattr(lib, name)(lib.tensor(2.0)), getattr(lib, name)(lib.ones(0)).shape)

    same(program)


def test_log_edges():
    def program(lib):
        x = lib.tensor([0.0, -1.0, float("inf")], dtype=lib.float64)
        return lib.log2(x), lib.log10(x), lib.exp2(lib.tensor([-float("inf"), 1024.0, 3.0]))

    same(program)


# -- isnan, isinf, isfinite ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_predicates(name):
    def program(lib):
        x = lib.tensor([1.0, float("nan"), float("inf"), -float("inf"), 0.0],
                       requires_grad=True)
        y = getattr(lib, name)(x)
        return (y, str(y.dtype)[-4:], y.requires_grad, y.grad_fn, getattr(x, name)(),
                getattr(lib, name)(lib.tensor([1, 2])), getattr(lib, name)(lib.tensor(3.0)),
                getattr(lib, name)(lib.tensor([True])))

    same(program)


def test_predicate_type_error():
    same(lambda lib: lib.isnan([1.0]), "must be Tensor")


# -- ceil, trunc, frac --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ceil", "trunc", "frac"])
def test_rounding(name):
    def program(lib):
        x = leaf(lib, [-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.7])
        y = getattr(lib, name)(x)
        (g,) = lib.autograd.grad((y * x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
        f32 = getattr(x.detach().float(), name)()
        return y, y.grad_fn.name(), g, gg, str(f32.dtype)[-7:], f32, getattr(lib, name)(x[1])

    same(program)


@pytest.mark.parametrize("name", ["ceil", "trunc", "frac"])
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_rounding_integers(name, dtype):
    def program(lib):
        r = getattr(lib, name)(lib.tensor([1, 0, 3]).to(getattr(lib, dtype)))
        return r, str(r.dtype)[-5:]

    same(program, "not implemented for")
