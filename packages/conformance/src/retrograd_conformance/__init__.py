"""retrograd-conformance: replay worked examples (docs/conformance.md), autograd semantics cases,
generated programs and an op database against every installed retrograd backend, with PyTorch
as the oracle.

Entry points: the ``retrograd-conformance`` CLI (:mod:`retrograd_conformance.cli`), the pytest
plugin (``pytest --pyargs retrograd_conformance --backend NAME``) and the Python API below.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
