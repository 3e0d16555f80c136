"""The measurement plan: which workloads, sizes, libraries, threads and allocator settings.

A *measurement* is one configuration run on several *subjects* (numpy floor, torch, retrograd,
and for W3 retrograd with fusion off), each in its own fresh processes. The processes of one
measurement are interleaved (numpy, torch, retrograd, numpy, torch, ...) so that a slow spell of
a shared machine hits every subject alike: ratios are only ever taken within one measurement.

Repetitions are sized by time: each process warms up, runs one repetition, then repeats until
about ``budget_s`` of measuring (between ``min_reps`` and ``max_reps``). The full plan is sized
to finish in roughly ten to fifteen minutes on two cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MMAP_ENV = {"MALLOC_MMAP_THRESHOLD_": "131072"}


@dataclass(frozen=True)
class Subject:
    label: str  # column name in the report: "numpy", "torch", "retrograd", "retrograd-unfused"
    lib: str  # "numpy" | "torch" | "retrograd"
    params: dict = field(default_factory=dict)  # merged into the measurement's params


@dataclass
class Measurement:
    workload: str
    params: dict
    subjects: list[Subject]
    threads: int
    malloc: str = "default"  # "default" | "mmap128k" (MALLOC_MMAP_THRESHOLD_=131072)
    mode: str = "time"
    procs: int = 3
    warmup: int = 1
    min_reps: int = 3
    max_reps: int = 30
    budget_s: float = 1.5

    @property
    def id(self) -> str:
        p = " ".join(f"{k}={v}" for k, v in self.params.items() if k not in ("dims",))
        extra = "" if self.malloc == "default" else f" malloc={self.malloc}"
        return f"{self.workload} {p} threads={self.threads}{extra}"

    def env(self) -> dict[str, str]:
        return dict(MMAP_ENV) if self.malloc == "mmap128k" else {}


NUMPY = Subject("numpy", "numpy")
TORCH = Subject("torch", "torch")
RETROGRAD = Subject("retrograd", "retrograd", {"fusion": True})
UNFUSED = Subject("retrograd-unfused", "retrograd", {"fusion": False})
BASIC = [NUMPY, TORCH, RETROGRAD]
WITH_FUSION = [NUMPY, TORCH, RETROGRAD, UNFUSED]
DTYPES = ("f64", "f32")


def full(threads: list[int]) -> list[Measurement]:
    main, others = threads[0], threads[1:]
    plan: list[Measurement] = []
    for dtype in DTYPES:
        for steps, procs, budget in ((1_000, 3, 1.0), (10_000, 3, 1.5), (100_000, 2, 4.0)):
            plan.append(
                Measurement(
                    "W1",
                    {"steps": steps, "dtype": dtype},
                    BASIC,
                    main,
                    procs=procs,
                    budget_s=budget,
                    max_reps=20,
                )
            )
    plan.append(
        Measurement(
            "W1-1e6",
            {"steps": 333_334, "dtype": "f64"},
            BASIC,
            main,
            procs=1,
            min_reps=2,
            max_reps=2,
        )
    )
    for dtype in DTYPES:
        plan.append(Measurement("W2", {"k": 1000, "dtype": dtype}, BASIC, main))
    for malloc in ("default", "mmap128k"):
        for dtype in DTYPES:
            for batch in (64, 512):
                plan.append(
                    Measurement(
                        "W3",
                        {"batch": batch, "dtype": dtype},
                        WITH_FUSION,
                        main,
                        malloc=malloc,
                        procs=2,
                        max_reps=25,
                    )
                )
    for t in others:
        for dtype in DTYPES:
            for batch in (64, 512):
                plan.append(
                    Measurement(
                        "W3", {"batch": batch, "dtype": dtype}, WITH_FUSION, t, procs=2, max_reps=25
                    )
                )
    for malloc in ("default", "mmap128k"):
        for dtype in DTYPES:
            plan.append(
                Measurement(
                    "W4",
                    {"batch": 512, "dtype": dtype},
                    BASIC,
                    main,
                    malloc=malloc,
                    mode="memory",
                    procs=2,
                )
            )
    for dtype in DTYPES:
        plan.append(Measurement("W5", {"dtype": dtype}, BASIC, main))
    plan += everyday(main)
    plan += models()
    return plan


def everyday(threads: int) -> list[Measurement]:
    """O1-O3 (``everyday.py``): one op's forward + backward at 10^6 elements, both dtypes. The
    tighter figures come from ``interleave_ops.py`` (one process, alternating)."""
    return [Measurement(w, {"dtype": dtype}, BASIC, threads, procs=2, budget_s=1.0, max_reps=20)
            for w in ("O1", "O2", "O3") for dtype in DTYPES]


def models() -> list[Measurement]:
    """The CNN and transformer steps (``models_cnn.py``, ``models_transformer.py``) at the
    issue's sizes and the CNN step's peak memory (CNN-MEM), both dtypes, one thread (as the
    issue states them). The tighter time ratios come from ``interleave_models.py``."""
    steps = [Measurement(w, {"dtype": dtype}, BASIC, 1, procs=2, budget_s=2.0, max_reps=20)
             for w in ("CNN", "TRANSFORMER") for dtype in DTYPES]
    memory = [Measurement("CNN-MEM", {"dtype": dtype}, BASIC, 1, mode="memory", procs=2)
              for dtype in DTYPES]
    return steps + memory


def quick(threads: list[int]) -> list[Measurement]:
    """Tiny sizes, one repetition, one process each: proves every workload runs everywhere."""
    t = threads[0]
    one: dict[str, Any] = {"procs": 1, "warmup": 0, "min_reps": 1, "max_reps": 1, "budget_s": 0.0}
    small_mlp = [32, 64, 64, 10]
    return [
        Measurement("W1", {"steps": 50, "dtype": "f64"}, BASIC, t, **one),
        Measurement("W1-1e6", {"steps": 200, "dtype": "f32"}, BASIC, t, **one),
        Measurement("W2", {"k": 20, "dtype": "f32"}, BASIC, t, **one),
        Measurement("W3", {"batch": 8, "dtype": "f32", "dims": small_mlp}, WITH_FUSION, t, **one),
        Measurement(
            "W3",
            {"batch": 8, "dtype": "f64", "dims": small_mlp},
            WITH_FUSION,
            t,
            malloc="mmap128k",
            **one,
        ),
        Measurement(
            "W4",
            {"batch": 16, "dtype": "f64", "dims": [32] + [64] * 8 + [10]},
            BASIC,
            t,
            mode="memory",
            **{**one, "warmup": 1},
        ),
        Measurement("W5", {"dtype": "f64", "size": 50, "calls": 2}, BASIC, t, **one),
        Measurement("CNN", {"batch": 4, "dtype": "f32"}, BASIC, 1, **one),
        Measurement("TRANSFORMER", {"batch": 2, "seq": 8, "dtype": "f64"}, BASIC, 1, **one),
        Measurement("CNN-MEM", {"batch": 4, "dtype": "f32"}, BASIC, 1, mode="memory",
                    **{**one, "warmup": 1}),
    ]


def check() -> list[Measurement]:
    """Small sizes for the gradient check (every subject against torch, both dtypes)."""
    plan = []
    mlp = [20, 32, 32, 10]
    deep = [20] + [24] * 8 + [10]
    for dtype in DTYPES:
        plan += [
            Measurement("W1", {"steps": 30, "dtype": dtype}, BASIC, 1, mode="check", procs=1),
            Measurement("W2", {"k": 25, "dtype": dtype}, BASIC, 1, mode="check", procs=1),
            Measurement(
                "W3",
                {"batch": 16, "dtype": dtype, "dims": mlp},
                WITH_FUSION,
                1,
                mode="check",
                procs=1,
            ),
            Measurement(
                "W4",
                {"batch": 16, "dtype": dtype, "dims": deep},
                WITH_FUSION,
                1,
                mode="check",
                procs=1,
            ),
            Measurement("W5", {"dtype": dtype, "size": 40}, BASIC, 1, mode="check", procs=1),
            Measurement("CNN", {"batch": 8, "dtype": dtype}, BASIC, 1, mode="check", procs=1),
            Measurement("TRANSFORMER", {"batch": 2, "seq": 16, "dtype": dtype}, BASIC, 1,
                        mode="check", procs=1),
        ]
    return plan


def check_everyday() -> list[Measurement]:
    """O1-O3 at (20, 50) for ``--check`` (``--quick`` runs them in one process instead:
    ``interleave_ops.py``, which checks every subject against torch before it times)."""
    small = {"rows": 20, "cols": 50}
    return [Measurement(w, {"dtype": dtype, **small}, BASIC, 1, mode="check", procs=1)
            for dtype in DTYPES for w in ("O1", "O2", "O3")]
