"""The ``fusion`` and ``kernels`` groups: cases that reach the kernels other cases leave alone.

**fusion.** retrograd's backward walk collapses ``LinearBackward -> {Relu,Tanh,Sigmoid}Backward``
into one node (``retrograd.autograd.fusion``) that takes one of two paths:

- the caller holds the incoming gradient (``y.backward(seed)`` with the seed still referenced):
  the fused kernel ``linear_<act>_backward(g, y, x, W, need_x, need_W, need_b)``;
- the walk owns it (a gradient an earlier node produced, referenced by nothing else): the
  activation's in-place derivative ``<act>_backward_(g, y)``, written into ``g``, then
  ``linear_backward`` -- on a backend that has the in-place variant; otherwise the fused
  kernel again.

Each :class:`FusionCase` is ``act(linear(x, W, b))`` (with or without bias) on one path. Its
program is plain PyTorch-shaped code, so it also runs on PyTorch; on a retrograd subject the
runner (:func:`retrograd_conformance.runner.run_fusion_case`) runs it three times -- fused,
with ``retrograd.autograd.set_fusion(False)`` (the unfused walk: ``<act>_backward`` and
``linear_backward``), and fused on the reference kernels -- checks that the fused run went
through the kernel the case is about, and compares every gradient four ways. A mismatch names
the op and the kernel at fault.

The data are multiples of 1/8 (exact in float32), and the ReLU cases put one pre-activation at
exactly 0 (an all-zero input row, a zero bias entry), where PyTorch's derivative is 0: a mask
written as ``y < 0`` instead of ``y <= 0`` shows.

**kernels.** Ordinary :class:`~retrograd_conformance.cases.semantics.SemanticsCase` programs for
kernels the rest of the suite reaches seldom or never: the creation kernels (``arange``,
``linspace``, ``full``, ``empty``, and ``from_numpy`` behind ``rand``), anomaly mode's checks
(``any_nonfinite``, ``isnan``), an indexed assignment with history (``setitem``,
``index_zero``), and the ops without a gradient the op database leaves out (``eye``, ``isin``,
``signbit``, ``unique``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import Raises
from .semantics import SemanticsCase

__all__ = ["FUSION_CASES", "KERNEL_CASES", "FusionCase", "ACTIVATIONS"]

ACTIVATIONS = ("relu", "tanh", "sigmoid")
N, IN, OUT = 5, 4, 3  # batch, in features, out features: no two equal, so a transposed
# gradient cannot have the right shape


@dataclass(frozen=True)
class FusionCase(SemanticsCase):
    """``act(linear(x, W, b))`` backward through one of the fused paths.

    ``seed`` is ``"caller"`` (the caller holds the seed: the out-of-place fused kernel) or
    ``"engine"`` (the walk owns the gradient: the in-place variant where the backend has one).
    ``layers`` 2 stacks two fused pairs (the inner pair's gradient is the outer
    ``linear_backward``'s output, owned by the walk)."""

    activation: str = "relu"
    bias: bool = True
    seed: str = "caller"
    layers: int = 1

    @property
    def fused_kernel(self) -> str:
        """The out-of-place fused kernel, ``linear_<act>_backward``."""
        return f"linear_{self.activation}_backward"

    @property
    def in_place_kernel(self) -> str:
        """The optional in-place derivative, ``<act>_backward_``."""
        return f"{self.activation}_backward_"


def _values(shape: tuple[int, ...], seed: int, scale: float = 1.0) -> list[Any]:
    """Deterministic multiples of 1/8 in about [-scale, scale] (exact in float32)."""
    rng = np.random.default_rng(seed)
    return (np.round(rng.uniform(-scale, scale, shape) * 8) / 8).tolist()


def _inputs(act: str, bias: bool, seed: int) -> dict[str, Any]:
    """x (N, IN), W (OUT, IN), b (OUT,); for relu, row 0 of x is zero and b[1] is 0, so that
    y[0, 1] is exactly 0 (and all of row 0 without bias)."""
    x = _values((N, IN), seed, 1.5)
    w = _values((OUT, IN), seed + 1, 1.0)
    b = _values((OUT,), seed + 2, 0.5) if bias else None
    if act == "relu":
        x[0] = [0.0] * IN
        if b is not None:
            b[0], b[1], b[2] = 0.25, 0.0, -0.375
    return {"x": x, "W": w, "b": b}


def _act(lib: Any, name: str, z: Any) -> Any:
    return getattr(lib.nn.functional, name)(z)


def _grads(params: list[tuple[Any, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (w, b) in enumerate(params):
        tag = "" if len(params) == 1 else str(i + 1)
        out[f"W{tag}.grad"] = w.grad
        if b is not None:
            out[f"b{tag}.grad"] = b.grad
    return out


def _program(act: str, bias: bool, seed: str, layers: int) -> Callable[[Any], dict[str, Any]]:
    acts = (act,) if layers == 1 else ("relu", act)

    def program(lib: Any) -> dict[str, Any]:
        first = _inputs(acts[0], bias, 11)
        x = lib.tensor(first["x"], requires_grad=True)
        h, params, fan_in = x, [], IN
        for i, name in enumerate(acts):
            data = _inputs(name, bias, 21 + 10 * i)
            w = data["W"] if i == 0 else _values((OUT, fan_in), 41 + i)
            weight = lib.tensor(w, requires_grad=True)
            b = lib.tensor(data["b"], requires_grad=True) if bias else None
            params.append((weight, b))
            h = _act(lib, name, lib.nn.functional.linear(h, weight, b))
            fan_in = OUT
        out: dict[str, Any] = {"y": h}
        if seed == "caller":
            g = lib.tensor(_values(tuple(h.shape), 7, 2.0))
            h.backward(g)
            out["the seed, after backward"] = g  # a fused kernel must not write into it
        else:
            c = lib.tensor(_values(tuple(h.shape), 8, 2.0))
            (h * c).sum().backward()
        out["x.grad"] = x.grad
        return out | _grads(params)

    return program


def _fusion_case(act: str, bias: bool, seed: str, layers: int = 1) -> FusionCase:
    z = "linear(x, W, b)" if bias else "linear(x, W)"
    if layers == 2:
        z = f"linear(relu({z}), W2{', b2' if bias else ''})"
    where = ("the caller holds the seed (y.backward(seed))" if seed == "caller"
             else "the walk owns the gradient ((y * c).sum().backward())")
    kernel = (f"linear_{act}_backward" if seed == "caller"
              else f"{act}_backward_ in place, then linear_backward")
    if layers == 2:
        kernel += "; the inner pair's gradient is the walk's own: relu_backward_ in place"
    shape = f"linear-{act}" if layers == 1 else f"mlp-relu-{act}"
    ident = f"fusion-{shape}-{'bias' if bias else 'nobias'}-{seed}-seed"
    return FusionCase(
        ident, "fusion",
        f"{act}({z}) backward; {where}: {kernel}",
        ("y, x.grad, W.grad" + (", b.grad" if bias else "") if layers == 1
         else "y, x.grad, W1.grad, W2.grad" + (", b1.grad, b2.grad" if bias else ""))
        + " vs torch, vs the unfused walk (set_fusion(False)) and vs the reference kernels",
        _program(act, bias, seed, layers),
        activation=act, bias=bias, seed=seed, layers=layers)


FUSION_CASES: tuple[FusionCase, ...] = tuple(
    _fusion_case(act, bias, seed)
    for act in ACTIVATIONS for bias in (True, False) for seed in ("caller", "engine")
) + (
    _fusion_case("tanh", True, "engine", layers=2),
    _fusion_case("sigmoid", True, "caller", layers=2),
)


# ---- kernels: the ones few other cases reach ----------------------------------------------------


def creation_kernels(lib: Any) -> dict[str, Any]:
    """``arange``, ``linspace``, ``full`` and ``empty`` on the subject's device."""
    kw = {"dtype": lib.dtype, "device": lib.device}
    a = lib.arange(1, 4, 1, requires_grad=True, **kw)
    s = lib.linspace(-1, 1, 5, **kw)
    f = lib.full((2, 3), 1.5, requires_grad=True, **kw)
    e = lib.empty(2, 3, **kw)
    (a * a).sum().backward()
    (f * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    return {"arange(1, 4, 1)": a, "its grad of sum(a * a)": a.grad, "linspace(-1, 1, 5)": s,
            "full((2, 3), 1.5)": f, "its grad": f.grad, "empty(2, 3).shape": list(e.shape),
            "empty's dtype": lib.dtype_of(e), "empty(2, 3).fill_(2)": e.fill_(2.0)}


def random_kernels(lib: Any) -> dict[str, Any]:
    """``rand`` and ``randn`` (the ``from_numpy`` kernel): properties, not values."""
    r = lib.rand(3, 4, dtype=lib.dtype, device=lib.device, requires_grad=True)
    n = lib.randn(2, 5, dtype=lib.dtype, device=lib.device)
    (r * 3).sum().backward()
    return {"rand shape": list(r.shape), "rand dtype": lib.dtype_of(r),
            "rand >= 0": r >= 0, "rand < 1": r < 1,
            "rand grad of sum(3 r)": r.grad, "randn shape": list(n.shape),
            "randn dtype": lib.dtype_of(n), "randn == randn (no nan)": n == n}


def anomaly_kernels(lib: Any) -> dict[str, Any]:
    """``detect_anomaly`` on finite gradients and on a nan one (``any_nonfinite``,
    ``isnan``)."""
    x = lib.tensor([0.0, 1.0, 4.0], requires_grad=True)

    def finite() -> Any:
        with lib.autograd.detect_anomaly():
            (lib.sqrt(x + 1) * 2).sum().backward()
        return x.grad

    def nan() -> Any:
        with lib.autograd.detect_anomaly():
            (lib.sqrt(x) * 0).sum().backward()  # 0 * inf at x = 0 in SqrtBackward
        return "no error"

    ok, _ = lib.capture_warnings(finite)
    bad, _ = lib.capture_warnings(nan)
    return {"finite gradients under detect_anomaly": ok, "a nan gradient": bad}


def setitem_with_history(lib: Any) -> dict[str, Any]:
    """An indexed assignment into a tensor with history (``setitem``, ``index_zero``)."""
    a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    v = lib.tensor([10.0, 20.0, 30.0], requires_grad=True)
    x = a * 1
    x[1] = v * 2  # the written row's gradient goes to v; a's is zeroed there
    (x * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    return {"x": x, "a.grad": a.grad, "v.grad": v.grad}


def no_gradient_kernels(lib: Any) -> dict[str, Any]:
    """``eye``, ``isin``, ``signbit`` and ``unique``: ops without a gradient (no op-database
    entry), and ``eye`` as a constant in a differentiable program."""
    kw = {"dtype": lib.dtype, "device": lib.device}
    w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (w * lib.eye(2, 3, **kw)).sum().backward()
    x = lib.tensor([[1.5, -0.0, 2.0], [0.0, -3.0, 1.5]])
    t = lib.tensor([1.5, -3.0, 7.0])
    return {"eye(3)": lib.eye(3, **kw), "eye(2, 3)": lib.eye(2, 3, **kw),
            "grad of sum(w * eye(2, 3))": w.grad,
            "isin(x, t)": lib.isin(x, t), "isin(x, t, invert=True)": lib.isin(x, t, invert=True),
            "isin(x, 2.0)": lib.isin(x, 2.0), "signbit(x)": lib.signbit(x),
            "signbit(int64)": lib.signbit(lib.int_tensor([-2, 0, 3])),
            **_unique_results(lib)}


def _unique_results(lib: Any) -> dict[str, Any]:
    """``unique`` and ``unique_consecutive`` (the ``unique_`` kernel), with inverse and
    counts."""
    u = lib.tensor([2.0, 1.0, 2.0, 3.0, 1.0, 1.0])
    vals, inverse, counts = lib.unique(u, return_inverse=True, return_counts=True)
    cvals, cinverse, ccounts = lib.unique_consecutive(u, return_inverse=True,
                                                      return_counts=True)
    return {"unique(u)": vals, "its inverse": inverse, "its counts": counts,
            "unique_consecutive(u)": cvals, "its inverse (consecutive)": cinverse,
            "its counts (consecutive)": ccounts}


RT = Raises("runtime")

KERNEL_CASES: tuple[SemanticsCase, ...] = (
    SemanticsCase(
        "kernels-creation", "kernels",
        "arange, linspace, full and empty on the subject's device, and gradients through them",
        "values, dtypes, shapes; a.grad = 2a, full's grad the weights",
        creation_kernels,
        {"arange(1, 4, 1)": [1, 2, 3], "its grad of sum(a * a)": [2, 4, 6],
         "linspace(-1, 1, 5)": [-1, -0.5, 0, 0.5, 1], "empty(2, 3).shape": [2, 3]}),
    SemanticsCase(
        "kernels-random", "kernels",
        "rand and randn (the from_numpy kernel): shape, dtype, range, and a gradient",
        "values are not compared (different generators), only their properties",
        random_kernels, {"rand >= 0": [[True] * 4] * 3, "rand < 1": [[True] * 4] * 3,
                         "rand grad of sum(3 r)": [[3] * 4] * 3}),
    SemanticsCase(
        "kernels-anomaly-nan", "kernels",
        "detect_anomaly checks each node's gradients: finite ones pass, a nan one is an error",
        "x.grad with finite gradients; a RuntimeError naming SqrtBackward0 for the nan",
        anomaly_kernels, {"a nan gradient": RT}, requires=("autograd.detect_anomaly",)),
    SemanticsCase(
        "kernels-setitem-with-history", "kernels",
        "x[1] = v * 2 on a tensor with history, then backward",
        "a.grad zero on the overwritten row (index_zero), v.grad = 2 * the row's weights",
        setitem_with_history,
        {"a.grad": [[1, 2, 3], [0, 0, 0]], "v.grad": [8, 10, 12]}),
    SemanticsCase(
        "kernels-no-gradient", "kernels",
        "eye, isin, signbit and unique (ops without a gradient), and eye as a constant factor",
        "values and bool results; w.grad = eye(2, 3)",
        no_gradient_kernels,
        {"eye(2, 3)": [[1, 0, 0], [0, 1, 0]], "grad of sum(w * eye(2, 3))": [[1, 0, 0], [0, 1, 0]],
         "isin(x, t)": [[True, False, False], [False, True, True]],
         "signbit(x)": [[False, True, False], [False, True, False]],
         "signbit(int64)": [True, False, False], "unique(u)": [1, 2, 3],
         "its counts": [3, 2, 1], "unique_consecutive(u)": [2, 1, 2, 3, 1]}),
)
