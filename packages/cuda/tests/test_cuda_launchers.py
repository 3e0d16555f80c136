"""The launchers' host-side decisions, on a machine without a GPU (``fake_cupy``): which path
runs, what is launched with which grid, which buffers are made once, which device is current.

The kernels themselves run in the gpu tests; these pin down what the first GPU run would have
stumbled on: a first layer falling back because its weight is not saved (issue 20, defect 3),
a memset and a module lookup per launch (defect 4), launches on the wrong device (defect 2),
and a CuPy too old for the reference kernels (defect 1).
"""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

import retrograd.backends.reference as reference_module
import retrograd.backends.summation as summation_module
from retrograd.backends import reference_kernels

cupy = pytest.importorskip("cupy", reason="CuPy is not installed: these checks run in nox -s cuda")

from retrograd_cuda import availability  # noqa: E402
from retrograd_cuda.backend import CudaBackend, device_guard, first_device  # noqa: E402
from retrograd_cuda.kernels import fused  # noqa: E402
from retrograd_cuda.kernels.sources import BIAS_COLS, BIAS_ROWS, bias_grid  # noqa: E402

REAL_RAW_FUNCTION = fused.raw_function


def _refuse(*args):
    raise AssertionError("the reference kernel ran: the fast path fell back")


# -- defect 1: the CuPy the package allows has what the kernels call ---------------------------
def test_installed_cupy_has_every_function_the_kernels_call():
    """Every ``xp.<name>`` of the reference kernels and the blocked sums, every ``cupy.<name>``
    of the launchers, and ``asarray(copy=...)``: CuPy 13 lacks permute_dims, astype, concat
    and the copy keyword, so the first F.linear would raise AttributeError there."""
    names = set()
    for module, prefix in ((reference_module, "xp"), (summation_module, "xp"), (fused, "cupy")):
        names |= set(re.findall(rf"\b{prefix}\.([a-z_][a-z0-9_]*)\b", inspect.getsource(module)))
    names -= {"cuda"}  # a subpackage, not an array function
    missing = sorted(n for n in names if not hasattr(cupy, n))
    assert not missing, f"CuPy {cupy.__version__} lacks {missing}"
    assert "copy" in inspect.signature(cupy.asarray).parameters


def test_the_package_requires_a_cupy_that_has_them():
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    cupy_reqs = [r for name in ("cuda12", "cuda13") for r in extras[name] if r.startswith("cupy")]
    assert len(cupy_reqs) == 2 and all(r.endswith(">=14") for r in cupy_reqs), cupy_reqs
    assert int(cupy.__version__.split(".")[0]) >= 14


# -- defect 3: a network's first layer (data input) takes the fused path ------------------------
def test_first_layer_with_data_input_runs_fused(fake_cupy):
    """The node saves the weight only when x needs a gradient: weight=None for a first layer."""
    n, n_in, n_out = 64, 16, 32
    g, y = fake_cupy.array((n, n_out)), fake_cupy.array((n, n_out))
    x = fake_cupy.array((n, n_in))
    kernel = fused.make_linear_activation_backward("relu", _refuse)
    gx, gw, gb = kernel(g, y, x, None, False, True, True)
    assert gx is None and gw.shape == (n_out, n_in) and gb.shape == (n_out,)
    assert fused.CALLS["linear_relu_backward"] == 1
    assert fused.CALLS["linear_relu_backward:fallback"] == 0
    (name, dev, grid, block, args), = fake_cupy.launches
    assert name == "rg_bias_relu_bw_f32" and dev == 0
    assert grid == bias_grid(n, n_out, 132) and block == (BIAS_COLS, BIAS_ROWS)
    assert args[:2] == (g, y) and int(args[6]) == n and int(args[7]) == n_out
    assert fake_cupy.matmuls == [((n_out, n), (n, n_in))]  # gw = ga.T @ x only


def test_weight_only_layer_and_no_bias(fake_cupy):
    """x saved as None (the weight needs no gradient): still fused; no bias: elementwise."""
    g, y, w = fake_cupy.array((8, 4)), fake_cupy.array((8, 4)), fake_cupy.array((4, 3))
    kernel = fused.make_linear_activation_backward("tanh", _refuse)
    gx, gw, gb = kernel(g, y, None, w, True, False, False)
    assert gx.shape == (8, 3) and gw is None and gb is None
    assert [launch[0] for launch in fake_cupy.launches] == ["tanh_backward"]


def test_other_dtypes_fall_back_and_are_counted(fake_cupy):
    calls = []
    g = fake_cupy.array((8, 4), "float16")
    kernel = fused.make_linear_activation_backward("sigmoid", lambda *a: calls.append(a) or a[:3])
    kernel(g, g, g, g, True, True, True)
    assert len(calls) == 1 and fused.CALLS["linear_sigmoid_backward:fallback"] == 1
    assert not fake_cupy.launches


# -- defect 4: one launch per call, buffers and functions made once ----------------------------
def test_bias_gradient_is_one_launch_with_cached_buffers(fake_cupy):
    n, m = 100_000, 5
    g, y = fake_cupy.array((n, m)), fake_cupy.array((n, m))
    _, grid_y = bias_grid(n, m, 132)
    assert grid_y > 1  # several row blocks: the ticket counters and partial sums are used
    fused.bias_activation_backward("relu", g, y)
    fused.bias_activation_backward("relu", g, y)
    assert len(fake_cupy.launches) == 2
    assert len(fake_cupy.zeros) == 1  # the counters, zeroed once (the kernel leaves them at 0)
    first, second = (launch[4] for launch in fake_cupy.launches)
    assert first[4].data.ptr == second[4].data.ptr and first[5].data.ptr == second[5].data.ptr
    assert first[4].size >= 2 * grid_y * m


def test_raw_functions_are_compiled_once_per_device(fake_cupy, monkeypatch):
    made = []

    class FakeModule:
        def __init__(self, code, options):
            made.append(options)

        def get_function(self, name):
            made.append(name)
            return object()

    monkeypatch.setattr(cupy, "RawModule", FakeModule)
    monkeypatch.setattr(fused, "_modules", {})
    monkeypatch.setattr(fused, "_functions", {})
    a = REAL_RAW_FUNCTION("rg_bias_relu_bw_f32", 0)
    assert REAL_RAW_FUNCTION("rg_bias_relu_bw_f32", 0) is a
    REAL_RAW_FUNCTION("rg_bias_tanh_bw_f32", 0)
    REAL_RAW_FUNCTION("rg_bias_relu_bw_f32", 1)
    assert made == [("--std=c++17",), "rg_bias_relu_bw_f32", "rg_bias_tanh_bw_f32",
                    ("--std=c++17",), "rg_bias_relu_bw_f32"]


# -- cross-entropy backward: one elementwise launch, inputs as they are ---------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_launch(fake_cupy, reduction):
    n, c = 37, 10
    logp = fake_cupy.array((c, n)).T  # a transposed (non-contiguous) input: no copy
    target = fake_cupy.array((n,), "int32")
    g = fake_cupy.array((n,) if reduction == "none" else ())
    kernel = fused.make_cross_entropy_backward(_refuse)
    gx = kernel(g, None, logp, target, reduction)
    assert gx.shape == (n, c)
    (key, args), = fake_cupy.launches[-1:]
    assert key == "cross_entropy_backward"
    lp, tg, gg, count, col = args
    assert lp is logp and tg.shape == (n, 1) and tg.dtype == np.int32
    assert gg.shape == ((n, 1) if reduction == "none" else ())
    assert count == (n if reduction == "mean" else 1) and count.dtype == np.float32
    assert col.shape == (c,) and col.dtype == np.int32
    kernel(g, None, logp, target, reduction)
    assert not fake_cupy.zeros and len(fake_cupy.aranges) == 1  # the column index is reused


def test_cross_entropy_refuses_a_bad_reduction(fake_cupy):
    logp = fake_cupy.array((3, 4))
    with pytest.raises(ValueError, match="reduction"):
        fused.make_cross_entropy_backward(_refuse)(logp[0, 0], None, logp, logp, "avg")


# -- defect 2: every launch on its arrays' device -----------------------------------------------
def test_first_device_looks_into_lists(fake_cupy):
    a0, a1 = fake_cupy.array((2,), dev=0), fake_cupy.array((2,), dev=1)
    assert first_device((a1, a0), cupy.ndarray) == 1
    assert first_device((3, [a1, a0]), cupy.ndarray) == 1
    assert first_device((3, "x", None), cupy.ndarray) is None


def test_device_guard_enters_the_arrays_device(fake_cupy):
    entered = []

    class Enter:
        def __init__(self, dev):
            entered.append(dev)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    fn = device_guard(lambda *a: "ran", cupy.ndarray, lambda: 0, Enter)
    assert fn(fake_cupy.array((2,), dev=0)) == "ran" and entered == []
    assert fn(fake_cupy.array((2,), dev=1)) == "ran" and entered == [1]
    assert fn([fake_cupy.array((2,), dev=1)]) == "ran" and entered == [1, 1]
    assert fn.__wrapped__.__name__ == "<lambda>"


@pytest.mark.parametrize("count", [1, 2])
def test_backend_guards_its_kernels_only_with_several_gpus(fake_cupy, monkeypatch, count):
    monkeypatch.setattr(availability, "probe",
                        lambda: availability.Availability(True, count, ""))
    b = CudaBackend()
    guarded = {name for name, fn in b.kernels.items() if hasattr(fn, "__wrapped__")}
    if count == 1:
        assert not guarded & {"add", "linear_relu_backward", "sum"}
        return
    assert guarded == set(b.kernels)
    assert all(getattr(b.ops, name) is fn for name, fn in b.kernels.items())
    entered = cupy.cuda.Device.entered  # the fixture's FakeDevice
    entered.clear()
    g = fake_cupy.array((4, 3), dev=1)
    b.ops.relu_backward(g, g)
    assert entered[:1] == [1]  # the guard made cuda:1 current for the launch


def test_raw_launches_name_the_arrays_device(fake_cupy):
    g = fake_cupy.array((100, 3), dev=1)
    fused.bias_activation_backward("sigmoid", g, g)
    (name, dev, *_), = fake_cupy.launches
    assert dev == 1


def test_reference_table_is_what_the_backend_starts_from(cupy_installed):
    """Sanity for the two tests above: building the table needs no GPU."""
    assert "linear_relu_backward" in reference_kernels(cupy)
