"""The registry of workloads: id -> module with ``make_case(lib, params, ad)``."""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = {
    "W1": "w1_chain",
    "W1-1e6": "w1_chain",
    "W2": "w2_fanout",
    "W3": "w3_mlp",
    "W4": "w4_memory",
    "W5": "w5_double",
    "O1": "o1_gather",
    "O2": "o2_var",
    "O3": "o3_cumsum",
    "CNN": "models_cnn",
    "TRANSFORMER": "models_transformer",
    "CNN-MEM": "models_cnn_memory",
}

DESCRIPTIONS = {
    "W1": "deep chain y = tanh(y*1.0001 + 0.001), x (16,), 3 nodes a step",
    "W1-1e6": "the W1 chain at 333,334 steps (10^6 nodes)",
    "W2": "fan-out u = x*x, sum_k (k*u).sum(), K = 1000, x (16,)",
    "W3": "MLP 784-1024-1024-10, ReLU, mean cross-entropy, forward+backward",
    "W4": "peak RSS increase of one step, MLP 784 -> 8x2048 -> 10, batch 512",
    "W5": "double backward of (x**3).sum(), x of 1000",
    "O1": "gather then scatter_add, (1000, 1000), forward + backward",
    "O2": "var(dim=1), (1000, 1000), forward + backward",
    "O3": "cumsum(dim=1), (1000, 1000), forward + backward",
    "CNN": "CNN step: batch 64 of 1x28x28, conv 16 and 32 (5x5) with ReLU and max-pool 2, "
           "linear 512-10, cross-entropy, forward+backward",
    "TRANSFORMER": "TRANSFORMER step: batch 16, sequence 64, width 128, 2 pre-LN blocks (4-head "
                   "causal attention, GELU MLP), LM head over 256, cross-entropy, "
                   "forward+backward",
    "CNN-MEM": "peak RSS increase of one CNN step, batch 64",
}

#: the everyday-op workloads (``everyday.py``): not in ``run.py --quick``'s timed plan
EVERYDAY = ("O1", "O2", "O3")

#: the model steps (``models_step.py``) and the CNN step's memory
MODELS = ("CNN", "TRANSFORMER", "CNN-MEM")


def params_for(workload: str, dtype: str, steps: int, batch: int) -> dict:
    """A workload's parameters as the profiling tools choose them (``profile_w1.py``,
    ``spin.py``): W1's chain length, W2's K = 1000, W3/W4's batch."""
    params: dict = {"dtype": dtype}
    if workload == "W1":
        params["steps"] = steps
    elif workload == "W2":
        params["k"] = 1000
    elif workload in ("W3", "W4"):
        params["batch"] = batch
    return params


def module(workload: str) -> ModuleType:
    return importlib.import_module(MODULES[workload])
