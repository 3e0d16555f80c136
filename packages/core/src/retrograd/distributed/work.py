"""The handle an ``async_op=True`` collective returns (torch's ``Work``): ``wait()`` blocks until
the MPI requests complete -- bounded by the group's timeout -- then finishes the operation
(copies a staged result back into the tensors, divides for AVG) exactly once."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable
from typing import Any

__all__ = ["Work"]


class Work:
    """A collective in flight: its MPI requests, the buffers they use, and what to do once
    they are done."""

    def __init__(self, group: Any, requests: list[Any], what: str,
                 finish: Callable[[], None] | None = None, keep: Any = None) -> None:
        self._group = group
        self._requests = requests
        self._what = what
        self._finish = finish
        self._keep = keep  # the buffers MPI reads and writes, alive until the requests end
        self._done = False

    def is_completed(self) -> bool:
        """Whether the operation has finished (a non-blocking test; drives MPI's progress)."""
        if self._done:
            return True
        from mpi4py import MPI

        if MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        """Block until the operation has finished and its result is in the tensors; at most
        ``timeout`` (default: the group's), else :class:`DistBackendError`. Returns True."""
        if not self._done:
            from .process_group import wait_requests

            g = self._group
            if timeout is not None:
                g = dataclasses.replace(g, timeout_s=timeout.total_seconds())
            wait_requests(g, self._requests, self._what)
            self._complete()
        return True

    def _complete(self) -> None:
        self._done = True
        finish, self._finish, self._keep = self._finish, None, None
        if finish is not None:
            finish()

    def __repr__(self) -> str:
        state = "completed" if self._done else "in flight"
        return f"<Work {self._what}: {state}>"
