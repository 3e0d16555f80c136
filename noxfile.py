"""Every workflow of the retrograd monorepo.

    nox -s tests         pytest over every package present (quick reliability included)
    nox -s conformance   the main job: the core stack's backends against PyTorch
    nox -s conformance_libraries   the same on the jax and dask backends (docs/backends.md)
    nox -s lint          ruff over the tree, mypy on the core
    nox -s bench         the benchmark suite (tools/bench); ``-- --quick`` only checks it runs
    nox -s stress        the full-size reliability suite
    nox -s docs          the documentation, built with --strict
    nox -s cuda          the CUDA package's no-GPU checks (NVRTC compiles), with the CUDA wheels

PyTorch is the oracle. ``torch==2.13.0`` is pinned because that CPU wheel is what the project's
machines carry; set ``RETROGRAD_TORCH`` (e.g. ``RETROGRAD_TORCH="torch==2.14.1"``) to override.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CORE = "./packages/core"
CONFORMANCE = "./packages/conformance"
CUDA = "./packages/cuda"
VENDOR_EXAMPLE = "./packages/conformance/examples/retrograd-array-api-strict"
TORCH_BACKEND = "./packages/torch"
JAX_BACKEND = "./packages/jax"
DASK_BACKEND = "./packages/dask"
TORCH = os.environ.get("RETROGRAD_TORCH", "torch==2.13.0")

nox.options.sessions = ["tests", "lint"]

# Tests and the conformance run use small arrays: BLAS threads only add contention on a shared
# 2-core machine (measured 60x slower for the digits example under load). Benchmarks set
# their own thread counts.
_QUIET_BLAS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
nox.options.reuse_existing_virtualenvs = True


def _present(path: str) -> bool:
    return (ROOT / path / "pyproject.toml").exists()


def _install_stack(session: nox.Session, *, with_torch: bool = True,
                   with_libraries: bool = True) -> None:
    """Install core, the packages present beside it, and the test tools."""
    session.install("pip>=24")
    if with_torch:
        session.install(TORCH)
    session.install("-e", f"{CORE}[test,mpi]")
    if _present(CONFORMANCE):
        session.install("-e", f"{CONFORMANCE}[torch]" if with_torch else CONFORMANCE)
    if _present(VENDOR_EXAMPLE):
        session.install("-e", VENDOR_EXAMPLE)
    if _present(CUDA):
        session.install("-e", CUDA)
    if with_torch and _present(TORCH_BACKEND):
        # retrograd over torch tensors (array-api-compat): a backend the suite runs on too
        session.install("-e", TORCH_BACKEND)
    if with_libraries:
        _install_libraries(session)


def _install_libraries(session: nox.Session) -> None:
    """retrograd over JAX (immutable arrays) and Dask (lazy, chunked), with their libraries."""
    if _present(JAX_BACKEND):
        session.install("jax[cpu]", "array-api-compat")
        session.install("-e", JAX_BACKEND)
    if _present(DASK_BACKEND):
        session.install("dask[distributed]", "array-api-compat")
        session.install("-e", DASK_BACKEND)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """pytest over every package present; the reliability suite runs in its quick form."""
    _install_stack(session)
    # the real parts the nn/viz/trace/example tests drive: Graphviz bindings, a browser driver
    # (Debian's chromium; .ci/run installs it), scikit-learn's bundled digits, matplotlib
    session.install("pytest>=8", "hypothesis>=6", "rich", "graphviz", "playwright",
                    "scikit-learn", "matplotlib", "tqdm", "psutil",
                    # the capabilities checks run a real JAX (immutable arrays); the Dask
                    # backend's cluster test a real dask.distributed LocalCluster
                    "jax[cpu]", "array-api-compat", "dask[distributed]")
    paths = [str(p) for p in sorted((ROOT / "packages").glob("*/tests")) if p.is_dir()]
    # the MPI tests (mpiexec -n 2 and -n 4) must run here, not skip: mpi4py and mpich are in
    session.run("pytest", "-q", "-m", "not stress and not gpu", *paths, *session.posargs,
                env={**_QUIET_BLAS, "RETROGRAD_REQUIRE_MPI": "1"})


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff over the whole tree; mypy on the core package; import-linter layer contracts."""
    session.install("ruff", "mypy", "numpy>=2", "import-linter")
    session.install("-e", CORE)
    session.run("ruff", "check", ".")
    session.run("mypy", "packages/core/src/retrograd")
    session.run("lint-imports")  # the layering contracts in pyproject.toml


@nox.session(python="3.11")
def conformance(session: nox.Session) -> None:
    """The main job: the conformance suite on every backend of the core stack (cpu, the vendor
    example, torch; cuda where a GPU is), oracle torch."""
    _install_stack(session, with_libraries=False)
    _conformance(session, "report", session.posargs)


JAX_SHARDS = 8


@nox.session(python="3.11")
def conformance_libraries(session: nox.Session) -> None:
    """The whole conformance suite on the jax and dask backends, oracle torch, 100 generated
    programs each (``-- --fuzz N`` for another count): one XLA compile or one Dask graph per
    op, sample and dtype, so the op database takes most of the time."""
    _install_stack(session, with_libraries=False)
    _install_libraries(session)
    fuzz = [] if "--fuzz" in session.posargs else ["--fuzz", "100"]
    # JAX keeps memory for every program it compiles (about 80 MB per op of the database on
    # the CPU, not given back by jax.clear_caches): one process for the whole suite outgrew
    # 24 GB, so its run is split over JAX_SHARDS processes, one report each
    for part in range(1, JAX_SHARDS + 1):
        _conformance(session, f"report-jax-{part}",
                     ["--backend", "jax", "--shard", f"{part}/{JAX_SHARDS}", *fuzz,
                      *session.posargs])
    _conformance(session, "report-dask", ["--backend", "dask", *fuzz, *session.posargs])


def _conformance(session: nox.Session, name: str, args: list[str]) -> None:
    out = ROOT / "out" / "conformance"
    out.mkdir(parents=True, exist_ok=True)
    session.run("retrograd-conformance", "--oracle", "torch", "--json", str(out / f"{name}.json"),
                "--junit", str(out / f"{name}.xml"), *args, env=_QUIET_BLAS)


@nox.session(python="3.11")
def stress(session: nox.Session) -> None:
    """The full-size reliability suite."""
    _install_stack(session)
    session.install("pytest>=8", "hypothesis>=6", "psutil")
    session.run("pytest", "-q", "-m", "stress", "packages/core/tests/reliability", *session.posargs)
    # the whole conformance suite on jax and dask (the tests session leaves out the op
    # database there), and a batch larger than a Dask worker's memory: spilled, then the gradient
    extra = [f"packages/{p}/tests" for p in ("jax", "dask") if _present(f"./packages/{p}")]
    if extra:
        session.run("pytest", "-q", "-m", "stress", *extra, *session.posargs, env=_QUIET_BLAS)
    # the figures quoted in docs/reliability.md, measured on this machine
    session.run("python", "tools/reliability_report.py")


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """The benchmark suite against torch and the hand-written NumPy floor (tools/bench)."""
    _install_stack(session)
    session.install("psutil")
    session.run("python", "tools/bench/run.py", *session.posargs)
    # data-parallel W3: mpiexec -n 1 against -n 2 (docs/distributed.md)
    session.run("python", "tools/bench/ddp_w3.py",
                *(["--quick"] if "--quick" in session.posargs else []))
    # W1 and W3 on every installed backend against cpu, one process (docs/backends.md)
    session.run("python", "tools/bench/interleave_backends.py",
                *(["--quick"] if "--quick" in session.posargs else []))
    if _present(DASK_BACKEND):  # settling a backward once on Dask (docs/backends.md)
        session.run("python", "tools/bench/dask_settle.py",
                    *(["--quick"] if "--quick" in session.posargs else []))


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """Build the documentation with --strict."""
    _install_stack(session, with_torch=False, with_libraries=False)
    session.install("mkdocs-material", "mkdocstrings[python]")
    session.run("mkdocs", "build", "--strict")


@nox.session(python="3.11")
def cuda(session: nox.Session) -> None:
    """The CUDA package's checks that need no GPU, against the lowest CuPy it allows (14.0.0):
    every kernel compiled by NVRTC for sm_80 and sm_90 (each ElementwiseKernel as CuPy's own
    generator writes it), the launchers' host-side logic on fake device memory, the bias
    reduction's summation order; the gpu tests skip, saying why, unless a GPU is present.
    Only NVRTC is installed from the CUDA toolkit (CuPy bundles the headers it compiles with)."""
    session.install("pip>=24")
    session.install("-e", f"{CORE}[test,mpi]")
    session.install("-e", f"{CUDA}[cuda12]", "cupy-cuda12x==14.0.0", "nvidia-cuda-nvrtc-cu12")
    session.run("pytest", "-q", "-rs", "packages/cuda/tests", *session.posargs, env=_QUIET_BLAS)
