"""The everyday ``nn.functional`` extras and their modules against PyTorch: ``normalize``,
``cosine_similarity``, ``pairwise_distance``, the pointwise activations (``softmin`` ...
``glu``), ``rms_norm``, ``instance_norm``, channel-wise dropout, ``interpolate``,
``pixel_shuffle``/``pixel_unshuffle`` -- values, gradients, double backward, float32
closeness, errors -- and the modules (defaults, parameters, ``repr``, training steps). Each
program is written once against a library handle ``lib`` (``torch`` or ``retrograd``); inputs
come from NumPy, so both libraries see the same values."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from torch_parity import same


def fn(lib: Any) -> Any:
    """``lib.nn.functional``."""
    return importlib.import_module(f"{lib.__name__}.nn.functional")


def arr(seed: int, shape: tuple[int, ...], scale: float = 1.0) -> Any:
    return np.random.default_rng(seed).standard_normal(shape) * scale


def leaf(lib: Any, a: Any, dtype: str = "float64", grad: bool = True) -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad)


def derivatives(lib: Any, call: Callable[..., Any], shapes: list[tuple[int, ...]],
                dtype: str, scale: float) -> dict[str, Any]:
    """The output, its gradients for a random cotangent (create_graph) and the gradients of a
    random combination of the first gradients' squares (double backward)."""
    xs = [leaf(lib, arr(i, s, scale), dtype) for i, s in enumerate(shapes)]
    y = call(lib, *xs)
    g = leaf(lib, arr(99, tuple(y.shape)), dtype, False)
    first = lib.autograd.grad(y, xs, g, create_graph=True, allow_unused=True,
                              materialize_grads=True)
    total = sum(((d * d) * leaf(lib, arr(50 + i, tuple(d.shape)), dtype, False)).sum()
                for i, d in enumerate(first))
    second = lib.autograd.grad(total, xs, allow_unused=True, materialize_grads=True)
    return {"y": y, "dtype": str(y.dtype).rpartition(".")[2], "first": first, "second": second}


def check(call: Callable[..., Any], *shapes: tuple[int, ...], scale: float = 1.0,
          double: bool = True) -> None:
    """float64: values, gradients and (``double``) second derivatives equal torch's to 1e-10;
    float32: values and gradients close to torch's float32 results."""
    def program(lib: Any) -> Any:
        out = derivatives(lib, call, list(shapes), "float64", scale)
        if not double:
            out.pop("second")
        return out

    same(program, tol=1e-10)

    def single(lib: Any) -> Any:
        xs = [leaf(lib, arr(i, s, scale), "float32") for i, s in enumerate(shapes)]
        y = call(lib, *xs)
        g = leaf(lib, arr(99, tuple(y.shape)), "float32", False)
        return {"y": y, "grads": lib.autograd.grad(y, xs, g, allow_unused=True,
                                                   materialize_grads=True)}

    same(single, tol=2e-5)


# ---- normalize, cosine_similarity, pairwise_distance -----------------------------------------
@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"dim": 0}, {"p": 3.0, "dim": -1},
                                {"dim": (0, 2)}])
def test_normalize(kw):
    check(lambda lib, x: fn(lib).normalize(x, **kw), (3, 4, 2))


def test_normalize_clamps_a_zero_vector():
    def program(lib: Any) -> Any:
        x = lib.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = fn(lib).normalize(x, dim=1)
        return y, lib.autograd.grad(y.sum(), x)

    same(program)


@pytest.mark.parametrize("shapes,kw", [(((4, 3), (4, 3)), {}), (((2, 5), (2, 5)), {"dim": 0}),
                                       (((3, 1, 4), (2, 4)), {"dim": -1}),
                                       (((3, 4), (3, 4)), {"eps": 0.5})])
def test_cosine_similarity(shapes, kw):
    check(lambda lib, a, b: fn(lib).cosine_similarity(a, b, **kw), *shapes)


def test_cosine_similarity_small_norm_gradient_as_torch():
    """Below ``eps`` the norm is clamped without the clamp's gradient (PyTorch's no-grad
    clamp)."""
    def program(lib: Any) -> Any:
        a = lib.tensor([[1e-9, 2e-9], [1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=lib.float64, requires_grad=True)
        y = fn(lib).cosine_similarity(a, b)
        return y, lib.autograd.grad(y.sum(), (a, b))

    same(program)


@pytest.mark.parametrize("kw", [{}, {"p": 1.0}, {"keepdim": True}, {"p": 3.0, "eps": 0.1}])
def test_pairwise_distance(kw):
    # p=1: torch's second derivative of the 1-norm fails (unallocated storage), so first only
    check(lambda lib, a, b: fn(lib).pairwise_distance(a, b, **kw), (4, 3), (4, 3),
          double=kw.get("p") != 1.0)


def test_pairwise_distance_broadcasts():
    check(lambda lib, a, b: fn(lib).pairwise_distance(a, b), (2, 4, 3), (4, 3))


# ---- pointwise activations --------------------------------------------------------------------
ACTIVATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "softmin dim=1": lambda lib, x: fn(lib).softmin(x, dim=1),
    "softmin dim=0": lambda lib, x: fn(lib).softmin(x, 0),
    "softsign": lambda lib, x: fn(lib).softsign(x),
    "tanhshrink": lambda lib, x: fn(lib).tanhshrink(x),
    "threshold": lambda lib, x: fn(lib).threshold(x, 0.3, -2.0),
    "hardsigmoid": lambda lib, x: fn(lib).hardsigmoid(x),
    "hardswish": lambda lib, x: fn(lib).hardswish(x),
    "celu": lambda lib, x: fn(lib).celu(x),
    "celu alpha=0.5": lambda lib, x: fn(lib).celu(x, 0.5),
    "glu": lambda lib, x: fn(lib).glu(x),
    "glu dim=0": lambda lib, x: fn(lib).glu(x, 0),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation(name):
    check(ACTIVATIONS[name], (4, 6), scale=3.0, double=name != "hardsigmoid")


def test_hardsigmoid_double_backward_refuses_as_torch():
    def program(lib: Any) -> Any:
        x = leaf(lib, arr(0, (3,), 3.0))
        (g,) = lib.autograd.grad(fn(lib).hardsigmoid(x).sum() * 1.0, x, create_graph=True)
        return lib.autograd.grad((g * g * x).sum(), x)

    same(program, "derivative for aten::hardsigmoid_backward is not implemented")


def test_activation_kinks_as_torch():
    """Exactly at the kinks, the gradients are PyTorch's."""
    points = [-3.0, 3.0, 0.0, 0.3, -1.0, 4.0, -4.0]

    def program(lib: Any) -> Any:
        out = {}
        for name, call in ACTIVATIONS.items():
            if name.startswith("glu") or name.startswith("softmin"):
                continue
            x = lib.tensor(points, dtype=lib.float64, requires_grad=True)
            y = call(lib, x)
            out[name] = (y, lib.autograd.grad(y.sum(), x))
        return out

    same(program)


def test_celu_large_input_has_finite_gradients():
    check(lambda lib, x: fn(lib).celu(x, 0.1), (3, 3), scale=200.0)


@pytest.mark.parametrize("wshape,xshape", [((1,), (3, 4)), ((4,), (3, 4)), ((3,), (2, 3, 5)),
                                           ((), (2, 3)), ((1,), ())])
def test_prelu(wshape, xshape):
    check(lambda lib, w, x: fn(lib).prelu(x, w), wshape, xshape, scale=2.0)


@pytest.mark.parametrize("name", ["threshold", "hardsigmoid", "hardswish", "celu"])
def test_inplace_forms(name):
    def program(lib: Any) -> Any:
        x = leaf(lib, arr(3, (3, 4), 3.0))
        h = x * 1.5
        args = (0.3, -2.0) if name == "threshold" else ()
        y = getattr(fn(lib), name)(h, *args, inplace=True)
        return y is h, y, lib.autograd.grad((y * y).sum(), x)

    same(program)


def test_threshold_keeps_integer_dtype():
    same(lambda lib: fn(lib).threshold(lib.tensor([1, 2, 3]), 1.5, 0.7))


def test_softmin_implicit_dim_warns():
    for lib in (pytest.importorskip("torch"), importlib.import_module("retrograd")):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            y = fn(lib).softmin(lib.tensor([[1.0, 2.0], [0.5, 0.1]]))
        assert any("Implicit dimension choice for softmin" in str(w.message) for w in seen)
        assert abs(float(y.sum()) - 2.0) < 1e-6


# ---- rms_norm, instance_norm ------------------------------------------------------------------
@pytest.mark.parametrize("shape,norm,kw", [((3, 4), [4], {}), ((2, 3, 4), (3, 4), {}),
                                           ((2, 5), [5], {"eps": 1e-3})])
def test_rms_norm(shape, norm, kw):
    check(lambda lib, x: fn(lib).rms_norm(x, norm, **kw), shape)
    check(lambda lib, x, w: fn(lib).rms_norm(x, norm, w, **kw), shape, tuple(norm))


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 2, 2, 3)])
def test_instance_norm(shape):
    c = shape[1]
    check(lambda lib, x: fn(lib).instance_norm(x), shape)
    check(lambda lib, x, w, b: fn(lib).instance_norm(x, weight=w, bias=b), shape, (c,), (c,))


def test_instance_norm_running_stats():
    def program(lib: Any) -> Any:
        x = leaf(lib, arr(1, (3, 2, 5)))
        rm = lib.tensor([0.1, -0.2], dtype=lib.float64)
        rv = lib.tensor([1.5, 0.5], dtype=lib.float64)
        y = fn(lib).instance_norm(x, rm, rv, momentum=0.3)
        z = fn(lib).instance_norm(x, rm, rv, use_input_stats=False)
        return y, z, rm, rv, lib.autograd.grad((y * z).sum(), x)

    same(program)


# ---- dropout1d / dropout2d --------------------------------------------------------------------
@pytest.mark.parametrize("name,shape", [("dropout1d", (4, 6, 5)), ("dropout1d", (6, 5)),
                                        ("dropout2d", (3, 4, 3, 3))])
def test_channel_dropout_zeroes_whole_channels(name, shape):
    import retrograd as rg

    rg.manual_seed(0)
    x = rg.tensor(arr(0, shape) + 10.0, requires_grad=True)
    y = getattr(rg.nn.functional, name)(x, 0.5)
    v, xv = np.asarray(y.tolist()), np.asarray(x.tolist())
    channels = v.reshape(-1, shape[-1] if name == "dropout1d" else shape[-1] * shape[-2])
    kept = np.all(channels != 0, axis=1)
    assert np.all(kept | np.all(channels == 0, axis=1))  # a channel is kept or zeroed whole
    assert 0 < kept.sum() < len(kept)
    np.testing.assert_allclose(v[v != 0], 2.0 * xv[v != 0])
    (g,) = rg.autograd.grad(y.sum(), x)
    assert np.array_equal(np.asarray(g.tolist()) != 0, v != 0)


@pytest.mark.parametrize("call", [
    lambda lib, x: fn(lib).dropout1d(x, 0.0),
    lambda lib, x: fn(lib).dropout1d(x, 0.6, training=False),
    lambda lib, x: fn(lib).dropout2d(x.unsqueeze(-1), 1.0),
    lambda lib, x: fn(lib).dropout1d(x, 1.0),
])
def test_channel_dropout_deterministic_cases(call):
    check(lambda lib, x: call(lib, x) * x, (2, 3, 4))


def test_dropout2d_warns_on_3d_input():
    import torch

    import retrograd as rg

    for lib in (torch, rg):
        with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
            fn(lib).dropout2d(lib.ones(2, 3, 4), 0.5, training=False)


# ---- interpolate ------------------------------------------------------------------------------
INTERPOLATIONS = [
    ((1, 2, 3, 4), {"scale_factor": 2}),
    ((1, 2, 3, 4), {"size": (5, 7)}),
    ((2, 1, 5, 4), {"size": (3, 2)}),
    ((1, 2, 3, 4), {"scale_factor": 1.7}),
    ((1, 2, 3, 4), {"scale_factor": (2.5, 0.6), "recompute_scale_factor": True}),
    ((1, 2, 3, 4), {"size": 6, "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear", "align_corners": True}),
    ((2, 1, 5, 4), {"size": (3, 2), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"scale_factor": 1.7, "mode": "bilinear"}),
    ((1, 2, 3, 4), {"scale_factor": 2, "mode": "bilinear", "align_corners": True}),
    ((1, 2, 5), {"size": 8, "mode": "linear"}),
    ((1, 2, 5), {"scale_factor": 1.5}),
    ((1, 1, 2, 3, 2), {"scale_factor": 2, "mode": "trilinear"}),
    ((1, 2, 3, 4), {"size": (5, 7), "mode": "nearest-exact"}),
    ((1, 2, 6, 4), {"size": (3, 2), "mode": "area"}),
]


@pytest.mark.parametrize("shape,kw", INTERPOLATIONS, ids=[str(k) for _, k in INTERPOLATIONS])
def test_interpolate(shape, kw):
    check(lambda lib, x: fn(lib).interpolate(x, **kw) ** 2, shape)


# ---- pixel_shuffle / pixel_unshuffle ----------------------------------------------------------
@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((2, 9, 2, 2), 3), ((4, 3, 2), 2)])
def test_pixel_shuffle(shape, r):
    check(lambda lib, x: fn(lib).pixel_shuffle(x, r) ** 2, shape)


@pytest.mark.parametrize("shape,r", [((1, 2, 4, 6), 2), ((2, 1, 3, 6), 3)])
def test_pixel_unshuffle(shape, r):
    check(lambda lib, x: fn(lib).pixel_unshuffle(x, r) ** 2, shape)
    same(lambda lib: fn(lib).pixel_shuffle(fn(lib).pixel_unshuffle(
        lib.tensor(arr(0, shape)), r), r))


# ---- errors -----------------------------------------------------------------------------------
def _t(lib: Any, *shape: int) -> Any:
    return lib.tensor(arr(0, shape))


ERRORS: dict[str, tuple[Callable[[Any], Any], str | None]] = {
    "prelu channels": (lambda lib: fn(lib).prelu(_t(lib, 2, 3), _t(lib, 2)),
                       "Mismatch of parameter numbers"),
    "prelu weight ndim": (lambda lib: fn(lib).prelu(_t(lib, 2, 3), _t(lib, 3, 1)),
                          "Expected `weight` to be a scalar or 1D tensor"),
    "prelu 0-d input": (lambda lib: fn(lib).prelu(_t(lib), _t(lib, 3)),
                        "Not allow zero-dim input tensor"),
    "glu odd": (lambda lib: fn(lib).glu(_t(lib, 2, 3), 1), "Halving dimension must be even"),
    "glu 0-d": (lambda lib: fn(lib).glu(_t(lib)), "glu does not support scalars"),
    "glu dim": (lambda lib: fn(lib).glu(_t(lib, 2, 4), 2), "Dimension out of range"),
    "celu alpha 0": (lambda lib: fn(lib).celu(_t(lib, 3), 0.0), "alpha cannot be 0"),
    "hardsigmoid int": (lambda lib: fn(lib).hardsigmoid(lib.tensor([1, 2])), "not implemented"),
    "hardswish int": (lambda lib: fn(lib).hardswish(lib.tensor([1, 2])), "not implemented"),
    "cosine int": (lambda lib: fn(lib).cosine_similarity(lib.tensor([1, 2]),
                                                        lib.tensor([1, 2])),
                   "expected common dtype to be floating point"),
    "cosine shapes": (lambda lib: fn(lib).cosine_similarity(_t(lib, 2, 3), _t(lib, 4, 3)),
                      "must match the size"),
    "rms_norm shape": (lambda lib: fn(lib).rms_norm(_t(lib, 2, 3), [4]),
                       "expected input with shape"),
    "rms_norm weight": (lambda lib: fn(lib).rms_norm(_t(lib, 2, 3), [3], _t(lib, 2)),
                        "Expected weight to be of same shape"),
    "instance_norm spatial": (lambda lib: fn(lib).instance_norm(_t(lib, 2, 3, 1)),
                              "Expected more than 1 spatial element"),
    "instance_norm no stats": (lambda lib: fn(lib).instance_norm(_t(lib, 2, 3, 4),
                                                                 use_input_stats=False),
                               "Expected running_mean and running_var"),
    "dropout1d rank": (lambda lib: fn(lib).dropout1d(_t(lib, 2, 2, 2, 2)),
                       "Expected 2D or 3D input"),
    "dropout1d p": (lambda lib: fn(lib).dropout1d(_t(lib, 2, 2), 1.5),
                    "dropout probability has to be between 0 and 1"),
    "dropout2d 1-d": (lambda lib: fn(lib).dropout2d(_t(lib, 3)),
                      "Feature dropout requires at least 2 dimensions"),
    "pixel_shuffle channels": (lambda lib: fn(lib).pixel_shuffle(_t(lib, 2, 5, 2, 2), 2),
                               "is not divisible by 4"),
    "pixel_shuffle rank": (lambda lib: fn(lib).pixel_shuffle(_t(lib, 5, 2), 2),
                           "expects input to have at least 3 dimensions"),
    "pixel_shuffle factor": (lambda lib: fn(lib).pixel_shuffle(_t(lib, 1, 4, 2, 2), 0),
                             "expects a positive upscale_factor"),
    "pixel_unshuffle height": (lambda lib: fn(lib).pixel_unshuffle(_t(lib, 1, 5, 3, 2), 2),
                               "expects height to be divisible"),
    "pixel_unshuffle width": (lambda lib: fn(lib).pixel_unshuffle(_t(lib, 1, 5, 2, 3), 2),
                              "expects width to be divisible"),
    "interpolate 2-d": (lambda lib: fn(lib).interpolate(_t(lib, 3, 4), scale_factor=2),
                        "Only 3D, 4D and 5D input Tensors supported"),
    "interpolate bilinear 3-d": (lambda lib: fn(lib).interpolate(
        _t(lib, 2, 3, 4), scale_factor=2, mode="bilinear"), "bilinear mode needs 4D input"),
    "interpolate align nearest": (lambda lib: fn(lib).interpolate(
        _t(lib, 1, 1, 2, 2), scale_factor=2, align_corners=True), "align_corners option"),
    "interpolate neither": (lambda lib: fn(lib).interpolate(_t(lib, 1, 1, 2, 2)),
                            "either size or scale_factor should be defined"),
    "interpolate both": (lambda lib: fn(lib).interpolate(_t(lib, 1, 1, 2, 2), 2, 2),
                         "only one of size or scale_factor"),
    "interpolate size length": (lambda lib: fn(lib).interpolate(_t(lib, 1, 1, 2, 2), [2]),
                                "same number of spatial dimensions"),
    "interpolate mode": (lambda lib: fn(lib).interpolate(_t(lib, 1, 1, 2, 2), 3, mode="foo"),
                         "Only 3D, 4D and 5D input Tensors supported"),
    "normalize int": (lambda lib: fn(lib).normalize(lib.tensor([1, 2]), dim=0), None),
    "threshold not tensor": (lambda lib: fn(lib).threshold([1.0], 0.5, 0.0), "must be Tensor"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    program, phrase = ERRORS[name]
    same(program, phrase)


# ---- modules ----------------------------------------------------------------------------------
MODULES: dict[str, Callable[[Any], Any]] = {
    "Unflatten": lambda nn: nn.Unflatten(1, (2, 3)),
    "Softmin": lambda nn: nn.Softmin(dim=1),
    "Softsign": lambda nn: nn.Softsign(),
    "Tanhshrink": lambda nn: nn.Tanhshrink(),
    "Threshold": lambda nn: nn.Threshold(0.1, 20.0),
    "Threshold inplace": lambda nn: nn.Threshold(0.1, 20.0, inplace=True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(),
    "Hardswish": lambda nn: nn.Hardswish(),
    "CELU": lambda nn: nn.CELU(0.7),
    "PReLU": lambda nn: nn.PReLU(),
    "PReLU 6": lambda nn: nn.PReLU(6, init=0.1),
    "GLU": lambda nn: nn.GLU(),
    "RMSNorm": lambda nn: nn.RMSNorm(6),
    "RMSNorm no affine": lambda nn: nn.RMSNorm([6], eps=1e-4, elementwise_affine=False),
    "Dropout1d": lambda nn: nn.Dropout1d(0.2),
    "Dropout2d": lambda nn: nn.Dropout2d(),
    "PixelShuffle": lambda nn: nn.PixelShuffle(2),
    "PixelUnshuffle": lambda nn: nn.PixelUnshuffle(2),
    "CosineSimilarity": lambda nn: nn.CosineSimilarity(dim=0),
    "PairwiseDistance": lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True),
    "ZeroPad2d": lambda nn: nn.ZeroPad2d((1, 0, 2, 1)),
    "ZeroPad2d int": lambda nn: nn.ZeroPad2d(1),
    "Upsample": lambda nn: nn.Upsample(scale_factor=2),
    "Upsample bilinear": lambda nn: nn.Upsample(size=(3, 5), mode="bilinear",
                                                align_corners=True),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_module_surface(name):
    def program(lib: Any) -> Any:
        m = MODULES[name](lib.nn)
        return {"repr": repr(m), "params": dict(m.named_parameters()),
                "state": dict(m.state_dict())}

    same(program)


def _module_input(name: str, lib: Any) -> Any:
    shape = {"PixelShuffle": (2, 8, 2, 3), "PixelUnshuffle": (2, 2, 4, 6),
             "ZeroPad2d": (2, 3, 4, 6), "ZeroPad2d int": (2, 3, 4, 6), "Upsample": (1, 2, 3, 2),
             "Upsample bilinear": (1, 2, 3, 2)}.get(name, (4, 6))
    return leaf(lib, arr(1, shape, 2.0))


@pytest.mark.parametrize("name", [n for n in MODULES if not n.startswith("Dropout")])
def test_module_forward_backward(name):
    def program(lib: Any) -> Any:
        m = MODULES[name](lib.nn).double()
        x = _module_input(name, lib)
        h = x * 1.0
        y = m(h, h * h + 1.0) if name in ("CosineSimilarity", "PairwiseDistance") else m(h)
        loss = (y * y).sum()
        loss.backward()
        return {"y": y, "x": x.grad, "params": {k: p.grad for k, p in m.named_parameters()}}

    same(program, tol=1e-10)


def test_dropout_modules_eval_are_identity():
    import retrograd as rg

    for m in (rg.nn.Dropout1d(0.3), rg.nn.Dropout2d(0.3)):
        x = rg.ones(2, 3, 4)
        assert m.eval()(x) is x
        assert repr(m) == f"{type(m).__name__}(p=0.3, inplace=False)"


@pytest.mark.parametrize("kind", ["InstanceNorm1d", "InstanceNorm2d"])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": 0.3},
                                {"affine": True, "bias": False}])
def test_instance_norm_modules(kind, kw):
    shape = (3, 2, 5) if kind == "InstanceNorm1d" else (2, 2, 3, 3)

    def program(lib: Any) -> Any:
        m = getattr(lib.nn, kind)(2, **kw).double()
        out: dict[str, Any] = {"repr": repr(m), "state0": dict(m.state_dict())}
        for step in range(2):
            x = leaf(lib, arr(step, shape))
            y = m(x)
            (y * y * leaf(lib, arr(9, shape), grad=False)).sum().backward()
            out[f"y{step}"] = y
            out[f"g{step}"] = x.grad
        out["params"] = {k: p.grad for k, p in m.named_parameters()}
        m.eval()
        out["eval"] = m(leaf(lib, arr(5, shape), grad=False))
        out["unbatched"] = m(leaf(lib, arr(6, shape[1:]), grad=False))
        out["state"] = dict(m.state_dict())
        return out

    same(program, tol=1e-10)


def test_instance_norm_module_wrong_rank():
    same(lambda lib: lib.nn.InstanceNorm2d(2)(lib.ones(2, 2, 3)), "expected 3D or 4D input")


def test_prelu_module_trains_like_torch():
    def program(lib: Any) -> Any:
        m = lib.nn.PReLU(3).double()
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            x = leaf(lib, arr(step, (4, 3, 2)), grad=False)
            (m(x) ** 2).mean().backward()
            opt.step()
        return m.weight

    same(program, tol=1e-10)
