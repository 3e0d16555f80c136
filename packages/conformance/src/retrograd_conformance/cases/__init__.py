"""Cases as data: an id, where it comes from, a program against the adapter, the expectations.

:data:`DOCUMENT_CASES` replays the worked examples of docs/conformance.md;
:data:`SEMANTICS_CASES` the autograd corners PyTorch users rely on (hooks, grad modes, custom
Functions, in-place, seeds, type promotion, warnings); :data:`FUSION_FAMILY`
(:mod:`.fusion`) reaches the kernels those leave alone -- the fused Linear+activation backward
on both of its paths (:data:`FUSION_CASES`) and a few seldom-used kernels
(:data:`KERNEL_CASES`) -- and runs with the semantics suite (same case type, same judge), as
does :data:`MODEL_CASES` (:mod:`.models`: whole training runs, step for step). The
generated programs live in :mod:`retrograd_conformance.programs` and the op database in
:mod:`retrograd_conformance.opdb`.
"""

from __future__ import annotations

from .base import Case, Source
from .documents import DOCUMENT_CASES
from .fusion import FUSION_CASES, KERNEL_CASES, FusionCase
from .models import MODEL_CASES
from .semantics import SEMANTICS_CASES, SemanticsCase

#: The cases of :mod:`.fusion` (groups ``fusion`` and ``kernels``) and :mod:`.models` (group
#: ``models``), run as semantics cases.
FUSION_FAMILY: tuple[SemanticsCase, ...] = FUSION_CASES + KERNEL_CASES + MODEL_CASES

__all__ = ["Case", "Source", "DOCUMENT_CASES", "SEMANTICS_CASES", "SemanticsCase",
           "FUSION_CASES", "KERNEL_CASES", "FUSION_FAMILY", "FusionCase", "MODEL_CASES"]
