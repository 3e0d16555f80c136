"""Checks for a backend package's own test suite: the conformance suite on its backend, and a
short training loop on it that must end where the cpu backend's ends.

The torch, jax and dask packages call these from their tests; a vendor's package can too::

    from retrograd_conformance.testing import assert_suite_passes, assert_training_matches_cpu

    def test_conformance():
        assert_suite_passes("mydev", suites=["documents", "semantics"], fuzz=30)

    def test_a_training_loop_equals_the_cpu_backend():
        assert_training_matches_cpu("mydev", array_type=mylib.Array)

Both raise :class:`AssertionError` with a message that names what differs, so they read the
same under pytest, unittest or a plain script.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: The optimizers :func:`assert_training_matches_cpu` can step with, by name.
OPTIMIZERS = ("sgd", "adam")


def assert_suite_passes(backend: str, *, suites: Iterable[str] | None = None, fuzz: int = 100,
                        extra: Sequence[str] = (), shards: int = 1) -> None:
    """Run ``retrograd-conformance`` on ``backend`` (a name or ``MODULE:ATTR``) and fail with
    the end of its report unless it exits 0. ``suites`` limits the families (default: all),
    ``fuzz`` is the number of generated programs, ``extra`` more command-line arguments. The
    backend package's own xfails file applies, as it does on the command line.

    With ``shards`` > 1 the run is split (``--shard I/N``) over that many child processes, one
    after the other: for a library whose memory grows with every program it compiles and that
    no call gives back (JAX on the CPU keeps about 80 MB per op of the database)."""
    from .cli import main

    argv = ["--backend", backend, "--fuzz", str(fuzz), "--no-progress", "--width", "200"]
    for suite in suites or ():
        argv += ["--suite", suite]
    argv += list(extra)
    if shards > 1:
        for part in range(1, shards + 1):
            cmd = [sys.executable, "-m", "retrograd_conformance", *argv,
                   "--shard", f"{part}/{shards}"]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise AssertionError(f"{' '.join(cmd[1:])} exited {done.returncode}:\n"
                                     f"{(done.stderr + done.stdout)[-5000:]}")  # the report last
        return
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    if code != 0:
        raise AssertionError(f"retrograd-conformance {' '.join(argv)} exited {code}:\n"
                             f"{out.getvalue()[-5000:]}")


def _train(device: str, optimizer: str, steps: int, x: np.ndarray, y: np.ndarray) -> Any:
    import retrograd as rg

    rg.manual_seed(0)
    net = rg.nn.Sequential(rg.nn.Linear(x.shape[1], 16), rg.nn.ReLU(),
                           rg.nn.Linear(16, 3)).double().to(device)
    opt = (rg.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd"
           else rg.optim.Adam(net.parameters(), lr=0.01))
    for _ in range(steps):
        opt.zero_grad()
        loss = rg.nn.functional.cross_entropy(net(rg.tensor(x, device=device)),
                                              rg.tensor(y, device=device))
        loss.backward()
        opt.step()
    return net


def assert_training_matches_cpu(device: str, *, optimizer: str = "sgd", steps: int = 3,
                                batch: int = 8, array_type: type | tuple[type, ...] | None = None,
                                rtol: float = 1e-12, atol: float = 1e-14) -> None:
    """Train the same float64 MLP (5-16-3, ReLU, cross-entropy) for ``steps`` steps of
    ``optimizer`` (``"sgd"`` with momentum or ``"adam"``) on the cpu backend and on
    ``device``, and fail unless every parameter ends equal within ``rtol``/``atol``. Where
    ``array_type`` is given, the parameters on ``device`` must be stored in arrays of that
    type (the backend really holds them, rather than falling back to NumPy)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"assert_training_matches_cpu: optimizer must be one of {OPTIMIZERS}, "
                         f"got {optimizer!r}")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((batch, 5)), rng.integers(0, 3, batch)
    ref = _train("cpu", optimizer, steps, x, y)
    net = _train(device, optimizer, steps, x, y)
    if array_type is not None:
        stored = net[0].weight._data
        if not isinstance(stored, array_type):
            raise AssertionError(f"parameters on {device!r} are stored as "
                                 f"{type(stored).__name__}, not {array_type}")
    names = [name for name, _ in ref.named_parameters()]
    for name, a, b in zip(names, net.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(),
                                   rtol=rtol, atol=atol,
                                   err_msg=f"parameter {name} after {steps} {optimizer} steps "
                                           f"on {device!r} differs from the cpu backend's")
