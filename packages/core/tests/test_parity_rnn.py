"""``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells against PyTorch: outputs, final states
and the gradients of the input, the initial states and every parameter (float64 to 1e-10)
over layers, directions, batch layouts, unbatched inputs, biases, projections and
nonlinearities; a small Embedding -> LSTM -> Linear model trained by SGD; float32; parameter
names, shapes and order; reprs; constructor and forward errors; dropout between layers;
initialisation. Each program is written once against a library handle ``lib``; weights travel
between the libraries through NumPy."""

from __future__ import annotations

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


def _with_weights(lib, m, seed=0, dtype=None):
    """``m`` in ``dtype`` (float64 by default) with weights drawn from NumPy (the same in
    both libraries), loaded through ``load_state_dict``."""
    dtype = dtype or lib.float64
    m = m.to(dtype)
    rng = np.random.default_rng(seed)
    state = {k: lib.tensor(rng.standard_normal(tuple(v.shape)) * 0.6, dtype=dtype)
             for k, v in m.state_dict().items()}
    m.load_state_dict(state)
    return m


def _state_count(kind):
    return 2 if kind in ("LSTM", "LSTMCell") else 1


def _run(lib, kind, ctor, x_shape, h_shapes, dtype=None):
    """Build ``kind`` with ``ctor``, run it on an input of ``x_shape`` (and initial states of
    ``h_shapes``, when given), back-propagate a weighted sum of every output; the outputs and
    the gradients of the input, the states and each parameter (by name)."""
    dtype = dtype or lib.float64
    m = _with_weights(lib, getattr(lib.nn, kind)(*ctor[0], **ctor[1]), dtype=dtype)
    x = _leaf(lib, _arr(1, *x_shape), dtype)
    states = [_leaf(lib, _arr(2 + k, *s), dtype) for k, s in enumerate(h_shapes or ())]
    if not states:
        result = m(x)
    elif kind in ("LSTM", "LSTMCell"):
        result = m(x, tuple(states))
    else:
        result = m(x, states[0])
    if kind in ("RNN", "GRU"):
        outs = [result[0], result[1]]
    elif kind == "LSTM":
        outs = [result[0], *result[1]]
    elif kind == "LSTMCell":
        outs = list(result)
    else:
        outs = [result]
    loss = sum((o * lib.tensor(_arr(10 + k, *o.shape), dtype=dtype)).sum()
               for k, o in enumerate(outs))
    loss.backward()
    grads = {name: p.grad for name, p in m.named_parameters()}
    return outs, [tuple(o.shape) for o in outs], x.grad, [s.grad for s in states], grads


def _stacked(ctor):
    """The shape ``(D * num_layers, H_out)`` of the stacked states of an RNN module."""
    args, kw = ctor
    layers = kw.get("num_layers", args[2] if len(args) > 2 else 1)
    d = 2 if kw.get("bidirectional") else 1
    return d * layers


MODULE_CASES = {
    # name: (kind, (args, kwargs), batched, with initial states)
    "rnn tanh": ("RNN", ((4, 5), {}), True, False),
    "rnn tanh h0": ("RNN", ((4, 5), {}), True, True),
    "rnn relu": ("RNN", ((4, 5), {"nonlinearity": "relu"}), True, True),
    "rnn relu positional": ("RNN", ((4, 5, 2, "relu"), {}), True, False),
    "rnn 2 layers bidirectional": ("RNN", ((4, 5), {"num_layers": 2, "bidirectional": True}),
                                   True, True),
    "rnn batch_first": ("RNN", ((4, 5), {"batch_first": True, "num_layers": 2}), True, True),
    "rnn no bias": ("RNN", ((4, 5), {"bias": False, "bidirectional": True}), True, False),
    "rnn unbatched": ("RNN", ((4, 5), {"num_layers": 2}), False, False),
    "rnn unbatched h0": ("RNN", ((4, 5), {"bidirectional": True}), False, True),
    "rnn unbatched batch_first": ("RNN", ((4, 5), {"batch_first": True}), False, True),
    "lstm": ("LSTM", ((4, 5), {}), True, False),
    "lstm h0 c0": ("LSTM", ((4, 5), {}), True, True),
    "lstm 2 layers": ("LSTM", ((4, 5), {"num_layers": 2}), True, True),
    "lstm bidirectional": ("LSTM", ((4, 5), {"bidirectional": True}), True, False),
    "lstm 2 layers bidirectional batch_first": (
        "LSTM", ((4, 5), {"num_layers": 2, "bidirectional": True, "batch_first": True}),
        True, True),
    "lstm no bias": ("LSTM", ((4, 5), {"bias": False, "num_layers": 2}), True, True),
    "lstm proj": ("LSTM", ((4, 5), {"proj_size": 3}), True, False),
    "lstm proj h0 c0": ("LSTM", ((4, 5), {"proj_size": 2}), True, True),
    "lstm proj 2 layers bidirectional": (
        "LSTM", ((4, 5), {"proj_size": 3, "num_layers": 2, "bidirectional": True}), True,
        True),
    "lstm proj no bias batch_first": (
        "LSTM", ((4, 5), {"proj_size": 3, "bias": False, "batch_first": True}), True, True),
    "lstm unbatched": ("LSTM", ((4, 5), {"num_layers": 2}), False, False),
    "lstm unbatched h0 c0 proj": ("LSTM", ((4, 5), {"proj_size": 2, "bidirectional": True}),
                                  False, True),
    "gru": ("GRU", ((4, 5), {}), True, False),
    "gru h0": ("GRU", ((4, 5), {}), True, True),
    "gru 2 layers bidirectional": ("GRU", ((4, 5), {"num_layers": 2, "bidirectional": True}),
                                   True, True),
    "gru batch_first": ("GRU", ((4, 5), {"batch_first": True}), True, True),
    "gru no bias": ("GRU", ((4, 5), {"bias": False, "num_layers": 2}), True, False),
    "gru unbatched": ("GRU", ((4, 5), {}), False, True),
    "gru unbatched 3 layers": ("GRU", ((4, 5), {"num_layers": 3}), False, False),
}


def _module_shapes(kind, ctor, batched):
    """The input shape and the initial states' shapes for a case (L=6, N=3)."""
    args, kw = ctor
    seq, batch, feat = 6, 3, args[0]
    if batched:
        x_shape = (batch, seq, feat) if kw.get("batch_first") else (seq, batch, feat)
    else:
        x_shape = (seq, feat)
    hidden = args[1]
    out = kw.get("proj_size") or hidden
    lead = (_stacked(ctor), batch) if batched else (_stacked(ctor),)
    shapes = [(*lead, out)]
    if kind == "LSTM":
        shapes.append((*lead, hidden))
    return x_shape, shapes


@pytest.mark.parametrize("case", list(MODULE_CASES))
def test_module_forward_backward(case):
    kind, ctor, batched, with_states = MODULE_CASES[case]
    x_shape, h_shapes = _module_shapes(kind, ctor, batched)
    same(lambda lib: _run(lib, kind, ctor, x_shape, h_shapes if with_states else None),
         tol=TOL)


CELL_CASES = {
    "rnn cell": ("RNNCell", ((4, 5), {}), True, True),
    "rnn cell zeros": ("RNNCell", ((4, 5), {}), True, False),
    "rnn cell relu": ("RNNCell", ((4, 5), {"nonlinearity": "relu"}), True, True),
    "rnn cell no bias": ("RNNCell", ((4, 5), {"bias": False}), True, True),
    "rnn cell unbatched": ("RNNCell", ((4, 5), {}), False, True),
    "lstm cell": ("LSTMCell", ((4, 5), {}), True, True),
    "lstm cell zeros": ("LSTMCell", ((4, 5), {}), True, False),
    "lstm cell no bias": ("LSTMCell", ((4, 5), {"bias": False}), True, True),
    "lstm cell unbatched": ("LSTMCell", ((4, 5), {}), False, True),
    "lstm cell unbatched zeros": ("LSTMCell", ((4, 5), {}), False, False),
    "gru cell": ("GRUCell", ((4, 5), {}), True, True),
    "gru cell zeros": ("GRUCell", ((4, 5), {}), True, False),
    "gru cell no bias": ("GRUCell", ((4, 5), {"bias": False}), True, True),
    "gru cell unbatched": ("GRUCell", ((4, 5), {}), False, True),
}


@pytest.mark.parametrize("case", list(CELL_CASES))
def test_cell_forward_backward(case):
    kind, ctor, batched, with_states = CELL_CASES[case]
    lead = (3,) if batched else ()
    h_shapes = [(*lead, 5)] * _state_count(kind) if with_states else None
    same(lambda lib: _run(lib, kind, ctor, (*lead, 4), h_shapes), tol=TOL)


def test_empty_batch():
    def program(lib):
        lstm_out, (h, c) = lib.nn.LSTM(4, 3, bidirectional=True)(lib.ones(2, 0, 4))
        gru_out, g = lib.nn.GRU(4, 3, batch_first=True)(lib.ones(0, 5, 4))
        cell = lib.nn.GRUCell(4, 3)(lib.ones(0, 4))
        return [tuple(t.shape) for t in (lstm_out, h, c, gru_out, g, cell)]

    same(program)


def test_cell_loop_matches_module():
    """An LSTMCell stepped by hand over a sequence gives nn.LSTM's output (same weights)."""
    def program(lib):
        lstm = _with_weights(lib, lib.nn.LSTM(4, 5))
        cell = lib.nn.LSTMCell(4, 5).double()
        cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
        x = lib.tensor(_arr(1, 6, 3, 4))
        h = c = lib.zeros(3, 5, dtype=lib.float64)
        steps = []
        for t in range(6):
            h, c = cell(x[t], (h, c))
            steps.append(h)
        out, (h_n, c_n) = lstm(x)
        return (out - lib.stack(steps)).abs().max(), (h_n[0] - h).abs().max(), out

    same(program, tol=TOL)


@pytest.mark.filterwarnings("ignore:LSTM with projections")  # torch's oneDNN note
def test_float32_is_close():
    for kind, ctor in (("LSTM", ((4, 5), {"num_layers": 2, "proj_size": 3})),
                       ("GRU", ((4, 5), {"bidirectional": True})),
                       ("RNN", ((4, 5), {"batch_first": True}))):
        x_shape, _ = _module_shapes(kind, ctor, True)

        def program(lib, kind=kind, ctor=ctor, x_shape=x_shape):
            outs, shapes, gx, _, grads = _run(lib, kind, ctor, x_shape, None,
                                              dtype=lib.float32)
            return outs, shapes, gx, grads

        same(program, tol=2e-5)


# -- training -----------------------------------------------------------------------------------
def test_embedding_lstm_linear_trains_like_torch():
    """Embedding -> 2-layer LSTM -> Linear with cross entropy, five SGD steps with momentum:
    the losses and the final parameters are torch's."""
    tokens = np.random.default_rng(5).integers(0, 10, size=(3, 7))
    targets = np.random.default_rng(6).integers(0, 10, size=(3, 7))

    def program(lib):
        emb = _with_weights(lib, lib.nn.Embedding(10, 4), seed=1)
        lstm = _with_weights(lib, lib.nn.LSTM(4, 6, num_layers=2, batch_first=True), seed=2)
        head = _with_weights(lib, lib.nn.Linear(6, 10), seed=3)
        params = [*emb.parameters(), *lstm.parameters(), *head.parameters()]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9)
        x = lib.tensor(tokens)
        y = lib.tensor(targets).reshape(-1)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            out, _ = lstm(emb(x))
            loss = lib.nn.functional.cross_entropy(head(out).reshape(-1, 10), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, emb.state_dict(), lstm.state_dict(), head.state_dict()

    same(program, tol=1e-9)


def test_graph_reaches_every_parameter_and_double_precision_is_kept():
    def program(lib):
        m = _with_weights(lib, lib.nn.GRU(3, 4, num_layers=2, bidirectional=True))
        out, h = m(lib.tensor(_arr(1, 5, 2, 3)))
        (out.sum() + h.sum()).backward()
        return (str(out.dtype).rpartition(".")[2], str(h.dtype).rpartition(".")[2],
                out.requires_grad,
                [p.grad is not None for p in m.parameters()])

    same(program)


# -- parameters, repr, attributes ---------------------------------------------------------------
LAYOUTS = [
    ("RNN", (4, 3), {}),
    ("RNN", (4, 3), {"num_layers": 2, "bidirectional": True, "nonlinearity": "relu"}),
    ("RNN", (4, 3), {"bias": False, "batch_first": True, "dropout": 0.25, "num_layers": 3}),
    ("LSTM", (4, 3), {}),
    ("LSTM", (4, 3), {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("LSTM", (4, 3), {"proj_size": 1, "bias": False}),
    ("GRU", (4, 3), {"num_layers": 2, "bidirectional": True, "dropout": 1}),
    ("GRU", (4, 3), {"bias": False}),
    ("RNNCell", (4, 3), {}),
    ("RNNCell", (4, 3), {"bias": False, "nonlinearity": "relu"}),
    ("LSTMCell", (4, 3), {}),
    ("GRUCell", (4, 3), {"bias": False}),
]


@pytest.mark.parametrize("kind,args,kw", LAYOUTS)
def test_parameters_state_dict_and_repr(kind, args, kw):
    def program(lib):
        m = getattr(lib.nn, kind)(*args, **kw)
        info = [repr(m), [(k, tuple(v.shape)) for k, v in m.state_dict().items()],
                [(k, tuple(p.shape)) for k, p in m.named_parameters()],
                m.input_size, m.hidden_size, m.bias]
        if not kind.endswith("Cell"):
            info += [[[tuple(p.shape) for p in group] for group in m.all_weights],
                     list(m._flat_weights_names), m.num_layers, m.batch_first, m.dropout,
                     m.bidirectional, m.proj_size, m.mode, m.flatten_parameters()]
        else:
            info += [m.bias_ih is None, m.bias_hh is None]
        if kind in ("RNN", "RNNCell"):
            info.append(m.nonlinearity)
        return info

    same(program)


def test_dtype_and_device_arguments():
    def program(lib):
        return [str(p.dtype).rpartition(".")[2] for p in [*lib.nn.LSTM(3, 4, dtype=lib.float64).parameters(),
                                       *lib.nn.GRUCell(3, 4, dtype=lib.float64).parameters(),
                                       *lib.nn.RNN(3, 4, device="cpu").parameters()]]

    same(program)


def test_all_weights_are_the_parameters_and_move_with_to():
    m = rg.nn.LSTM(3, 4, num_layers=2, proj_size=2)
    flat = [p for group in m.all_weights for p in group]
    assert [id(p) for p in flat] == [id(p) for p in m.parameters()]
    m.double()
    assert all(p.dtype is rg.float64 for group in m.all_weights for p in group)
    out, (h, c) = m(rg.zeros(2, 1, 3, dtype=rg.float64))
    assert out.dtype is rg.float64 and tuple(h.shape) == (2, 1, 2)


# -- init ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_is_uniform_within_one_over_sqrt_hidden(kind):
    hidden = 16
    bound = 1 / math.sqrt(hidden)
    kw = {} if kind.endswith("Cell") else {"num_layers": 2, "bidirectional": True}
    rg.manual_seed(0)
    m = getattr(rg.nn, kind)(12, hidden, **kw)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    sigma, n = bound / math.sqrt(3), values.size  # U(-b, b); five standard errors below
    assert values.min() < -0.95 * bound and values.max() > 0.95 * bound
    assert abs(values.mean()) < 5 * sigma / math.sqrt(n)
    assert abs(values.std() - sigma) < 5 * sigma * math.sqrt(0.2 / n)
    for p in m.parameters():  # every parameter drawn, not only the weights
        arr = p.detach().numpy()
        assert np.abs(arr).max() <= bound and np.unique(arr).size > arr.size // 2
    rg.manual_seed(0)
    again = getattr(rg.nn, kind)(12, hidden, **kw)
    assert all(np.array_equal(a.detach().numpy(), b.detach().numpy())
               for a, b in zip(m.parameters(), again.parameters()))
    # reset_parameters draws fresh values from the generator
    m.reset_parameters()
    assert not np.array_equal(next(m.parameters()).detach().numpy(),
                              next(again.parameters()).detach().numpy())


def test_init_bounds_follow_hidden_size_with_projection():
    rg.manual_seed(1)
    m = rg.nn.LSTM(5, 100, proj_size=7)
    assert max(float(p.detach().abs().max()) for p in m.parameters()) <= 0.1
    assert float(m.weight_hr_l0.detach().abs().max()) > 0.09


# -- dropout between layers ---------------------------------------------------------------------
def test_dropout_one_zeroes_the_upper_layers_input_like_torch():
    """``dropout=1`` drops every input of the second layer while training (so its output is
    the same as for a zero input) and nothing in eval mode."""
    def program(lib):
        m = _with_weights(lib, lib.nn.LSTM(3, 4, num_layers=2, dropout=1.0))
        x = _leaf(lib, _arr(1, 5, 2, 3))
        out_train, (h_train, c_train) = m(x)
        out_train.sum().backward()
        m.eval()
        out_eval, (h_eval, _) = m(x)
        return out_train, h_train, c_train, x.grad, out_eval, h_eval

    same(program, tol=TOL)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_is_seeded_and_inactive_in_eval(kind):
    m = getattr(rg.nn, kind)(3, 8, num_layers=3, dropout=0.5).double()
    plain = getattr(rg.nn, kind)(3, 8, num_layers=3).double()
    plain.load_state_dict(m.state_dict())
    x = rg.tensor(_arr(1, 4, 2, 3))

    def output(model):
        return model(x)[0].detach().numpy()

    rg.manual_seed(3)
    first = output(m)
    rg.manual_seed(3)
    second = output(m)
    third = output(m)
    assert np.array_equal(first, second)
    assert not np.array_equal(first, third)
    assert not np.allclose(first, output(plain))
    assert np.array_equal(output(m.eval()), output(plain))
    # the last layer's output is never dropped: no exact zeros from dropout in the output
    m.train()
    assert np.count_nonzero(output(m)) == first.size


def test_dropout_warns_for_a_single_layer_and_is_checked():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.GRU(3, 4, dropout=0.5)
        return [(w.category.__name__, str(w.message)) for w in caught], m.dropout, repr(m)

    same(program)


# -- errors -------------------------------------------------------------------------------------
CONSTRUCTOR_ERRORS = {
    "dropout range": (lambda nn: nn.LSTM(3, 4, dropout=1.5),
                      "dropout should be a number in range [0, 1]"),
    "dropout bool": (lambda nn: nn.RNN(3, 4, dropout=True),
                     "dropout should be a number in range [0, 1]"),
    "bias type": (lambda nn: nn.GRU(3, 4, bias=1), "bias should be of type bool, got: int"),
    "batch_first type": (lambda nn: nn.LSTM(3, 4, batch_first=0),
                         "batch_first should be of type bool, got: int"),
    "input_size type": (lambda nn: nn.RNN(3.0, 4), "input_size should be of type int"),
    "input_size zero": (lambda nn: nn.RNN(0, 4), "input_size must be greater than zero"),
    "hidden_size type": (lambda nn: nn.GRU(3, "4"), "hidden_size should be of type int"),
    "hidden_size zero": (lambda nn: nn.LSTM(3, 0), "hidden_size must be greater than zero"),
    "num_layers zero": (lambda nn: nn.GRU(3, 4, num_layers=0),
                        "num_layers must be greater than zero"),
    "proj_size negative": (lambda nn: nn.LSTM(3, 4, proj_size=-1),
                           "proj_size should be a positive integer or zero"),
    "proj_size too big": (lambda nn: nn.LSTM(3, 4, proj_size=4),
                          "proj_size has to be smaller than hidden_size"),
    "proj_size for GRU": (lambda nn: nn.GRU(3, 4, proj_size=2),
                          "proj_size argument is only supported for LSTM"),
    "proj_size for RNN": (lambda nn: nn.RNN(3, 4, proj_size=0),
                          "proj_size argument is only supported for LSTM"),
    "nonlinearity": (lambda nn: nn.RNN(3, 4, nonlinearity="sigmoid"),
                     "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."),
    "unknown keyword": (lambda nn: nn.GRU(3, 4, proj=2), "unexpected keyword argument 'proj'"),
    "num_layers type": (lambda nn: nn.LSTM(3, 4, num_layers=2.0), None),
}


@pytest.mark.parametrize("case", list(CONSTRUCTOR_ERRORS))
def test_constructor_errors(case):
    build, phrase = CONSTRUCTOR_ERRORS[case]
    same(lambda lib: build(lib.nn), phrase)


def _x(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


FORWARD_ERRORS = {
    "rnn 1-d input": (lambda lib: lib.nn.RNN(4, 3)(_x(lib, 4)),
                      "RNN: Expected input to be 2D or 3D, got 1D tensor instead"),
    "lstm 4-d input": (lambda lib: lib.nn.LSTM(4, 3)(_x(lib, 1, 2, 3, 4)),
                       "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    "gru 1-d input": (lambda lib: lib.nn.GRU(4, 3)(_x(lib, 4)),
                      "GRU: Expected input to be 2D or 3D, got 1D instead"),
    "input size": (lambda lib: lib.nn.GRU(4, 3)(_x(lib, 5, 2, 6)),
                   "input.size(-1) must be equal to input_size. Expected 4, got 6"),
    "unbatched input size": (lambda lib: lib.nn.LSTM(4, 3)(_x(lib, 5, 6)),
                             "input.size(-1) must be equal to input_size. Expected 4, got 6"),
    "input dtype": (lambda lib: lib.nn.RNN(4, 3)(_x(lib, 5, 2, 4, dtype=lib.float64)),
                    "does not match weight dtype"),
    "hidden size": (lambda lib: lib.nn.RNN(4, 3, num_layers=2)(_x(lib, 5, 2, 4),
                                                               _x(lib, 1, 2, 3)),
                    "Expected hidden size (2, 2, 3), got [1, 2, 3]"),
    "hidden batch": (lambda lib: lib.nn.GRU(4, 3, batch_first=True)(_x(lib, 2, 5, 4),
                                                                    _x(lib, 1, 5, 3)),
                     "Expected hidden size (1, 2, 3), got [1, 5, 3]"),
    "hidden features bidirectional": (
        lambda lib: lib.nn.GRU(4, 3, bidirectional=True)(_x(lib, 5, 2, 4), _x(lib, 2, 2, 4)),
        "Expected hidden size (2, 2, 3), got [2, 2, 4]"),
    "unbatched hidden size": (lambda lib: lib.nn.RNN(4, 3)(_x(lib, 5, 4), _x(lib, 2, 3)),
                              "Expected hidden size (1, 1, 3), got [2, 1, 3]"),
    "hidden dims batched": (lambda lib: lib.nn.RNN(4, 3)(_x(lib, 5, 2, 4), _x(lib, 2, 3)),
                            "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    "hidden dims unbatched": (lambda lib: lib.nn.GRU(4, 3)(_x(lib, 5, 4), _x(lib, 1, 1, 3)),
                              "For unbatched 2-D input, hx should also be 2-D but got 3-D"),
    "lstm h0 size": (lambda lib: lib.nn.LSTM(4, 3)(_x(lib, 5, 2, 4),
                                                   (_x(lib, 1, 2, 2), _x(lib, 1, 2, 3))),
                     "Expected hidden[0] size (1, 2, 3), got [1, 2, 2]"),
    "lstm c0 size": (lambda lib: lib.nn.LSTM(4, 3)(_x(lib, 5, 2, 4),
                                                   (_x(lib, 1, 2, 3), _x(lib, 1, 3, 3))),
                     "Expected hidden[1] size (1, 2, 3), got [1, 3, 3]"),
    "lstm proj h0 size": (lambda lib: lib.nn.LSTM(4, 3, proj_size=2)(
        _x(lib, 5, 4), (_x(lib, 1, 3), _x(lib, 1, 3))),
        "Expected hidden[0] size (1, 1, 2), got [1, 1, 3]"),
    "lstm state dims": (lambda lib: lib.nn.LSTM(4, 3)(_x(lib, 5, 2, 4),
                                                      (_x(lib, 1, 2, 3), _x(lib, 2, 3))),
                        "hx and cx should also be 3-D but got (3-D, 2-D) tensors"),
    "lstm unbatched state dims": (lambda lib: lib.nn.LSTM(4, 3)(
        _x(lib, 5, 4), (_x(lib, 1, 1, 3), _x(lib, 1, 3))),
        "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 2-D) tensors"),
    "empty sequence": (lambda lib: lib.nn.RNN(4, 3)(_x(lib, 0, 2, 4)),
                       "Expected sequence length to be larger than 0 in RNN"),
    "cell 3-d input": (lambda lib: lib.nn.RNNCell(4, 3)(_x(lib, 2, 2, 4)),
                       "RNNCell: Expected input to be 1D or 2D, got 3D instead"),
    "cell 3-d hidden": (lambda lib: lib.nn.GRUCell(4, 3)(_x(lib, 2, 4), _x(lib, 1, 2, 3)),
                        "GRUCell: Expected hidden to be 1D or 2D, got 3D instead"),
    "lstm cell 3-d state": (lambda lib: lib.nn.LSTMCell(4, 3)(
        _x(lib, 2, 4), (_x(lib, 2, 3), _x(lib, 1, 2, 3))),
        "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead"),
    "cell input size": (lambda lib: lib.nn.LSTMCell(4, 3)(_x(lib, 2, 5)),
                        "input has inconsistent input_size: got 5 expected 4"),
    "cell batch": (lambda lib: lib.nn.RNNCell(4, 3)(_x(lib, 2, 4), _x(lib, 3, 3)),
                   "Input batch size 2 doesn't match hidden0 batch size 3"),
    "cell hidden size": (lambda lib: lib.nn.GRUCell(4, 3)(_x(lib, 2, 4), _x(lib, 2, 5)),
                         "hidden0 has inconsistent hidden_size: got 5, expected 3"),
    "lstm cell c size": (lambda lib: lib.nn.LSTMCell(4, 3)(
        _x(lib, 2, 4), (_x(lib, 2, 3), _x(lib, 2, 2))),
        "hidden1 has inconsistent hidden_size: got 2, expected 3"),
    "cell unbatched hidden": (lambda lib: lib.nn.RNNCell(4, 3)(_x(lib, 4), _x(lib, 2, 3)),
                              "hidden0 has inconsistent hidden_size: got 2, expected 3"),
    "cell nonlinearity": (lambda lib: lib.nn.RNNCell(4, 3, nonlinearity="gelu")(_x(lib, 2, 4)),
                          "Unknown nonlinearity: gelu"),
    "cell dtype": (lambda lib: lib.nn.GRUCell(4, 3)(_x(lib, 2, 4, dtype=lib.float64)), None),
}


@pytest.mark.parametrize("case", list(FORWARD_ERRORS))
def test_forward_errors(case):
    program, phrase = FORWARD_ERRORS[case]
    same(program, phrase)


def test_packed_sequences_and_non_tensors_are_refused_clearly():
    class Packed:  # the fields of torch.nn.utils.rnn.PackedSequence
        data = rg.ones(5, 4)
        batch_sizes = rg.tensor([2, 2, 1])

    with pytest.raises(TypeError, match="PackedSequence input is not supported"):
        rg.nn.LSTM(4, 3)(Packed())
    with pytest.raises(TypeError, match="expected input to be a Tensor, got list"):
        rg.nn.GRU(4, 3)([[1.0] * 4])
    with pytest.raises(TypeError, match="expected hx to be a Tensor, got tuple"):
        rg.nn.RNN(4, 3)(rg.ones(5, 2, 4), (rg.zeros(1, 2, 3),))
    with pytest.raises(TypeError, match=r"expected hx to be a tuple \(h_0, c_0\)"):
        rg.nn.LSTM(4, 3)(rg.ones(5, 2, 4), rg.zeros(1, 2, 3))
    with pytest.raises(TypeError, match="argument 'hx' must be tuple of Tensors"):
        rg.nn.LSTMCell(4, 3)(rg.ones(2, 4), rg.zeros(2, 3))
    with pytest.raises(RuntimeError, match="hidden state dtype"):
        rg.nn.RNN(4, 3)(rg.ones(5, 2, 4), rg.zeros(1, 2, 3, dtype=rg.float64))


def test_state_dict_round_trips_through_save_and_load(tmp_path):
    rg.manual_seed(0)
    m = rg.nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True)
    path = tmp_path / "lstm.safetensors"
    rg.save(m.state_dict(), str(path))
    fresh = rg.nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True)
    fresh.load_state_dict(rg.load(str(path)))
    x = rg.tensor(_arr(1, 5, 2, 3), dtype=rg.float32)
    (out, (h, c)), (out2, (h2, c2)) = m(x), fresh(x)
    for a, b in ((out, out2), (h, h2), (c, c2)):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
