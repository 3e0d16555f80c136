"""Argument checks PyTorch makes before computing, against PyTorch: a clamp bound converted
to the computation dtype with its overflow check, and logsumexp's required ``dim``."""

from __future__ import annotations

import pytest
from torch_parity import same

PROGRAMS = {
    "clamp_f16_min_overflow": lambda lib: lib.ones(3, dtype=lib.float16).clamp(min=1e6),
    "clamp_f16_max_overflow": lambda lib: lib.ones(3, dtype=lib.float16).clamp(max=-65520.0),
    "clamp_f16_at_max": lambda lib: lib.ones(3, dtype=lib.float16).clamp(min=65504.0),
    "clamp_f16_inf": lambda lib: lib.ones(3, dtype=lib.float16).clamp(min=float("inf")),
    "clamp_f16_nan": lambda lib: lib.ones(3, dtype=lib.float16).clamp(min=float("nan")),
    "clamp_f32_overflow": lambda lib: lib.ones(3).clamp(max=-1e39),
    "clamp_f64_large": lambda lib: lib.ones(3, dtype=lib.float64).clamp(max=1e39),
    "clamp_int32_float_bound": lambda lib: lib.ones(3, dtype=lib.int32).clamp(min=1e10),
    "clamp_int32_int_overflow": lambda lib: lib.ones(3, dtype=lib.int32).clamp(min=10**10),
    "clamp_int64_large": lambda lib: lib.ones(3, dtype=lib.int64).clamp(max=10**12),
    "logsumexp_no_dim": lambda lib: lib.logsumexp(lib.ones(3)),
    "logsumexp_method_no_dim": lambda lib: lib.ones(3).logsumexp(),
    "logsumexp_dim_none": lambda lib: lib.ones(3).logsumexp(None),
    "logsumexp_dim": lambda lib: lib.ones(2, 3).logsumexp(1),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_torch(name):
    same(PROGRAMS[name], "without overflow" if "overflow" in name else None)
