"""PyTorch's transformer modules on retrograd: the same weights (drawn with NumPy, in state-dict
order) give the same outputs and gradients, the same state-dict keys and the same warnings and
errors as on PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch_parity import same

import retrograd as rg


def _arr(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _seeded(lib, module, seed=0):
    """``module`` in float64 with weights drawn from NumPy in state-dict order."""
    module = module.double()
    rng = np.random.default_rng(seed)
    state = {}
    for k, v in module.state_dict().items():
        if v.dtype == lib.float64:
            state[k] = lib.tensor(rng.standard_normal(tuple(v.shape)) * 0.3, dtype=lib.float64)
        else:
            state[k] = v
    module.load_state_dict(state)
    return module


def _grads_of(module, out):
    (out ** 2).sum().backward()
    return {name: p.grad for name, p in module.named_parameters()}


ENCODER_CASES = {
    "post-norm relu": ({}, {}),
    "pre-norm gelu": ({"norm_first": True, "activation": "gelu"}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "callable activation": ({"activation": lambda x: x.tanh()}, {}),
    "no bias": ({"bias": False}, {}),
    "causal float mask": ({"batch_first": True}, {"mask": "causal"}),
    "causal hint": ({"batch_first": True}, {"mask": "causal", "is_causal": True}),
    "bool mask and key padding": ({}, {"mask": "bool", "padding": True}),
    "unbatched": ({}, {"unbatched": True}),
}


def _mask(lib, kind, n):
    if kind == "causal":
        return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=lib.float64)
    if kind == "bool":
        return lib.tensor(np.triu(np.ones((n, n), dtype=bool), 1))
    return None


@pytest.mark.parametrize("case", list(ENCODER_CASES))
def test_encoder_layer_forward_backward(case):
    kw, call = ENCODER_CASES[case]

    def program(lib):
        layer = _seeded(lib, lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16,
                                                            dropout=0.0, **kw))
        shape = (5, 8) if call.get("unbatched") else (3, 5, 8)
        x = lib.tensor(_arr(1, *shape), requires_grad=True)
        args = {}
        if "mask" in call:
            args["src_mask"] = _mask(lib, call["mask"], 5)
        if call.get("is_causal"):
            args["is_causal"] = True
        if call.get("padding"):
            pad = np.zeros((5, 3), dtype=bool).T.copy()  # (N, S)
            pad[1, -2:] = True
            args["src_key_padding_mask"] = lib.tensor(pad)
        out = layer(x, **args)
        grads = _grads_of(layer, out)
        return out, x.grad, grads

    same(program, tol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_with_norm_and_causal_detection(norm_first):
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True,
                                                   norm_first=norm_first)
            enc = _seeded(lib, lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8)))
        x = lib.tensor(_arr(2, 2, 6, 8), requires_grad=True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(6, dtype=lib.float64)
        out = enc(x, mask=mask)
        return out, _grads_of(enc, out), list(enc.state_dict())

    same(program, tol=1e-10)


def test_decoder_layer_and_stack():
    def program(lib):
        layer = lib.nn.TransformerDecoderLayer(8, 2, 16, 0.0, norm_first=True)
        dec = _seeded(lib, lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8)))
        tgt = lib.tensor(_arr(3, 4, 2, 8), requires_grad=True)
        mem = lib.tensor(_arr(4, 6, 2, 8), requires_grad=True)
        tmask = lib.nn.Transformer.generate_square_subsequent_mask(4, dtype=lib.float64)
        mpad = np.zeros((2, 6), dtype=bool)
        mpad[0, -1] = True
        out = dec(tgt, mem, tgt_mask=tmask, memory_key_padding_mask=lib.tensor(mpad))
        return out, tgt.grad if _grads_of(dec, out) else None, mem.grad

    same(program, tol=1e-10)


def test_full_transformer_matches_and_trains():
    def program(lib):
        model = _seeded(lib, lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2,
                                                num_decoder_layers=1, dim_feedforward=16,
                                                dropout=0.0, batch_first=True))
        src = lib.tensor(_arr(5, 2, 7, 8))
        tgt = lib.tensor(_arr(6, 2, 4, 8))
        tmask = model.generate_square_subsequent_mask(4, dtype=lib.float64)
        opt = lib.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = (model(src, tgt, tgt_mask=tmask) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, model.state_dict()

    same(program, tol=1e-9)


def test_state_dict_keys_and_repr_match_torch():
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
                                       num_decoder_layers=1, dim_feedforward=16)
        return [(k, tuple(v.shape)) for k, v in model.state_dict().items()]

    same(program)


def test_transformer_init_is_xavier_uniform_on_matrices():
    model = rg.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                              dim_feedforward=32)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert model.encoder.layers[0].norm1.weight.detach().numpy().tolist() == [1.0] * 16


def test_generate_square_subsequent_mask():
    same(lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(4))


def _caught(lib, make):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make(lib)
    return [(w.category.__name__, str(w.message)) for w in caught
            if "nested" in str(w.message) or "mismatched" in str(w.message)]


@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
                                {"batch_first": True, "activation": "gelu"}])
def test_nested_tensor_warning_as_torch(kw):
    def make(lib):
        lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, **kw), 1)

    assert _caught(rg, make) == _caught(torch, make)


def test_mismatched_mask_kinds_warn_as_torch():
    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0).double()
        x = lib.tensor(_arr(1, 3, 2, 8))
        pad = lib.tensor(np.zeros((2, 3), dtype=bool))
        layer(x, src_mask=lib.zeros(3, 3, dtype=lib.float64), src_key_padding_mask=pad)

    assert _caught(rg, make) == _caught(torch, make)
    assert _caught(torch, make)


@pytest.mark.parametrize("case", ["activation", "batch", "features"])
def test_errors_as_torch(case):
    def program(lib):
        if case == "activation":
            return lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")
        model = lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=16)
        if case == "batch":
            return model(lib.zeros(3, 2, 8), lib.zeros(3, 4, 8))
        return model(lib.zeros(3, 2, 6), lib.zeros(3, 2, 6))

    same(program, phrase={"activation": "activation should be relu/gelu",
                          "batch": "the batch number of src and tgt must be equal",
                          "features": "the feature number"}[case])
