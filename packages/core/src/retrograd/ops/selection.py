"""Selection and NaN-aware reductions added for the everyday API (nansum, nanmean, cummax,
cummin, kthvalue, msort, quantile, diff, argwhere ...)."""

from __future__ import annotations

__all__: list[str] = []
