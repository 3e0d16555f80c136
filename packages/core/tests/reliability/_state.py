"""Snapshots of everything a failed call must leave alone, and message checks.

A misuse or a fault must not change ``.grad`` (value and None-ness), ``_version``,
``requires_grad``, ``grad_fn`` or the data of any tensor involved (E13 and the misuse
catalogue of issue 6).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

import retrograd as rg


@dataclass
class TensorState:
    grad: np.ndarray | None
    version: int
    requires_grad: bool
    grad_fn: Any
    is_leaf: bool
    data: np.ndarray


def _np(t: rg.Tensor) -> np.ndarray:
    return np.array(t.backend.to_numpy(t._data), copy=True)


def state_of(t: rg.Tensor) -> TensorState:
    return TensorState(
        grad=None if t._grad is None else _np(t._grad),  # _grad: no non-leaf warning
        version=t._version,
        requires_grad=t.requires_grad,
        grad_fn=t.grad_fn,
        is_leaf=t.is_leaf,
        data=_np(t),
    )


def tensors_in(obj: Any) -> list[rg.Tensor]:
    """Every Tensor inside ``obj`` (nested lists, tuples, dict values), in order, no repeats."""
    out: list[rg.Tensor] = []
    seen: set[int] = set()
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, rg.Tensor):
            if id(o) not in seen:
                seen.add(id(o))
                out.append(o)
        elif isinstance(o, dict):
            stack.extend(reversed(list(o.values())))
        elif isinstance(o, list | tuple):
            stack.extend(reversed(o))
    return out


def snapshot(tensors: Iterable[rg.Tensor]) -> list[tuple[rg.Tensor, TensorState]]:
    return [(t, state_of(t)) for t in tensors]


def assert_unchanged(snap: list[tuple[rg.Tensor, TensorState]], context: str = "") -> None:
    """Every field of every tensor is exactly as it was (bitwise for arrays)."""
    for i, (t, before) in enumerate(snap):
        after = state_of(t)
        where = f"{context}: tensor #{i} shape {tuple(t.shape)}"
        if before.grad is None:
            assert after.grad is None, f"{where}: .grad was None, now {after.grad!r}"
        else:
            assert after.grad is not None, f"{where}: .grad was set, now None"
            assert after.grad.dtype == before.grad.dtype, f"{where}: .grad dtype changed"
            assert np.array_equal(after.grad, before.grad, equal_nan=True), (
                f"{where}: .grad changed from {before.grad} to {after.grad}")
        assert after.version == before.version, (
            f"{where}: _version changed {before.version} -> {after.version}")
        assert after.requires_grad == before.requires_grad, f"{where}: requires_grad changed"
        assert after.grad_fn is before.grad_fn, f"{where}: grad_fn changed"
        assert after.is_leaf == before.is_leaf, f"{where}: is_leaf changed"
        assert np.array_equal(after.data, before.data, equal_nan=True), f"{where}: data changed"


def message_of(exc: BaseException) -> str:
    """The text a user sees: the message plus any notes added on the way up."""
    notes = getattr(exc, "__notes__", None) or []
    return "\n".join([str(exc), *map(str, notes)])


def names_shape(msg: str, shape: tuple[int, ...]) -> bool:
    """True when ``msg`` spells ``shape`` in one of the usual ways: (7, 3) [7, 3] 7x3."""
    flat = re.sub(r"\s+", "", msg)
    dims = [str(d) for d in shape]
    forms = {"(" + ",".join(dims) + ("," if len(dims) == 1 else "") + ")",
             "(" + ",".join(dims) + ")", "[" + ",".join(dims) + "]", "x".join(dims)}
    if not dims:
        forms = {"()", "[]", "scalar", "0-d", "0d"}
    return any(f in flat for f in forms)
