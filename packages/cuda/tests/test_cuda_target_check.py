"""cross_entropy's class-target check on cuda (issue 20, defect 5): one kernel launch on the
device, no host sync in the forward; a bad target raises PyTorch's error at the next sync point
(``item()``, ``to_numpy``, ``synchronize()``).

The host-side logic runs here without a GPU (``fake_cupy``: launches recorded, device memory
never read); the kernel itself runs in the gpu tests at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F

cupy = pytest.importorskip("cupy", reason="CuPy is not installed: these checks run in nox -s cuda")

from retrograd_cuda import availability  # noqa: E402
from retrograd_cuda.backend import CudaBackend  # noqa: E402
from retrograd_cuda.kernels import fused, targets  # noqa: E402
from retrograd_cuda.kernels.sources import ELEMENTWISE, TARGET_SEQ_SHIFT  # noqa: E402

MASK = (1 << 64) - 1


def _bad(seq, index):
    """The record word the kernel leaves for a bad target at ``index`` of check ``seq``."""
    return ~((seq << TARGET_SEQ_SHIFT) | index) & MASK


@pytest.fixture
def checks(fake_cupy, monkeypatch):
    """``fake_cupy`` plus the check's state emptied and its device reads stubbed: ``reads``
    counts record reads (each one a host sync on a GPU), ``words`` is what they return."""
    monkeypatch.setattr(targets, "_pending", [])
    monkeypatch.setattr(targets, "_records", {})
    monkeypatch.setattr(targets, "_next_seq", [0])
    monkeypatch.setattr(targets, "_current_stream", lambda: None)
    state = type("State", (), {})()
    state.reads, state.resets, state.words, state.values = [], [], [0, 0], {}
    state.launches = fake_cupy.launches

    def read(record, stream):
        state.reads.append(record)
        return np.array(state.words, dtype=np.uint64)

    monkeypatch.setattr(targets, "_read", read)
    monkeypatch.setattr(targets, "_reset", lambda record, stream: state.resets.append(record))
    monkeypatch.setattr(targets, "_value_at", lambda t, i: state.values[i])

    def ew(key):
        def launch(*args):
            fake_cupy.launches.append((key, args))

        return launch

    monkeypatch.setattr(fused, "elementwise", ew)
    state.array = fake_cupy.array
    return state


@pytest.fixture
def kernel(cupy_installed):
    from retrograd.backends import reference_kernels

    return targets.make_check_class_targets(reference_kernels(cupy)["check_class_targets"])


def test_the_backend_installs_the_device_check(fake_cupy, monkeypatch):
    monkeypatch.setattr(availability, "probe", lambda: availability.Availability(True, 1, ""))
    b = CudaBackend()
    # was the reference kernel (or, before it, a to_numpy of the targets in cross_entropy)
    assert b.kernels["check_class_targets"].__qualname__.startswith("make_check_class_targets")
    assert b.kernels["item"].__qualname__.startswith("make_item")


def test_a_check_is_one_launch_and_no_host_read(checks, kernel):
    t = checks.array((64,), "int64")
    kernel(t, 10)
    (key, args), = checks.launches
    assert key == "check_class_targets"
    assert args[0] is t and int(args[1]) == 10 and int(args[2]) == 0
    record = args[3]
    assert record.shape == (2,) and record.dtype == np.uint64
    assert checks.reads == []  # no sync in the forward
    assert targets.pending() == 1
    kernel(t, 10)
    assert int(checks.launches[1][1][2]) == 1 and checks.launches[1][1][3] is record  # cached
    targets.check_pending()  # clean record: nothing raised, nothing reset
    assert len(checks.reads) == 1 and checks.resets == [] and targets.pending() == 0
    targets.check_pending()
    assert len(checks.reads) == 1  # nothing pending: no device access at all


def test_the_error_names_the_first_bad_target_of_the_earliest_check(checks, kernel):
    t = checks.array((8,), "int64")
    kernel(t, 3)
    kernel(t, 3)
    checks.words = [_bad(0, 5), 0]
    checks.values = {5: 9}
    with pytest.raises(IndexError, match=r"^Target 9 is out of bounds\. .*\[0, 3\)"):
        targets.check_pending()
    assert len(checks.resets) == 1 and targets.pending() == 0
    targets.check_pending()  # reported once


def test_ignore_index_alone_is_refused_and_loses_to_a_bad_target(checks, kernel):
    t = checks.array((8,), "int64")
    kernel(t, 3)
    checks.words = [0, ~0 & MASK]
    with pytest.raises(NotImplementedError, match="ignore_index"):
        targets.check_pending()
    assert targets.decode([_bad(2, 1), ~2 & MASK]) == (2, 1)  # same check: the bad one
    assert targets.decode([_bad(3, 1), ~2 & MASK]) == (2, None)  # earlier check first
    assert targets.decode([0, 0]) is None


def test_pending_checks_are_bounded(checks, kernel, monkeypatch):
    monkeypatch.setattr(targets, "MAX_PENDING", 4)
    t = checks.array((8,), "int64")
    for _ in range(4):
        kernel(t, 3)
    assert checks.reads == []
    kernel(t, 3)  # the fifth reads the records first
    assert len(checks.reads) == 1 and targets.pending() == 1


def test_item_and_to_numpy_are_sync_points(checks, kernel, monkeypatch):
    t = checks.array((8,), "int64")
    kernel(t, 3)
    checks.words = [_bad(0, 2), 0]
    checks.values = {2: -1}
    item = targets.make_item(lambda x: 1.5)
    with pytest.raises(IndexError, match=r"^Target -1 is out of bounds\."):
        item(t)
    assert item(t) == 1.5
    kernel(t, 3)
    checks.words = [_bad(0, 0), 0]
    checks.values = {0: 3}
    monkeypatch.setattr(availability, "probe", lambda: availability.Availability(True, 1, ""))
    with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\."):
        CudaBackend().to_numpy(t)


def test_empty_targets_launch_nothing(checks, kernel):
    kernel(checks.array((0,), "int64"), 3)
    assert checks.launches == [] and targets.pending() == 0


def test_the_kernel_compiles_for_both_index_widths(nvrtc):
    spec = ELEMENTWISE["check_class_targets"]
    assert f"<< {TARGET_SEQ_SHIFT})" in spec.operation
    result = nvrtc.compile_source(nvrtc.elementwise_source(spec), "check_class_targets",
                                  "sm_80", nvrtc.elementwise_options())
    assert set(nvrtc.elementwise_entry_points(spec)) <= set(result.entry_points)


def test_current_index_without_a_gpu_is_zero(no_gpu):
    assert CudaBackend().current_index() == 0


# -- on a GPU ----------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.usefixtures("gpu")
def test_gpu_bad_target_raises_at_the_next_sync_point(cp):
    targets.check_pending()
    x = rg.zeros(4, 3, device="cuda", requires_grad=True)
    loss = F.cross_entropy(x, rg.tensor([0, 5, 1, 7], device="cuda"))  # no raise: no sync
    assert targets.pending() >= 1
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\."):
        loss.item()
    good = F.cross_entropy(x, rg.tensor([0, 2, 1, 1], device="cuda"))
    assert good.item() == pytest.approx(np.log(3.0))
    F.cross_entropy(x, rg.tensor([-100, 1, 1, 1], device="cuda"))
    with pytest.raises(NotImplementedError, match="ignore_index"):
        rg.backends.get_backend("cuda").synchronize()
    F.cross_entropy(x, rg.tensor([1, 1, -2, 1], device="cuda"))
    F.cross_entropy(x, rg.tensor([1, 9, 1, 1], device="cuda"))
    with pytest.raises(IndexError, match=r"^Target -2 is out of bounds\."):
        x.cpu()
    assert targets.pending() == 0


@pytest.mark.gpu
@pytest.mark.usefixtures("gpu")
def test_gpu_to_cuda_on_the_current_device_is_the_same_tensor(cp):
    t = rg.zeros(3, device="cuda")
    assert str(t.device) == f"cuda:{cp.cuda.runtime.getDevice()}"
    assert t.to("cuda") is t and t.to("cuda:0") is t
    assert rg.backends.get_backend("cuda").current_index() == cp.cuda.runtime.getDevice()
