"""The nn kit against PyTorch: the same model built on both libraries has the same names,
state dict keys (in the same order), repr, hook calls and errors; module methods (``to``,
``train``, ``apply``, ``requires_grad_``, ``zero_grad``) reach the same tensors."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch
from torch_parity import same

import retrograd as rg


def _nested(lib: Any) -> Any:
    """A model touching every container: Sequential of Conv2d/BatchNorm2d, a ModuleList,
    a ModuleDict, a ParameterList, a ParameterDict, persistent and non-persistent buffers and
    a submodule shared under two names."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten()
            )
            self.heads = nn.ModuleList([nn.Linear(8, 3), nn.Linear(8, 3), nn.Linear(3, 2)])
            self.branches = nn.ModuleDict({"left": nn.Linear(2, 2), "right": nn.Tanh()})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(3)])
            self.extras = nn.ParameterDict(OrderedDict(b=nn.Parameter(lib.ones(1)),
                                                       a=lib.zeros(2, 2)))
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.register_buffer("scratch", lib.ones(4), persistent=False)
            self.shared = self.heads[2]

        def forward(self, x: Any) -> Any:
            return self.features(x)

    return Block()


def test_state_dict_keys_and_order_match_torch():
    def program(lib: Any) -> Any:
        sd = _nested(lib).state_dict()
        return [(k, list(v.shape), str(v.dtype).rpartition(".")[2]) for k, v in sd.items()]

    same(program)


@pytest.mark.parametrize("remove_duplicate", [True, False])
def test_named_modules_parameters_buffers_match_torch(remove_duplicate):
    def program(lib: Any) -> Any:
        model = _nested(lib)
        return {
            "modules": [(n, type(m).__name__) for n, m in
                        model.named_modules(prefix="net", remove_duplicate=remove_duplicate)],
            "children": [n for n, _ in model.named_children()],
            "params": [n for n, _ in model.named_parameters(remove_duplicate=remove_duplicate)],
            "own_params": [n for n, _ in model.scales.named_parameters(recurse=False)],
            "buffers": [n for n, _ in model.named_buffers(prefix="p")],
            "counts": [len(list(model.parameters())), len(list(model.buffers())),
                       len(list(model.modules()))],
        }

    same(program)


def test_named_modules_memo_skips_given_modules():
    def program(lib: Any) -> Any:
        model = _nested(lib)
        memo = {model.heads}
        return [n for n, _ in model.named_modules(memo=memo)]

    same(program)


def test_repr_matches_torch():
    def program(lib: Any) -> Any:
        return repr(_nested(lib)).replace("torch.", "").replace("retrograd.", "")

    same(program)


def test_buffers_follow_to_and_non_persistent_stay_out_of_state_dict():
    def program(lib: Any) -> Any:
        model = _nested(lib).to(lib.float64)
        dtypes = {n: str(t.dtype).rpartition(".")[2] for n, t in model.named_buffers()}
        dtypes.update({n: str(p.dtype).rpartition(".")[2] for n, p in model.named_parameters()})
        return dtypes, "scratch" in model.state_dict(), "steps" in model.state_dict()

    same(program)


def test_to_rejects_integer_dtypes_as_torch():
    same(lambda lib: _nested(lib).to(lib.int32), "floating point or complex dtypes")


def test_train_eval_apply_requires_grad_reach_every_child():
    def program(lib: Any) -> Any:
        model = _nested(lib)
        seen: list[str] = []
        model.apply(lambda m: seen.append(type(m).__name__))
        model.eval()
        modes_eval = [m.training for m in model.modules()]
        model.train()
        modes_train = [m.training for m in model.modules()]
        model.requires_grad_(False)
        frozen = [p.requires_grad for p in model.parameters()]
        return seen, modes_eval, modes_train, frozen

    same(program)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_matches_torch(set_to_none):
    def program(lib: Any) -> Any:
        model = lib.nn.Linear(3, 2).double()
        x = lib.ones(4, 3, dtype=lib.float64)
        model(x).sum().backward()
        grad_before = model.weight.grad
        model.zero_grad(set_to_none=set_to_none)
        g = model.weight.grad
        return g is None, None if g is None else g.tolist(), g is grad_before

    same(program)


# -- state_dict / load_state_dict --------------------------------------------------------------
def _linear_pair(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))


@pytest.mark.parametrize("edit", ["missing", "unexpected", "both"])
def test_load_state_dict_strict_errors_match_torch(edit):
    def program(lib: Any) -> Any:
        model = _linear_pair(lib)
        sd = dict(model.state_dict())
        if edit in ("missing", "both"):
            del sd["1.running_var"]
            del sd["0.bias"]
        if edit in ("unexpected", "both"):
            sd["2.weight"] = lib.zeros(1)
            sd["0.extra"] = lib.zeros(1)
        return model.load_state_dict(sd)

    def message(lib: Any) -> str:
        with pytest.raises(RuntimeError) as info:
            program(lib)
        return str(info.value)

    same(program)
    assert message(rg) == message(torch)


def test_load_state_dict_size_mismatch_message_matches_torch():
    def message(lib: Any) -> str:
        model = _linear_pair(lib)
        sd = dict(model.state_dict())
        sd["0.weight"] = lib.zeros(3, 2)
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(sd, strict=False)
        return str(info.value).replace("torch.Size([3, 2])", "(3, 2)").replace(
            "torch.Size([2, 2])", "(2, 2)")

    assert message(rg) == message(torch)


def test_load_state_dict_non_strict_returns_incompatible_keys():
    def program(lib: Any) -> Any:
        model = _linear_pair(lib)
        sd = dict(model.state_dict())
        del sd["0.bias"]
        sd["zzz"] = lib.ones(1)
        result = model.load_state_dict(sd, strict=False)
        full = model.load_state_dict(model.state_dict())
        return (result.missing_keys, result.unexpected_keys, list(result), repr(result),
                str(full))

    same(program)


def test_state_dict_metadata_and_destination_match_torch():
    def program(lib: Any) -> Any:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        sd = model.state_dict()
        into: dict[str, Any] = {}
        model.state_dict(destination=into, prefix="net.")
        return dict(sd._metadata), list(into), hasattr(into, "_metadata")

    same(program)


def test_load_state_dict_leaves_the_given_mapping_alone():
    def program(lib: Any) -> Any:
        model = _linear_pair(lib)
        sd = model.state_dict()
        del sd["1.num_batches_tracked"]
        keys = list(sd)
        result = model.load_state_dict(sd, strict=False)
        return keys == list(sd), result.missing_keys

    same(program)


def test_load_state_dict_rejects_non_mappings_and_non_tensors():
    same(lambda lib: _linear_pair(lib).load_state_dict([1, 2]), "dict-like")

    def bad_value(lib: Any) -> Any:
        model = _linear_pair(lib)
        sd = dict(model.state_dict())
        sd["0.bias"] = [0.0, 0.0]
        return model.load_state_dict(sd)

    same(bad_value, 'While copying the parameter named "0.bias"')


def test_load_state_dict_copies_values_in_place():
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        source = _linear_pair(lib).double()
        target = _linear_pair(lib).double()
        weight = target[0].weight
        with lib.no_grad():
            source[0].weight.fill_(0.5)
            source[1].running_mean.fill_(2.0)
            source[1].num_batches_tracked.fill_(7)
        target.load_state_dict(source.state_dict())
        return (target[0].weight is weight, target[0].weight.tolist(),
                target[1].running_mean.tolist(), int(target[1].num_batches_tracked),
                target[0].weight.requires_grad)

    same(program)


# -- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    "param_wrong_type", "module_wrong_type", "buffer_wrong_type", "dotted_buffer",
    "empty_buffer", "existing_attr", "non_leaf_param", "add_module_wrong_type",
    "register_buffer_wrong_type", "module_list_index", "parameter_list_call",
    "module_dict_missing", "missing_attribute", "sequential_add", "no_forward",
    "get_submodule", "train_mode",
])
def test_errors_match_torch_in_class(case):
    def program(lib: Any) -> Any:
        nn = lib.nn
        m = nn.Linear(2, 2)
        if case == "param_wrong_type":
            m.weight = lib.zeros(2, 2)
        elif case == "module_wrong_type":
            s = nn.Sequential(nn.ReLU())
            setattr(s, "0", lib.zeros(1))
        elif case == "buffer_wrong_type":
            m.register_buffer("b", lib.zeros(1))
            m.b = 3
        elif case == "dotted_buffer":
            m.register_buffer("a.b", lib.zeros(1))
        elif case == "empty_buffer":
            m.register_buffer("", lib.zeros(1))
        elif case == "existing_attr":
            m.register_buffer("forward", lib.zeros(1))
        elif case == "non_leaf_param":
            w = lib.ones(2, requires_grad=True) * 2
            m.register_parameter("p", w)
        elif case == "add_module_wrong_type":
            m.add_module("x", lib.zeros(1))
        elif case == "register_buffer_wrong_type":
            m.register_buffer("x", [1.0])
        elif case == "module_list_index":
            return nn.ModuleList([nn.ReLU()])[3]
        elif case == "parameter_list_call":
            return nn.ParameterList([nn.Parameter(lib.ones(1))])(1)
        elif case == "module_dict_missing":
            return nn.ModuleDict({"a": nn.ReLU()})["b"]
        elif case == "missing_attribute":
            return m.nothing_here
        elif case == "sequential_add":
            return nn.Sequential(nn.ReLU()) + nn.ModuleList()
        elif case == "no_forward":
            return nn.Module()(1)
        elif case == "get_submodule":
            return nn.Sequential(nn.ReLU()).get_submodule("0.inner")
        elif case == "train_mode":
            return m.train("yes")
        return None

    same(program)


# -- hooks -------------------------------------------------------------------------------------
def test_forward_hooks_order_arguments_and_replacements_match_torch():
    def program(lib: Any) -> Any:
        log: list[Any] = []
        model = lib.nn.Linear(2, 2).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64))
            model.bias.zero_()

        def pre_a(mod: Any, args: Any) -> Any:
            log.append(("pre_a", len(args), args[0].tolist()))
            return (args[0] * 2,)

        def pre_kw(mod: Any, args: Any, kwargs: Any) -> Any:
            log.append(("pre_kw", len(args), sorted(kwargs)))
            return None

        def pre_first(mod: Any, args: Any) -> Any:
            log.append(("pre_first", args[0].tolist()))
            return args[0] + 1  # a single value is wrapped into a tuple

        def post(mod: Any, args: Any, out: Any) -> Any:
            log.append(("post", args[0].tolist(), out.tolist()))
            return out * 10

        def post_kw(mod: Any, args: Any, kwargs: Any, out: Any) -> Any:
            log.append(("post_kw", out.tolist(), sorted(kwargs)))
            return None

        def post_first(mod: Any, args: Any, out: Any) -> Any:
            log.append(("post_first", out.tolist()))
            return None

        handles = [
            model.register_forward_pre_hook(pre_a),
            model.register_forward_pre_hook(pre_kw, with_kwargs=True),
            model.register_forward_pre_hook(pre_first, prepend=True),
            model.register_forward_hook(post),
            model.register_forward_hook(post_kw, with_kwargs=True),
            model.register_forward_hook(post_first, prepend=True),
        ]
        x = lib.tensor([[1.0, -1.0]], dtype=lib.float64)
        out1 = model(x)
        handles[0].remove()
        handles[3].remove()
        out2 = model(x)
        return log, out1.tolist(), out2.tolist()

    same(program)


def test_removable_handle_is_a_context_manager():
    def program(lib: Any) -> Any:
        calls: list[int] = []
        model = lib.nn.ReLU()
        with model.register_forward_hook(lambda m, a, o: calls.append(1)):
            model(lib.ones(1))
        model(lib.ones(1))
        return calls

    same(program)


def test_full_backward_hooks_match_torch():
    def program(lib: Any) -> Any:
        log: list[Any] = []
        lin = lib.nn.Linear(2, 3).double()
        with lib.no_grad():
            lin.weight.copy_(lib.arange(6, dtype=lib.float64).reshape(3, 2) / 4)
            lin.bias.fill_(0.5)

        class Pair(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = lin

            def forward(self, a: Any, scale: float, b: Any) -> Any:
                h = self.lin(a) * scale + b
                return h.tanh(), h.sum()

        model = Pair()

        def plain(grads: Any) -> Any:
            return [None if g is None else g.tolist() for g in grads]

        def hook_a(mod: Any, grad_input: Any, grad_output: Any) -> Any:
            log.append(("a", plain(grad_input), plain(grad_output)))
            return (grad_input[0] * 2, None, grad_input[2])

        def hook_b(mod: Any, grad_input: Any, grad_output: Any) -> Any:
            log.append(("b", plain(grad_input), plain(grad_output)))
            return None

        def pre(mod: Any, grad_output: Any) -> Any:
            log.append(("pre", plain(grad_output)))
            return (grad_output[0] + 1, grad_output[1])

        def lin_hook(mod: Any, grad_input: Any, grad_output: Any) -> Any:
            log.append(("lin", plain(grad_input), plain(grad_output)))
            return None

        model.register_full_backward_hook(hook_a)
        model.register_full_backward_hook(hook_b, prepend=True)
        model.register_full_backward_pre_hook(pre)
        lin.register_full_backward_hook(lin_hook)
        a = lib.tensor([[1.0, -2.0], [0.5, 0.25]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        t, s = model(a, 0.5, b)
        (t.sum() + s * 2).backward()
        return log, a.grad.tolist(), b.grad.tolist(), lin.weight.grad.tolist()

    same(program)


def test_full_backward_hook_without_input_grads_warns_as_torch():
    def program(lib: Any) -> Any:
        log: list[Any] = []
        model = lib.nn.Linear(2, 1).double()
        model.register_full_backward_hook(
            lambda m, gi, go: log.append((gi, [g.tolist() for g in go])))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            model(lib.ones(3, 2, dtype=lib.float64)).sum().backward()
        return log

    same(program)


def test_backward_hook_returning_wrong_count_errors_as_torch():
    def program(lib: Any) -> Any:
        model = lib.nn.Linear(2, 1).double()
        model.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        x = lib.ones(3, 2, dtype=lib.float64, requires_grad=True)
        model(x).sum().backward()

    same(program, "invalid number of grad_input")


# -- parameter containers ----------------------------------------------------------------------
def test_module_list_and_dict_editing_match_torch():
    def program(lib: Any) -> Any:
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.Sigmoid())
        ml.insert(1, nn.Identity())
        ml.extend([nn.ReLU()])
        popped = type(ml.pop(0)).__name__
        del ml[-1]
        ml[0] = nn.GELU()
        md = nn.ModuleDict([("x", nn.ReLU()), ("y", nn.Tanh())])
        md.update({"a": nn.Identity()})
        md["x"] = nn.Sigmoid()
        md_pop = type(md.pop("y")).__name__
        return ([type(m).__name__ for m in ml], list(ml._modules), popped,
                list(md.keys()), md_pop, "a" in md, len(md),
                [type(m).__name__ for m in ml[1:]])

    same(program)


def test_parameter_list_and_dict_match_torch():
    def program(lib: Any) -> Any:
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2)])
        pl.append(nn.Parameter(lib.zeros(1), requires_grad=False))
        pl.extend([lib.ones(3)])
        pd = nn.ParameterDict({"w": lib.ones(2), "b": lib.zeros(1)})
        pd["z"] = nn.Parameter(lib.ones(1))
        popped = pd.pop("w").tolist()
        return ([type(p).__name__ for p in pl], [p.requires_grad for p in pl],
                [n for n, _ in pl.named_parameters()], list(pd.keys()), popped,
                [n for n, _ in pd.named_parameters()], "b" in pd, len(pd), len(pl))

    same(program)


def test_always_call_forward_hook_runs_when_forward_raises():
    def program(lib: Any) -> Any:
        log: list[Any] = []

        class Broken(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                raise ValueError("broken forward")

        model = Broken()
        model.register_forward_hook(lambda m, a, o: log.append(("always", o)), always_call=True)
        model.register_forward_hook(lambda m, a, o: log.append(("plain", o)))

        def failing(m: Any, a: Any, kw: Any, o: Any) -> None:
            raise KeyError("hook failed")

        model.register_forward_hook(failing, with_kwargs=True, always_call=True)
        with pytest.warns(UserWarning, match="silenced as another error was raised"):
            with pytest.raises(ValueError, match="broken forward"):
                model(lib.ones(1))
        return log

    same(program)


# -- nn.init: PyTorch's distributions (the random streams differ, the laws do not) -------------
def _sample(lib: Any, fill: Any, shape: tuple[int, ...]) -> np.ndarray:
    gen = lib.Generator().manual_seed(0)
    t = lib.empty(*shape, dtype=lib.float64)
    out = fill(lib, t, gen)
    assert out is t
    return np.asarray(t.tolist(), dtype=np.float64)


INIT_CASES: dict[str, Any] = {
    "uniform": lambda lib, t, g: lib.nn.init.uniform_(t, -0.5, 2.0, generator=g),
    "normal": lambda lib, t, g: lib.nn.init.normal_(t, 1.0, 0.25, generator=g),
    "xavier_uniform": lambda lib, t, g: lib.nn.init.xavier_uniform_(t, gain=1.5, generator=g),
    "xavier_normal": lambda lib, t, g: lib.nn.init.xavier_normal_(t, generator=g),
    "kaiming_uniform": lambda lib, t, g: lib.nn.init.kaiming_uniform_(
        t, a=5 ** 0.5, generator=g),
    "kaiming_uniform_fan_out": lambda lib, t, g: lib.nn.init.kaiming_uniform_(
        t, mode="fan_out", nonlinearity="relu", generator=g),
    "kaiming_normal": lambda lib, t, g: lib.nn.init.kaiming_normal_(
        t, nonlinearity="relu", generator=g),
    "trunc_normal": lambda lib, t, g: lib.nn.init.trunc_normal_(
        t, mean=0.5, std=1.0, a=-0.5, b=2.0, generator=g),
    "trunc_normal_narrow": lambda lib, t, g: lib.nn.init.trunc_normal_(
        t, mean=0.0, std=1.0, a=2.0, b=2.5, generator=g),
}


@pytest.mark.parametrize("name", sorted(INIT_CASES))
def test_init_distributions_match_torch(name):
    shape = (64, 40, 3, 3)  # fan_in 360, fan_out 576: 23040 draws
    want = _sample(torch, INIT_CASES[name], shape)
    got = _sample(rg, INIT_CASES[name], shape)
    spread = want.std()
    assert abs(got.mean() - want.mean()) < 0.05 * spread
    assert abs(got.std() - want.std()) < 0.03 * spread
    # the support: same bounds (uniforms and truncations reach close to them on both sides)
    for q in (0.01, 0.1, 0.5, 0.9, 0.99):
        assert abs(np.quantile(got, q) - np.quantile(want, q)) < 0.08 * spread, q
    if "uniform" in name or "trunc" in name:
        assert abs(got.min() - want.min()) < 0.01 * spread
        assert abs(got.max() - want.max()) < 0.01 * spread
        assert got.min() >= want.min() - 0.01 * spread
        assert got.max() <= want.max() + 0.01 * spread


@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (4, 3, 2, 2)])
def test_orthogonal_is_orthogonal_with_gain(shape):
    for lib in (torch, rg):
        w = _sample(lib, lambda lib, t, g: lib.nn.init.orthogonal_(t, gain=2.0, generator=g),
                    shape).reshape(shape[0], -1)
        small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-10)


def test_orthogonal_is_haar_distributed():
    # the (0, 0) entry of a Haar orthogonal n x n matrix has mean 0 and variance 1/n
    firsts = [_sample(rg, lambda lib, t, g, s=s: lib.nn.init.orthogonal_(
        t, generator=g.manual_seed(s)), (8, 8))[0, 0] for s in range(400)]
    assert abs(np.mean(firsts)) < 0.06 and abs(np.var(firsts) - 1 / 8) < 0.03


def test_init_with_the_same_generator_seed_repeats_itself():
    def draw() -> list[Any]:
        gen = rg.Generator().manual_seed(7)
        t = rg.empty(5, 4)
        return rg.nn.init.kaiming_uniform_(t, generator=gen).tolist()

    assert draw() == draw()
    rg.manual_seed(3)
    a = rg.nn.init.normal_(rg.empty(3)).tolist()
    rg.manual_seed(3)
    assert rg.nn.init.normal_(rg.empty(3)).tolist() == a


def test_deterministic_inits_match_torch_exactly():
    def program(lib: Any) -> Any:
        init = lib.nn.init
        w = lib.nn.Parameter(lib.empty(3, 4, dtype=lib.float64))
        out = [init.constant_(w, 0.25).tolist(), init.zeros_(w).tolist(), init.ones_(w).tolist(),
               init.eye_(w).tolist(), w.is_leaf, w.requires_grad]
        out += [init.calculate_gain(n) for n in
                ("linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu")]
        out += [init.calculate_gain("leaky_relu", 0.2), init.calculate_gain("leaky_relu", 1)]
        return out

    same(program)


@pytest.mark.parametrize("case", ["gain_name", "gain_param", "fan_1d", "mode", "eye_3d",
                                  "orthogonal_1d"])
def test_init_errors_match_torch(case):
    def program(lib: Any) -> Any:
        init = lib.nn.init
        if case == "gain_name":
            return init.calculate_gain("swish")
        if case == "gain_param":
            return init.calculate_gain("leaky_relu", "big")
        if case == "fan_1d":
            return init.xavier_uniform_(lib.empty(4))
        if case == "mode":
            return init.kaiming_normal_(lib.empty(2, 2), mode="fan_mid")
        if case == "eye_3d":
            return init.eye_(lib.empty(2, 2, 2))
        return init.orthogonal_(lib.empty(3))

    same(program)


def test_zero_element_kaiming_warns_as_torch():
    for lib in (torch, rg):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            lib.nn.init.kaiming_uniform_(lib.empty(0, 3))


# -- nn.utils: clipping and flattening, value for value in float64 -----------------------------
def _grads(lib: Any) -> list[Any]:
    rng = np.random.default_rng(1)
    params = []
    for shape in ((3, 4), (5,), (2, 2, 2)):
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape)))
        p.grad = lib.tensor(rng.standard_normal(shape) * 3)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, 0.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("foreach", [None, True])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, foreach):
    def program(lib: Any) -> Any:
        params = _grads(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type,
                                             foreach=foreach)
        return total, [p.grad for p in params]

    same(program)


def test_clip_grad_norm_single_tensor_and_no_grads():
    def program(lib: Any) -> Any:
        params = _grads(lib)
        single = lib.nn.utils.clip_grad_norm_(params[0], 1.0)
        bare = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        none = lib.nn.utils.clip_grad_norm_([bare], 1.0)
        return single, params[0].grad, none

    same(program)


def test_clip_grad_norm_non_finite():
    def program(lib: Any, error: bool) -> Any:
        params = _grads(lib)
        params[1].grad[2] = float("inf")
        total = lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=error)
        return total, [p.grad for p in params]

    same(lambda lib: program(lib, False))
    same(lambda lib: program(lib, True), "is non-finite, so it cannot be clipped")


def test_clip_grad_norm_warns_on_empty_generator_as_torch():
    for lib in (torch, rg):
        with pytest.warns(UserWarning, match="empty generator"):
            lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)


@pytest.mark.parametrize("foreach", [None, True])
def test_clip_grad_value_matches_torch(foreach):
    def program(lib: Any) -> Any:
        params = _grads(lib)
        lib.nn.utils.clip_grad_value_(params, 1.25, foreach=foreach)
        return [p.grad for p in params]

    same(program)


def test_parameters_vector_round_trip_matches_torch():
    def program(lib: Any) -> Any:
        params = _grads(lib)
        vec = lib.nn.utils.parameters_to_vector(params)
        history = type(vec.grad_fn).__name__ if lib is torch else vec.grad_fn.name()
        new = lib.arange(vec.numel(), dtype=lib.float64) / 7
        lib.nn.utils.vector_to_parameters(new, params)
        return vec, history, params, [p.is_leaf for p in params]

    same(program)


def test_vector_to_parameters_rejects_non_tensors():
    same(lambda lib: lib.nn.utils.vector_to_parameters([1.0], _grads(lib)), "expected")


def test_load_state_dict_takes_one_element_vectors_for_scalars_as_torch():
    def program(lib: Any) -> Any:
        model = _linear_pair(lib)
        sd = dict(model.state_dict())
        sd["1.num_batches_tracked"] = lib.tensor([5])
        model.load_state_dict(sd)
        return model[1].num_batches_tracked

    same(program)
