"""The harness of the differential tests: a program written once against a library handle
``lib`` (``torch`` or ``retrograd``) runs on both, and ``same`` compares what came back --
values (floats to 1e-12 relative), structure, strings such as node names -- or, when torch
raises, that retrograd raises an instance of torch's class with the same key phrase.

``conftest.py`` puts this directory on ``sys.path``: ``from torch_parity import same``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

import retrograd as rg

__all__ = ["plain", "close", "outcome", "same"]


def plain(v: Any) -> Any:
    """Tensors -> ("tensor", dtype name, values); containers recursively; the rest as is."""
    if isinstance(v, (torch.Tensor, rg.Tensor)):
        return ("tensor", str(v.dtype).rpartition(".")[2], v.detach().tolist())
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def close(a: Any, b: Any, tol: float = 1e-12) -> bool:
    """Equal structure; floats equal to ``tol`` relative (torch and NumPy may round apart;
    ``tol=0``: exactly)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and (
            math.isclose(a, b, rel_tol=tol, abs_tol=tol) or a == b
            or (math.isnan(a) and math.isnan(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    return bool(a == b)


def outcome(program: Callable[[Any], Any], lib: Any) -> tuple[str, Any]:
    """("ok", plain result) or ("raised", the exception)."""
    try:
        return ("ok", plain(program(lib)))
    except Exception as exc:  # noqa: BLE001 - compared with the oracle's
        return ("raised", exc)


def same(program: Callable[[Any], Any], phrase: str | None = None,
         tol: float = 1e-12) -> None:
    """Run on both: equal results (floats to ``tol`` relative), or both raise (retrograd's
    error an instance of torch's class) with ``phrase`` in both messages."""
    want = outcome(program, torch)
    got = outcome(program, rg)
    if want[0] == "raised":
        assert got[0] == "raised", f"torch raised {want[1]!r}, retrograd returned {got[1]}"
        assert isinstance(got[1], type(want[1])), (
            f"torch raised {type(want[1]).__name__}, retrograd {type(got[1]).__name__}: "
            f"{got[1]}")
        if phrase is not None:
            assert phrase in str(want[1]), f"phrase not in torch's message: {want[1]}"
            assert phrase in str(got[1]), f"retrograd's message lacks {phrase!r}: {got[1]}"
        return
    assert got[0] == "ok", f"torch returned {want[1]}, retrograd raised {got[1]!r}"
    assert close(got[1], want[1], tol), f"torch {want[1]}\nretrograd {got[1]}"
