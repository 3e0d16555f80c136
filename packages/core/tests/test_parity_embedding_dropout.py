"""``embedding``/``nn.Embedding``, ``one_hot`` and ``dropout``/``nn.Dropout`` against PyTorch:
values, dtypes, gradients (only to the rows used, none to ``padding_idx``), double backward,
node names, module parameters/state_dict/repr, defaults and errors. Dropout's masks come from
retrograd's own generator, so its randomness is checked statistically and by reproducibility;
its deterministic cases (p=0, p=1, eval, errors, node names) against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch_parity import same

import retrograd as rg

W = np.random.default_rng(7).standard_normal((6, 3))
IDX = [[0, 2, 5], [2, 2, 1]]


def _dt(dtype):
    return str(dtype).rpartition(".")[2]


def _weight(lib, dtype=None):
    return lib.tensor(W, dtype=dtype or lib.float64, requires_grad=True)


# -- embedding ----------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx", [None, 0, 2, -1, -6])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_values_grads(padding_idx, dtype):
    def program(lib):
        w = _weight(lib, getattr(lib, dtype))
        idx = lib.tensor(IDX)
        y = lib.nn.functional.embedding(idx, w, padding_idx=padding_idx)
        g = lib.tensor(np.arange(18.0).reshape(2, 3, 3), dtype=getattr(lib, dtype))
        y.backward(g)
        return y, _dt(y.dtype), tuple(y.shape), y.grad_fn.name(), w.grad

    same(program, tol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("idx", [3, [4], [[1], [1]], [[[0, 1], [5, 5]]]])
def test_embedding_index_shapes(idx):
    def program(lib):
        w = _weight(lib)
        y = lib.nn.functional.embedding(lib.tensor(idx), w)
        (y * y).sum().backward()
        return y, w.grad

    same(program)


def test_embedding_int32_indices_and_integer_weight():
    def program(lib):
        w = _weight(lib)
        y = lib.nn.functional.embedding(lib.tensor([1, 4], dtype=lib.int32), w)
        wi = lib.arange(12).reshape(4, 3)
        return y, lib.nn.functional.embedding(lib.tensor([3, 0]), wi)

    same(program)


def test_embedding_scale_grad_by_freq():
    def program(lib):
        w = _weight(lib)
        y = lib.nn.functional.embedding(lib.tensor(IDX), w, padding_idx=5,
                                        scale_grad_by_freq=True)
        y.backward(lib.tensor(np.arange(18.0).reshape(2, 3, 3)))
        return w.grad

    same(program)


@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("by_freq", [False, True])
def test_embedding_double_backward(padding_idx, by_freq):
    def program(lib):
        w = _weight(lib)
        gy = lib.tensor(np.random.default_rng(3).standard_normal((2, 3, 3)),
                        requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor(IDX), w, padding_idx,
                                        scale_grad_by_freq=by_freq)
        (g,) = lib.autograd.grad(y, w, gy, create_graph=True)
        (h,) = lib.autograd.grad((g * g * w).sum(), gy, create_graph=True)
        (k,) = lib.autograd.grad((h * h).sum(), gy)
        return g, g.grad_fn.name(), h, k

    same(program)


def test_embedding_gradient_through_weight_history():
    def program(lib):
        w0 = _weight(lib)
        w = w0 * 2.0
        y = lib.nn.functional.embedding(lib.tensor([[1, 1], [3, 0]]), w)
        (g,) = lib.autograd.grad(y.pow(3).sum(), w0, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), w0)
        return g, gg

    same(program)


@pytest.mark.parametrize("case, phrase", [
    ("high", "index out of range in self"),
    ("negative", "index out of range in self"),
    ("float index", "to have one of the following scalar types: Long, Int"),
    ("1-d weight", "'weight' must be 2-D"),
    ("padding high", "Padding_idx must be within num_embeddings"),
    ("padding low", "Padding_idx must be within num_embeddings"),
])
def test_embedding_errors(case, phrase):
    def program(lib):
        w = _weight(lib)
        F = lib.nn.functional
        if case == "high":
            return F.embedding(lib.tensor([6]), w)
        if case == "negative":
            return F.embedding(lib.tensor([-1]), w)
        if case == "float index":
            return F.embedding(lib.tensor([1.0]), w)
        if case == "1-d weight":
            return F.embedding(lib.tensor([1]), w[0])
        if case == "padding high":
            return F.embedding(lib.tensor([1]), w, padding_idx=6)
        return F.embedding(lib.tensor([1]), w, padding_idx=-7)

    same(program, phrase)


def test_embedding_module_surface():
    def program(lib):
        e = lib.nn.Embedding(10, 3, padding_idx=0)
        e2 = lib.nn.Embedding(10, 3, padding_idx=-2)
        e3 = lib.nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True,
                              sparse=True)
        names = [(n, tuple(p.shape), p.requires_grad) for n, p in e.named_parameters()]
        return (repr(e), repr(e2), repr(e3), repr(lib.nn.Embedding(5, 4)), names,
                list(e.state_dict().keys()), e.weight[0], e2.padding_idx, e2.weight[8],
                e.num_embeddings, e.embedding_dim, e.max_norm, e.norm_type,
                e.scale_grad_by_freq, e.sparse, _dt(e.weight.dtype),
                _dt(lib.nn.Embedding(2, 2, dtype=lib.float64).weight.dtype))

    same(program)


def test_embedding_module_init_is_standard_normal():
    rg.manual_seed(0)
    w = rg.nn.Embedding(4000, 50).weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1.0) < 0.01


def test_embedding_module_forward_backward_and_padding_grad():
    def program(lib):
        e = lib.nn.Embedding(6, 3, padding_idx=2)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(W, dtype=lib.float32))
        y = e(lib.tensor(IDX))
        (y * y).sum().backward()
        return y, e.weight.grad, y.grad_fn.name()

    same(program, tol=1e-6)


@pytest.mark.parametrize("freeze", [True, False])
def test_embedding_from_pretrained(freeze):
    def program(lib):
        emb = lib.nn.Embedding.from_pretrained(lib.tensor(W), freeze=freeze, padding_idx=1)
        y = emb(lib.tensor([1, 3]))
        return (repr(emb), emb.weight.requires_grad, y, emb.padding_idx,
                emb.weight[1])  # from_pretrained keeps the padding row as given

    same(program)


def test_embedding_from_pretrained_errors():
    same(lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(3)),
         "Embeddings parameter is expected to be 2-dimensional")
    same(lambda lib: lib.nn.Embedding(3, 2, padding_idx=3),
         "Padding_idx must be within num_embeddings")


def test_embedding_trains_like_torch():
    def program(lib):
        e = lib.nn.Embedding(6, 3, padding_idx=0)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(W))
        opt = lib.optim.SGD(e.parameters(), lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            loss = (e(lib.tensor(IDX)) ** 2).mean()
            loss.backward()
            opt.step()
        return e.weight

    same(program)


# -- one_hot ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [([1, 3], -1), ([1, 3], 6), ([[0, 2], [2, 1]], -1), (2, 4),
                                  ([], 3)])
def test_one_hot(args):
    values, k = args

    def program(lib):
        y = lib.nn.functional.one_hot(lib.tensor(values, dtype=lib.int64), k)
        return y, _dt(y.dtype), tuple(y.shape)

    same(program)


def test_one_hot_default_num_classes():
    same(lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 4, 1])))


@pytest.mark.parametrize("values, k, phrase", [
    ([-1, 2], -1, "Class values must be non-negative."),
    ([3], 2, "Class values must be smaller than num_classes."),
    ([1.0], -1, "one_hot is only applicable to index tensor"),
    ([], -1, "Can not infer total number of classes from empty tensor."),
])
def test_one_hot_errors(values, k, phrase):
    def program(lib):
        dt = lib.float32 if values and isinstance(values[0], float) else lib.int64
        return lib.nn.functional.one_hot(lib.tensor(values, dtype=dt), k)

    same(program, phrase)


# -- dropout ------------------------------------------------------------------------------------
def test_dropout_identity_cases_return_the_input():
    def program(lib):
        F = lib.nn.functional
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        e = lib.ones(0, requires_grad=True)
        return (F.dropout(x, 0.0) is x, F.dropout(x, 0.5, training=False) is x,
                F.dropout(x, 0.3, False, True) is x, F.dropout(e, 0.5) is e)

    same(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_p_one(dtype):
    def program(lib):
        x = lib.tensor([1.0, -2.0, 3.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.dropout(x, 1.0)
        y.sum().backward()
        return y, _dt(y.dtype), y.grad_fn.name(), x.grad

    same(program)


@pytest.mark.parametrize("p", [1.5, -0.1])
def test_dropout_p_range(p):
    same(lambda lib: lib.nn.functional.dropout(lib.ones(3), p),
         "dropout probability has to be between 0 and 1, but got")
    same(lambda lib: lib.nn.Dropout(p), "dropout probability has to be between 0 and 1")


def test_dropout_node_name_and_integer_refusal():
    def program(lib):
        x = lib.ones(4, requires_grad=True)
        return lib.nn.functional.dropout(x, 0.5).grad_fn.name()

    same(program)
    same(lambda lib: lib.nn.functional.dropout(lib.tensor([1, 2]), 0.5),
         "can't be cast to the desired output type Long")


def test_dropout_inplace_node_and_leaf_refusal():
    def program(lib):
        x = lib.ones(4, requires_grad=True)
        y = x * 1.0
        z = lib.nn.functional.dropout(y, 0.5, inplace=True)
        return z is y, z.grad_fn.name()

    same(program)
    same(lambda lib: lib.nn.functional.dropout(lib.ones(3, requires_grad=True), 0.5,
                                               inplace=True),
         "a leaf Variable that requires grad is being used in an in-place operation")


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dtype", [rg.float32, rg.float64])
def test_dropout_statistics_scale_and_gradient(p, dtype):
    rg.manual_seed(123)
    x = rg.full((200, 100), 2.0, dtype=dtype, requires_grad=True)
    y = rg.nn.functional.dropout(x, p)
    y.sum().backward()
    yv = y.detach().numpy()
    kept = yv != 0
    assert abs((~kept).mean() - p) < 0.02  # 20000 draws: 4.5 sigma at p=0.5
    np.testing.assert_allclose(yv[kept], 2.0 / (1.0 - p), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), kept / (1.0 - p), rtol=1e-6)
    assert y.dtype == dtype


def test_dropout_reproducible_with_manual_seed():
    x = rg.ones(50, 40)
    rg.manual_seed(5)
    a = rg.nn.functional.dropout(x, 0.4).numpy()
    b = rg.nn.functional.dropout(x, 0.4).numpy()
    rg.manual_seed(5)
    c = rg.nn.functional.dropout(x, 0.4).numpy()
    assert np.array_equal(a, c) and not np.array_equal(a, b)


def test_dropout_double_backward():
    rg.manual_seed(9)
    x = rg.linspace(-1.0, 1.0, 64, dtype=rg.float64).requires_grad_(True)
    y = rg.nn.functional.dropout(x, 0.25)
    mask = (y.detach() != 0).numpy() / 0.75
    (g,) = rg.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = rg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 2 * x.detach().numpy() * mask ** 2)
    np.testing.assert_allclose(gg.numpy(), 2 * mask ** 2)


def test_dropout_module():
    def program(lib):
        d = lib.nn.Dropout()
        d2 = lib.nn.Dropout(0.2, True)
        x = lib.ones(3, requires_grad=True)
        d.eval()
        same_in_eval = d(x) is x
        d.train()
        return (repr(d), repr(d2), d.p, d.inplace, same_in_eval, d(x).grad_fn.name(),
                list(d.state_dict().keys()), repr(lib.nn.Dropout(p=0.0)))

    same(program)


def test_dropout_module_training_statistics():
    rg.manual_seed(1)
    d = rg.nn.Dropout(0.3)
    y = d(rg.ones(100, 100)).numpy()
    assert abs((y == 0).mean() - 0.3) < 0.02
    d.eval()
    assert np.array_equal(d(rg.ones(4)).numpy(), np.ones(4, dtype=np.float32))


def test_dropout_module_positional_and_functional_defaults():
    # torch's defaults: p=0.5, training=True, inplace=False
    import inspect

    sig = inspect.signature(rg.nn.functional.dropout)
    tsig = inspect.signature(torch.nn.functional.dropout)
    assert [(n, p.default) for n, p in sig.parameters.items()] == \
        [(n, p.default) for n, p in tsig.parameters.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rg.nn.functional.dropout(rg.ones(2), 0.5)


def test_kernels_on_array_api_strict():
    """The embedding and one_hot kernels in plain Array-API calls give NumPy's values."""
    from retrograd.backends.kernels_attention import kernels

    xps = pytest.importorskip("array_api_strict")
    k, kn = kernels(xps), kernels(np)
    w = np.arange(15.0).reshape(5, 3)
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    g = np.arange(18.0).reshape(2, 3, 3)
    cases = [("embedding", (w, idx)), ("embedding_backward", (g, idx, 5, -1, False)),
             ("embedding_backward", (g, idx, 5, 2, True)),
             ("embedding_backward", (g, idx, 5, -1, True)),
             ("embedding_double_backward", (w, idx, 2)), ("one_hot_classes", (idx, 6))]
    for name, args in cases:
        got = k[name](*[xps.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
        np.testing.assert_allclose(np.asarray(got), kn[name](*args), rtol=1e-15,
                                   err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5])
def test_embedding_max_norm_renormalises_looked_up_rows(dtype, norm_type):
    """Rows looked up whose norm exceeds max_norm are scaled in place (PyTorch's
    embedding_renorm_); the others, and rows not looked up, are left alone; the gradient
    flows through the scaled rows; the weight's version moves."""
    def program(lib):
        w = lib.tensor(np.arange(15.0).reshape(5, 3) / 4 - 1, dtype=getattr(lib, dtype),
                       requires_grad=True)
        v0 = w._version
        out = lib.nn.functional.embedding(lib.tensor([[0, 3], [3, 4]]), w, max_norm=2.0,
                                          norm_type=norm_type)
        (out * lib.arange(3.0, dtype=w.dtype)).sum().backward()
        return out, w.detach().clone(), w.grad, w._version > v0

    same(program, tol=1e-6 if dtype == "float32" else 1e-12)


def test_embedding_module_max_norm_as_torch():
    def program(lib):
        lib.manual_seed(0)
        e = lib.nn.Embedding(6, 4, max_norm=1.0)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(np.linspace(-2, 2, 24).reshape(6, 4),
                                      dtype=e.weight.dtype))
        out = e(lib.tensor([1, 5, 1]))
        return out, e.weight.norm(dim=1)

    same(program, tol=1e-6)
