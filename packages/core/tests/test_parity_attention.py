"""``scaled_dot_product_attention``, ``nn.MultiheadAttention`` and the activation modules
(``GELU`` ... ``LogSigmoid``) against PyTorch: values, gradients and double backward (float64
to 1e-10), masks (bool, float, causal, key padding), batch layouts, parameters, state_dict
keys, reprs, defaults and errors. Each program is written once against a library handle
``lib``; weights travel between the libraries through NumPy."""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pytest
from torch_parity import same

import retrograd as rg

TOL = 1e-10


def _arr(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _leaf(lib, arr, dtype=None):
    return lib.tensor(arr, dtype=dtype or lib.float64, requires_grad=True)


def _dt(dtype):
    return str(dtype).rpartition(".")[2]


def _math_path(lib):
    """torch's math implementation of scaled_dot_product_attention (its CPU flash kernel has
    no double backward); nothing for retrograd, whose one path is the composition."""
    if lib is rg:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.MATH])


# -- scaled_dot_product_attention ---------------------------------------------------------------
SDPA_CASES = {
    "plain 4-d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), {}),
    "3-d": ((2, 4, 5), (2, 4, 5), (2, 4, 3), {}),
    "2-d": ((4, 5), (6, 5), (6, 2), {}),
    "broadcast batch": ((2, 3, 4, 5), (1, 3, 6, 5), (1, 3, 6, 5), {}),
    "scale": ((2, 4, 5), (2, 6, 5), (2, 6, 5), {"scale": 0.37}),
    "causal L<S": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"is_causal": True}),
    "causal L>S": ((2, 6, 5), (2, 4, 5), (2, 4, 5), {"is_causal": True}),
    "causal square": ((1, 2, 5, 3), (1, 2, 5, 3), (1, 2, 5, 3), {"is_causal": True}),
    "bool mask 2-d": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"mask": ("bool", (4, 6))}),
    "bool mask full": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5),
                       {"mask": ("bool", (2, 3, 4, 6))}),
    "bool mask dead row": ((2, 4, 5), (2, 6, 5), (2, 6, 5), {"mask": ("dead", (4, 6))}),
    "float mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), {"mask": ("float", (3, 4, 6))}),
    "float mask -inf row": ((2, 4, 5), (2, 6, 5), (2, 6, 5), {"mask": ("neginf", (4, 6))}),
    "gqa": ((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 5), {"enable_gqa": True}),
}


def _mask(lib, kind, shape):
    rng = np.random.default_rng(11)
    if kind == "bool":
        m = rng.random(shape) > 0.4
        m[..., 0] = True
        return lib.tensor(m)
    if kind == "dead":
        m = rng.random(shape) > 0.4
        m[..., 0] = True
        m[1] = False  # query 1 sees no key: zeros (torch's safe softmax)
        return lib.tensor(m)
    if kind == "neginf":
        m = rng.standard_normal(shape)
        m[2] = -math.inf
        return lib.tensor(m, dtype=lib.float64)
    return _leaf(lib, rng.standard_normal(shape))


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_values_grads_double_backward(case):
    qs, ks, vs, kw = SDPA_CASES[case]

    def program(lib):
        q, k, v = (_leaf(lib, _arr(i, *s)) for i, s in enumerate((qs, ks, vs)))
        kwargs = dict(kw)
        inputs = [q, k, v]
        if "mask" in kwargs:
            kwargs["attn_mask"] = _mask(lib, *kwargs.pop("mask"))
            if kwargs["attn_mask"].requires_grad:
                inputs.append(kwargs["attn_mask"])
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
        grads = lib.autograd.grad((out * out).sum(), inputs)
        with _math_path(lib):
            out2 = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
            grads1 = lib.autograd.grad((out2 * out2).sum(), inputs, create_graph=True)
            total = sum((g * g).sum() for g in grads1)
            grads2 = lib.autograd.grad(total, inputs)
        return out, tuple(out.shape), _dt(out.dtype), grads, out2, grads1, grads2

    same(program, tol=TOL)


def test_sdpa_float32():
    def program(lib):
        q, k, v = (_leaf(lib, _arr(i, 2, 3, 4, 5), lib.float32) for i in range(3))
        m = lib.tensor(np.random.default_rng(3).random((4, 4)) > 0.3) | lib.eye(4, dtype=lib.bool)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
        out.sum().backward()
        return out, _dt(out.dtype), q.grad, k.grad, v.grad

    same(program, tol=1e-5)


def test_sdpa_float_mask_float32_with_float64_query():
    def program(lib):
        q = _leaf(lib, _arr(0, 3, 4))
        m = lib.tensor(_arr(1, 3, 3), dtype=lib.float32)
        return lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m)

    same(program, tol=1e-7)


@pytest.mark.parametrize("case, phrase", [
    ("dtype", "Expected query, key, and value to have the same dtype"),
    ("mask dtype", "Expected attn_mask dtype to be bool or float or to match query dtype"),
    ("mask float64 for float32", "Expected attn_mask dtype to be bool or float"),
    ("1-d", "Expected query, key, and value to all be  at least 2 dimensional"),
    ("causal and mask", "Explicit attn_mask should not be set when is_causal=True"),
    ("dropout_p", "dropout probability has to be between 0 and 1, but got 1.5"),
    ("integer", "expected scalar type Float but found Long"),
])
def test_sdpa_errors(case, phrase):
    def program(lib):
        F = lib.nn.functional
        q = lib.tensor(_arr(0, 2, 3, 4))
        if case == "dtype":
            return F.scaled_dot_product_attention(q, q.float(), q)
        if case == "mask dtype":
            return F.scaled_dot_product_attention(q, q, q, attn_mask=lib.ones(3, 3,
                                                                            dtype=lib.int64))
        if case == "mask float64 for float32":
            qf = q.float()
            return F.scaled_dot_product_attention(qf, qf, qf, attn_mask=lib.zeros(3, 3,
                                                                               dtype=lib.float64))
        if case == "1-d":
            return F.scaled_dot_product_attention(q[0, 0], q[0, 0], q[0, 0])
        if case == "causal and mask":
            return F.scaled_dot_product_attention(q, q, q, attn_mask=lib.ones(3, 3,
                                                                            dtype=lib.bool),
                                                  is_causal=True)
        if case == "dropout_p":
            return F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
        qi = q.long()
        return F.scaled_dot_product_attention(qi, qi, qi)

    same(program, phrase)


def test_sdpa_dropout_one_and_zero():
    def program(lib):
        q = _leaf(lib, _arr(0, 2, 3, 4))
        F = lib.nn.functional
        return (F.scaled_dot_product_attention(q, q, q, dropout_p=1.0),
                F.scaled_dot_product_attention(q, q, q, dropout_p=0.0))

    same(program, tol=TOL)


def test_sdpa_dropout_statistics_and_seed():
    q = rg.tensor(_arr(0, 1, 64, 8))
    v = rg.ones(1, 64, 8, dtype=rg.float64)
    rg.manual_seed(4)
    a = rg.nn.functional.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    rg.manual_seed(4)
    b = rg.nn.functional.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    assert np.array_equal(a.numpy(), b.numpy())
    # each output row is (sum of the kept weights) / (1 - p): its mean over rows is ~1
    row = a.numpy()[0, :, 0]
    assert abs(row.mean() - 1.0) < 0.15 and row.std() > 0.01


def test_sdpa_signature_defaults():
    import inspect

    import torch

    got = inspect.signature(rg.nn.functional.scaled_dot_product_attention).parameters
    assert list(got) == ["query", "key", "value", "attn_mask", "dropout_p", "is_causal",
                         "scale", "enable_gqa"]
    assert [p.default for p in list(got.values())[3:]] == [None, 0.0, False, None, False]
    assert not hasattr(rg, "scaled_dot_product_attention") or hasattr(
        torch, "scaled_dot_product_attention")


# -- MultiheadAttention -------------------------------------------------------------------------
def _mha(lib, e=8, h=2, seed=0, **kw):
    """A MultiheadAttention with the same weights in both libraries (state_dict from NumPy)."""
    m = lib.nn.MultiheadAttention(e, h, **kw).double()
    rng = np.random.default_rng(seed)
    state = {k: lib.tensor(rng.standard_normal(tuple(v.shape)) * 0.5, dtype=lib.float64)
             for k, v in m.state_dict().items()}
    m.load_state_dict(state)
    return m


MHA_CASES = {
    "self": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "cross": ({}, {"cross": True}),
    "no weights": ({}, {"need_weights": False}),
    "per-head weights": ({}, {"average_attn_weights": False}),
    "bool attn_mask": ({}, {"attn_mask": "bool"}),
    "float attn_mask": ({}, {"attn_mask": "float"}),
    "3-d attn_mask": ({}, {"attn_mask": "3d"}),
    "key_padding_mask": ({"batch_first": True}, {"key_padding_mask": "bool"}),
    "float key_padding_mask": ({}, {"key_padding_mask": "float"}),
    "both masks, no weights": ({}, {"attn_mask": "bool", "key_padding_mask": "bool",
                                    "need_weights": False}),
    "causal hint": ({}, {"attn_mask": "causal", "is_causal": True}),
    "causal hint, no weights": ({}, {"attn_mask": "causal", "is_causal": True,
                                     "need_weights": False}),
    "bool mask, no weights": ({"batch_first": True}, {"attn_mask": "bool",
                                                      "need_weights": False}),
    "no bias": ({"bias": False}, {}),
    "kdim vdim": ({"kdim": 3, "vdim": 5}, {"cross": True}),
    "unbatched": ({}, {"unbatched": True}),
    "unbatched no weights": ({}, {"unbatched": True, "need_weights": False,
                                  "key_padding_mask": "bool"}),
}


@pytest.mark.parametrize("case", list(MHA_CASES))
def test_mha_forward_backward(case):
    ctor, call = MHA_CASES[case]
    L, S, N, E = 4, 5, 3, 8

    def program(lib):
        m = _mha(lib, E, 2, **ctor)
        bf = ctor.get("batch_first", False)
        unbatched = call.get("unbatched", False)
        s = S if call.get("cross") or ctor.get("kdim") else L

        def shape(n, feat):
            if unbatched:
                return (n, feat)
            return (N, n, feat) if bf else (n, N, feat)

        q = _leaf(lib, _arr(1, *shape(L, E)))
        if call.get("cross") or ctor.get("kdim"):
            k = _leaf(lib, _arr(2, *shape(s, ctor.get("kdim", E))))
            v = _leaf(lib, _arr(3, *shape(s, ctor.get("vdim", E))))
        else:
            k = v = q
        kw = {}
        rng = np.random.default_rng(5)
        am = call.get("attn_mask")
        if am == "bool":
            mk = rng.random((L, s)) > 0.6
            mk[:, 0] = False
            kw["attn_mask"] = lib.tensor(mk)
        elif am == "float":
            kw["attn_mask"] = lib.tensor(rng.standard_normal((L, s)))
        elif am == "3d":
            kw["attn_mask"] = lib.tensor(rng.standard_normal((N * 2, L, s)))
        elif am == "causal":
            kw["attn_mask"] = lib.triu(lib.ones(L, s, dtype=lib.bool), diagonal=1)
        kp = call.get("key_padding_mask")
        if kp == "bool":
            pm = rng.random((1, s) if unbatched else (N, s)) > 0.6
            pm[..., 0] = False
            kw["key_padding_mask"] = lib.tensor(pm[0] if unbatched else pm)
        elif kp == "float":
            kw["key_padding_mask"] = lib.tensor(rng.standard_normal((N, s)))
        for name in ("need_weights", "average_attn_weights", "is_causal"):
            if name in call:
                kw[name] = call[name]
        with _math_path(lib):
            out, w = m(q, k, v, **kw)
            loss = (out * out).sum() + (0 if w is None else (w * w).sum())
            params = [p for _, p in m.named_parameters()]
            inputs = [q] if k is q else [q, k, v]
            grads = lib.autograd.grad(loss, inputs + params, create_graph=True)
            total = sum((g * g).sum() for g in grads)
            grads2 = lib.autograd.grad(total, inputs)
        return out, None if w is None else (w, tuple(w.shape)), tuple(out.shape), grads, grads2

    same(program, tol=TOL)


def test_mha_surface():
    def program(lib):
        m = lib.nn.MultiheadAttention(8, 2)
        m2 = lib.nn.MultiheadAttention(6, 3, kdim=4, vdim=5, bias=False, batch_first=True)
        return (repr(m), repr(m2),
                [(n, tuple(p.shape)) for n, p in m.named_parameters()],
                [(n, tuple(p.shape)) for n, p in m2.named_parameters()],
                list(m.state_dict().keys()), list(m2.state_dict().keys()),
                m.in_proj_bias, m.out_proj.bias, m.embed_dim, m.num_heads, m.head_dim,
                m.dropout, m.batch_first, m.kdim, m.vdim, m2.in_proj_weight is None,
                m2.q_proj_weight is None, m._qkv_same_embed_dim, m2._qkv_same_embed_dim,
                type(m.out_proj).__name__, _dt(m.in_proj_weight.dtype),
                _dt(lib.nn.MultiheadAttention(4, 1, dtype=lib.float64).in_proj_weight.dtype))

    same(program)


def test_mha_init_is_xavier_uniform():
    rg.manual_seed(0)
    w = rg.nn.MultiheadAttention(64, 4).in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (64 + 3 * 64))
    assert np.abs(w).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.002


@pytest.mark.parametrize("case, phrase", [
    ("divisible", "embed_dim must be divisible by num_heads"),
    ("non-positive", "embed_dim and num_heads must be greater than 0"),
    ("causal without mask", "Need attn_mask if specifying the is_causal hint"),
    ("mask shape", "The shape of the 2D attn_mask is"),
    ("3-d mask shape", "The shape of the 3D attn_mask is"),
    ("4-d mask", "expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D tensor"),
    ("2-d key", "expected `key` and `value` to be 3-D"),
    ("4-d query", "query should be unbatched 2D or batched 3D tensor"),
])
def test_mha_errors(case, phrase):
    def program(lib):
        if case == "divisible":
            return lib.nn.MultiheadAttention(5, 2)
        if case == "non-positive":
            return lib.nn.MultiheadAttention(0, 2)
        m = lib.nn.MultiheadAttention(4, 2)
        x = lib.ones(3, 2, 4)
        if case == "causal without mask":
            return m(x, x, x, is_causal=True)
        if case == "mask shape":
            return m(x, x, x, attn_mask=lib.zeros(2, 3))
        if case == "3-d mask shape":
            return m(x, x, x, attn_mask=lib.zeros(2, 3, 3))
        if case == "2-d key":
            return m(x, x[0], x[0])
        if case == "4-d query":
            return m(x[None], x[None], x[None])
        return m(x, x, x, attn_mask=lib.zeros(1, 4, 3, 3))

    same(program, phrase)


def test_mha_dropout_train_and_eval():
    def program(lib):
        m = _mha(lib, 8, 2, dropout=1.0)
        x = lib.tensor(_arr(1, 3, 2, 8))
        m.eval()
        out_eval, w_eval = m(x, x, x)
        m.train()
        out_train, w_train = m(x, x, x)  # every weight dropped: the output is out_proj.bias
        return out_eval, w_eval, out_train, w_train, m.out_proj.bias

    same(program, tol=TOL)


def test_mha_trains_like_torch():
    def program(lib):
        m = _mha(lib, 8, 2, batch_first=True)
        x = lib.tensor(_arr(1, 2, 5, 8))
        opt = lib.optim.Adam(m.parameters(), lr=0.01)
        for _ in range(3):
            opt.zero_grad()
            out, _ = m(x, x, x)
            loss = (out ** 2).mean()
            loss.backward()
            opt.step()
        return m.state_dict()

    same(program, tol=1e-9)


# -- activation modules -------------------------------------------------------------------------
ACT_MODULES = {
    "GELU()": lambda nn: nn.GELU(),
    "GELU('tanh')": lambda nn: nn.GELU(approximate="tanh"),
    "SiLU()": lambda nn: nn.SiLU(),
    "LeakyReLU()": lambda nn: nn.LeakyReLU(),
    "LeakyReLU(0.2)": lambda nn: nn.LeakyReLU(0.2),
    "ELU()": lambda nn: nn.ELU(),
    "ELU(0.5)": lambda nn: nn.ELU(alpha=0.5),
    "Softplus()": lambda nn: nn.Softplus(),
    "Softplus(2, 1)": lambda nn: nn.Softplus(2, 1),
    "Softmax(1)": lambda nn: nn.Softmax(dim=1),
    "Softmax(-1)": lambda nn: nn.Softmax(-1),
    "LogSoftmax(0)": lambda nn: nn.LogSoftmax(0),
    "Hardtanh()": lambda nn: nn.Hardtanh(),
    "Hardtanh(-2, 0.5)": lambda nn: nn.Hardtanh(-2.0, 0.5),
    "Mish()": lambda nn: nn.Mish(),
    "SELU()": lambda nn: nn.SELU(),
    "ReLU6()": lambda nn: nn.ReLU6(),
    "LogSigmoid()": lambda nn: nn.LogSigmoid(),
}
XS = [[-7.0, -1.5, -0.25, 0.3, 0.75], [1.2, 3.0, 6.5, -3.3, 2.2]]


@pytest.mark.parametrize("name", list(ACT_MODULES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_modules(name, dtype):
    def program(lib):
        m = ACT_MODULES[name](lib.nn)
        x = lib.tensor(XS, dtype=getattr(lib, dtype), requires_grad=True)
        y = m(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return (repr(m), y, _dt(y.dtype), y.grad_fn.name(), g, gg,
                list(m.state_dict().keys()))

    same(program, tol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("make", [
    lambda nn: nn.SiLU(inplace=True), lambda nn: nn.LeakyReLU(0.1, inplace=True),
    lambda nn: nn.ELU(inplace=True), lambda nn: nn.Hardtanh(-0.5, 2.0, inplace=True),
    lambda nn: nn.Mish(inplace=True), lambda nn: nn.SELU(inplace=True),
    lambda nn: nn.ReLU6(inplace=True),
])
def test_activation_modules_inplace(make):
    def program(lib):
        m = make(lib.nn)
        x = lib.tensor(XS, dtype=lib.float64, requires_grad=True)
        h = x * 1.0
        y = m(h)
        y.sum().backward()
        return repr(m), y is h, y, y.grad_fn.name(), x.grad

    same(program)


def test_activation_module_reprs_and_attributes():
    def program(lib):
        nn = lib.nn
        mods = [nn.GELU(), nn.SiLU(), nn.LeakyReLU(), nn.ELU(), nn.Softplus(), nn.Softmax(),
                nn.LogSoftmax(), nn.Hardtanh(), nn.Mish(), nn.SELU(), nn.ReLU6(),
                nn.LogSigmoid(), nn.Softplus(beta=2, threshold=10),
                nn.Hardtanh(-2, 2, True), nn.ReLU6(True), nn.Sequential(nn.GELU(), nn.SELU())]
        r6 = nn.ReLU6()
        return ([repr(m) for m in mods], nn.LeakyReLU().negative_slope, nn.ELU().alpha,
                nn.Softplus().beta, nn.Softplus().threshold, nn.Softmax().dim,
                nn.GELU().approximate, r6.min_val, r6.max_val, isinstance(r6, nn.Hardtanh))

    same(program)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("cls", ["Softmax", "LogSoftmax"])
def test_softmax_module_implicit_dim_warns(ndim, cls):
    def program(lib):
        x = lib.tensor(np.arange(24.0).reshape((2, 3, 4)[:ndim] if ndim < 4
                                                else (1, 2, 3, 4)) / 7.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(lib.nn, cls)()(x)
        msgs = [str(w.message) for w in caught]
        return y, [m for m in msgs if "Implicit dimension choice" in m]

    same(program)


def test_hardtanh_module_refuses_bad_bounds():
    same(lambda lib: lib.nn.Hardtanh(1.0, -1.0))


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("flags", [(True, False), (False, True), (True, True)],
                         ids=["bias_kv", "zero_attn", "both"])
@pytest.mark.parametrize("masks", ["none", "attn", "padding", "both"])
def test_mha_bias_kv_and_zero_attn(flags, masks, need_weights):
    add_bias_kv, add_zero_attn = flags

    def program(lib):
        m = _mha(lib, 8, 2, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn)
        q = lib.tensor(_arr(1, 3, 2, 8), requires_grad=True)
        kv = lib.tensor(_arr(2, 5, 2, 8), requires_grad=True)
        kw = {}
        if masks in ("attn", "both"):
            kw["attn_mask"] = lib.tensor(np.triu(np.ones((3, 5), dtype=bool), 3))
        if masks in ("padding", "both"):
            pad = np.zeros((2, 5), dtype=bool)
            pad[1, -2:] = True
            kw["key_padding_mask"] = lib.tensor(pad)
        out, w = m(q, kv, kv, need_weights=need_weights, **kw)
        (out.sum() + (0 if w is None else (w * w).sum())).backward()
        return out, w, q.grad, kv.grad, {n: p.grad for n, p in m.named_parameters()}

    same(program, tol=1e-10)


def test_mha_bias_kv_parameters_and_init():
    def program(lib):
        m = lib.nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True)
        return ([(n, tuple(p.shape)) for n, p in m.named_parameters()], m.add_zero_attn,
                repr(m))

    same(program)
    rg.manual_seed(0)
    b = rg.nn.MultiheadAttention(64, 4, add_bias_kv=True).bias_k.detach().numpy()
    assert abs(b.std() - np.sqrt(2.0 / (64 + 64))) < 0.05  # xavier_normal_ of (1, 1, 64)
