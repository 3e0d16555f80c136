"""``ArrayAPIBackend``: a backend from an Array-API namespace and declared capabilities."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as rg
from retrograd.backends import ArrayAPIBackend, Capabilities
from retrograd.backends.capabilities import verify


@pytest.fixture
def compat_numpy():
    """NumPy through array-api-compat, registered under a fresh name."""
    pytest.importorskip("array_api_compat")
    be = ArrayAPIBackend(np, name="compat_numpy_test")
    rg.register_backend("compat_numpy_test", be)
    yield be
    rg.backends.unregister_backend("compat_numpy_test")


def test_a_backward_on_an_array_api_backend_equals_the_cpu_backend(compat_numpy):
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    grads = []
    for device in ("cpu", "compat_numpy_test"):
        wt = rg.tensor(w, device=device, requires_grad=True)
        xt = rg.tensor(x, device=device)
        (xt @ wt).tanh().sum().backward()
        (xt @ wt).tanh().sum().backward()  # a second backward accumulates in place
        assert wt.device.type == device
        grads.append(wt.grad.cpu().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert all(p is None for p in verify(compat_numpy).values())


def test_immutable_arrays_refuse_in_place_kernels_loudly():
    pytest.importorskip("array_api_compat")
    be = ArrayAPIBackend(np, name="immutable_test", capabilities=Capabilities(inplace=False))
    dst = be.asarray([1.0, 2.0])
    with pytest.raises(NotImplementedError, match="cannot be written in place"):
        be.ops.accumulate_(dst, dst)
    with pytest.raises(NotImplementedError, match="assign_ refuses"):
        be.ops.assign_(dst, dst)
    assert verify(be)["inplace"] is None  # the declaration holds: it refuses


def test_capabilities_are_validated():
    with pytest.raises(ValueError, match="memory must be 'host' or 'device'"):
        Capabilities(memory="disk")
    with pytest.raises(ValueError, match="unknown dtype"):
        Capabilities(dtypes=("float32", "complex64"))


def test_every_backend_has_capabilities():
    assert rg.get_backend("cpu").capabilities == Capabilities()


def test_float64_sums_stay_float64_on_a_namespace_without_float16():
    """NumPy reads ``dtype == None`` as a comparison with float64: the blocked sum once took
    a missing float16 (Dask's namespace has none) for float64 and summed float64 in float32."""
    import math

    compat = pytest.importorskip("array_api_compat.numpy")
    from retrograd.backends.summation import blocked_sum

    class NoHalf:
        float16 = None

        def __getattr__(self, name):
            return getattr(compat, name)

    x = np.random.default_rng(0).standard_normal(3000) ** 2
    exact = math.fsum(x.tolist())
    got = float(blocked_sum(NoHalf(), compat.asarray(x)))
    assert abs(got - exact) <= 1e-13 * exact
