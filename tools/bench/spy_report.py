"""Summarise a ``py-spy record -f raw`` profile of ``spin.py``: the share of samples per function
(inclusive) and per source line (self), counting only samples taken inside the repetition.

    python tools/bench/spy_report.py out/w5.raw [--top 30] [--function _walk]

``--function NAME`` breaks that function's inclusive share down by its own lines (a line that
calls something is charged with the callee's samples).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter

_LINE = re.compile(r":\d+\)$")


def _frames(path: str):
    """(frames, samples) per stack; raw lines are ``frame;frame;... count``."""
    with open(path) as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack:
                yield stack.split(";"), int(count)


def _inside(frames: list[str]) -> list[str] | None:
    """The frames below spin.py's loop (its repetition), or None for start-up and warm-up."""
    for i, f in enumerate(frames):
        if f.startswith("_spin (") and "spin.py" in f:
            return frames[i + 1:]
    return None


def report(path: str, top: int, function: str | None) -> str:
    inclusive: Counter[str] = Counter()
    self_lines: Counter[str] = Counter()
    in_function: Counter[str] = Counter()
    total = 0
    for frames, n in _frames(path):
        body = _inside(frames)
        if not body:
            continue
        total += n
        self_lines[body[-1]] += n
        for name in {_LINE.sub(")", f) for f in body}:
            inclusive[name] += n
        if function:
            for f in reversed(body):
                if f.startswith(function + " ("):
                    in_function[f] += n
                    break
    if not total:
        return "no samples inside spin.py's loop"
    out = [f"{total} samples in the repetition", "", "inclusive, by function:"]
    out += [f"{100 * n / total:6.1f}%  {name}" for name, n in inclusive.most_common(top)]
    out += ["", "self, by line:"]
    out += [f"{100 * n / total:6.1f}%  {name}" for name, n in self_lines.most_common(top)]
    if function:
        out += ["", f"{function}, by line (inclusive):"]
        rows = sorted(in_function.items(), key=lambda kv: int(kv[0].rsplit(":", 1)[1][:-1]))
        out += [f"{100 * n / total:6.1f}%  {name}" for name, n in rows]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--function")
    args = ap.parse_args(argv)
    print(report(args.raw, args.top, args.function))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
