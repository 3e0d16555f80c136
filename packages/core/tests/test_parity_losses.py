"""The losses against PyTorch: values, gradients (input and target where PyTorch gives them),
double backward, node names, dtypes, reductions, class weights, ignore_index,
label_smoothing, class-probability targets, (N, C, d1, ...) inputs, the loss modules and the
errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_parity import same  # noqa: E402

REDUCTIONS = ["mean", "sum", "none"]
DTYPES = ["float32", "float64"]


def _tol(dtype: str) -> float:
    return 1e-10 if dtype == "float64" else 1e-5


def _t(lib, arr, dtype="float64", grad=False):
    t = lib.tensor(np.asarray(arr), dtype=getattr(lib, dtype))
    return t.requires_grad_() if grad else t


def _grad(lib, out, inputs, create_graph=False):
    return lib.autograd.grad(out, inputs, create_graph=create_graph)


def _full(lib, loss, inputs, name=True):
    """The loss, its node name (``name``), its dtype, its gradients and a second derivative
    (``+ 0``: PyTorch's may be an expanded zero without storage, which ``tolist`` refuses)."""
    s = loss.sum() if loss.ndim else loss
    gs = _grad(lib, s, inputs, create_graph=True)
    total = sum((g * g).sum() for g in gs)
    gg = _grad(lib, total, inputs[:1])[0] + 0 if total.requires_grad else None
    return [loss.detach(), loss.grad_fn.name() if name else None,
            str(loss.dtype).split(".")[-1], [g.detach() for g in gs], gg]


def _logits(lib, shape, dtype, seed=0):
    return _t(lib, np.random.default_rng(seed).standard_normal(shape), dtype, True)


# -- nll_loss, cross_entropy ------------------------------------------------------------------
TARGET = [0, 4, -100, 2, 1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(dtype, reduction, weighted):
    def program(lib):
        x = _logits(lib, (5, 5), dtype)
        w = _t(lib, np.linspace(0.2, 1.5, 5), dtype) if weighted else None
        return _full(lib, lib.nn.functional.nll_loss(x, lib.tensor(TARGET), weight=w,
                                                     reduction=reduction), [x])
    same(program, tol=_tol(dtype))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2), (2, 3, 2, 1, 2)])
def test_nll_loss_spatial(reduction, shape):
    def program(lib):
        x = _logits(lib, shape, "float64")
        t = np.random.default_rng(1).integers(0, 3, (shape[0], *shape[2:]))
        t.reshape(-1)[1] = 1 if reduction == "sum" else -100
        return _full(lib, lib.nn.functional.nll_loss(
            x, lib.tensor(t), weight=lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64),
            reduction=reduction), [x])
    same(program, tol=1e-10)


def test_nll_loss_unbatched_ignore_index_and_all_ignored():
    def program(lib):
        F = lib.nn.functional
        x = _logits(lib, (4,), "float64")
        out = [_full(lib, F.nll_loss(x, lib.tensor(2), reduction=r), [x]) for r in REDUCTIONS]
        # a (1,) target is read as the 0-d one (forward only: PyTorch's backward refuses it)
        one = [F.nll_loss(x, lib.tensor([3]), reduction=r) for r in REDUCTIONS]
        out += [[o.detach(), tuple(o.shape)] for o in one]
        y = _logits(lib, (3, 4), "float64")
        out.append(_full(lib, F.nll_loss(y, lib.tensor([1, 3, 1]), ignore_index=1), [y]))
        out.append(F.nll_loss(y, lib.tensor([-100, -100, -100])).detach())
        out.append(_grad(lib, F.nll_loss(y, lib.tensor([-100, -100, -100])), [y]))
        return out
    same(program, tol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ["plain", "ignored", "weight", "smoothing", "weight+smoothing",
                                  "ignore_index=1", "3-d", "4-d", "4-d+smoothing", "1-d"])
def test_cross_entropy_class_indices(dtype, reduction, case):
    def program(lib):
        F = lib.nn.functional
        kw = {}
        if "weight" in case:
            kw["weight"] = _t(lib, [0.3, 1.0, 2.0, 0.7], dtype)
        if "smoothing" in case:
            kw["label_smoothing"] = 0.15
        if case == "ignore_index=1":
            kw["ignore_index"] = 1
        if case in ("3-d", "4-d", "4-d+smoothing"):
            shape = (2, 4, 3) if case == "3-d" else (2, 4, 3, 2)
            x = _logits(lib, shape, dtype)
            t = np.random.default_rng(2).integers(0, 4, (shape[0], *shape[2:]))
            t.reshape(-1)[0] = -100
        elif case == "1-d":
            x = _logits(lib, (4,), dtype)
            t = np.asarray(3)
        else:
            x = _logits(lib, (5, 4), dtype)
            t = np.asarray([0, 3, 1, 1, 2] if case == "plain" else [0, 3, -100, 1, 2])
        # the plain case is the fused CrossEntropyLossBackward0 (docs/semantics.md)
        return _full(lib, F.cross_entropy(x, lib.tensor(t), reduction=reduction, **kw), [x],
                     name=case not in ("plain", "1-d"))
    same(program, tol=_tol(dtype))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ["plain", "weight", "smoothing", "4-d", "1-d"])
def test_cross_entropy_class_probabilities(reduction, case):
    def program(lib):
        F = lib.nn.functional
        shape = {"4-d": (2, 3, 2, 2), "1-d": (3,)}.get(case, (4, 3))
        x = _logits(lib, shape, "float64")
        p = _t(lib, np.random.default_rng(5).random(shape), "float64", True)
        kw = {}
        if case == "weight":
            kw["weight"] = _t(lib, [0.3, 1.0, 2.0], "float64")
        if case == "smoothing":
            kw["label_smoothing"] = 0.2
        return _full(lib, F.cross_entropy(x, p, reduction=reduction, **kw), [x, p])
    same(program, tol=1e-10)


def test_cross_entropy_fast_path_keeps_its_node():
    """The plain case is still the fused node; a batch with an ignored target is PyTorch's
    graph."""
    import retrograd as rg

    x = rg.zeros(3, 4, requires_grad=True)
    assert rg.nn.functional.cross_entropy(x, rg.tensor([0, 1, 2])).grad_fn.name() == \
        "CrossEntropyLossBackward0"
    out = rg.nn.functional.cross_entropy(x, rg.tensor([0, -100, 2]))
    assert out.grad_fn.name() == "NllLossBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


# -- binary cross entropies -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(dtype, reduction, weighted):
    def program(lib):
        rng = np.random.default_rng(3)
        p = _t(lib, rng.uniform(0.05, 0.95, (3, 4)), dtype, True)
        t = _t(lib, rng.random((3, 4)), dtype, True)
        w = _t(lib, rng.random(4) + 0.5, dtype) if weighted else None
        return _full(lib, lib.nn.functional.binary_cross_entropy(p, t, w,
                                                                 reduction=reduction), [p, t])
    same(program, tol=_tol(dtype) * 10)


def test_binary_cross_entropy_clamps_the_log():
    def program(lib):
        p = _t(lib, [0.0, 1.0, 0.5], grad=True)
        out = lib.nn.functional.binary_cross_entropy(p, _t(lib, [1.0, 0.0, 1.0]),
                                                     reduction="none")
        return [out.detach(), _grad(lib, out.sum(), [p])]
    same(program)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ["plain", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits(dtype, reduction, case):
    def program(lib):
        rng = np.random.default_rng(4)
        x = _t(lib, rng.standard_normal((3, 4)) * 3, dtype, True)
        t = _t(lib, rng.random((3, 4)), dtype, True)
        w = _t(lib, rng.random((3, 1)) + 0.5, dtype) if case in ("weight", "both") else None
        pw = _t(lib, rng.random(4) + 0.5, dtype) if case in ("pos_weight", "both") else None
        return _full(lib, lib.nn.functional.binary_cross_entropy_with_logits(
            x, t, w, reduction=reduction, pos_weight=pw), [x, t])
    same(program, tol=_tol(dtype) * 10)


def test_binary_cross_entropy_with_logits_top_level():
    def program(lib):
        x = _t(lib, [[-30.0, 0.5], [2.0, 40.0]], grad=True)
        t = _t(lib, [[0.0, 1.0], [0.3, 1.0]])
        out = lib.binary_cross_entropy_with_logits(x, t, None, _t(lib, [2.0, 0.5]), 0)
        return [out.detach(), out.grad_fn.name(), _grad(lib, out.sum(), [x])]
    same(program)


# -- l1, smooth_l1, huber, kl_div ------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("loss", ["l1", "smooth_l1", "smooth_l1 beta=0.5", "smooth_l1 beta=0",
                                  "huber", "huber delta=0.4", "l1 weight", "huber weight",
                                  "mse", "mse weight"])
def test_regression_losses(dtype, reduction, loss):
    def program(lib):
        F = lib.nn.functional
        rng = np.random.default_rng(6)
        x = _t(lib, rng.standard_normal((3, 4)) * 1.5, dtype, True)
        y = _t(lib, rng.standard_normal((3, 4)), dtype, True)
        w = _t(lib, rng.random((3, 4)) + 0.5, dtype)
        name = loss.split()[0]
        kw = {}
        if "beta" in loss:
            kw["beta"] = float(loss.split("=")[1])
        if "delta" in loss:
            kw["delta"] = float(loss.split("=")[1])
        if "weight" in loss:
            kw["weight"] = w
        fn = getattr(F, f"{name}_loss")
        return _full(lib, fn(x, y, reduction=reduction, **kw), [x, y])
    same(program, tol=_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, reduction, log_target):
    def program(lib):
        rng = np.random.default_rng(7)
        x = lib.log_softmax(_t(lib, rng.standard_normal((3, 4)), dtype), 1).detach()
        x.requires_grad_()
        p = rng.dirichlet(np.ones(4), 3)
        p[0, 1] = 0.0
        t = _t(lib, np.log(p + 1e-3) if log_target else p, dtype, True)
        return _full(lib, lib.nn.functional.kl_div(x, t, reduction=reduction,
                                                   log_target=log_target), [x, t])
    same(program, tol=_tol(dtype))


def test_kl_div_mean_warns_and_top_level():
    def program(lib):
        x = _t(lib, [[-1.0, -2.0], [-0.5, -0.1]], grad=True)
        t = _t(lib, [[0.2, 0.8], [0.5, 0.5]])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.nn.functional.kl_div(x, t)
        top = lib.kl_div(x, t, 2, log_target=False)
        return [out.detach(), out.grad_fn.name(), [type(w.message).__name__ for w in seen],
                str(seen[0].message), top.detach(), top.grad_fn.name()]
    same(program)


def test_mse_loss_keeps_working():
    def program(lib):
        x = _logits(lib, (3, 2), "float64")
        y = _t(lib, [[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]], grad=True)
        return [_full(lib, lib.nn.functional.mse_loss(x, y, reduction=r), [x, y])
                for r in REDUCTIONS]
    same(program, tol=1e-10)


def test_legacy_size_average_and_reduce():
    def program(lib):
        F = lib.nn.functional
        x = _logits(lib, (3, 2), "float64")
        y = _t(lib, [[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = [F.l1_loss(x, y, False).detach(), F.l1_loss(x, y, None, False).detach(),
                   F.nll_loss(x, lib.tensor([0, 1, 1]), None, False).detach()]
        return out + [str(w.message) for w in seen]
    same(program, tol=1e-10)


# -- modules ----------------------------------------------------------------------------------
MODULES = {
    "NLLLoss": (lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5]), "ignore_index": 1},
                lambda lib, x: lib.log_softmax(x, 1), lambda lib: lib.tensor([0, 1, 2, 2])),
    "CrossEntropyLoss": (lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5]),
                                      "label_smoothing": 0.1, "reduction": "sum"},
                         lambda lib, x: x, lambda lib: lib.tensor([0, 1, 2, 2])),
    "BCELoss": (lambda lib: {"weight": lib.tensor([1.0, 2.0, 0.5])},
                lambda lib, x: lib.sigmoid(x), lambda lib: lib.full((4, 3), 0.25)),
    "BCEWithLogitsLoss": (lambda lib: {"pos_weight": lib.tensor([1.0, 2.0, 0.5])},
                          lambda lib, x: x, lambda lib: lib.full((4, 3), 0.25)),
    "L1Loss": (lambda lib: {"reduction": "none"}, lambda lib, x: x,
               lambda lib: lib.full((4, 3), 0.25)),
    "SmoothL1Loss": (lambda lib: {"beta": 0.5}, lambda lib, x: x,
                     lambda lib: lib.full((4, 3), 0.25)),
    "HuberLoss": (lambda lib: {"delta": 0.5}, lambda lib, x: x,
                  lambda lib: lib.full((4, 3), 0.25)),
    "KLDivLoss": (lambda lib: {"reduction": "batchmean", "log_target": True},
                  lambda lib, x: lib.log_softmax(x, 1), lambda lib: lib.full((4, 3), -1.1)),
    "MSELoss": (lambda lib: {}, lambda lib, x: x, lambda lib: lib.full((4, 3), 0.25)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_loss_modules(name):
    kwargs, prep, target = MODULES[name]

    def program(lib):
        default = getattr(lib.nn, name)()
        m = getattr(lib.nn, name)(**kwargs(lib))
        x = _logits(lib, (4, 3), "float32")
        out = m(prep(lib, x), target(lib))
        attrs = {k: getattr(m, k) for k in ("reduction", "ignore_index", "label_smoothing",
                                            "beta", "delta", "log_target") if hasattr(m, k)}
        return [repr(default), repr(m), sorted(m.state_dict()), sorted(default.state_dict()),
                [n for n, _ in m.named_buffers()], list(m.parameters()), attrs,
                out.detach(), _grad(lib, out.sum(), [x])]
    same(program, tol=1e-5)


# -- errors -----------------------------------------------------------------------------------
def _x(lib):
    return lib.zeros(3, 4)


ERRORS = [
    ("reduction", lambda lib: lib.nn.functional.nll_loss(_x(lib), lib.tensor([0, 1, 2]),
                                                         reduction="avg"),
     "avg is not a valid value for reduction"),
    ("ce reduction", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), lib.tensor([0, 1, 2]), reduction="bad"), "bad is not a valid value"),
    ("l1 reduction", lambda lib: lib.nn.functional.l1_loss(_x(lib), _x(lib), reduction="x"),
     "x is not a valid value for reduction"),
    ("bce reduction", lambda lib: lib.nn.functional.binary_cross_entropy(
        _x(lib), _x(lib), reduction="x"), "x is not a valid value for reduction"),
    ("kl reduction", lambda lib: lib.nn.functional.kl_div(_x(lib), _x(lib), reduction="x"),
     "x is not a valid value for reduction"),
    ("nll out of bounds", lambda lib: lib.nn.functional.nll_loss(_x(lib), lib.tensor([0, 5, 1])),
     "Target 5 is out of bounds."),
    ("ce weighted out of bounds", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), lib.tensor([0, -1, 1]), weight=lib.ones(4)), "Target -1 is out of bounds."),
    ("ce ignore but out of bounds", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), lib.tensor([-100, 7, 1])), "Target 7 is out of bounds."),
    ("ce 4-d out of bounds", lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(1, 2, 2, 2), lib.tensor([[[0, 1], [3, 0]]])), "Target 3 is out of bounds."),
    ("nll batch", lambda lib: lib.nn.functional.nll_loss(_x(lib), lib.tensor([0, 1])),
     "Expected input batch_size (3) to match target batch_size (2)."),
    ("nll weight size", lambda lib: lib.nn.functional.nll_loss(
        _x(lib), lib.tensor([0, 1, 2]), weight=lib.ones(3)),
     "weight tensor should be defined either for all 4 classes or no classes"),
    ("nll weight grad", lambda lib: lib.nn.functional.nll_loss(
        _x(lib), lib.tensor([0, 1, 2]), weight=lib.ones(4, requires_grad=True)),
     "is not differentiable with respect to argument 'weight'"),
    ("nll 0-d", lambda lib: lib.nn.functional.nll_loss(lib.zeros(()), lib.tensor(0)),
     "Expected 1 or more dimensions (got 0)"),
    ("ce prob int target", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), lib.zeros(3, 4, dtype=lib.int64)),
     "Expected floating point type for target with class probabilities"),
    ("ce prob ignore_index", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), _x(lib), ignore_index=1), "ignore_index is not supported for floating point"),
    ("ce smoothing", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), lib.tensor([0, 1, 2]), label_smoothing=1.5),
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    ("ce prob weight", lambda lib: lib.nn.functional.cross_entropy(
        _x(lib), _x(lib), weight=lib.ones(3)),
     "weight tensor should be defined either for all 4 classes or no classes"),
    ("bce range", lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.full((2,), 1.5), lib.zeros(2)), "all elements of input should be between 0 and 1"),
    ("bce size", lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.full((2, 3), 0.5), lib.zeros(3)), "is different to the input size"),
    ("bce weight grad", lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.full((2,), 0.5), lib.zeros(2), weight=lib.ones(2, requires_grad=True)),
     "not differentiable with respect to argument 'weight'"),
    ("bcel size", lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(2, 3), lib.zeros(3)), "must be the same as input size"),
    ("bcel pos_weight grad", lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.zeros(2), lib.zeros(2), pos_weight=lib.ones(2, requires_grad=True)),
     "not differentiable with respect to argument 'pos_weight'"),
    ("smooth_l1 beta", lambda lib: lib.nn.functional.smooth_l1_loss(_x(lib), _x(lib), beta=-1.0),
     "smooth_l1_loss does not support negative values for beta."),
    ("huber delta", lambda lib: lib.nn.functional.huber_loss(_x(lib), _x(lib), delta=0.0),
     "huber_loss does not support non-positive values for delta."),
    ("l1 weight size", lambda lib: lib.nn.functional.l1_loss(_x(lib), _x(lib),
                                                             weight=lib.ones(4)),
     "Weights and input must have the same size."),
    ("mse weight reduction", lambda lib: lib.nn.functional.mse_loss(
        _x(lib), _x(lib), reduction="avg", weight=lib.ones(3, 4)), "Invalid reduction mode: avg"),
    ("huber weight reduction", lambda lib: lib.nn.functional.huber_loss(
        _x(lib), _x(lib), reduction="avg", weight=lib.ones(3, 4)), "Invalid reduction mode: avg"),
    ("huber reduction", lambda lib: lib.nn.functional.huber_loss(_x(lib), _x(lib), "avg"),
     "avg is not a valid value for reduction"),
    ("nll target dtype", lambda lib: lib.nn.functional.nll_loss(
        _x(lib), lib.tensor([0, 1, 2], dtype=lib.int32)),
     "expected target dtype to be Long or Byte, but got Int"),
    ("ce 4-d target dtype", lambda lib: lib.nn.functional.cross_entropy(
        lib.zeros(2, 3, 2, 2), lib.zeros(2, 2, 2, dtype=lib.int32)),
     "expected target dtype to be Long or Byte, but got Int"),
    ("nll weight dtype", lambda lib: lib.nn.functional.nll_loss(
        _x(lib), lib.tensor([0, 1, 2]), weight=lib.ones(4, dtype=lib.float64)),
     "expected scalar type Float but found Double"),
    ("nll 1-d input 1-d target", lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(3), lib.tensor([1, 2])), "For 1D input, 1D target must have size 1"),
    ("smooth_l1 int", lambda lib: lib.nn.functional.smooth_l1_loss(
        lib.zeros(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)),
     "\"smooth_l1_cpu\" not implemented for 'Long'"),
    ("huber int", lambda lib: lib.nn.functional.huber_loss(
        lib.zeros(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)),
     "\"huber_cpu\" not implemented for 'Long'"),
    ("bce dtype", lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.zeros(2), lib.zeros(2, dtype=lib.float64)), "Found dtype Double but expected Float"),
    ("nll multi-target", lambda lib: lib.nn.functional.nll_loss(
        _x(lib), lib.zeros(3, 2, dtype=lib.int64)), None),
    ("nll 3-d target size", lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(2, 3, 4), lib.zeros(2, 5, dtype=lib.int64)), "Expected target size"),
    ("nll 4-d target size", lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(2, 3, 4, 4), lib.zeros(2, 4, 5, dtype=lib.int64)), "size mismatch"),
    ("nll int input", lambda lib: lib.nn.functional.nll_loss(
        lib.zeros(2, 3, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)), None),
    ("bce int input", lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.zeros(2, dtype=lib.int64), lib.zeros(2, dtype=lib.int64)), None),
    ("kl_div batchmean 0-d", lambda lib: lib.nn.functional.kl_div(
        lib.tensor(-1.0), lib.tensor(0.5), reduction="batchmean"), None),
]


@pytest.mark.parametrize(("label", "program", "phrase"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(label, program, phrase):
    same(program, phrase)


def test_target_size_warning_and_broadcast():
    def program(lib):
        x = _logits(lib, (3, 2), "float64")
        y = _t(lib, [1.0, -1.0])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.nn.functional.smooth_l1_loss(x, y)
        return [out.detach(), _grad(lib, out, [x]), [type(w.message).__name__ for w in seen]]
    same(program, tol=1e-10)
