"""retrograd.nn and retrograd.optim against PyTorch (the oracle) and against their contracts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as rg
from retrograd import nn
from retrograd.nn import functional as F

torch = pytest.importorskip("torch")


def to_torch(t: rg.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.array(t.detach().numpy()))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 3)
        self.register_buffer("steps", rg.zeros(()))
        self.register_buffer("scratch", rg.zeros(2), persistent=False)

    def forward(self, x: rg.Tensor) -> rg.Tensor:
        return self.fc2(self.act(self.fc1(x)))


# -- Parameter ------------------------------------------------------------------------------
def test_parameter_is_a_leaf_tensor_that_requires_grad():
    source = rg.ones(3)
    p = nn.Parameter(source)
    assert isinstance(p, rg.Tensor)
    assert isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert not nn.Parameter(rg.ones(2), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:")


def test_parameter_of_a_computed_tensor_is_a_leaf():
    x = rg.tensor([1.0, 2.0], requires_grad=True)
    p = nn.Parameter(x * 3)
    assert p.is_leaf and p.grad_fn is None
    (p * p).sum().backward()
    np.testing.assert_allclose(p.grad.detach().numpy(), [6.0, 12.0])
    assert x.grad is None


def test_parameter_shares_storage_with_its_source():
    source = rg.zeros(3)
    p = nn.Parameter(source)
    with rg.no_grad():
        p.add_(rg.ones(3))
    np.testing.assert_allclose(source.detach().numpy(), [1.0, 1.0, 1.0])


def test_parameter_is_not_a_view_and_records_in_place_ops_like_a_leaf():
    source = rg.zeros(3)
    p = nn.Parameter(source, requires_grad=False)
    w = rg.ones(3, requires_grad=True)
    p.add_(w * 2)  # recorded: p now depends on w (allowed for a leaf that needs no grad)
    p.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0, 2.0])
    assert source._version == p._version == 1  # the version counter is shared


def test_parameter_rejects_non_tensors():
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


# -- Module -----------------------------------------------------------------------------------
def test_named_parameters_follow_attribute_order_like_torch():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    assert [name for name, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [name for name, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]


def test_shared_parameters_are_listed_once():
    net = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    net.append(net[0])
    assert len(list(net.parameters())) == 2
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4


def test_buffers_are_state_but_not_parameters():
    net = Net()
    assert "steps" in net.state_dict()
    assert "scratch" not in net.state_dict()
    assert all(p is not net.steps for p in net.parameters())
    assert len(list(net.buffers())) == 2


def test_assignment_rules():
    net = Net()
    with pytest.raises(TypeError):
        net.fc1.weight = rg.zeros(8, 4)  # a plain tensor cannot replace a parameter
    net.fc1.bias = None
    assert [n for n, _ in net.fc1.named_parameters()] == ["weight"]

    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(rg.zeros(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Early()


def test_train_eval_propagate():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net
    assert not net.training and not net.fc1.training and not net.act.training
    net.train()
    assert net.fc2.training


@pytest.mark.parametrize("set_to_none", [True, False])
def test_module_zero_grad(set_to_none):
    net = Net()
    net(rg.randn(5, 4)).sum().backward()
    grad = net.fc1.weight.grad
    assert grad is not None
    net.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert all(p.grad is None for p in net.parameters())
    else:
        assert net.fc1.weight.grad is grad  # zeroed in place: same tensor
        assert all(not np.abs(p.grad.detach().numpy()).any() for p in net.parameters())


def test_repr_looks_like_torch():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(net) == (
        "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)"
    )


# -- Linear -----------------------------------------------------------------------------------
def test_linear_init_bounds_are_pytorch_defaults():
    rg.manual_seed(0)
    layer = nn.Linear(64, 128)
    bound = 1 / math.sqrt(64)
    w = layer.weight.detach().numpy()
    b = layer.bias.detach().numpy()
    assert layer.weight.shape == (128, 64) and layer.bias.shape == (128,)
    assert layer.weight.dtype == rg.float32
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # uniform over the whole interval, not a narrower one
    assert np.abs(w).max() > 0.95 * bound and abs(w.mean()) < 0.05 * bound
    assert 0.5 < w.std() / (bound / math.sqrt(3)) < 1.5


def test_linear_init_follows_manual_seed():
    rg.manual_seed(123)
    a = nn.Linear(5, 4).weight.detach().numpy().copy()
    rg.manual_seed(123)
    b = nn.Linear(5, 4).weight.detach().numpy().copy()
    np.testing.assert_array_equal(a, b)


def test_linear_forward_and_backward_match_torch():
    rg.manual_seed(1)
    layer = nn.Linear(5, 3, dtype=rg.float64)
    ref = torch.nn.Linear(5, 3, dtype=torch.float64)
    with torch.no_grad():
        ref.weight.copy_(to_torch(layer.weight))
        ref.bias.copy_(to_torch(layer.bias))
    x = np.random.default_rng(0).standard_normal((7, 5))
    out = layer(rg.tensor(x))
    ref_out = ref(torch.from_numpy(x))
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward()
    (ref_out * ref_out).sum().backward()
    np.testing.assert_allclose(
        layer.weight.grad.detach().numpy(), ref.weight.grad.detach().numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(
        layer.bias.grad.detach().numpy(), ref.bias.grad.detach().numpy(), rtol=1e-12
    )


def test_linear_without_bias():
    layer = nn.Linear(3, 2, bias=False)
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    x = rg.randn(4, 3)
    np.testing.assert_allclose(
        layer(x).detach().numpy(), x.detach().numpy() @ layer.weight.detach().numpy().T, rtol=1e-6
    )


def test_activation_modules_match_functions():
    x = rg.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(nn.ReLU()(x).detach().numpy(), np.maximum(x.detach().numpy(), 0))
    np.testing.assert_allclose(
        nn.Tanh()(x).detach().numpy(), np.tanh(x.detach().numpy()), rtol=1e-6
    )
    np.testing.assert_allclose(
        nn.Sigmoid()(x).detach().numpy(), 1 / (1 + np.exp(-x.detach().numpy())), rtol=1e-6
    )


# -- Sequential and state dicts ----------------------------------------------------------
def test_sequential_indexing_and_state_dict_keys_match_torch():
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2))
    assert list(model.state_dict()) == list(ref.state_dict())
    assert len(model) == 3 and isinstance(model[1], nn.ReLU) and model[-1] is model[2]
    assert isinstance(model[:2], nn.Sequential) and len(model[:2]) == 2
    with pytest.raises(IndexError):
        model[3]


def test_load_state_dict_from_torch_reproduces_its_outputs():
    ref = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
    ref = ref.double()
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)).double()
    weights = {k: rg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    before = model[0].weight
    result = model.load_state_dict(weights)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert model[0].weight is before  # copied in place, not replaced
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(
        model(rg.tensor(x)).detach().numpy(),
        ref(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-12,
    )


def test_load_state_dict_reports_mismatches():
    # PyTorch's behaviour: one RuntimeError listing every problem; strict=False returns them
    model = nn.Sequential(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.bias"'):
        model.load_state_dict({"0.weight": rg.zeros(2, 2)})
    result = model.load_state_dict({"0.weight": rg.zeros(2, 2), "extra": rg.zeros(1)}, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra"]
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        model.load_state_dict({"0.weight": rg.zeros(3, 2), "0.bias": rg.zeros(2)})


def test_module_to_dtype_replaces_parameters():
    model = nn.Linear(3, 2)
    model.double()
    assert model.weight.dtype == rg.float64 and isinstance(model.weight, nn.Parameter)
    assert model.weight.requires_grad and model.weight.is_leaf


# -- optimizers: same trajectory as torch.optim -------------------------------------------------
def _run(opt_name, kwargs, steps=6, use_torch=False):
    """A few steps on a small regression; returns the final parameters as arrays."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    b0 = rng.standard_normal(3)
    x = rng.standard_normal((5, 4))
    y = rng.standard_normal((5, 3))
    if use_torch:
        w = torch.tensor(w0, requires_grad=True)
        b = torch.tensor(b0, requires_grad=True)
        opt = getattr(torch.optim, opt_name)([w, b], **kwargs)
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)
        for _ in range(steps):
            opt.zero_grad()
            loss = ((torch.tanh(xt @ w.T + b) - yt) ** 2).mean()
            loss.backward()
            opt.step()
        return w.detach().numpy(), b.detach().numpy()
    w = nn.Parameter(rg.tensor(w0))
    b = nn.Parameter(rg.tensor(b0))
    opt = getattr(rg.optim, opt_name)([w, b], **kwargs)
    xr, yr = rg.tensor(x), rg.tensor(y)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((rg.tanh(F.linear(xr, w, b)) - yr) ** 2).mean()
        loss.backward()
        opt.step()
    return w.detach().numpy(), b.detach().numpy()


OPTIMIZER_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
]


@pytest.mark.parametrize(("name", "kwargs"), OPTIMIZER_CASES, ids=lambda v: str(v))
def test_optimizer_matches_torch(name, kwargs):
    ours = _run(name, kwargs)
    theirs = _run(name, kwargs, use_torch=True)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_step_updates_in_place_without_recording():
    p = nn.Parameter(rg.tensor([1.0, 2.0]))
    opt = rg.optim.SGD([p], lr=0.5, momentum=0.9)
    (p * p).sum().backward()
    version = p._version
    same = p
    opt.step()
    assert p is same and p.is_leaf and p.grad_fn is None
    assert p._version > version
    np.testing.assert_allclose(p.detach().numpy(), [0.0, 0.0])


def test_graph_from_before_a_step_refuses_backward():
    p = nn.Parameter(rg.tensor([1.0, 2.0]))
    opt = rg.optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    stale = (p * p).sum()  # saved p at its current version
    opt.step()
    with pytest.raises(rg.VersionMismatch):
        stale.backward()


@pytest.mark.parametrize("set_to_none", [True, False])
def test_optimizer_zero_grad(set_to_none):
    p = nn.Parameter(rg.tensor([1.0, 2.0]))
    opt = rg.optim.Adam([p])
    (p * 3).sum().backward()
    grad = p.grad
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert p.grad is None
    else:
        assert p.grad is grad
        np.testing.assert_array_equal(p.grad.detach().numpy(), [0.0, 0.0])
    opt.zero_grad()  # the default is set_to_none=True, as in PyTorch >= 2.0
    assert p.grad is None


def test_parameters_without_grad_are_skipped():
    a = nn.Parameter(rg.tensor([1.0]))
    b = nn.Parameter(rg.tensor([1.0]))
    opt = rg.optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert a.item() != 1.0 and b.item() == 1.0
    assert len(opt.state) == 1


def test_param_groups_have_their_own_hyperparameters():
    a = nn.Parameter(rg.tensor([1.0]))
    b = nn.Parameter(rg.tensor([1.0]))
    opt = rg.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    (a + b).sum().backward()
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.0)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["momentum"] == 0.0


def test_optimizer_argument_errors():
    p = nn.Parameter(rg.tensor([1.0]))
    with pytest.raises(ValueError):
        rg.optim.SGD([p], lr=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        rg.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        rg.optim.Adam([p], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty"):
        rg.optim.Adam([])
    with pytest.raises(ValueError, match="non-leaf"):
        x = rg.tensor([1.0], requires_grad=True)
        rg.optim.SGD([x * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than one"):
        rg.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):  # torch.optim only warns
        rg.optim.SGD([p, p], lr=0.1)
    with pytest.raises(TypeError):
        rg.optim.SGD(p, lr=0.1)


def test_optimizer_state_dict_round_trip():
    def make():
        rg.manual_seed(3)
        model = nn.Linear(3, 2, dtype=rg.float64)
        return model, rg.optim.Adam(model.parameters(), lr=0.1)

    x = rg.randn(4, 3, dtype=rg.float64)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()

    model, opt = make()
    train(model, opt, 3)
    saved_model, saved_opt = model.state_dict(), opt.state_dict()
    saved_model = {k: v.clone() for k, v in saved_model.items()}
    # as in PyTorch, state_dict() returns references: copy before training on
    saved_opt["state"] = {
        i: {k: (v.clone() if isinstance(v, rg.Tensor) else v) for k, v in s.items()}
        for i, s in saved_opt["state"].items()
    }
    train(model, opt, 2)

    model2, opt2 = make()
    model2.load_state_dict(saved_model)
    opt2.load_state_dict(saved_opt)
    train(model2, opt2, 2)
    np.testing.assert_allclose(
        model2.weight.detach().numpy(), model.weight.detach().numpy(), rtol=1e-12
    )
    assert opt2.state[model2.weight]["step"] == 5


def test_a_model_learns_xor():
    rg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1), nn.Sigmoid())
    opt = rg.optim.Adam(model.parameters(), lr=0.05)
    x = rg.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = rg.tensor([[0.0], [1.0], [1.0], [0.0]])
    for _ in range(300):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.01
    assert ((model(x).detach().numpy() > 0.5) == (y.detach().numpy() > 0.5)).all()
