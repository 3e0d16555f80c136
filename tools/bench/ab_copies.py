"""Two copies of retrograd -- a *base* and a *new* source tree -- and torch, alternating in
*one* process on the suite's own workloads: the tightest A/B of a change this VM allows.

Each copy is a directory holding a ``retrograd`` package (a copy of ``packages/core/src``, or
of just its ``retrograd`` folder); they are imported under the names ``retrograd_base`` and
``retrograd_new`` (the package imports itself only relatively), so the two share the process,
its heap and its NumPy, and every round runs base, new and torch once each in an order that
rotates (``alternate.py``). Ratios are taken pair by pair within a round, then the median
(``new / base``: below 1, the change is faster), as ``interleave_torch.py`` does for its
three subjects.

    # base = the committed tree, new = the working tree
    mkdir -p /tmp/ab/base /tmp/ab/new
    git archive HEAD packages/core/src/retrograd | tar -x -C /tmp/ab/base --strip-components=3
    cp -r packages/core/src/retrograd /tmp/ab/new/
    python tools/bench/ab_copies.py --base /tmp/ab/base --new /tmp/ab/new --workload W1
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alternate import alternate, ratios  # noqa: E402
from threads import set_threads  # noqa: E402

# (workload, params, repetitions by default): interleave_torch.py's cases
CONFIGS = [
    ("W1", {"steps": 1_000}, 150),
    ("W1", {"steps": 10_000}, 30),
    ("W2", {"k": 1000}, 60),
    ("W3", {"batch": 64}, 100),
    ("W3", {"batch": 512}, 20),
    ("W5", {}, 300),
]


def import_copy(directory: str, name: str) -> Any:
    """The ``retrograd`` package under ``directory``, imported as ``name``."""
    root = Path(directory).resolve() / "retrograd"
    if not (root / "__init__.py").is_file():
        raise SystemExit(f"{directory}: no retrograd/__init__.py")
    spec = importlib.util.spec_from_file_location(name, root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    importlib.import_module(f"{name}.nn.functional")
    # the "cpu" entry point names the installed package's backend: register the copy's own
    registry = importlib.import_module(f"{name}.backends.registry")
    registry.register_backend("cpu", importlib.import_module(f"{name}.backends.numpy").backend)
    return module


def copy_lib(module: Any, label: str) -> Any:
    """``libs.RetrogradLib`` on an imported copy."""
    import libs
    import numpy as np

    lib = libs.RetrogradLib.__new__(libs.RetrogradLib)
    lib.name = label
    lib.mod = module
    lib.F = sys.modules[f"{module.__name__}.nn.functional"]
    lib.backend = "cpu"
    lib.version = getattr(module, "__version__", "unknown")
    lib._dtypes = {np.dtype(np.float64): module.float64, np.dtype(np.float32): module.float32,
                   np.dtype(np.int64): module.int64, np.dtype(np.int32): module.int32}
    lib._sync = None
    return lib


def measure(workload: str, params: dict, reps: int, libs_: dict[str, Any]
            ) -> dict[str, dict[str, float]]:
    import workloads

    mod = workloads.module(workload)
    cases = {name: mod.make_case("retrograd" if name != "torch" else "torch", params, lib)
             for name, lib in libs_.items()}
    for case in cases.values():
        case.warmup()
    runs = alternate({name: case.rep for name, case in cases.items()}, reps)
    out: dict[str, dict[str, float]] = {}
    for metric in runs["new"][0]:
        if "cpu" in metric:
            continue
        col = {name: [r[metric] for r in runs[name]] for name in runs}
        row = {name: statistics.median(v) for name, v in col.items()}
        row["new/base"] = ratios(col["new"], col["base"])["ratio_median_of_pairs"]
        row["new/base best"] = ratios(col["new"], col["base"])["ratio_best"]
        if "torch" in col:
            row["base/torch"] = ratios(col["base"], col["torch"])["ratio_median_of_pairs"]
            row["new/torch"] = ratios(col["new"], col["torch"])["ratio_median_of_pairs"]
        out[metric] = row
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", required=True, help="directory holding the base retrograd package")
    ap.add_argument("--new", required=True, help="directory holding the new retrograd package")
    ap.add_argument("--workload", action="append", choices=("W1", "W2", "W3", "W5"),
                    help="default: all four")
    ap.add_argument("--dtype", action="append", choices=("f64", "f32"), help="default: both")
    ap.add_argument("--reps", type=int, default=0, help="default: per workload (20-300)")
    ap.add_argument("--no-torch", action="store_true", help="alternate the two copies only")
    args = ap.parse_args(argv)
    set_threads(1)
    import libs

    subjects = {"base": copy_lib(import_copy(args.base, "retrograd_base"), "base"),
                "new": copy_lib(import_copy(args.new, "retrograd_new"), "new")}
    if not args.no_torch:
        subjects["torch"] = libs.load("torch", threads=1)
    torch_cols = "" if args.no_torch else " torch | base / torch | new / torch |"
    print(f"| configuration (one thread, one process) | metric | base | new |{torch_cols} "
          "new / base (median of pairs) | (best) |")
    print("| --- | --- |" + " ---: |" * (4 if args.no_torch else 7))
    for dtype in args.dtype or ["f64", "f32"]:
        for workload, params, default_reps in CONFIGS:
            if args.workload and workload not in args.workload:
                continue
            reps = args.reps or default_reps
            p = {**params, "dtype": dtype}
            label = " ".join(f"{k}={v}" for k, v in p.items())
            for metric, r in measure(workload, p, reps, subjects).items():
                cells = f"{r['base']:.2f} | {r['new']:.2f} |"
                if not args.no_torch:
                    cells += f" {r['torch']:.2f} | {r['base/torch']:.3f} | {r['new/torch']:.3f} |"
                print(f"| {workload} {label} reps={reps} | {metric} | {cells} "
                      f"{r['new/base']:.3f} | {r['new/base best']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
