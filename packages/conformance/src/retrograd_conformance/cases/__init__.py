"""Cases as data: an id, where it comes from, a program against the adapter, the expectations.

:data:`DOCUMENT_CASES` replays the examples of the design documents (SPEC §4);
:data:`SEMANTICS_CASES` the autograd corners PyTorch users rely on (hooks, grad modes, custom
Functions, in-place, seeds, type promotion, warnings); the generated
programs live in :mod:`retrograd_conformance.programs` and the op database in
:mod:`retrograd_conformance.opdb`.
"""

from __future__ import annotations

from .base import Case, Source
from .documents import DOCUMENT_CASES
from .semantics import SEMANTICS_CASES, SemanticsCase

__all__ = ["Case", "Source", "DOCUMENT_CASES", "SEMANTICS_CASES", "SemanticsCase"]
