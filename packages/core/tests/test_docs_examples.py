"""Every ```python block in docs/*.md and README.md runs, and its shown output is its output.

The blocks of one page run in order in one namespace (a page reads like one session), in a
temporary directory. A ```text block that follows a python block directly (blank lines only
between them) is that block's expected standard output, compared exactly. A block preceded
by ``<!-- no-run -->`` (or written ```python no-run) is skipped; pages in EXCLUDED are skipped
with the reason given there.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# page (relative to the repository root) -> why its blocks are not executed
EXCLUDED: dict[str, str] = {}

FENCE = re.compile(
    r"(?P<before><!--\s*no-run\s*-->\s*\n)?^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)


def pages() -> list[Path]:
    found = sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    if (ROOT / "README.md").exists():
        found.append(ROOT / "README.md")
    return found


def blocks(text: str) -> list[dict]:
    """Code blocks in order, each with its language, its body, whether it is skipped, and the
    ```text block right after it (None if there is none)."""
    found = []
    for match in FENCE.finditer(text):
        indent = match.group("indent")
        body = "\n".join(
            line[len(indent) :] if line.startswith(indent) else line
            for line in match.group("body").splitlines()
        )
        info = match.group("info").strip().split()
        found.append(
            {
                "lang": info[0] if info else "",
                "flags": info[1:],
                "body": body + "\n",
                "skip": bool(match.group("before")) or "no-run" in info[1:],
                "start": match.start(),
                "end": match.end(),
            }
        )
    for current, nxt in zip(found, found[1:]):
        between = text[current["end"] : nxt["start"]]
        if current["lang"] == "python" and nxt["lang"] == "text" and not between.strip():
            current["expected"] = nxt["body"]
    return found


def page_ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


PAGES = pages()


@pytest.mark.skipif(not PAGES, reason="no docs/*.md or README.md in this checkout")
@pytest.mark.parametrize("page", PAGES, ids=page_ids(PAGES))
def test_page_code_blocks_run(page, tmp_path, monkeypatch):
    rel = str(page.relative_to(ROOT))
    if rel in EXCLUDED:
        pytest.skip(EXCLUDED[rel])
    runnable = [b for b in blocks(page.read_text(encoding="utf-8")) if b["lang"] == "python"]
    if not any(not b["skip"] for b in runnable):
        pytest.skip(f"{rel} has no python block to run")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__docs__"}
    for number, block in enumerate(runnable, 1):
        if block["skip"]:
            continue
        out = io.StringIO()
        code = compile(block["body"], f"{rel}:block{number}", "exec")
        with contextlib.redirect_stdout(out):
            exec(code, namespace)
        if "expected" in block:
            assert out.getvalue().rstrip() == block["expected"].rstrip(), (
                f"{rel} block {number}: printed output differs from the page"
            )


def test_block_extraction_rules():
    text = (
        "```python\nprint(1)\n```\n\n```text\n1\n```\n"
        "<!-- no-run -->\n```python\nraise SystemExit\n```\n"
        "```python no-run\nraise SystemExit\n```\n"
        "    ```python\n    x = 1\n    ```\n"
    )
    found = blocks(text)
    assert [b["lang"] for b in found] == ["python", "text", "python", "python", "python"]
    assert found[0]["expected"] == "1\n"
    assert [b["skip"] for b in found if b["lang"] == "python"] == [False, True, True, False]
    assert found[-1]["body"] == "x = 1\n"
