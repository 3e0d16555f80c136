"""The op table of docs/api.md is the one ``tools/api_table.py`` generates from the op
database and the op declarations: a new op, entry or kernel without a regenerated table fails
here (regenerate with ``python tools/api_table.py``)."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
TOOL = REPO / "tools" / "api_table.py"
needs_repo = pytest.mark.skipif(not TOOL.is_file() or not (REPO / "docs" / "api.md").is_file(),
                                reason="not run from the repository")


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_table", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return _tool()


@pytest.fixture(scope="module")
def generated(tool: ModuleType) -> list[str]:
    try:
        return tool.render(tool.rows())
    except tool.TableError as exc:  # no CuPy / retrograd_cuda here: the cuda column is unknown
        pytest.skip(str(exc))


@needs_repo
def test_the_checked_in_table_is_up_to_date(tool: ModuleType, generated: list[str]):
    bad = tool.check(make=lambda: generated)
    assert not bad, ("docs/api.md: the op table is stale; run `python tools/api_table.py`:\n"
                     + "\n".join(bad))


@needs_repo
def test_every_registered_op_has_a_row(tool: ModuleType, generated: list[str]):
    from retrograd.ops import registry
    from retrograd.ops.declare import OPS

    ops = {tool._key(line) for line in generated[2:]}
    assert set(registry()) | set(OPS) <= ops
    assert [tool._key(line) for line in generated[2:]] == sorted(ops)


@needs_repo
def test_the_table_is_deterministic(tool: ModuleType, generated: list[str]):
    again = tool.render(tool.rows())
    assert again == generated
    text = "\n".join(generated)
    assert " at 0x" not in text and "object at" not in text


@needs_repo
def test_check_names_the_stale_rows(tool: ModuleType, generated: list[str],
                                    tmp_path: pathlib.Path):
    doc = tmp_path / "api.md"
    body = list(generated)
    # one row changed, one removed: both named
    body[3] = body[3].replace("| yes |", "| no |", 1) if "| yes |" in body[3] else body[3] + " x"
    changed, removed = tool._key(body[3]), tool._key(body[4])
    del body[4]
    doc.write_text(f"# API\n\n{tool.START}\n" + "\n".join(body) + f"\n{tool.END}\n\nrest\n",
                   encoding="utf-8")
    bad = tool.check(doc, make=lambda: generated)
    assert any(line.startswith(f"{changed}: differs") for line in bad), bad
    assert any(line.startswith(f"{removed}: missing") for line in bad), bad
    assert tool.main(["--check", "--path", str(doc)]) == 1
    # rewriting fixes it, and keeps the text around the table
    assert tool.write(doc) is True
    assert tool.check(doc, make=lambda: generated) == []
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# API\n") and text.endswith("\nrest\n")


@needs_repo
def test_a_document_without_markers_is_an_error(tool: ModuleType, tmp_path: pathlib.Path):
    doc = tmp_path / "api.md"
    doc.write_text("# API\n", encoding="utf-8")
    with pytest.raises(tool.TableError, match="markers"):
        tool.check(doc, make=lambda: [])
    assert tool.main(["--check", "--path", str(doc)]) == 2
