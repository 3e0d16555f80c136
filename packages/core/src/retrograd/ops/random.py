"""Random sampling: ``Generator`` objects with ``manual_seed``, the sampling functions
(``normal``, ``bernoulli``, ``multinomial``) and the in-place samplers (``uniform_`` ...)."""

from __future__ import annotations

__all__: list[str] = []
