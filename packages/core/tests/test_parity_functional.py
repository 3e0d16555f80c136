"""``autograd.functional`` (vjp, jvp, jacobian, hessian, hvp, vhp) and graph introspection
(``is_leaf``, ``grad_fn.name()``, ``next_functions``) against PyTorch. Each program is written
once against a library handle ``lib`` (``torch`` or ``retrograd``) and run on both."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as rg

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3))
Y = RNG.standard_normal(3)
S = RNG.standard_normal(())


def t(lib, a, requires_grad=False):
    return lib.tensor(np.asarray(a).tolist(), dtype=lib.float64, requires_grad=requires_grad)


def structure(v):
    """Nested tuples/tensors -> the same nesting of ("T", shape, requires_grad, values)."""
    if isinstance(v, (torch.Tensor, rg.Tensor)):
        return ("T", tuple(v.shape), v.requires_grad, np.asarray(v.detach().tolist()))
    if isinstance(v, tuple):
        return tuple(structure(x) for x in v)
    return v


def assert_same(want, got, path="result"):
    if isinstance(want, tuple) and want and want[0] == "T":
        assert isinstance(got, tuple) and got and got[0] == "T", f"{path}: {got!r}"
        assert got[1] == want[1], f"{path}: shape {got[1]} != {want[1]}"
        assert got[2] == want[2], f"{path}: requires_grad {got[2]} != {want[2]}"
        np.testing.assert_allclose(got[3], want[3], rtol=1e-10, atol=1e-12, err_msg=path)
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{path}: {got!r} vs {want!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            assert_same(w, g, f"{path}[{i}]")
        return
    assert got == want, path


def same(program):
    want = structure(program(torch))
    got = structure(program(rg))
    assert_same(want, got)


def same_error(program, phrase):
    errs = []
    for lib in (torch, rg):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
            program(lib)
        errs.append(info.value)
    want, got = errs
    assert isinstance(got, type(want)), (want, got)
    assert phrase in str(want), want
    assert phrase in str(got), got


# -- the functions -------------------------------------------------------------------------------
def f_single(x):  # one input, one output
    return (x.tanh() * x).sum(dim=0)


def f_multi(x, y):  # two inputs, two outputs
    return (x * y).sin().sum(dim=1) * 2.0, (x.exp() * y).sum()


def f_scalar(x, y):  # two inputs, a scalar output (hessian & co)
    return ((x * y).tanh() * x).sum() + (y ** 3).sum()


def f_scalar1(x):
    return (x ** 3).sum() + (x.sin() * x).mean()


def f_linear(x, y):  # a linear function: its Hessian is zero (strict mode cases)
    return (x * 2.0).sum() + y.sum()


def f_unused(x, y):  # ignores y
    return (x ** 2).sum()


def F(lib):
    return lib.autograd.functional


# -- vjp -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    same(lambda lib: F(lib).vjp(f_single, t(lib, X), t(lib, [0.3, -1.0, 2.0]),
                                create_graph=create_graph))
    same(lambda lib: F(lib).vjp(f_multi, (t(lib, X), t(lib, Y)),
                                (t(lib, [1.0, -2.0]), t(lib, 0.5)), create_graph=create_graph))
    same(lambda lib: F(lib).vjp(f_scalar, (t(lib, X), t(lib, Y)), create_graph=create_graph))
    same(lambda lib: F(lib).vjp(f_unused, (t(lib, X), t(lib, Y))))


def test_vjp_create_graph_is_differentiable():
    def program(lib):
        x = t(lib, X, requires_grad=True)
        _, g = F(lib).vjp(lambda a: (a ** 3).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g, h

    same(program)


def test_vjp_errors():
    same_error(lambda lib: F(lib).vjp(f_single, t(lib, X)), "The vector v can only be None")
    same_error(lambda lib: F(lib).vjp(f_single, t(lib, X), t(lib, [1.0, 2.0])),
               "v has invalid size: should be")
    same_error(lambda lib: F(lib).vjp(f_multi, (t(lib, X), t(lib, Y)), (t(lib, [1.0, 2.0]),)),
               "v is a tuple of invalid length: should be 2 but got 1")
    same_error(lambda lib: F(lib).vjp(f_single, [1.0, 2.0]),
               "must be either a Tensor or a tuple of Tensors")
    same_error(lambda lib: F(lib).vjp(f_unused, (t(lib, X), t(lib, Y)), strict=True),
               "is independent of input 1")
    same_error(lambda lib: F(lib).vjp(lambda x: x.detach().sum(), t(lib, X), strict=True),
               "Output 0 of the user-provided function does not require gradients")


# -- jvp -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp(create_graph):
    same(lambda lib: F(lib).jvp(f_single, t(lib, X), t(lib, X * 0.5),
                                create_graph=create_graph))
    same(lambda lib: F(lib).jvp(f_multi, (t(lib, X), t(lib, Y)), (t(lib, X[::-1]), t(lib, -Y)),
                                create_graph=create_graph))
    same(lambda lib: F(lib).jvp(lambda a: a.exp() * 3.0, t(lib, 0.7)))  # v may be omitted


def test_jvp_errors():
    same_error(lambda lib: F(lib).jvp(f_single, t(lib, X)), "The vector v can only be None")
    same_error(lambda lib: F(lib).jvp(f_multi, (t(lib, X), t(lib, Y)), (t(lib, X), t(lib, X))),
               "Entry 1 in v has invalid size")


# -- jacobian ------------------------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(create_graph):
    same(lambda lib: F(lib).jacobian(f_single, t(lib, X), create_graph=create_graph))
    same(lambda lib: F(lib).jacobian(f_multi, (t(lib, X), t(lib, Y)), create_graph=create_graph))
    same(lambda lib: F(lib).jacobian(f_scalar, (t(lib, X), t(lib, Y)), create_graph=create_graph))
    same(lambda lib: F(lib).jacobian(lambda a: (a.exp(), a * a), t(lib, Y),
                                     create_graph=create_graph))
    same(lambda lib: F(lib).jacobian(f_unused, (t(lib, X), t(lib, Y))))
    same(lambda lib: F(lib).jacobian(lambda a: a.sum(), t(lib, S)))  # 0-d input and output


def test_jacobian_keeps_the_graph_to_the_inputs():
    def program(lib):
        x = t(lib, Y, requires_grad=True)
        j = F(lib).jacobian(lambda a: a.exp() * a, x, create_graph=True)
        j.sum().backward()
        return j, x.grad

    same(program)


def test_jacobian_errors_and_options():
    same_error(lambda lib: F(lib).jacobian(f_unused, (t(lib, X), t(lib, Y)), strict=True),
               "Output 0 of the user-provided function is independent of input 1")
    same_error(lambda lib: F(lib).jacobian(f_linear, (t(lib, X), t(lib, Y)), strict=True,
                                           create_graph=True),
               "The jacobian of the user-provided function is independent of input 0")
    same_error(lambda lib: F(lib).jacobian(f_single, t(lib, X), strategy="sideways"),
               'Expected strategy to be either "forward-mode" or "reverse-mode"')
    same_error(lambda lib: F(lib).jacobian(f_single, t(lib, X), strategy="forward-mode"),
               "only implemented for `vectorize=True`")
    same_error(lambda lib: F(lib).jacobian(f_single, t(lib, X), strategy="forward-mode",
                                           create_graph=True),
               '`create_graph=True` and `strategy="forward-mode"` are not supported together')
    same_error(lambda lib: F(lib).jacobian(f_single, t(lib, X), vectorize=True, strict=True),
               "`strict=True` and `vectorized=True` are not supported together")
    with pytest.raises(NotImplementedError, match="vmap"):  # torch has vmap; retrograd not
        rg.autograd.functional.jacobian(f_single, t(rg, X), vectorize=True)


# -- hessian, hvp, vhp -------------------------------------------------------------------------
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian(create_graph):
    same(lambda lib: F(lib).hessian(f_scalar1, t(lib, Y), create_graph=create_graph))
    same(lambda lib: F(lib).hessian(f_scalar, (t(lib, X), t(lib, Y)), create_graph=create_graph))
    same(lambda lib: F(lib).hessian(f_linear, (t(lib, X), t(lib, Y))))


def test_hessian_errors():
    same_error(lambda lib: F(lib).hessian(f_single, t(lib, X)),
               "should contain a single element")
    same_error(lambda lib: F(lib).hessian(f_multi, (t(lib, X), t(lib, Y))),
               "The function given to hessian should return a single Tensor")
    same_error(lambda lib: F(lib).hessian(f_linear, (t(lib, X), t(lib, Y)), strict=True),
               "the jacobian of the user-provided function with respect to input 0 is "
               "independent of the input")


@pytest.mark.parametrize("fn_name", ["hvp", "vhp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hvp_vhp(fn_name, create_graph):
    same(lambda lib: getattr(F(lib), fn_name)(f_scalar1, t(lib, Y), t(lib, Y[::-1]),
                                              create_graph=create_graph))
    same(lambda lib: getattr(F(lib), fn_name)(f_scalar, (t(lib, X), t(lib, Y)),
                                              (t(lib, -X), t(lib, Y * 2)),
                                              create_graph=create_graph))
    same(lambda lib: getattr(F(lib), fn_name)(lambda a: a.exp() * a, t(lib, 0.3)))


@pytest.mark.parametrize("fn_name", ["hvp", "vhp"])
def test_hvp_vhp_errors(fn_name):
    same_error(lambda lib: getattr(F(lib), fn_name)(f_multi, (t(lib, X), t(lib, Y)),
                                                    (t(lib, X), t(lib, Y))),
               f"The function given to {fn_name} should return a single Tensor")
    same_error(lambda lib: getattr(F(lib), fn_name)(f_single, t(lib, X), t(lib, X)),
               f"The Tensor returned by the function given to {fn_name} should contain a single")
    same_error(lambda lib: getattr(F(lib), fn_name)(f_scalar1, t(lib, Y)),
               "The vector v can only be None")
    same_error(lambda lib: getattr(F(lib), fn_name)(f_linear, (t(lib, X), t(lib, Y)),
                                                    (t(lib, X), t(lib, Y)), strict=True),
               "is independent of the input")


def test_results_do_not_require_grad_without_create_graph():
    def program(lib):
        x = t(lib, Y, requires_grad=True)
        out, v = F(lib).vjp(lambda a: (a * a).sum(), x)
        h = F(lib).hessian(lambda a: (a ** 3).sum(), x)
        return out.requires_grad, v.requires_grad, h.requires_grad, x.grad is None

    assert program(torch) == program(rg) == (False, False, False, True)


# -- graph introspection ----------------------------------------------------------------------------
def graph_of(fn):
    """grad_fn names and next_functions, recursively (AccumulateGrad under its class name:
    PyTorch's ``name()`` says ``torch::autograd::AccumulateGrad``)."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return (name, tuple(None if f is None else (graph_of(f), nr) for f, nr in fn.next_functions))


GRAPHS = {
    "mul_sum_dim": lambda lib, x, y: (x * 2).sum(dim=0),
    "mul_add": lambda lib, x, y: x * y + x,
    "div_sub": lambda lib, x, y: x / y - y,
    "unary_chain": lambda lib, x, y: x.exp().tanh().sigmoid().relu().sin().cos(),
    "abs_log_sqrt": lambda lib, x, y: x.abs().log() + x.abs().sqrt(),
    "neg": lambda lib, x, y: -x,
    "mean_dim": lambda lib, x, y: x.mean(dim=1, keepdim=True),
    "amax_logsumexp": lambda lib, x, y: x.amax(dim=1) + x.logsumexp(dim=1),
    "permute_matmul": lambda lib, x, y: x @ y.T,
    "cat_stack": lambda lib, x, y: lib.stack([lib.cat([x, y]), lib.cat([y, x])]),
    "clamp_where_maximum": lambda lib, x, y: lib.where(x > 0, x.clamp(-0.5, 0.5),
                                                       lib.maximum(x, y)),
    "expand": lambda lib, x, y: y.sum(dim=0, keepdim=True).expand(2, 3),
    "clone_to": lambda lib, x, y: x.clone().to(lib.float32),
    "softmax": lambda lib, x, y: lib.softmax(x, dim=1) + lib.log_softmax(y, dim=1),
    "inplace": lambda lib, x, y: (x * 1).add_(y).mul_(y),
    "scalar_sub_div": lambda lib, x, y: (x - 2) / 2 + (2 + x),
    "full_sum": lambda lib, x, y: (x * 2).sum(),
    "full_mean": lambda lib, x, y: x.mean(),
    "pow_scalar": lambda lib, x, y: x ** 2,
    "pow_tensor": lambda lib, x, y: x.abs() ** y,
    "reshape": lambda lib, x, y: x.reshape(6),
    "reshape_copy": lambda lib, x, y: x.T.reshape(6),
    "view": lambda lib, x, y: x.view(3, 2),
    "flatten": lambda lib, x, y: x.flatten(),
    "transpose": lambda lib, x, y: x.transpose(0, 1),
    "unsqueeze": lambda lib, x, y: x.unsqueeze(0),
    "squeeze": lambda lib, x, y: x[:1].squeeze(0),
    "select": lambda lib, x, y: x[0],
    "slice": lambda lib, x, y: x[:, 1:],
    "select_slice": lambda lib, x, y: x[0, 1:],
    "minimum": lambda lib, x, y: lib.minimum(x, y),
    "rsub": lambda lib, x, y: 2 - x,
    "rdiv": lambda lib, x, y: 2 / x,
    "matvec": lambda lib, x, y: x @ y[0],
    "mse_loss": lambda lib, x, y: lib.nn.functional.mse_loss(x, y),
}

# Known name/structure differences (retrograd, PyTorch), listed in docs/semantics.md: the
# fused kernels key on these nodes.
MISMATCHES = {
    "linear": lambda lib, x, y: lib.nn.functional.linear(x, y, y[:, 0]),  # LinearBackward0
    # (x, W, b) vs AddmmBackward0 (b, x, TBackward0(W))
    "cross_entropy": lambda lib, x, y: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 2])),  # CrossEntropyLossBackward0 vs NllLossBackward0(LogSoftmax)
}


def both_graphs(program):
    out = []
    for lib in (torch, rg):
        x, y = t(lib, X, True), t(lib, X[::-1] + 0.5, True)
        out.append(graph_of(program(lib, x, y).grad_fn))
    return out


@pytest.mark.parametrize("case", GRAPHS, ids=list(GRAPHS))
def test_node_names_and_next_functions_match_torch(case):
    want, got = both_graphs(GRAPHS[case])
    assert got == want


@pytest.mark.parametrize("case", MISMATCHES, ids=list(MISMATCHES))
@pytest.mark.xfail(strict=True, reason="known node-name/structure difference from PyTorch; "
                   "once fixed (XPASS), move the case to GRAPHS")
def test_known_node_name_mismatches(case):
    want, got = both_graphs(MISMATCHES[case])
    assert got == want


def test_is_leaf_and_accumulate_grad():
    def program(lib):
        x = t(lib, X, True)
        c = t(lib, X)
        y = x * 2
        d = x.detach()
        acc = y.grad_fn.next_functions[0][0]
        return (x.is_leaf, c.is_leaf, y.is_leaf, d.is_leaf, (c * 2).is_leaf,
                type(acc).__name__, acc.variable is x, acc.next_functions)

    assert program(torch) == program(rg)


def test_custom_function_node_name():
    def program(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                return g

        x = t(lib, Y, True)
        return graph_of(Cube.apply(x * 2).grad_fn)

    assert program(torch) == program(rg)
