"""``rg.save``/``rg.load`` in the safetensors format, exchanged with PyTorch both ways: a real
torch model's state dict saved by ``safetensors.torch`` loads into the same retrograd model
(and reproduces its outputs), and what ``rg.save`` writes loads into torch."""

from __future__ import annotations

import io
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save, save_file

import retrograd as rg


def _model(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 2))


def _trained_torch_model() -> Any:
    torch.manual_seed(0)
    model = _model(torch).double()
    for _ in range(3):  # moves running_mean/var and num_batches_tracked off their defaults
        model(torch.randn(8, 4, dtype=torch.float64))
    return model.eval()


def test_torch_file_loads_into_the_retrograd_model(tmp_path: Path):
    source = _trained_torch_model()
    path = tmp_path / "model.safetensors"
    save_file(source.state_dict(), str(path))

    model = _model(rg).double()
    result = model.load_state_dict(rg.load(path))
    assert repr(result) == "<All keys matched successfully>"
    model.eval()
    assert int(model[1].num_batches_tracked) == 3
    assert model[1].num_batches_tracked.dtype == rg.int64
    x = np.random.default_rng(0).standard_normal((5, 4))
    want = source(torch.from_numpy(x)).detach().numpy()
    got = np.asarray(model(rg.tensor(x)).tolist())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_retrograd_file_loads_into_torch(tmp_path: Path):
    rg.manual_seed(0)
    model = _model(rg).double()
    for _ in range(2):
        model(rg.randn(8, 4, dtype=rg.float64))
    path = tmp_path / "model.safetensors"
    rg.save(model.state_dict(), path)

    loaded = load_file(str(path))
    target = _model(torch).double()
    target.load_state_dict(loaded)
    assert int(target[1].num_batches_tracked) == 2
    assert loaded["1.num_batches_tracked"].dtype == torch.int64
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(loaded[key].numpy(), np.asarray(value.tolist()))
    model.eval()
    target.eval()
    x = np.random.default_rng(1).standard_normal((5, 4))
    np.testing.assert_allclose(np.asarray(model(rg.tensor(x)).tolist()),
                               target(torch.from_numpy(x)).detach().numpy(), rtol=1e-12)


def test_round_trip_keeps_order_dtypes_shapes_and_values():
    state = OrderedDict(
        zeta=rg.tensor([[1.5, -2.0]], dtype=rg.float32),
        alpha=rg.tensor(7, dtype=rg.int64),
        mid=rg.tensor([True, False]),
        half=rg.tensor([0.5, 65504.0], dtype=rg.float16),
        ints=rg.arange(6, dtype=rg.int32).reshape(2, 3).t(),  # not contiguous
    )
    buffer = io.BytesIO()
    rg.save(state, buffer)
    buffer.seek(0)
    loaded = rg.load(buffer)
    assert list(loaded) == list(state)
    for key, value in state.items():
        assert loaded[key].dtype == value.dtype
        assert tuple(loaded[key].shape) == tuple(value.shape)
        assert loaded[key].tolist() == value.tolist()
        assert not loaded[key].requires_grad


def test_loaded_tensors_are_independent_and_detached():
    weight = rg.nn.Parameter(rg.ones(3))
    buffer = io.BytesIO()
    rg.save({"w": weight}, buffer)
    buffer.seek(0)
    loaded = rg.load(buffer)["w"]
    with rg.no_grad():
        weight.mul_(2)
    assert loaded.tolist() == [1.0, 1.0, 1.0] and loaded.grad_fn is None


def test_float16_is_kept_both_ways():
    rg_bytes = io.BytesIO()
    rg.save({"h": rg.tensor([0.25, -3.0], dtype=rg.float16)}, rg_bytes)
    from safetensors.torch import load as torch_load

    assert torch_load(rg_bytes.getvalue())["h"].dtype == torch.float16
    back = rg.load(io.BytesIO(save({"h": torch.tensor([0.25, -3.0], dtype=torch.float16)})))
    assert back["h"].dtype == rg.float16 and back["h"].tolist() == [0.25, -3.0]


def test_bfloat16_files_are_refused_naming_the_tensor():
    data = save({"fine": torch.ones(1), "emb.weight": torch.ones(2, dtype=torch.bfloat16)})
    with pytest.raises(rg.DTypeError, match=r"'emb.weight'.*BF16 \(bfloat16\)"):
        rg.load(io.BytesIO(data))


@pytest.mark.parametrize("obj, phrase", [
    ([rg.ones(1)], "got list"),
    (rg.ones(1), "got Tensor"),
    ({1: rg.ones(1)}, "key of type int: 1"),
    ({"w": rg.ones(1), "lr": 0.1}, "the value of 'lr' is a float"),
    ({"w": np.ones(1)}, "the value of 'w' is a ndarray"),
    ({"nested": {"w": rg.ones(1)}}, "the value of 'nested' is a dict"),
])
def test_save_refuses_anything_but_str_to_tensor(obj, phrase, tmp_path: Path):
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match=phrase):
        rg.save(obj, path)
    assert not path.exists()


def test_load_refuses_pickles_and_garbage(tmp_path: Path):
    pickled = tmp_path / "model.pt"
    torch.save({"w": torch.ones(1)}, pickled)
    with pytest.raises(rg.RetrogradError, match="not a safetensors file"):
        rg.load(pickled)
    with pytest.raises(rg.RetrogradError, match="not a safetensors file"):
        rg.load(io.BytesIO(b"abc"))


def test_bad_file_arguments_are_type_errors():
    with pytest.raises(TypeError, match="path or a binary file object"):
        rg.save({"w": rg.ones(1)}, 3)
    with pytest.raises(TypeError, match="path or a binary file object"):
        rg.load(3.5)
    with pytest.raises(TypeError, match="map_location"):
        rg.load(io.BytesIO(save({"w": torch.ones(1)})), map_location=lambda s, loc: s)


def test_safetensors_is_a_declared_dependency():
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    assert any(d.startswith("safetensors") for d in deps)


def test_load_accepts_torch_load_keywords(tmp_path):
    """``torch.load(path, weights_only=True)`` spelled for retrograd works unchanged."""
    path = tmp_path / "w.safetensors"
    rg.save({"w": rg.ones(2)}, path)
    for kw in ({"weights_only": True}, {"weights_only": False}, {"mmap": True}):
        assert rg.load(path, **kw)["w"].tolist() == [1.0, 1.0]
    assert rg.load(path, "cpu", weights_only=True)["w"].device.type == "cpu"
