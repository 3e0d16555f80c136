"""Turns the aggregated measurements into ratio rows, target verdicts and a Markdown report.

Every ratio is taken between subjects of the *same* measurement (same run, same configuration,
processes interleaved): retrograd / torch and retrograd / numpy-floor. A ratio below 1 means
retrograd is faster (or, for W4, uses less memory).
"""

from __future__ import annotations

from typing import Any

# the metrics in the table (the JSON also holds process-CPU-time twins of the W1/W2/W5 figures:
# on the shared 2-core VM they tracked wall time within a few percent, so they add no signal),
# and the targets as (reference, max ratio)
HEADLINES: dict[str, list[str]] = {
    "W1": ["fwd_us_per_node", "bwd_us_per_node"],
    "W1-1e6": ["fwd_us_per_node", "bwd_us_per_node"],
    "W2": ["step_ms", "fwd_us_per_node", "bwd_us_per_node"],
    "W3": ["step_ms", "fwd_ms", "bwd_ms"],
    "W4": ["peak_increase_mib", "retained_mib", "step_ms"],
    "W5": ["us_per_call"],
}
TARGETS: dict[tuple[str, str], list[tuple[str, float]]] = {
    ("W1", "fwd_us_per_node"): [("torch", 1.0)],
    ("W1", "bwd_us_per_node"): [("torch", 0.6)],
    ("W2", "fwd_us_per_node"): [("torch", 1.0)],
    ("W2", "bwd_us_per_node"): [("torch", 0.6)],
    ("W3", "step_ms"): [("numpy", 1.05), ("torch", 1.0)],
    ("W4", "peak_increase_mib"): [("numpy", 1.10), ("torch", 1.0)],
    ("W5", "us_per_call"): [("torch", 1.0)],
    ("CNN", "step_ms"): [("numpy", 1.10), ("torch", 1.5)],
    ("TRANSFORMER", "step_ms"): [("numpy", 1.10), ("torch", 1.5)],
}
UNDER_TEST = ("retrograd", "retrograd-unfused")
LINEARITY_BOUND = 1.2


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def _value(meas: dict, label: str, metric: str, stat: str = "median") -> float | None:
    sub = meas["subjects"].get(label)
    if not sub or not sub.get(stat):
        return None
    return sub[stat].get(metric)


def ratio_rows(measurements: list[dict], verdicts: bool = True) -> list[dict]:
    """One row per (measurement, metric, retrograd variant); target verdicts unless told not
    to (``--quick`` sizes say nothing about the targets)."""
    rows = []
    for meas in measurements:
        if meas["mode"] == "check":
            continue
        for metric in HEADLINES.get(meas["workload"], []):
            for label in UNDER_TEST:
                if label not in meas["subjects"] and label != "retrograd":
                    continue  # the unfused row only where it was measured; the main row always
                rg = _value(meas, label, metric)
                row: dict[str, Any] = {
                    "measurement": meas["id"],
                    "workload": meas["workload"],
                    "metric": metric,
                    "subject": label,
                    "numpy": _value(meas, "numpy", metric),
                    "torch": _value(meas, "torch", metric),
                    "retrograd": rg,
                }
                row["vs_torch"] = _ratio(rg, row["torch"])
                row["vs_numpy"] = _ratio(rg, row["numpy"])
                best = {lb: _value(meas, lb, metric, "best") for lb in ("numpy", "torch", label)}
                row["vs_torch_best"] = _ratio(best[label], best["torch"])
                row["vs_numpy_best"] = _ratio(best[label], best["numpy"])
                targets = TARGETS.get((meas["workload"], metric), [])
                if label != "retrograd" or not verdicts:
                    targets = []
                if targets:
                    row["target"] = " and ".join(f"<= {b:g}x {ref}" for ref, b in targets)
                    ratios = [
                        row["vs_torch" if ref == "torch" else "vs_numpy"] for ref, _ in targets
                    ]
                    row["met"] = (
                        None
                        if None in ratios
                        else all(r <= b for r, (_, b) in zip(ratios, targets))
                    )
                rows.append(row)
    return rows


def linearity_rows(measurements: list[dict]) -> list[dict]:
    """The 10^6-node chain's backward per node against W1 at 10^4 steps, same dtype and threads."""
    rows = []
    for big in (m for m in measurements if m["workload"] == "W1-1e6" and m["mode"] == "time"):
        for ref in measurements:
            p, q = big["params"], ref["params"]
            if ref["workload"] != "W1" or q.get("steps") != 10_000:
                continue
            if q.get("dtype") != p.get("dtype") or ref["threads"] != big["threads"]:
                continue
            for label in ("numpy", "torch", "retrograd"):
                r = _ratio(
                    _value(big, label, "bwd_us_per_node"), _value(ref, label, "bwd_us_per_node")
                )
                rb = _ratio(
                    _value(big, label, "bwd_us_per_node", "best"),
                    _value(ref, label, "bwd_us_per_node", "best"),
                )
                row = {
                    "subject": label,
                    "dtype": p.get("dtype"),
                    "ratio_1e6_vs_1e4": r,
                    "best_ratio": rb,
                }
                if label == "retrograd":
                    row["met"] = None if r is None else r <= LINEARITY_BOUND
                rows.append(row)
    return rows


def fusion_rows(measurements: list[dict]) -> list[dict]:
    rows = []
    for meas in measurements:
        if meas["workload"] != "W3" or meas["mode"] != "time":
            continue

        def v(label: str, metric: str, stat: str = "median", meas: dict = meas) -> float | None:
            return _value(meas, label, metric, stat)

        rows.append(
            {
                "measurement": meas["id"],
                "fused_step_ms": v("retrograd", "step_ms"),
                "unfused_step_ms": v("retrograd-unfused", "step_ms"),
                "step_gain": _ratio(v("retrograd-unfused", "step_ms"), v("retrograd", "step_ms")),
                "bwd_gain": _ratio(v("retrograd-unfused", "bwd_ms"), v("retrograd", "bwd_ms")),
                "fused_best_ms": v("retrograd", "step_ms", "best"),
                "unfused_best_ms": v("retrograd-unfused", "step_ms", "best"),
                "best_step_gain": _ratio(
                    v("retrograd-unfused", "step_ms", "best"), v("retrograd", "step_ms", "best")
                ),
                "best_bwd_gain": _ratio(
                    v("retrograd-unfused", "bwd_ms", "best"), v("retrograd", "bwd_ms", "best")
                ),
            }
        )
    return rows


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) < 1e4 else f"{v:.0f}"
    return str(v)


def markdown(result: dict) -> str:
    meta = result["meta"]
    lines = [
        "# retrograd benchmark results",
        "",
        f"- command: `{meta['command']}`",
        f"- machine: {meta['machine']['cpu']}, {meta['machine']['cpus']} CPUs, "
        f"{meta['machine']['memory_gib']} GiB; {meta['machine']['platform']}",
        f"- versions: "
        f"{', '.join(f'{k} {v}' for k, v in meta['versions'].items() if not k.endswith('_path'))}; "
        f"BLAS {meta['machine']['blas']}",
        f"- retrograd: `{meta['versions'].get('retrograd_path', '?')}` at commit "
        f"`{meta['git']['commit'][:10]}`"
        f"{' (core modified since)' if meta['git']['core_modified'] else ''}",
        f"- retrograd backend: `{meta['backend']}`; load average before / after: "
        f"{meta['load_before']} / {meta['load_after']}; wall time {meta['wall_s']:.0f} s",
        *([f"- note: {meta['note']}"] if meta.get("note") else []),
        "",
        *(
            ["**--quick run: tiny sizes, one repetition; the figures mean nothing.**", ""]
            if meta.get("quick")
            else []
        ),
        "Ratios are retrograd / other library, measured in the same run (processes interleaved);",
        "below 1 is better for retrograd. Medians over repetitions, then over fresh processes.",
        "",
        "Values are medians; the two *best* columns are the same ratios taken on the fastest",
        "repetition of each subject (see docs/performance.md: on a shared machine two-thread BLAS",
        "is bimodal). Targets are judged on the medians.",
        "",
        "| measurement | metric | subject | numpy floor | torch | retrograd | rg/torch | rg/numpy "
        "| rg/torch best | rg/numpy best | target | met |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in result["ratios"]:
        lines.append(
            f"| {r['measurement']} | {r['metric']} | {r['subject']} | {_fmt(r['numpy'])} "
            f"| {_fmt(r['torch'])} | {_fmt(r['retrograd'])} | {_fmt(r['vs_torch'])} "
            f"| {_fmt(r['vs_numpy'])} | {_fmt(r['vs_torch_best'])} | {_fmt(r['vs_numpy_best'])} "
            f"| {r.get('target', '')} | {_fmt(r.get('met'))} |"
        )
    if result["linearity"]:
        lines += [
            "",
            f"Linearity: backward per node of the 10^6-node chain / W1 at 10^4 steps "
            f"(target <= {LINEARITY_BOUND}x for retrograd)",
            "",
            "| subject | dtype | ratio (medians) | ratio (best) | met |",
            "| --- | --- | ---: | ---: | --- |",
        ]
        lines += [
            f"| {r['subject']} | {r['dtype']} | {_fmt(r['ratio_1e6_vs_1e4'])} "
            f"| {_fmt(r['best_ratio'])} "
            f"| {_fmt(r.get('met'))} |"
            for r in result["linearity"]
        ]
    if result["fusion"]:
        lines += [
            "",
            "Fusion on W3: retrograd with fusion on vs off (gain = unfused / fused; > 1 means "
            "fusion pays)",
            "",
            "| measurement | fused step ms | unfused step ms | step gain | bwd gain "
            "| fused best ms | unfused best ms | best step gain | best bwd gain |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {r['measurement']} | {_fmt(r['fused_step_ms'])} | {_fmt(r['unfused_step_ms'])} "
            f"| {_fmt(r['step_gain'], 3)} | {_fmt(r['bwd_gain'], 3)} "
            f"| {_fmt(r['fused_best_ms'])} | {_fmt(r['unfused_best_ms'])} "
            f"| {_fmt(r['best_step_gain'], 3)} | {_fmt(r['best_bwd_gain'], 3)} |"
            for r in result["fusion"]
        ]
    if result.get("checks"):
        bad = [c for c in result["checks"] if not c["ok"]]
        lines += [
            "",
            f"Gradient check against torch: {len(result['checks']) - len(bad)} / "
            f"{len(result['checks'])} comparisons agree.",
        ]
        lines += [f"- MISMATCH {c['measurement']} {c['subject']}: {c['detail']}" for c in bad]
    if result["errors"]:
        lines += ["", "Errors:"]
        lines += [
            f"- {e['measurement']} {e['subject']}: {e['error'].splitlines()[-1]}"
            for e in result["errors"]
        ]
    return "\n".join(lines) + "\n"
