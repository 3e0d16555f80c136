"""``check_class_targets`` on the device: cross_entropy's target check without a host sync.

The core's reference kernel reads the check's result on the host (one bool), which on a GPU
is a device-to-host copy, hence a sync, in every training step. Here the check is one
``cupy.ElementwiseKernel`` launch (``sources.ELEMENTWISE["check_class_targets"]``) that writes
nothing unless a target is bad, and the error is raised later, at the backend's next sync
point -- where the host waits for the device anyway.

What a cuda user sees: ``cross_entropy(x, target)`` with a target outside ``[0, C)`` does
*not* raise. The error -- the same ``IndexError("Target 5 is out of bounds. ...")`` as on cpu
and in PyTorch, naming the first bad target (in order) of the earliest failing check, or the
NotImplementedError for -100 -- is raised by the next of:

* ``Tensor.item()`` (the ``item`` kernel);
* ``to_numpy``: ``.numpy()``, ``.tolist()``, printing a tensor, ``.to("cpu")``;
* ``backend.synchronize()`` and ``check_pending()`` below (explicitly);
* a check made when ``MAX_PENDING`` checks are already waiting (that one call syncs: a
  program that never reads a result does not pile up references to targets).

PyTorch on CUDA reports a bad target as a device-side assert, also asynchronously (and it
poisons the CUDA context); here the error is an ordinary exception and the backend stays
usable. Until it is raised, values computed from a bad target are meaningless but the kernels
stay in bounds: the cross-entropy kernels compare a target with each column index instead of
indexing with it. The message names the bad value as it is when the error is raised (the
target array is read then): an in-place change of the target in between shows in it.

The state: one record of two ``uint64`` per (device, stream), zero when no check has failed,
and the list of pending checks (their number ``seq``, target array and class count). Reading
a record is a 16-byte copy, done only when checks are pending; a record is written to (and
then reset) only by a failing check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from retrograd.backends.reference import class_target_error

from . import fused
from .sources import TARGET_SEQ_SHIFT

__all__ = [
    "MAX_PENDING",
    "check_pending",
    "decode",
    "make_check_class_targets",
    "make_item",
    "pending",
]

#: Checks that may wait for a sync point; one more makes the check read the records.
MAX_PENDING = 256

_SEQ_LIMIT = 1 << (64 - TARGET_SEQ_SHIFT - 1)
_INDEX_LIMIT = 1 << TARGET_SEQ_SHIFT
_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Pending:
    seq: int
    target: Any
    num_classes: int
    record_key: tuple[Any, ...]


_lock = threading.RLock()
_pending: list[Pending] = []
_records: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # key -> (record, stream)
_next_seq = [0]


def pending() -> int:
    """How many checks are waiting for a sync point."""
    return len(_pending)


def _current_stream() -> Any:
    return cupy.cuda.get_current_stream()


def _record() -> tuple[tuple[Any, ...], Any]:
    """The record of the current device and stream, made (zeroed) on first use."""
    key = fused._stream_key()
    found = _records.get(key)
    if found is None:
        found = _records[key] = (cupy.zeros((2,), dtype=cupy.uint64), _current_stream())
    return key, found[0]


def decode(words: Any) -> tuple[int, int | None] | None:
    """``(seq, index)`` of the earliest failure in a record's two words, index None for a
    -100 target; None for a clean record. A bad target beats a -100 in the same check."""
    bad, ignored = int(words[0]) & _MASK, int(words[1]) & _MASK
    if not bad and not ignored:
        return None
    bad_key = (~bad & _MASK) if bad else None
    bad_seq = bad_key >> TARGET_SEQ_SHIFT if bad_key is not None else None
    ignored_seq = (~ignored & _MASK) if ignored else None
    if bad_seq is not None and (ignored_seq is None or bad_seq <= ignored_seq):
        assert bad_key is not None
        return bad_seq, bad_key & (_INDEX_LIMIT - 1)
    assert ignored_seq is not None
    return ignored_seq, None


def _read(record: Any, stream: Any) -> Any:
    """The record's two words on the host (waits for ``stream``'s work up to now)."""
    return record.get(stream=stream)


def _reset(record: Any, stream: Any) -> None:
    """Zero a record that holds a failure, on its device and stream."""
    with fused._on(record.data.device_id), stream:
        record.fill(0)


def _value_at(target: Any, index: int) -> int:
    """``target``'s element at flat position ``index``, on the host (one element copied)."""
    with fused._on(target.data.device_id):
        return int(cupy.asnumpy(target.reshape(-1)[index:index + 1])[0])


def check_pending() -> None:
    """Raise the error of the earliest failing pending check, if any, and forget them all.

    Called at the backend's sync points; a no-op (no device access) when nothing is pending.
    """
    if not _pending:
        return
    with _lock:
        waiting = list(_pending)
        _pending.clear()
        _next_seq[0] = 0
        failures = []
        for key in {p.record_key for p in waiting}:
            record, stream = _records[key]
            found = decode(_read(record, stream))
            if found is not None:
                failures.append(found)
                _reset(record, stream)  # only after a failure: a clean record stays zero
        if not failures:
            return
        seq, index = min(failures, key=lambda f: (f[0], f[1] is None))
        check = next((p for p in waiting if p.seq == seq), None)
    if check is None:  # cannot happen: every seq in a record is a pending check's
        raise RuntimeError(f"check_class_targets: a failure of unknown check {seq}")
    value = None if index is None else _value_at(check.target, index)
    raise class_target_error(value, check.num_classes)


def make_check_class_targets(reference: Callable[..., Any]) -> Callable[..., Any]:
    """The device kernel, falling back to ``reference`` (a host read) where the target is
    not a CuPy integer array or is too large for the record's key."""

    def check_class_targets(target: Any, num_classes: int) -> None:
        """Check that every class index in ``target`` lies in ``[0, num_classes)`` on the
        device, without a sync: one launch; a failure is raised at the next sync point
        (``item``, ``to_numpy``, ``synchronize``: the module's docstring)."""
        if (not isinstance(target, cupy.ndarray) or target.dtype.kind not in "iu"
                or target.size >= _INDEX_LIMIT):
            fused.CALLS["check_class_targets:fallback"] += 1
            reference(target, num_classes)
            return
        if target.size == 0:
            return
        if len(_pending) >= MAX_PENDING or _next_seq[0] >= _SEQ_LIMIT:
            check_pending()
        fused.CALLS["check_class_targets"] += 1
        with _lock, fused._on(target.data.device_id):
            key, record = _record()
            seq = _next_seq[0]
            _next_seq[0] = seq + 1
            fused.elementwise("check_class_targets")(
                target, np.int64(num_classes), np.int64(seq), record)
            _pending.append(Pending(seq, target, int(num_classes), key))

    return check_class_targets


def make_item(reference: Callable[..., Any]) -> Callable[..., Any]:
    """``item`` that first raises a pending target error (it syncs anyway)."""

    def item(x: Any) -> Any:
        check_pending()
        return reference(x)

    return item
