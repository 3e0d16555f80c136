"""``gradcheck`` / ``gradgradcheck`` against PyTorch's: the same verdict (pass, fail, the
exception class and key phrase, the warning) on correct and deliberately wrong functions, in
slow and fast mode. Each program is written once against a library handle ``lib``."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import retrograd as rg

# ``torch.autograd.gradcheck`` the attribute is the function; the module holds the class
TorchGradcheckError = importlib.import_module("torch.autograd.gradcheck").GradcheckError

X = [0.5, -1.2, 2.0]
M = [[0.3, -0.8], [1.1, 0.6], [-0.4, 0.9]]


def t(lib, a, requires_grad=True, dtype=None):
    return lib.tensor(a, dtype=dtype or lib.float64, requires_grad=requires_grad)


def functions(lib):
    """Custom Functions, correct and deliberately wrong, for ``lib``."""
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    class WrongCube(F):  # derivative off by a factor
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2.9 * x * x

    class Shallow(F):  # right first derivative, wrong second (x detached in the backward)
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() * x.detach()

    class NotMulByGrad(F):  # right for nonzero g, nonzero for g == 0
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if float((g * g).sum()) == 0.0:
                return g + 1.0
            return g * 2

    class Noisy(F):  # a non-deterministic backward (reentrancy)
        calls = [0]

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            Noisy.calls[0] += 1
            return g * (2 + 1e-4 * (Noisy.calls[0] % 2))

    class TwoOut(F):  # two outputs, a backward that accepts a missing gradient
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w, (x * x).sum()

        @staticmethod
        def backward(ctx, g1, g2):
            x, w = ctx.saved_tensors
            gx = 0 * x
            gw = 0 * w
            if g1 is not None:
                gx = gx + g1 * w
                gw = gw + g1 * x
            if g2 is not None:
                gx = gx + 2 * x * g2
            return gx, gw

    return {c.__name__: c for c in (Cube, WrongCube, Shallow, NotMulByGrad, Noisy, TwoOut)}


def verdict(lib, check, fn_of, inputs_of, **kwargs):
    """('ok', result) or ('raised', exception), with the warnings raised."""
    fns = functions(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = ("ok", getattr(lib.autograd, check)(fn_of(lib, fns), inputs_of(lib), **kwargs))
        except Exception as exc:  # noqa: BLE001 - compared with torch's
            res = ("raised", exc)
    return res, [str(w.message) for w in caught]


def same_verdict(check, fn_of, inputs_of, phrase=None, **kwargs):
    (want, wwarn) = verdict(torch, check, fn_of, inputs_of, **kwargs)
    (got, gwarn) = verdict(rg, check, fn_of, inputs_of, **kwargs)
    assert got[0] == want[0], f"torch {want}, retrograd {got}"
    if want[0] == "ok":
        assert got[1] == want[1]
    else:
        if isinstance(want[1], TorchGradcheckError):
            assert isinstance(got[1], rg.autograd.GradcheckError), (want[1], got[1])
        else:  # a builtin class: retrograd's may be a subclass (RetrogradError: RuntimeError)
            assert isinstance(got[1], type(want[1])), (want[1], got[1])
        if phrase is not None:
            assert phrase in str(want[1]), want[1]
            assert phrase in str(got[1]), got[1]
    return (want, wwarn), (got, gwarn)


def one(name):
    return lambda lib, fns: fns[name].apply


def x_in(lib):
    return (t(lib, X),)


FAST = [False, True]


@pytest.mark.parametrize("fast_mode", FAST)
def test_correct_function_passes(fast_mode):
    same_verdict("gradcheck", one("Cube"), x_in, fast_mode=fast_mode)
    same_verdict("gradgradcheck", one("Cube"), x_in, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_wrong_derivative_fails(fast_mode):
    (want, _), (got, _) = same_verdict(
        "gradcheck", one("WrongCube"), x_in, fast_mode=fast_mode,
        phrase="Jacobian mismatch for output 0 with respect to input 0")
    assert isinstance(got[1], rg.autograd.GradcheckError)
    assert isinstance(got[1], RuntimeError) and isinstance(want[1], RuntimeError)
    same_verdict("gradcheck", one("WrongCube"), x_in, fast_mode=fast_mode,
                 raise_exception=False)  # both return False


@pytest.mark.parametrize("fast_mode", FAST)
def test_wrong_second_derivative_fails_gradgradcheck(fast_mode):
    same_verdict("gradcheck", one("Shallow"), x_in, fast_mode=fast_mode)
    same_verdict("gradgradcheck", one("Shallow"), x_in, fast_mode=fast_mode,
                 phrase="Jacobian mismatch for output 0 with respect to input 0")
    same_verdict("gradgradcheck", one("Shallow"), x_in, fast_mode=fast_mode,
                 raise_exception=False)


def test_backward_not_multiplied_by_grad_output():
    same_verdict("gradcheck", one("NotMulByGrad"), x_in,
                 phrase="backward not multiplied by grad_output")
    same_verdict("gradcheck", one("NotMulByGrad"), x_in, masked=True,
                 phrase="backward not multiplied by grad_output")


@pytest.mark.parametrize("fast_mode", FAST)
def test_nondeterministic_backward(fast_mode):
    same_verdict("gradcheck", one("Noisy"), x_in, fast_mode=fast_mode,
                 phrase="Backward is not reentrant")
    same_verdict("gradcheck", one("Noisy"), x_in, fast_mode=fast_mode, nondet_tol=1e-3)


@pytest.mark.parametrize("fast_mode", FAST)
def test_several_inputs_and_outputs(fast_mode):
    def inputs(lib):
        return (t(lib, X), t(lib, [1.5, 0.2, -0.7]))

    for check in ("gradcheck", "gradgradcheck"):
        same_verdict(check, one("TwoOut"), inputs, fast_mode=fast_mode)
        same_verdict(check, one("TwoOut"), inputs, fast_mode=fast_mode,
                     check_undefined_grad=False)
        same_verdict(check, lambda lib, fns: lambda a, b: ((a * b).tanh(), (a @ b).exp()),
                     inputs, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", FAST)
def test_ops_programs(fast_mode):
    def program(lib, fns):
        return lambda x, m: (lib.softmax(x @ m, dim=0) * m.sum(dim=0)).sum() + \
            lib.log_softmax(m, dim=1).mean()

    def inputs(lib):
        return (t(lib, [[0.1, 0.4, -0.3]]), t(lib, M))

    for check in ("gradcheck", "gradgradcheck"):
        same_verdict(check, program, inputs, fast_mode=fast_mode)
    same_verdict("gradcheck", lambda lib, fns: lambda x, m: x.exp() @ m, inputs,
                 fast_mode=fast_mode, eps=1e-5, atol=1e-4, rtol=1e-2)


def test_input_that_does_not_require_grad_is_skipped():
    def inputs(lib):
        return (t(lib, X), t(lib, [1.0, 2.0, 3.0], requires_grad=False))

    same_verdict("gradcheck", lambda lib, fns: lambda a, b: a * b.exp(), inputs)
    same_verdict("gradgradcheck", lambda lib, fns: lambda a, b: a * a * b, inputs)


def test_no_input_requires_grad():
    same_verdict("gradcheck", one("Cube"), lambda lib: (t(lib, X, requires_grad=False),),
                 phrase="gradcheck expects at least one input tensor to require gradient")


def test_float32_input_warns():
    (want, wwarn), (got, gwarn) = same_verdict(
        "gradcheck", one("Cube"), lambda lib: (t(lib, X, dtype=lib.float32),),
        eps=1e-3, atol=1e-2, rtol=1e-2)
    phrase = "is not a double precision floating point"
    assert any(phrase in w for w in wwarn) and any(phrase in w for w in gwarn)


def test_stride_zero_input():
    same_verdict("gradcheck", lambda lib, fns: lambda a: a * 2,
                 lambda lib: (t(lib, X).expand(2, 3),),
                 phrase="has a dimension with stride 0")


def test_outputs_that_do_not_require_grad():
    # depends on the input numerically but not differentiably: the numerical gradient is not 0
    same_verdict("gradcheck", lambda lib, fns: lambda a: a.detach() * 2, x_in,
                 phrase="Numerical gradient for function expected to be zero")
    same_verdict("gradcheck", lambda lib, fns: lambda a: a.detach() * 2, x_in, fast_mode=True,
                 phrase="Numerical gradient for function expected to be zero")
    # a constant: nothing to check
    same_verdict("gradcheck", lambda lib, fns: lambda a: lib.ones(3, dtype=lib.float64), x_in)


def test_option_assertions():
    same_verdict("gradcheck", one("Cube"), x_in, check_backward_ad=False,
                 phrase="Expected at least one of check_forward_ad or check_backward_ad")
    same_verdict("gradcheck", one("Cube"), x_in, check_backward_ad=False,
                 check_forward_ad=False, check_batched_grad=True,
                 phrase="Expected at least one of check_forward_ad or check_backward_ad")
    same_verdict("gradgradcheck", one("Cube"), x_in, check_rev_over_rev=False,
                 phrase="Expected at least one of check_fwd_over_rev or check_rev_over_rev")
    same_verdict("gradcheck", one("Cube"), x_in, check_grad_dtypes=True,
                 check_undefined_grad=False, masked=False)


def test_options_that_need_vmap_or_forward_mode():
    """torch runs these (vmap, forward-mode AD); retrograd has neither and says so."""
    x = t(rg, X)
    cube = functions(rg)["Cube"].apply
    for kwargs in ({"check_batched_grad": True}, {"check_forward_ad": True},
                   {"check_forward_ad": True, "check_batched_forward_grad": True}):
        with pytest.raises(NotImplementedError, match="vmap|forward-mode"):
            rg.autograd.gradcheck(cube, (x,), **kwargs)
        with pytest.raises(NotImplementedError):
            rg.autograd.gradcheck(cube, (x,), raise_exception=False, **kwargs)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        rg.autograd.gradgradcheck(cube, (x,), check_fwd_over_rev=True)
    assert torch.autograd.gradcheck(functions(torch)["Cube"].apply, (t(torch, X),),
                                    check_batched_grad=True)


def test_given_grad_outputs():
    def check(lib):
        fns = functions(lib)
        v = lib.tensor([0.3, -0.2, 1.0], dtype=lib.float64, requires_grad=True)
        return (lib.autograd.gradgradcheck(fns["Cube"].apply, (t(lib, X),), (v,)),
                lib.autograd.gradgradcheck(fns["Shallow"].apply, (t(lib, X),), (v,),
                                           raise_exception=False))

    assert check(torch) == check(rg) == (True, False)


def test_fast_mode_message_reports_the_slow_mode_jacobians():
    (want, _), (got, _) = same_verdict("gradcheck", one("WrongCube"), x_in, fast_mode=True)
    for exc in (want[1], got[1]):
        assert "Below, we recompute numerical and analytical jacobians in slow mode" in str(exc)
        assert "The max per-element difference (slow mode) is" in str(exc)


def test_gradcheck_error_is_exported():
    assert issubclass(rg.autograd.GradcheckError, RuntimeError)
    assert issubclass(rg.autograd.GradcheckError, rg.RetrogradError)
    x = t(rg, X)
    with pytest.raises(rg.autograd.GradcheckError) as info:
        rg.autograd.gradcheck(functions(rg)["WrongCube"].apply, x)  # a bare tensor is accepted
    assert np.isfinite(len(str(info.value)))
