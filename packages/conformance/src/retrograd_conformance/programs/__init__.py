"""Generated programs: random DAG programs over retrograd's differentiable ops, against PyTorch.

A program is Python source written against the adapter (``lib``): the same text is executed on
the subject and on the oracle, and is what a failure prints, so the reproducer is exactly what
ran. :mod:`.builder` writes programs, :mod:`.strategy` drives it from hypothesis, :mod:`.check`
runs and compares them.
"""

from __future__ import annotations

from .builder import Program
from .check import ProgramFailure, ProgramReport, check_programs, run_program
from .strategy import programs

__all__ = ["Program", "ProgramFailure", "ProgramReport", "check_programs", "programs",
           "run_program"]
