"""Finite-difference checks of analytical gradients (float64), as PyTorch's gradcheck.

``gradcheck`` compares the Jacobian the backward computes (one vjp per output element, run
twice to catch a non-deterministic backward) with central finite differences on host copies;
``fast_mode=True`` compares only ``v^T J u`` for random unit vectors ``u`` and ``v`` (one
finite difference per input, one vjp per output). It then checks that a zero gradient output
gives zero input gradients ("backward not multiplied by grad_output") and, with
``check_undefined_grad``, that a backward of several outputs accepts a missing (None) gradient
for one of them. A failed check raises ``GradcheckError`` (a ``RuntimeError``) -- or returns
False with ``raise_exception=False`` -- with PyTorch's messages.

retrograd has neither vmap nor forward-mode AD: ``check_batched_grad``,
``check_batched_forward_grad`` and ``check_forward_ad`` (``check_fwd_over_rev`` for
``gradgradcheck``) raise ``NotImplementedError`` when True.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import RetrogradError
from ..tensor import Tensor
from .node import formula_node

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RetrogradError):
    """The analytical and numerical Jacobians differ (or another gradcheck test failed)."""


_FAILED_NONDET_MSG = """

NOTE: If your op relies on non-deterministic operations, this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

_FAST_FAIL_SLOW_OK_MSG = (
    "Fast gradcheck failed but element-wise differences are small. This means that the test "
    "might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`."
)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _np() -> Any:
    from ..backends.host import xp

    return xp


def _is_tensor(x: Any) -> bool:
    from ..tensor import Tensor

    return isinstance(x, Tensor)


def _host(t: Any) -> Any:
    """A float64 host copy of ``t``'s values."""
    np = _np()
    return np.array(t.backend.to_numpy(t._data), dtype=np.float64)


def _diff_inputs(inputs: tuple[Any, ...]) -> list[tuple[int, Any]]:
    return [(i, t) for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]


def _differentiable_outputs(out: Any) -> tuple[Any, ...]:
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _float_outputs(out: Any) -> list[int]:
    """Indices of the floating-point tensors among ``fn``'s outputs."""
    return [j for j, o in enumerate(_as_tuple(out))
            if _is_tensor(o) and o.dtype.is_floating_point]


# ------------------------------------------------------------------------------------------
# input checks
# ------------------------------------------------------------------------------------------
def _check_inputs(inputs: tuple[Any, ...]) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype.name != "float64":
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ",
                    stacklevel=3,
                )
            strides = getattr(inp._data, "strides", None)
            if strides is not None and not all(
                    st != 0 or sz <= 1 for st, sz in zip(strides, inp.shape)):
                raise RetrogradError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck."
                )
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them "
            "have requires_grad=True."
        )


# ------------------------------------------------------------------------------------------
# numerical side
# ------------------------------------------------------------------------------------------
def _eval_perturbed(fn: Callable[..., Any], inputs: tuple[Any, ...], inp: Any, host: Any,
                    float_idx: list[int], ref_out: tuple[Any, ...]) -> list[Any]:
    """``fn``'s floating outputs (flat host copies) with ``inp`` holding ``host``."""
    orig = inp._data
    inp._data = inp.backend.asarray(host.reshape(inp.shape), inp.dtype)
    res = []
    try:
        outs = _as_tuple(fn(*inputs))
        for j in float_idx:  # copied before the input is restored: an output may be an input
            o, ref = outs[j], ref_out[j]
            if o.shape != ref.shape:  # PyTorch's words and order: the shape first
                raise AssertionError(
                    "Expected `func` to return outputs with the same shape when inputs are "
                    f"perturbed by eps, but got: shapes {o.shape} and {ref.shape} (output {j})."
                )
            if o.dtype is not ref.dtype:
                raise AssertionError(
                    "Expected `func` to return outputs with the same dtype when inputs are "
                    f"perturbed by eps, but got: dtypes {o.dtype} and {ref.dtype} (output {j})."
                )
            res.append(_host(o).reshape(-1))
    finally:
        inp._data = orig
    return res


def _numerical_jacobian(fn: Callable[..., Any], inputs: tuple[Any, ...], func_out: Any,
                        eps: float) -> list[list[Any]]:
    """``jac[i][k]``: d(float output k) / d(differentiable input i), shape (n_in, n_out), by
    central differences."""
    np = _np()
    ref_out = _as_tuple(func_out)
    float_idx = _float_outputs(func_out)
    jac: list[list[Any]] = []
    for _, inp in _diff_inputs(inputs):
        flat = _host(inp).reshape(-1)
        n = flat.size
        cols = [np.zeros((n, ref_out[j].numel())) for j in float_idx]
        for k in range(n):
            plus, minus = flat.copy(), flat.copy()
            plus[k] += eps
            minus[k] -= eps
            outb = _eval_perturbed(fn, inputs, inp, plus, float_idx, ref_out)
            outa = _eval_perturbed(fn, inputs, inp, minus, float_idx, ref_out)
            for c, (b, a) in enumerate(zip(outb, outa)):
                cols[c][k, :] = (b - a) / (2 * eps)
        jac.append(cols)
    return jac


def _numerical_ju(fn: Callable[..., Any], inputs: tuple[Any, ...], func_out: Any, inp: Any,
                  u: Any, eps: float) -> list[Any]:
    """``J u`` for each floating output of ``fn``: a directional central difference."""
    ref_out = _as_tuple(func_out)
    float_idx = _float_outputs(func_out)
    flat = _host(inp).reshape(-1)
    outb = _eval_perturbed(fn, inputs, inp, flat + eps * u, float_idx, ref_out)
    outa = _eval_perturbed(fn, inputs, inp, flat - eps * u, float_idx, ref_out)
    return [(b - a) / (2 * eps) for b, a in zip(outb, outa)]


# ------------------------------------------------------------------------------------------
# analytical side
# ------------------------------------------------------------------------------------------
def _vjps(output: Any, diff: list[Any], seed_host: Any) -> tuple[Any, ...]:
    from ..tensor import Tensor
    from .api import grad

    seed = Tensor(output.backend.asarray(seed_host.reshape(output.shape), output.dtype),
                  output.backend)
    return grad(output, diff, seed, retain_graph=True, allow_unused=True)


def _analytical_rows(output: Any, diff: list[Any], seeds: list[Any], nondet_tol: float,
                     check_grad_dtypes: bool) -> list[Any]:
    """For each differentiable input, the matrix whose column r is ``seeds[r]^T J`` (shape
    (n_in, len(seeds))); computed twice, to catch a backward that is not reentrant."""
    np = _np()
    runs = []
    sizes_ok = types_ok = True
    for _ in range(2):
        mats = [np.zeros((t.numel(), len(seeds))) for t in diff]
        for r, s in enumerate(seeds):
            for m, t, g in zip(mats, diff, _vjps(output, diff, s)):
                if g is None:
                    continue
                if g.shape != t.shape:
                    sizes_ok = False
                    continue
                if g.dtype is not t.dtype:
                    types_ok = False
                m[:, r] = _host(g).reshape(-1)
        runs.append(mats)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for m1, m2 in zip(*runs):
        if m1.size and np.abs(m1 - m2).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}." + _FAILED_NONDET_MSG
            )
    return runs[0]


def _analytical_jacobian(output: Any, diff: list[Any], nondet_tol: float,
                         check_grad_dtypes: bool) -> list[Any]:
    np = _np()
    m = output.numel()
    seeds = [np.eye(1, m, r).reshape(-1) for r in range(m)]
    return _analytical_rows(output, diff, seeds, nondet_tol, check_grad_dtypes)


def _notallclose_msg(analytical: Any, numerical: Any, output_idx: int, input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input "
            f"{input_idx:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


# ------------------------------------------------------------------------------------------
# slow and fast modes
# ------------------------------------------------------------------------------------------
def _check_no_differentiable_outputs(fn: Callable[..., Any], inputs: tuple[Any, ...],
                                     func_out: Any, eps: float) -> None:
    np = _np()
    for per_input in _numerical_jacobian(fn, inputs, func_out, eps):
        for jac in per_input:
            if np.count_nonzero(jac) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(fn: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                    outputs: tuple[Any, ...], eps: float, rtol: float, atol: float,
                    check_grad_dtypes: bool, nondet_tol: float) -> None:
    np = _np()
    if not outputs:
        _check_no_differentiable_outputs(fn, inputs, func_out, eps)
        return
    float_idx = _float_outputs(func_out)
    all_out = _as_tuple(func_out)
    numerical = _numerical_jacobian(fn, inputs, func_out, eps)  # [input][float output]
    diff = [t for _, t in _diff_inputs(inputs)]
    for i, o in enumerate(outputs):
        k = next(c for c, j in enumerate(float_idx) if all_out[j] is o)
        analytical = _analytical_jacobian(o, diff, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j) + _worst(a, n))


def _worst(a: Any, n: Any) -> str:
    np = _np()
    if not a.size:
        return ""
    w = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
    return (f"worst entry {tuple(int(x) for x in w)}: analytical {a[w]!r} vs numerical "
            f"{n[w]!r}\n")


def _unit_vector(rng: Any, n: int) -> Any:
    np = _np()
    v = rng.random(n)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast_gradcheck(fn: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                    outputs: tuple[Any, ...], eps: float, rtol: float, atol: float,
                    check_grad_dtypes: bool, nondet_tol: float) -> None:
    """PyTorch's fast mode: ``v^T (J u)`` by finite differences against ``(v^T J) u`` by
    backward, for random non-negative unit vectors ``u`` (per input) and ``v`` (per output);
    the tolerance ``atol`` is scaled by ``sum(u) * sum(v)``."""
    np = _np()
    rng = np.random.default_rng(0)
    diff_pairs = _diff_inputs(inputs)
    diff = [t for _, t in diff_pairs]
    all_u = [_unit_vector(rng, t.numel()) for t in diff]
    all_v = [_unit_vector(rng, o.numel()) for o in outputs]
    float_idx = _float_outputs(func_out)
    all_out = _as_tuple(func_out)
    out_pos = [next(c for c, j in enumerate(float_idx) if all_out[j] is o) for o in outputs]
    if not outputs:
        for t, u in zip(diff, all_u):
            for ju in _numerical_ju(fn, inputs, func_out, t, u, eps):
                if ju.size and np.abs(ju).max() > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical = []  # [input][output]: v^T J u
    for t, u in zip(diff, all_u):
        ju = _numerical_ju(fn, inputs, func_out, t, u, eps)
        numerical.append([float(np.dot(v, ju[k])) for v, k in zip(all_v, out_pos)])
    for j, (o, v) in enumerate(zip(outputs, all_v)):
        vj = _analytical_rows(o, diff, [v], nondet_tol, check_grad_dtypes)
        for i, (mat, u) in enumerate(zip(vj, all_u)):
            a = float(np.dot(mat[:, 0], u))
            n = numerical[i][j]
            tol = atol * float(u.sum()) * float(v.sum())
            if not np.allclose(a, n, rtol=rtol, atol=tol):
                raise GradcheckError(_notallclose_msg(a, n, j, i) + _slow_mode_report(
                    fn, inputs, func_out, o, i, j, rtol, atol, eps, out_pos[j]))


def _slow_mode_report(fn: Callable[..., Any], inputs: tuple[Any, ...], func_out: Any,
                      output: Any, input_idx: int, output_idx: int, rtol: float, atol: float,
                      eps: float, float_pos: int) -> str:
    np = _np()
    diff = [t for _, t in _diff_inputs(inputs)]
    n = _numerical_jacobian(fn, inputs, func_out, eps)[input_idx][float_pos]
    a = _analytical_jacobian(output, diff, float("inf"), False)[input_idx]
    max_diff = float(np.abs(n - a).max()) if a.size else 0.0
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {n}\nAnalytical:\n{a}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n"
    )
    if np.allclose(a, n, rtol=rtol, atol=atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


# ------------------------------------------------------------------------------------------
# the other backward tests
# ------------------------------------------------------------------------------------------
def _zeros_like(o: Any) -> Any:
    from ..ops.creation import zeros_like

    return zeros_like(o)


def _test_backward_mul_by_grad_output(outputs: tuple[Any, ...], inputs: tuple[Any, ...],
                                      masked: bool | None) -> None:
    from .api import grad

    np = _np()
    diff = [t for _, t in _diff_inputs(inputs)]
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = grad(list(outputs), diff, [_zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        host = _host(gi)
        if masked:
            if not np.allclose(host, 0.0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif np.any(host != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(fn: Callable[..., Any], outputs: tuple[Any, ...],
                                  inputs: tuple[Any, ...]) -> None:
    """PyTorch's check that the backward handles undefined output gradients: the outputs are
    passed through ``UndefinedGrad`` (the identity forward, whose backward sends on an
    undefined gradient) -- all of them, then, for several outputs, each in turn -- and the
    input gradients must come back None or zero. Nodes that get only undefined gradients
    still run (their hooks see None, a custom Function's backward gets zeros)."""
    from .api import grad

    np = _np()
    diff = [t for _, t in _diff_inputs(inputs)]
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking() -> None:
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this is "
            'true for you, you can call this function with "check_undefined_grad=False" to '
            "disable the feature",
            stacklevel=4,
        )

    cases = [[_undefined_grad(o) for o in _differentiable_outputs(fn(*inputs))]]
    if len(cases[0]) > 1:
        for undef in range(len(outputs)):
            cases.append([_undefined_grad(o) if k == undef else o
                          for k, o in enumerate(_differentiable_outputs(fn(*inputs)))])
    for outs in cases:
        try:
            grads = grad(outs, diff, [_zeros_like(o) for o in outs], allow_unused=True)
        except Exception as exc:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from exc
        for gi in grads:
            if gi is not None and np.any(_host(gi) != 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    'undefined or zero. Please look at "Notes about undefined output gradients" '
                    'in "tools/autograd/derivatives.yaml"'
                )


UndefinedGradBackward = formula_node("UndefinedGradBackward",
                                     lambda F, g, saved, attrs, needs: (None,), arity=1)


def _undefined_grad(t: Tensor) -> Tensor:
    """``t`` again (same values), whose backward sends an undefined gradient on to ``t``
    (PyTorch's ``torch._C._functions.UndefinedGrad``)."""
    from ..ops._core import record

    out = Tensor(t._data, t.backend)
    if t.requires_grad:
        record(UndefinedGradBackward, out, (t,))
    return out


# ------------------------------------------------------------------------------------------
# public API
# ------------------------------------------------------------------------------------------
def gradcheck(fn: Callable[..., Any], inputs: Sequence[Any] | Any, *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    """Check the gradients of ``fn`` at ``inputs`` against central finite differences (with
    respect to the inputs that require grad; they should be float64).

    ``eps``: the perturbation; ``atol``/``rtol``: the ``allclose`` tolerances;
    ``nondet_tol``: how much two runs of the backward may differ; ``fast_mode``: compare
    ``v^T J u`` for random ``u``, ``v`` instead of whole Jacobians; ``check_undefined_grad``:
    a backward of several outputs must accept a missing gradient for one of them;
    ``check_grad_dtypes``: gradients must have their input's dtype; ``masked``: compare the
    zero-gradient test with ``allclose`` rather than exactly (retrograd has no sparse
    tensors). Returns True, or raises ``GradcheckError`` (False with
    ``raise_exception=False``).
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck: check_forward_ad=True needs forward-mode AD, which retrograd does not "
            "have; pass check_forward_ad=False (the default)"
        )
    if check_batched_grad:
        raise NotImplementedError(
            "gradcheck: check_batched_grad=True needs vmap (batched gradients), which retrograd "
            "does not have; pass check_batched_grad=False (the default)"
        )
    try:
        return _gradcheck_helper(fn, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes, fast_mode, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(fn: Callable[..., Any], inputs: Any, eps: float, atol: float,
                      rtol: float, nondet_tol: float, check_undefined_grad: bool,
                      check_grad_dtypes: bool, fast_mode: bool, masked: bool | None) -> bool:
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    func_out = fn(*tupled)
    outputs = _differentiable_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(fn, func_out, tupled, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled, masked)
        if check_undefined_grad:
            _test_undefined_backward_mode(fn, outputs, tupled)
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Sequence[Any] | Any,
                  grad_outputs: Sequence[Any] | Any | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False, seed: int = 0) -> bool:
    """Check second derivatives: ``gradcheck`` of ``(x, v) -> grad(fn(x), x, v,
    create_graph=True)`` with respect to the inputs and the gradient outputs ``v`` (random in
    [-1, 1), drawn with ``seed``, when not given). The options are ``gradcheck``'s;
    ``gen_non_contig_grad_outputs`` is accepted and ignored (arrays carry no layout choice
    here)."""
    from ..dtypes import as_dtype
    from ..tensor import Tensor
    from .api import grad

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    np = _np()
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        outs = _differentiable_outputs(fn(*tupled))
        tupled_grad_outputs = tuple(
            Tensor(o.backend.asarray(rng.uniform(-1.0, 1.0, size=o.shape),
                                     o.dtype if o.dtype.is_floating_point else
                                     as_dtype("float64")),
                   o.backend, True)
            for o in outs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_idx = {i for i, x in enumerate(tupled) if _is_tensor(x) and x.requires_grad}

    def new_func(*args: Any) -> tuple[Any, ...]:
        input_args = args[:len(args) - num_outputs]
        outs = _differentiable_outputs(fn(*input_args))
        gouts = args[len(args) - num_outputs:]
        diff_args = [x for i, x in enumerate(input_args) if i in diff_idx]
        grads = grad(list(outs), diff_args, list(gouts), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
