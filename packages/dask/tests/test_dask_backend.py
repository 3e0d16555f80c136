"""retrograd-dask: the conformance suite on ``device="dask"`` (the test session runs every
family but the op database, with 30 generated programs; ``nox -s conformance_libraries``
and ``nox -s stress`` run the whole suite), its declared capabilities,
what is computed when, and a training step equal to the cpu backend's."""

from __future__ import annotations

import threading

import dask.array as da
import numpy as np
import pytest
import torch
from retrograd_dask import backend, from_dask

import retrograd as rg
from retrograd.backends.capabilities import verify
from retrograd_conformance.testing import assert_suite_passes, assert_training_matches_cpu


def test_the_conformance_suite_passes_on_the_dask_backend():
    """Every family but the op database, and 30 generated programs: the op database runs
    one XLA compile (JAX) or one task graph (Dask) per op, sample and dtype, about a quarter
    of an hour here; it runs in ``nox -s conformance_libraries`` and in the stress test
    below."""
    assert_suite_passes("dask", suites=["capabilities", "documents", "semantics", "programs"],
                        fuzz=30)


@pytest.mark.stress
def test_the_whole_conformance_suite_passes_on_the_dask_backend():
    assert_suite_passes("dask", fuzz=100)


def test_declared_capabilities_hold():
    assert backend.capabilities.lazy and not backend.capabilities.inplace
    found = verify(backend)
    assert set(found) == {"inplace", "dtypes", "lazy", "memory"}  # laziness checked too
    assert all(v is None for v in found.values()), found


class _Counted:
    """An identity on each chunk that counts how often Dask computes it."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, block: np.ndarray) -> np.ndarray:
        if block.size:  # not Dask's probe of the output type on an empty block
            with self._lock:
                self.calls += 1
        return block


def _mlp_step(x: rg.Tensor, y: rg.Tensor) -> tuple[rg.Tensor, list[rg.Tensor]]:
    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(4, 8), rg.nn.Tanh(), rg.nn.Linear(8, 1)).double()
    net.to("dask")
    loss = rg.nn.functional.mse_loss(net(x), y)
    return loss, list(net.parameters())


def _counted_batch(counter: _Counted) -> tuple[rg.Tensor, rg.Tensor]:
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 4))
    x = da.from_array(xs, chunks=(16, 4)).map_blocks(counter, dtype=np.float64)
    return from_dask(x), from_dask(da.from_array(np.sin(xs[:, :1]), chunks=(16, 1)))


def test_a_backward_computes_the_forward_once_and_reading_afterwards_computes_nothing():
    counter = _Counted()
    x, y = _counted_batch(counter)
    loss, params = _mlp_step(x, y)
    assert counter.calls == 0  # the forward only built a graph
    loss.backward()
    assert counter.calls == 4  # the loss and every gradient together: each chunk once
    loss.item()
    for p in params:
        p.grad.cpu()
    assert counter.calls == 4  # settled: nothing computed again


def test_without_settling_each_read_would_compute_the_forward_again(monkeypatch):
    """The figure behind ``settle`` (docs/backends.md): with it replaced by the identity, the
    loss and each of the 4 gradients computes the forward again."""
    monkeypatch.setattr(backend.ops, "settle", lambda arrays: arrays)
    counter = _Counted()
    x, y = _counted_batch(counter)
    loss, params = _mlp_step(x, y)
    loss.backward()
    assert counter.calls == 0
    loss.item()
    for p in params:
        p.grad.cpu()
    assert counter.calls == 4 * (1 + len(params))


def test_writes_through_views_reach_the_base_on_lazy_arrays():
    x = rg.zeros(3, 4, device="dask", dtype=rg.float64)
    v = x[1]
    v.add_(2.0)  # on a Dask array ``v += 2`` alone would rebind a name and change nothing
    x[:, 0] = 5.0
    assert x.cpu().tolist() == [[5.0, 0, 0, 0], [5.0, 2, 2, 2], [5.0, 0, 0, 0]]
    assert v.cpu().tolist() == [5.0, 2.0, 2.0, 2.0]


def test_a_training_step_equals_the_cpu_backend():
    assert_training_matches_cpu("dask", array_type=da.Array, optimizer="adam", batch=32)


@pytest.mark.parametrize("chunks", [(2, 4), (2, 2)])
def test_reading_values_fetches_the_chunks_a_few_at_a_time(monkeypatch, chunks):
    """A worker asked for all its chunks at once holds them all in memory together: on a
    cluster whose workers have less memory than the array (the spill case of
    test_dask_cluster.py) they were killed and restarted without end."""
    import dask
    import retrograd_dask

    values = np.arange(40, dtype=np.float64).reshape(10, 4)
    x = da.from_array(values, chunks=chunks)
    requests: list[int] = []
    compute = dask.compute

    def counted(*args, **kwargs):
        requests.append(len(args))
        return compute(*args, **kwargs)

    monkeypatch.setattr(dask, "compute", counted)
    monkeypatch.setattr(retrograd_dask, "GATHER_BYTES", 2 * 8 * 2 * 4)  # two (2, 4) chunks
    out = from_dask(x).cpu().numpy()
    np.testing.assert_array_equal(out, values)
    assert max(requests) * int(np.prod(chunks)) * 8 <= retrograd_dask.GATHER_BYTES
    assert sum(requests) == x.npartitions


@pytest.mark.parametrize("conv, shape, weight", [
    ("conv1d", (2, 4, 9), (6, 2, 3)),
    ("conv2d", (2, 4, 6, 5), (6, 2, 2, 3)),
    ("conv1d", (0, 4, 9), (6, 2, 3)),  # an empty batch
])
def test_grouped_dilated_and_empty_convolutions_equal_the_cpu_backends(conv, shape, weight):
    """The op database found both: im2col's reshape split the channels into groups and
    merged them with the window in one step, and any reshape of an empty array, which
    Dask's reshape (split or merge only) refuses."""
    rng = np.random.default_rng(3)
    x0, w0 = rng.standard_normal(shape), rng.standard_normal(weight)
    results = []
    for device in ("cpu", "dask"):
        x = rg.tensor(x0, device=device, requires_grad=True)
        w = rg.tensor(w0, device=device, requires_grad=True)
        out = getattr(rg.nn.functional, conv)(x, w, dilation=2, groups=2)
        (out * out).sum().backward()
        results.append([t.detach().cpu().numpy() for t in (out, x.grad, w.grad)])
    for a, b in zip(*results, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_reshaping_an_empty_array_follows_numpy():
    xp = backend.xp
    x = da.zeros((0, 4), chunks=(1, 2))
    assert xp.reshape(x, (2, 0, 2)).shape == (2, 0, 2)
    assert xp.reshape(x, (-1, 2)).shape == (0, 2)
    with pytest.raises(ValueError):
        xp.reshape(x, (0, -1))  # NumPy: -1 is ambiguous beside a zero


@pytest.mark.parametrize("op", ["erf", "erfc"])
def test_erf_in_its_far_tail_equals_the_cpu_backends(op):
    """The op database found it: erf's kernel computed its tail (|x| >= 4) on the elements
    selected by a boolean mask, an array whose size Dask knows only once it computes it."""
    x0 = np.array([-7.0, -4.5, -1.0, 0.25, 3.0, 4.0, 5.5, 9.0])
    results = []
    for device in ("cpu", "dask"):
        x = rg.tensor(x0, device=device, requires_grad=True)
        y = getattr(rg, op)(x)
        y.sum().backward()
        results.append([t.detach().cpu().numpy() for t in (y, x.grad)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


def test_reductions_without_identity_of_empty_arrays_follow_numpy():
    """The op database found it (cross_entropy over 0 rows): Dask's max over the kept axis of
    a (0, 3) array raises when computed; NumPy gives an empty result."""
    xp = backend.xp
    x = da.zeros((0, 3), chunks=(1, 3))
    for name in ("max", "min", "argmax", "argmin"):
        fn = getattr(xp, name)
        assert fn(x, axis=1).compute().shape == (0,)
        assert fn(x, axis=1, keepdims=True).compute().shape == (0, 1)
        with pytest.raises(ValueError):
            fn(x, axis=0)  # NumPy: an empty axis has no maximum
    assert xp.argmax(x, axis=1).dtype == np.argmax(np.zeros((0, 3)), axis=1).dtype


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_over_no_rows_equals_torchs(reduction):
    x = rg.tensor(np.zeros((0, 3)), device="dask", requires_grad=True)
    t = rg.tensor(np.zeros((0,), dtype=np.int64), device="dask")
    loss = rg.nn.functional.cross_entropy(x, t, reduction=reduction)
    xt = torch.zeros((0, 3), dtype=torch.float64, requires_grad=True)
    want = torch.nn.functional.cross_entropy(xt, torch.zeros(0, dtype=torch.long),
                                             reduction=reduction)
    np.testing.assert_array_equal(loss.item(), want.item())
    loss.backward()
    want.backward()
    assert x.grad.shape == tuple(xt.grad.shape)


@pytest.mark.parametrize("reverse", [False, True])
def test_logcumsumexp_is_one_cumulative_reduction(reverse):
    """The op database's size rows found it: one step per place made a task graph of as many
    layers as places, and the Array API kernel's scan split the chunks at every step (over
    half an hour at 10^5 places). Dask's ``cumreduction`` makes a few tasks per chunk, equal
    to torch's result."""
    x0 = np.random.default_rng(5).standard_normal((2, 100_003))
    y = backend.kernels["logcumsumexp"](da.from_array(x0, chunks=(2, 25_000)), 1, reverse)
    assert len(y.__dask_graph__()) < 100
    t = torch.from_numpy(x0)
    want = (torch.logcumsumexp(t.flip(1), 1).flip(1) if reverse
            else torch.logcumsumexp(t, 1)).numpy()
    np.testing.assert_allclose(y.compute(), want, rtol=1e-12, atol=0)


def test_a_gathers_backward_is_one_bincount_not_a_million_tasks():
    """The op database's size rows found it: at 10^5 random indices a gather's backward (a
    scatter-add) through the Array API fallback -- a sort, a segmented scan by shifted
    concatenations, a search -- made 1.7 million tasks. With ``add.at`` made of ``bincount``
    the gradient, read back, is a graph of a few tasks, equal to torch's."""
    n = 100_003
    rng = np.random.default_rng(0)
    x0, i0 = rng.standard_normal(n), rng.integers(0, n, n)
    x = rg.tensor(x0, device="dask", requires_grad=True)
    y = rg.gather(x, 0, rg.tensor(i0, device="dask"))
    (y * y).sum().backward()
    assert len(x.grad._data.__dask_graph__()) < 100
    xt = torch.tensor(x0, requires_grad=True)
    yt = torch.gather(xt, 0, torch.tensor(i0))
    (yt * yt).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-12, atol=0)
    counts = rg.zeros(5, dtype=rg.int64, device="dask").scatter_add(
        0, rg.tensor([1, 1, 3], device="dask"), rg.tensor([2, 5, 7], device="dask"))
    assert counts.tolist() == [0, 7, 0, 7, 0]


def test_a_running_maximum_keeps_whole_chunks():
    """The op database's size rows found it: the Array API scan behind cummax shifts the
    array by concatenation, and Dask kept every chunk boundary of both operands, doubling
    them at each of the log2(n) steps (one chunk per element at 10^5). Concatenations now
    come back in whole chunks: a graph of a few thousand tasks, equal to torch's result."""
    x0 = np.random.default_rng(5).standard_normal(100_003)
    values, places = backend.kernels["cummax"](da.from_array(x0, chunks=25_000), 0)
    assert len(values.__dask_graph__()) < 5_000
    want = torch.cummax(torch.from_numpy(x0), 0)
    np.testing.assert_array_equal(values.compute(), want.values.numpy())
    np.testing.assert_array_equal(places.compute(), want.indices.numpy())
