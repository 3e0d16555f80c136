"""--check: every subject's loss and gradients against torch's, on small sizes.

This is what makes the NumPy floor trustworthy as a floor: the hand-written backward must compute
the very gradients torch computes, or its speed means nothing. retrograd (fusion on and off) is
checked the same way. Tolerances: float64 rtol 1e-9, float32 rtol 1e-4 (relative to the largest
magnitude of the reference array for the absolute part).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

TOL = {"f64": 1e-9, "f32": 1e-4}


def compare(reference: Mapping[str, Any], candidate: Mapping[str, Any], dtype: str
            ) -> tuple[bool, str]:
    """Whether ``candidate``'s arrays (or nested lists) equal ``reference``'s to ``TOL``."""
    tol = TOL[dtype]
    if set(reference) != set(candidate):
        return False, f"outputs differ: {sorted(reference)} vs {sorted(candidate)}"
    worst, where = 0.0, ""
    for name, ref in reference.items():
        r, c = np.asarray(ref, dtype=np.float64), np.asarray(candidate[name], dtype=np.float64)
        if r.shape != c.shape:
            return False, f"{name}: shape {c.shape} vs torch {r.shape}"
        scale = max(float(np.max(np.abs(r), initial=0.0)), 1e-30)
        err = float(np.max(np.abs(c - r) / (np.abs(r) + scale), initial=0.0))
        if err > worst:
            worst, where = err, name
    ok = worst <= tol
    return ok, f"worst relative error {worst:.2e} ({where or 'all exact'}), tolerance {tol:g}"


def check_measurement(meas: dict) -> list[dict]:
    torch = meas["subjects"].get("torch", {})
    ref = (torch.get("runs") or [{}])[0].get("outputs")
    rows = []
    for label, sub in meas["subjects"].items():
        if label == "torch":
            continue
        run = (sub.get("runs") or [{}])[0]
        if ref is None or "outputs" not in run:
            rows.append(
                {
                    "measurement": meas["id"],
                    "subject": label,
                    "ok": False,
                    "detail": "missing outputs (see errors)",
                }
            )
            continue
        ok, detail = compare(ref, run["outputs"], meas["params"]["dtype"])
        ref_dtypes = torch["runs"][0].get("dtypes", {})
        wrong = {k: v for k, v in run.get("dtypes", {}).items() if ref_dtypes.get(k) != v}
        if wrong:
            ok, detail = False, f"dtypes differ from torch's {ref_dtypes}: {wrong}"
        rows.append({"measurement": meas["id"], "subject": label, "ok": ok, "detail": detail})
    return rows
