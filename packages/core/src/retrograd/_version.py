"""Version counters: one mutable integer shared by a tensor and all of its views.

Views share their base's counter, so an in-place change made through any alias is seen by
every node that saved any alias. A counter is a 16-byte ``bytearray`` -- bytes 0-7 the
version, 8-15 the *rebase epoch* (bumped when a recorded in-place op gives the base a new
history) -- rather than an object with slots, for the garbage collector: a bytearray holds no
references, so Python's cyclic collector does not track it, and the version stamps a node
keeps (``counter, snapshot, index``, see ``ops._core._stamp``) hold only untracked objects and
are untracked too. A deep graph then costs the collector one object per node, not three
(measured on W1 of ``tools/bench``). A stamp is ``bytes(counter)``, a snapshot of the whole counter:
``counter != snapshot`` is the whole E7 check.
"""

from __future__ import annotations

__all__ = ["new_counter", "FRESH", "version_of", "rebased_of", "bump", "mark_detached",
           "is_detached"]

VersionCounter = bytearray  # the type, for annotations

FRESH = bytes(16)  # the snapshot of a counter that was never bumped


def new_counter() -> bytearray:
    return bytearray(16)


def version_of(vc: bytes | bytearray) -> int:
    return int.from_bytes(vc[:8], "little")


def rebased_of(vc: bytes | bytearray) -> int:
    return int.from_bytes(vc[8:15], "little")


def bump(vc: bytearray, rebase: bool = False) -> None:
    """Count one in-place change; ``rebase`` when it was recorded (the base's history
    changed, so views taken before it are stale)."""
    vc[:8] = (version_of(vc) + 1).to_bytes(8, "little")
    if rebase:
        vc[8:15] = (rebased_of(vc) + 1).to_bytes(7, "little")


# Byte 15's high bit: the tensor was detached in place (``detach_()``) while it had history.
# The counter then differs from every stamp taken before, so the nodes that saved the tensor
# take their slow check, which reports it as PyTorch does rather than as a version change.
_DETACHED = 0x80


def mark_detached(vc: bytearray) -> None:
    vc[15] |= _DETACHED


def is_detached(vc: bytes | bytearray) -> bool:
    return bool(vc[15] & _DETACHED)
