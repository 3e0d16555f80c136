"""retrograd-dask on a ``dask.distributed.LocalCluster`` of two worker processes: an MLP's
gradient over a batch chunked along its batch axis, computed by the workers, equal to the
cpu backend's in float64. The stress case gives each worker less memory than the data, so
that the persisted batch spills to disk and the gradient still completes.

Every cluster is bounded: a start-up timeout, a timeout on each computation, and the pytest
timeout of the session."""

from __future__ import annotations

import contextlib
import os
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from retrograd_dask import from_dask  # noqa: E402

import retrograd as rg  # noqa: E402


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail the test (TimeoutError) if its body runs past ``seconds``: a computation on a
    cluster whose workers died would otherwise wait forever."""
    import signal

    def expire(signum, frame):
        raise TimeoutError(f"the cluster test ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def cluster(memory_limit: str):
    """Two single-threaded worker processes with ``memory_limit`` each, and a client."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=memory_limit, dashboard_address=None,
                      silence_logs=40, timeout="60s") as lc, Client(lc, timeout="60s") as c:
        yield c


def _mlp(device: str, d: int, h: int) -> rg.nn.Module:
    rg.manual_seed(0)
    return rg.nn.Sequential(rg.nn.Linear(d, h), rg.nn.Tanh(), rg.nn.Linear(h, 1)).double() \
        .to(device)


def _gradients(x: rg.Tensor, y: rg.Tensor, device: str, d: int, h: int
               ) -> tuple[float, list[np.ndarray]]:
    net = _mlp(device, d, h)
    loss = rg.nn.functional.mse_loss(net(x), y)
    loss.backward()
    return loss.item(), [p.grad.cpu().numpy() for p in net.parameters()]


def _batch(n: int, d: int, chunk: int) -> tuple[object, object]:
    rs = da.random.RandomState(0)
    x = rs.standard_normal((n, d), chunks=(chunk, d))
    y = da.sin(x[:, :1]) + 0.1 * x[:, 1:2]
    return x, y


def _check_equal_to_cpu(client, n: int, d: int, h: int, chunk: int) -> dict[str, int]:
    x, y = _batch(n, d, chunk)
    x, y = client.persist([x, y])
    distributed.wait([x, y], timeout=300)
    spilled = client.run(lambda dask_worker: int(dask_worker.data.spilled_total.memory))
    loss, grads = _gradients(from_dask(x), from_dask(y), "dask", d, h)
    ref_loss, ref = _gradients(from_dask(x).cpu(), from_dask(y).cpu(), "cpu", d, h)
    assert abs(loss - ref_loss) <= 1e-12 * abs(ref_loss)
    for g, r in zip(grads, ref, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)
    return spilled  # bytes each worker held on disk once the batch was in the cluster


@pytest.mark.skipif(sys.platform == "win32", reason="worker processes")
def test_an_mlp_gradient_on_a_two_worker_cluster_equals_the_cpu_backends():
    with deadline(300), cluster("1GB") as client:
        _check_equal_to_cpu(client, n=40_000, d=16, h=8, chunk=5_000)


@pytest.mark.stress
@pytest.mark.skipif(sys.platform == "win32", reason="worker processes")
def test_a_batch_larger_than_a_workers_memory_spills_and_the_gradient_completes():
    n, d = int(os.environ.get("RETROGRAD_DASK_SPILL_ROWS", "1000000")), 64
    limit = 400e6
    assert n * d * 8 > limit  # the batch alone exceeds one worker's memory
    with deadline(900), cluster(f"{int(limit)}B") as client:
        spilled = _check_equal_to_cpu(client, n=n, d=d, h=16, chunk=25_000)
    assert sum(spilled.values()) > 0, f"no worker spilled to disk: {spilled}"
