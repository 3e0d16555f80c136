"""Normalization against PyTorch: ``batch_norm`` (training and evaluation, running statistics
updated in place), ``layer_norm``, ``group_norm`` -- values, gradients, double backward, node
names, dtypes, errors -- and the modules ``BatchNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``
(parameters, buffers, ``state_dict``, ``repr``, train/eval, several training steps). Each program
is written once against a library handle ``lib`` (``torch`` or ``retrograd``); inputs come from
NumPy, so both libraries see the same values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from torch_parity import same


def functional(lib: Any) -> Any:
    """``lib.nn.functional`` (imported where the package does not import it)."""
    import importlib

    return importlib.import_module(f"{lib.__name__}.nn.functional")


def arr(seed: int, shape: tuple[int, ...], scale: float = 1.0, shift: float = 0.0) -> Any:
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def leaf(lib: Any, a: Any, dtype: str, grad: bool = True) -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad)


def const(lib: Any, a: Any, dtype: str) -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype))


def derivatives(lib: Any, y: Any, leaves: list[Any], seed: int) -> dict[str, Any]:
    """First gradients (create_graph=True) of ``sum(y * g)`` for a random ``g``, the same
    gradients from the plain walk, and the gradients of a random combination of the first
    gradients' squares (a double backward)."""
    g = const(lib, arr(seed, tuple(y.shape)), str(y.dtype).rpartition(".")[2])
    first = lib.autograd.grad(y, leaves, g, create_graph=True)
    total = None
    for i, d in enumerate(first):
        c = const(lib, arr(seed + 1 + i, tuple(d.shape)), str(d.dtype).rpartition(".")[2])
        term = (d * d * c).sum()
        total = term if total is None else total + term
    second = lib.autograd.grad(total, leaves, allow_unused=True, materialize_grads=True)
    return {"first": first, "second": second}


def check(call: Callable[..., Any], shapes: dict[str, Any], dtype: str = "float64",
          tol: float = 1e-10, double: bool = True) -> None:
    """``call(lib, **tensors)``: the output (value, dtype, node name), the plain-walk gradients
    and, with ``double``, the first and second derivatives against torch."""
    names = sorted(k for k, v in shapes.items() if v is not None)

    def program(lib: Any) -> Any:
        def tensors() -> dict[str, Any]:
            return {k: (leaf(lib, arr(i, shapes[k], 0.8, 0.3 * i), dtype) if k in names
                        else None) for i, k in enumerate(sorted(shapes))}

        ts = tensors()
        y = call(lib, **ts)
        leaves = [ts[k] for k in names]
        g = const(lib, arr(99, tuple(y.shape)), dtype)
        fast = lib.autograd.grad(y, leaves, g)
        out: dict[str, Any] = {"y": y, "name": y.grad_fn.name(),
                               "dtype": str(y.dtype).rpartition(".")[2], "fast": fast}
        if double:
            ts = tensors()
            out.update(derivatives(lib, call(lib, **ts), [ts[k] for k in names], 7))
        return out

    same(program, tol=tol)


# ---- batch_norm ------------------------------------------------------------------------------
BN_SHAPES = [(4, 3), (3, 2, 5), (2, 3, 2, 3)]


def bn_train(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
    c = x.shape[1]
    dt = x.dtype
    rm = lib.zeros(c, dtype=dt)
    rv = lib.ones(c, dtype=dt)
    return functional(lib).batch_norm(x, rm, rv, w, b, training=True, momentum=0.2)


def bn_eval(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
    c = x.shape[1]
    dt = x.dtype
    rm = lib.tensor(np.linspace(-0.5, 0.5, c), dtype=dt)
    rv = lib.tensor(np.linspace(0.5, 2.0, c), dtype=dt)
    return functional(lib).batch_norm(x, rm, rv, w, b)


@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("mode", [bn_train, bn_eval], ids=["train", "eval"])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_batch_norm_values_grads_double_backward(shape: Any, mode: Any, affine: str) -> None:
    c = shape[1]
    check(mode, {"x": shape, "w": (c,) if affine != "none" else None,
                 "b": (c,) if affine == "both" else None})


@pytest.mark.parametrize("mode", [bn_train, bn_eval], ids=["train", "eval"])
def test_batch_norm_float32(mode: Any) -> None:
    check(mode, {"x": (4, 3, 5), "w": (3,), "b": (3,)}, dtype="float32", tol=2e-5,
          double=False)


def test_batch_norm_parameters_only_need_grad() -> None:
    """Only the weight requires grad: the input's data is a constant."""

    def program(lib: Any) -> Any:
        x = const(lib, arr(1, (5, 2, 3)), "float64")
        w = leaf(lib, arr(2, (2,)), "float64")
        y = bn_train(lib, x, w)
        (gw,) = lib.autograd.grad((y * y * y).sum(), [w])
        return [y.grad_fn.name(), y, gw]

    same(program, tol=1e-10)


def test_running_stats_update_in_place_over_steps() -> None:
    """Several training steps update the running estimates in place (unbiased variance, the
    same tensors, their version unchanged as PyTorch's), then evaluation uses them."""

    def program(lib: Any) -> Any:
        F = functional(lib)
        rm = lib.tensor(np.linspace(-1, 1, 3), dtype=lib.float64)
        rv = lib.tensor(np.linspace(0.5, 1.5, 3), dtype=lib.float64)
        same_objects = (rm, rv)
        seen = []
        for step in range(4):
            x = const(lib, arr(10 + step, (6, 3, 2), 1.0 + step, step), "float64")
            F.batch_norm(x, rm, rv, training=True, momentum=0.3)
            seen.append([rm.clone(), rv.clone()])
        x = leaf(lib, arr(20, (2, 3, 4)), "float64")
        y = F.batch_norm(x, rm, rv, training=False)
        (gx,) = lib.autograd.grad(y.sum() + (y * y).sum(), [x])
        return [seen, y, gx, same_objects[0] is rm, rm._version, rv._version]

    same(program, tol=1e-10)


def test_training_without_running_stats_and_momentum_values() -> None:
    def program(lib: Any) -> Any:
        F = functional(lib)
        x = const(lib, arr(3, (4, 2)), "float64")
        rm = lib.zeros(2, dtype=lib.float64)
        rv = lib.ones(2, dtype=lib.float64)
        a = F.batch_norm(x, None, None, training=True)
        b = F.batch_norm(x, rm, rv, training=True, momentum=1.0, eps=1e-3)
        c = F.batch_norm(x, rm, rv, training=True, momentum=0)
        return [a, b, c, rm, rv]

    same(program, tol=1e-10)


def test_eval_saved_running_stats_are_version_checked() -> None:
    def program(lib: Any) -> Any:
        x = leaf(lib, arr(1, (3, 2)), "float64")
        rm = lib.zeros(2, dtype=lib.float64)
        rv = lib.ones(2, dtype=lib.float64)
        y = functional(lib).batch_norm(x, rm, rv)
        rm.add_(1.0)
        y.sum().backward()
        return x.grad

    same(program, phrase="modified by an inplace operation")


def test_torch_batch_norm_signature() -> None:
    """``torch.batch_norm``: weight and bias first, every argument required; no one-value
    check."""

    def program(lib: Any) -> Any:
        x = leaf(lib, arr(4, (3, 2, 2)), "float64")
        w = leaf(lib, arr(5, (2,)), "float64")
        rm = lib.zeros(2, dtype=lib.float64)
        rv = lib.ones(2, dtype=lib.float64)
        y = lib.batch_norm(x, w, None, rm, rv, True, 0.1, 1e-5, False)
        rm1 = lib.zeros(2, dtype=lib.float64)
        rv1 = lib.ones(2, dtype=lib.float64)
        single = lib.batch_norm(const(lib, arr(6, (1, 2)), "float64"), None, None, rm1, rv1,
                                True, 0.1, 1e-5, False)
        return [y, y.grad_fn.name(), rm, rv, single.abs() < 1e-3, rm1, rv1]

    same(program, tol=1e-10)


BN_ERRORS: dict[str, tuple[Callable[..., Any], str | None]] = {
    "one value per channel": (lambda lib, F: F.batch_norm(
        lib.ones(1, 3), lib.zeros(3), lib.ones(3), training=True),
        "Expected more than 1 value per channel when training"),
    "one value per channel 3-d": (lambda lib, F: F.batch_norm(
        lib.ones(1, 3, 1), None, None, training=True),
        "Expected more than 1 value per channel when training, got input size"),
    "eval without stats": (lambda lib, F: F.batch_norm(lib.ones(2, 3), None, None),
                           "running_mean must be defined in evaluation mode"),
    "one stat": (lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3), None, training=True),
                 "running_mean and running_var must either both be None or neither be None"),
    "stat size": (lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(4), lib.ones(4)),
                  "running_mean should contain 3 elements not 4"),
    "weight size": (lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3), lib.ones(3),
                                                lib.ones(4)),
                    "weight should contain 3 elements not 4"),
    "bias size": (lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3), lib.ones(3),
                                              None, lib.ones(2)),
                  "bias should contain 3 elements not 2"),
    "integer input": (lambda lib, F: F.batch_norm(lib.ones(2, 3, dtype=lib.int64), None, None,
                                                  training=True),
                      "not implemented for 'Long'"),
    "mixed dtype float": (lambda lib, F: F.batch_norm(
        lib.ones(2, 3), lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)),
        "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    "mixed dtype double": (lambda lib, F: F.batch_norm(
        lib.ones(2, 3, dtype=lib.float64), lib.zeros(3), lib.ones(3)),
        "mixed dtype (CPU): all inputs must share same datatype."),
    "1-d input": (lambda lib, F: F.batch_norm(lib.ones(3), None, None, training=True),
                  "Dimension out of range"),
    "eps zero training": (lambda lib, F: F.batch_norm(lib.ones(2, 3), None, None, training=True,
                                                      eps=0.0),
                          "batch_norm eps must be positive during training"),
    "eps negative": (lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3), lib.ones(3),
                                                 eps=-1.0),
                     "batch_norm eps must be non-negative"),
    "momentum None": (lambda lib, F: F.batch_norm(lib.ones(2, 3), None, None, training=True,
                                                  momentum=None),
                      "must be float, not NoneType"),
    "not a tensor": (lambda lib, F: F.batch_norm([1.0, 2.0], None, None),
                     "must be Tensor, not list"),
}


@pytest.mark.parametrize("case", sorted(BN_ERRORS))
def test_batch_norm_errors(case: str) -> None:
    call, phrase = BN_ERRORS[case]
    same(lambda lib: call(lib, functional(lib)), phrase=phrase)


def test_empty_batch_leaves_running_stats() -> None:
    def program(lib: Any) -> Any:
        rm = lib.zeros(3)
        rv = lib.ones(3)
        y = functional(lib).batch_norm(lib.ones(0, 3), rm, rv, training=True)
        return [tuple(y.shape), rm, rv]

    same(program)


# ---- layer_norm ------------------------------------------------------------------------------
LN_CASES = {
    "last axis": ((4, 5), (5,)),
    "two axes": ((2, 3, 4), (3, 4)),
    "4-d last": ((2, 2, 3, 3), (3,)),
    "whole": ((3, 4), (3, 4)),
}


@pytest.mark.parametrize("case", sorted(LN_CASES))
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_values_grads_double_backward(case: str, affine: str) -> None:
    shape, ns = LN_CASES[case]

    def call(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
        return functional(lib).layer_norm(x, list(ns), w, b, 1e-5)

    # torch's own double backward of a layer_norm with a bias and no weight raises ("Expected
    # a proper Tensor but got None"): nothing to compare there beyond the first derivatives
    check(call, {"x": shape, "w": ns if affine in ("both", "weight") else None,
                 "b": ns if affine in ("both", "bias") else None}, double=affine != "bias")


def test_layer_norm_float32_and_torch_function() -> None:
    def call(lib: Any, x: Any, w: Any, b: Any) -> Any:
        return lib.layer_norm(x, (3, 4), w, b, 1e-3, True) + functional(lib).layer_norm(x, [4])

    check(call, {"x": (2, 3, 4), "w": (3, 4), "b": (3, 4)}, dtype="float32", tol=2e-5,
          double=False)
    check(call, {"x": (2, 3, 4), "w": (3, 4), "b": (3, 4)})


LN_ERRORS: dict[str, tuple[Callable[..., Any], str]] = {
    "input shape": (lambda lib, F: F.layer_norm(lib.ones(4, 3, 5), (4,)),
                    "Given normalized_shape=[4], expected input with shape [*, 4], but got "
                    "input of size[4, 3, 5]"),
    "weight shape": (lambda lib, F: F.layer_norm(lib.ones(4, 3, 5), (3, 5), lib.ones(5)),
                     "Expected weight to be of same shape as normalized_shape, but got weight "
                     "of shape [5] and normalized_shape = [3, 5]"),
    "bias shape": (lambda lib, F: F.layer_norm(lib.ones(4, 5), (5,), None, lib.ones(4)),
                   "Expected bias to be of same shape as normalized_shape"),
    "int shape": (lambda lib, F: F.layer_norm(lib.ones(4, 5), 5),
                  "argument 'normalized_shape' (position 2) must be tuple of ints, not int"),
    "empty shape": (lambda lib, F: F.layer_norm(lib.ones(4, 5), []),
                    "Expected normalized_shape to be at least 1-dimensional"),
    "integer input": (lambda lib, F: F.layer_norm(lib.ones(3, 5, dtype=lib.int64), (5,)),
                      "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    "mixed dtype": (lambda lib, F: F.layer_norm(lib.ones(3, 5, dtype=lib.float64), (5,),
                                                lib.ones(5)),
                    "mixed dtype (CPU): all inputs must share same datatype."),
    "not a tensor": (lambda lib, F: F.layer_norm([1.0], (1,)), "must be Tensor, not list"),
}


@pytest.mark.parametrize("case", sorted(LN_ERRORS))
def test_layer_norm_errors(case: str) -> None:
    call, phrase = LN_ERRORS[case]
    same(lambda lib: call(lib, functional(lib)), phrase=phrase)


# ---- group_norm ------------------------------------------------------------------------------
GN_CASES = {
    "2 groups 3-d": ((2, 4, 3), 2),
    "1 group 4-d": ((2, 3, 2, 2), 1),
    "per channel": ((3, 3, 4), 3),
    "2-d": ((4, 6), 3),
}


@pytest.mark.parametrize("case", sorted(GN_CASES))
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_group_norm_values_grads_double_backward(case: str, affine: str) -> None:
    shape, groups = GN_CASES[case]
    c = shape[1]

    def call(lib: Any, x: Any, w: Any = None, b: Any = None) -> Any:
        return functional(lib).group_norm(x, groups, w, b, 1e-5)

    check(call, {"x": shape, "w": (c,) if affine != "none" else None,
                 "b": (c,) if affine == "both" else None})


def test_group_norm_float32_and_torch_function() -> None:
    def call(lib: Any, x: Any, w: Any, b: Any) -> Any:
        return lib.group_norm(x, 2, w, b, 1e-4, False)

    check(call, {"x": (2, 4, 3), "w": (4,), "b": (4,)}, dtype="float32", tol=2e-5,
          double=False)
    check(call, {"x": (2, 4, 3), "w": (4,), "b": (4,)})


GN_ERRORS: dict[str, tuple[Callable[..., Any], str]] = {
    "not divisible": (lambda lib, F: F.group_norm(lib.ones(4, 3, 5), 2),
                      "Expected number of channels in input to be divisible by num_groups, but "
                      "got input of shape [4, 3, 5] and num_groups=2"),
    "weight size": (lambda lib, F: F.group_norm(lib.ones(4, 3, 5), 3, lib.ones(4)),
                    "Expected weight to be a vector of size equal to the number of channels in "
                    "input, but got weight of shape [4] and input of shape [4, 3, 5]"),
    "1-d": (lambda lib, F: F.group_norm(lib.ones(3), 1),
            "Expected at least 2 dimensions for input tensor but received 1"),
    "one value per group": (lambda lib, F: F.group_norm(lib.ones(1, 3), 3),
                            "Expected more than 1 value per channel when training, got input "
                            "size [1, 3]"),
    "integer input": (lambda lib, F: F.group_norm(lib.ones(4, 3, dtype=lib.int64), 3),
                      "\"GroupNormKernelImpl\" not implemented for 'Long'"),
    "mixed dtype": (lambda lib, F: F.group_norm(lib.ones(4, 3, dtype=lib.float64), 3,
                                                lib.ones(3)),
                    "mixed dtype (CPU): all inputs must share same datatype."),
}


@pytest.mark.parametrize("case", sorted(GN_ERRORS))
def test_group_norm_errors(case: str) -> None:
    call, phrase = GN_ERRORS[case]
    same(lambda lib: call(lib, functional(lib)), phrase=phrase)


def test_torch_group_norm_has_no_one_value_check() -> None:
    same(lambda lib: lib.group_norm(lib.tensor([[1.0, 2.0, 3.0]]), 3))


# ---- modules ---------------------------------------------------------------------------------
def describe(m: Any) -> dict[str, Any]:
    """What a module shows: repr, parameters (names, shapes, dtypes, requires_grad), buffers
    and the state_dict (keys and values), the training flag."""
    return {
        "repr": repr(m),
        "params": [(n, tuple(p.shape), str(p.dtype).rpartition(".")[2], p.requires_grad)
                   for n, p in m.named_parameters()],
        "buffers": [(n, tuple(b.shape), str(b.dtype).rpartition(".")[2])
                    for n, b in m.named_buffers()],
        "state": {k: v for k, v in m.state_dict().items()},
        "training": m.training,
    }


MODULES: dict[str, Callable[[Any], Any]] = {
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(6),
    "BatchNorm3d": lambda nn: nn.BatchNorm3d(2, eps=1e-3, momentum=0.3),
    "BatchNorm1d no affine": lambda nn: nn.BatchNorm1d(4, affine=False),
    "BatchNorm2d no bias": lambda nn: nn.BatchNorm2d(2, bias=False),
    "BatchNorm1d untracked": lambda nn: nn.BatchNorm1d(4, track_running_stats=False),
    "BatchNorm1d cumulative": lambda nn: nn.BatchNorm1d(2, momentum=None),
    "LayerNorm int": lambda nn: nn.LayerNorm(5),
    "LayerNorm list": lambda nn: nn.LayerNorm([2, 3], eps=1e-6),
    "LayerNorm no bias": lambda nn: nn.LayerNorm((4,), bias=False),
    "LayerNorm no affine": lambda nn: nn.LayerNorm(4, elementwise_affine=False),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "GroupNorm no affine": lambda nn: nn.GroupNorm(3, 6, affine=False),
    "GroupNorm no bias": lambda nn: nn.GroupNorm(1, 3, 1e-3, bias=False),
}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_module_surface(case: str) -> None:
    same(lambda lib: describe(MODULES[case](lib.nn)))


def test_module_dtype_and_double() -> None:
    def program(lib: Any) -> Any:
        a = lib.nn.BatchNorm1d(2, dtype=lib.float64)
        b = lib.nn.BatchNorm2d(2).double()
        c = lib.nn.LayerNorm(3, dtype=lib.float64)
        d = lib.nn.GroupNorm(1, 2, dtype=lib.float64)
        return [describe(a), describe(b), describe(c), describe(d)]

    same(program)


BN_INPUTS = {"BatchNorm1d": (5, 3), "BatchNorm1d 3-d": (4, 3, 2), "BatchNorm2d": (3, 3, 2, 2),
             "BatchNorm3d": (2, 3, 2, 1, 2)}


@pytest.mark.parametrize("case", sorted(BN_INPUTS))
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_module_train_then_eval(case: str, momentum: Any) -> None:
    """Steps in training mode (running statistics, num_batches_tracked, gradients of the
    affine parameters), then evaluation with the running statistics."""
    shape = BN_INPUTS[case]
    cls = case.split()[0]

    def program(lib: Any) -> Any:
        m = getattr(lib.nn, cls)(3, momentum=momentum, dtype=lib.float64)
        out = []
        for step in range(3):
            x = leaf(lib, arr(30 + step, shape, 1.0 + step, 0.5 * step), "float64")
            y = m(x)
            (y * y * lib.tensor(np.linspace(0.1, 1.0, y.numel()).reshape(shape))).sum().backward()
            out.append([y, x.grad, m.weight.grad.clone(), m.bias.grad.clone(),
                        m.running_mean.clone(), m.running_var.clone(),
                        int(m.num_batches_tracked), y.grad_fn.name()])
        m.eval()
        x = leaf(lib, arr(40, shape), "float64")
        y = m(x)
        y.sum().backward()
        out.append([y, x.grad, int(m.num_batches_tracked), describe(m)])
        return out

    same(program, tol=1e-10)


def test_untracked_batch_norm_uses_batch_stats_in_eval() -> None:
    def program(lib: Any) -> Any:
        m = lib.nn.BatchNorm1d(2, track_running_stats=False, dtype=lib.float64).eval()
        x = const(lib, arr(3, (4, 2)), "float64")
        return [m(x), describe(m)]

    same(program, tol=1e-10)


def test_layer_and_group_norm_modules() -> None:
    def program(lib: Any) -> Any:
        ln = lib.nn.LayerNorm([3, 2], dtype=lib.float64)
        gn = lib.nn.GroupNorm(2, 4, dtype=lib.float64)
        with lib.no_grad():
            ln.weight.copy_(lib.tensor(arr(1, (3, 2))))
            gn.bias.copy_(lib.tensor(arr(2, (4,))))
        x = leaf(lib, arr(3, (2, 4, 3, 2)), "float64")
        y = gn(ln(x))
        (y * y).sum().backward()
        return [y, y.grad_fn.name(), x.grad, ln.weight.grad, ln.bias.grad, gn.weight.grad,
                gn.bias.grad, ln.eval()(x)]

    same(program, tol=1e-10)


def test_load_state_dict_round_trip() -> None:
    def program(lib: Any) -> Any:
        a = lib.nn.BatchNorm1d(3, dtype=lib.float64)
        a(const(lib, arr(5, (4, 3)), "float64"))
        b = lib.nn.BatchNorm1d(3, dtype=lib.float64)
        b.load_state_dict(a.state_dict())
        return describe(b)

    same(program, tol=1e-12)


MODULE_ERRORS: dict[str, tuple[Callable[..., Any], str]] = {
    "BatchNorm1d 4-d": (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 2, 2)),
                        "expected 2D or 3D input (got 4D input)"),
    "BatchNorm2d 3-d": (lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 2)),
                        "expected 4D input (got 3D input)"),
    "BatchNorm3d 4-d": (lambda lib: lib.nn.BatchNorm3d(3)(lib.ones(2, 3, 2, 2)),
                        "expected 5D input (got 4D input)"),
    "BatchNorm1d one value": (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
                              "Expected more than 1 value per channel when training"),
    "BatchNorm1d channels": (lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 4)),
                             "running_mean should contain 4 elements not 3"),
    "GroupNorm divisible": (lambda lib: lib.nn.GroupNorm(2, 3),
                            "num_channels (3) must be divisible by num_groups (2)"),
    "LayerNorm shape": (lambda lib: lib.nn.LayerNorm(4)(lib.ones(2, 3)),
                        "Given normalized_shape=[4], expected input with shape [*, 4]"),
}


@pytest.mark.parametrize("case", sorted(MODULE_ERRORS))
def test_module_errors(case: str) -> None:
    same(MODULE_ERRORS[case][0], phrase=MODULE_ERRORS[case][1])


def test_batch_norm_one_value_allowed_in_eval() -> None:
    same(lambda lib: lib.nn.BatchNorm1d(3).eval()(lib.ones(1, 3)))


def test_training_steps_match_with_sgd() -> None:
    """A small model (Linear, BatchNorm1d, ReLU, Linear, LayerNorm) trained a few SGD steps:
    the losses and the final parameters and buffers equal torch's."""

    def program(lib: Any) -> Any:
        model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(),
                                  lib.nn.Linear(6, 3), lib.nn.LayerNorm(3)).double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(arr(50 + i, tuple(p.shape), 0.5)))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for step in range(4):
            x = const(lib, arr(60 + step, (8, 4)), "float64")
            t = const(lib, arr(70 + step, (8, 3)), "float64")
            opt.zero_grad()
            loss = ((model(x) - t) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        return [losses, model(const(lib, arr(80, (2, 4)), "float64")),
                dict(model.state_dict())]

    same(program, tol=1e-9)


def test_state_dict_without_num_batches_tracked_loads_as_torch() -> None:
    """A state dict from a plain mapping (no version metadata) may lack the count."""
    from torch_parity import same

    def program(lib: Any) -> Any:
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        m[1].num_batches_tracked.add_(4)
        sd = {k: v for k, v in m.state_dict().items() if "num_batches" not in k}
        return str(m.load_state_dict(sd)), m[1].num_batches_tracked

    same(program)
