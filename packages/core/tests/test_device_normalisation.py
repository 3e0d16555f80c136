"""A device written without an index means the backend's current one (issue 20, defect 6), and
cross_entropy's target check is a backend kernel that never copies the targets to the host
(defect 5)."""

import numpy as np
import pytest

import retrograd as rg
import retrograd.nn.functional as F
from retrograd.backends import get_backend, register_backend, unregister_backend
from retrograd.backends.numpy import NumpyBackend
from retrograd.backends.reference import class_target_error, reference_kernels
from retrograd.tensor import Tensor


class CountingBackend(NumpyBackend):
    """NumPy, renamed, counting the host copies (``to_numpy``) and able to claim a device
    index: ``multi`` makes it a multi-device backend whose arrays all sit on ``on`` and whose
    current device is ``current``."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.host_copies = 0
        self.on = 0
        self.current = 0

    def to_numpy(self, array):
        self.host_copies += 1
        return super().to_numpy(array)


class MultiBackend(CountingBackend):
    def device_index(self, array):
        return self.on

    def current_index(self):
        return self.current


@pytest.fixture
def multi():
    be = MultiBackend("fakegpu")
    assert be.multi_device
    register_backend("fakegpu", be)
    yield be
    unregister_backend("fakegpu")


@pytest.fixture
def counting():
    be = CountingBackend("counting")
    assert not be.multi_device
    register_backend("counting", be)
    yield be
    unregister_backend("counting")


# -- defect 6: device normalisation in to() -----------------------------------------------------
def test_to_the_current_device_without_an_index_is_the_same_tensor(multi):
    t = Tensor(np.arange(3.0), multi)
    assert str(t.device) == "fakegpu:0"
    assert t.to("fakegpu") is t  # was a copy through the host: Device("fakegpu") != fakegpu:0
    assert t.to("fakegpu:0") is t
    assert t.to(device="fakegpu") is t
    assert multi.host_copies == 0


def test_to_another_current_device_still_moves(multi):
    t = Tensor(np.arange(3.0), multi)
    multi.current = 1
    out = t.to("fakegpu")
    assert out is not t
    assert multi.host_copies == 1  # the device move (index 1 now means another device)
    np.testing.assert_array_equal(out._data, [0.0, 1.0, 2.0])


def test_normalize_device_fills_the_index_only_on_multi_device_backends(multi, counting):
    from retrograd.dtypes import Device

    multi.current = 3
    assert multi.normalize_device(Device("fakegpu")) == Device("fakegpu", 3)
    assert multi.normalize_device(Device("fakegpu", 1)) == Device("fakegpu", 1)
    assert counting.normalize_device(Device("counting")) is Device("counting")
    assert get_backend("cpu").current_index() == 0  # the protocol's default


def test_cpu_identity_rule_is_torchs():
    """PyTorch: ``t.to("cpu")`` is ``t``; ``t.to("cpu:0")`` is a new tensor with its own
    memory (``ensure_has_index`` leaves cpu without an index, and cpu:0 != cpu)."""
    t = rg.tensor([1.0, 2.0], requires_grad=True)
    assert t.to("cpu") is t
    assert t.to(t) is t
    out = t.to("cpu:0")
    assert out is not t
    assert out.device == t.device
    assert out.grad_fn is not None and out.grad_fn.name() == "ToCopyBackward0"
    plain = rg.tensor([1.0, 2.0])
    copy = plain.to("cpu:0")
    assert not np.shares_memory(copy.numpy(), plain.numpy())  # was an alias of plain's memory
    torch = pytest.importorskip("torch")
    tt = torch.tensor([1.0, 2.0])
    assert tt.to("cpu") is tt and tt.to("cpu:0") is not tt
    assert tt.to("cpu:0").data_ptr() != tt.data_ptr()


def test_one_device_backend_with_an_index_copies_without_the_host(counting):
    t = Tensor(np.arange(3.0), counting)
    assert t.to("counting") is t
    out = t.to("counting:0")
    assert out is not t and counting.host_copies == 0
    assert not np.shares_memory(out._data, t._data)
    assert t.to("counting", rg.float32).dtype is rg.float32 and counting.host_copies == 0


# -- defect 5: cross_entropy's target check is a backend kernel ----------------------------------
def test_cross_entropy_checks_targets_without_a_host_copy(counting):
    x = Tensor(np.zeros((4, 3)), counting)
    target = Tensor(np.array([0, 1, 2, 1]), counting)
    calls = []
    check = counting.ops.check_class_targets

    def spy(t, n):
        calls.append(n)
        return check(t, n)

    counting.override(check_class_targets=spy)
    F.cross_entropy(x, target)
    assert counting.host_copies == 0  # the targets used to go through to_numpy every forward
    assert calls == [3]
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\."):
        F.cross_entropy(x, Tensor(np.array([0, 5, 1, 7]), counting))
    assert counting.host_copies == 0


@pytest.mark.parametrize("kernels", ["cpu", "reference"])
@pytest.mark.parametrize(("values", "error", "message"), [
    ([0, 5, 1, 7], IndexError, r"^Target 5 is out of bounds\."),
    ([0, -1, 9], IndexError, r"^Target -1 is out of bounds\."),
    ([[0, 2], [3, -4]], IndexError, r"^Target 3 is out of bounds\."),
    ([-100, 1], NotImplementedError, "ignore_index"),
    ([-100, 8, -3], IndexError, r"^Target 8 is out of bounds\."),
    (7, IndexError, r"^Target 7 is out of bounds\."),
])
def test_check_class_targets_names_the_first_bad_target(kernels, values, error, message):
    check = (get_backend("cpu").kernels if kernels == "cpu" else
             reference_kernels(np))["check_class_targets"]
    with pytest.raises(error, match=message):
        check(np.asarray(values, dtype=np.int64), 3)


@pytest.mark.parametrize("values", [[0, 1, 2], [], 2])
def test_check_class_targets_passes_good_targets(values):
    assert get_backend("cpu").ops.check_class_targets(np.asarray(values, np.int64), 3) is None


def test_cross_entropy_messages_match_torch():
    torch = pytest.importorskip("torch")
    for values in ([0, 5, 1, 7], [1, -2, 0, 4]):
        with pytest.raises(IndexError) as ours:
            F.cross_entropy(rg.zeros(4, 3), rg.tensor(values))
        with pytest.raises(IndexError) as theirs:
            torch.nn.functional.cross_entropy(torch.zeros(4, 3), torch.tensor(values))
        assert str(ours.value).startswith(str(theirs.value))
    assert str(class_target_error(5, 3)).startswith("Target 5 is out of bounds.")
