"""Draw the shared-branch example: the backward graph (DOT and SVG) and the walk page (HTML).

    python examples/shared_branch_pictures.py                 # writes into docs/images/
    python examples/shared_branch_pictures.py --out pictures  # anywhere else

The program is the conformance suite's ``shared-branch`` case
(docs/conformance.md#shared-branch): ``u = x*x`` is shared by ``a = 2*u`` and ``b = 3*u``, so
the square node must wait for both contributions before it runs once with 5.
The DOT text is drawn before the backward (so it lists the saved tensors); the SVG needs
Graphviz (``apt-get install graphviz`` and ``pip install graphviz``) and is skipped with a
message without it. The docs' page "How the engine works" shows these files; the test suite
checks that the committed DOT and HTML are what this script produces now.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import retrograd as rg
from retrograd import viz
from retrograd.autograd import trace

ROOT = Path(__file__).resolve().parents[1]


def shared_branch_program() -> dict[str, rg.Tensor]:
    x = rg.tensor(2.0, requires_grad=True)
    u = x * x
    u.retain_grad()
    a, b = 2 * u, 3 * u
    loss = a + b
    return {"x": x, "u": u, "a": a, "b": b, "loss": loss}


def make_pictures(out: Path) -> dict[str, Path]:
    """Write the graph's DOT (and SVG when Graphviz is there) and the walk's page into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    names = shared_branch_program()
    loss = names["loss"]
    dot = viz.to_dot(loss, names=names)
    written = {"dot": out / "shared-branch-graph.dot"}
    written["dot"].write_text(dot, encoding="utf-8")
    try:
        written["svg"] = viz.render_dot(dot, out / "shared-branch-graph.svg")
    except viz.GraphvizUnavailable as exc:
        print(f"SVG skipped: {exc}", file=sys.stderr)
    with trace(names=names) as walk:
        loss.backward()
    written["html"] = walk.save_html(
        out / "shared-branch-walk.html", title="shared-branch: u = x*x feeds 2*u and 3*u"
    )
    written["text"] = out / "shared-branch-walk.txt"
    written["text"].write_text(walk.text(), encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    for kind, path in make_pictures(args.out).items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
