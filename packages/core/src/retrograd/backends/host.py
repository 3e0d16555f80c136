"""The host array library (NumPy). Everything that must touch host memory whatever the
device -- building a tensor from Python data, seeding random numbers, finite differences --
gets it from here, so that ``retrograd.ops`` and ``retrograd.autograd`` import no array
library themselves."""

from __future__ import annotations

import numpy as xp

__all__ = ["xp"]
