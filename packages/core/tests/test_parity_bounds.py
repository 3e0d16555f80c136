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


def _f(lib, values, dtype="float32"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


ALLCLOSE = {
    "equal": lambda lib: lib.allclose(_f(lib, [1.0, 2.0]), _f(lib, [1.0, 2.0])),
    "within_rtol": lambda lib: lib.allclose(_f(lib, [1.0]), _f(lib, [1.0 + 1e-6])),
    "outside_atol": lambda lib: lib.allclose(_f(lib, [1e-7]), _f(lib, [0.0]), rtol=0,
                                             atol=1e-8),
    "nan": lambda lib: lib.allclose(_f(lib, [1.0, float("nan")]), _f(lib, [1.0, float("nan")])),
    "nan_equal": lambda lib: lib.allclose(_f(lib, [float("nan")]), _f(lib, [float("nan")]),
                                          equal_nan=True),
    "infinities": lambda lib: (lib.allclose(_f(lib, [float("inf")]), _f(lib, [float("inf")])),
                               lib.allclose(_f(lib, [float("inf")]), _f(lib, [-float("inf")]))),
    "broadcast": lambda lib: lib.allclose(_f(lib, [[1.0], [1.0]]), _f(lib, [1.0, 1.0])),
    "method": lambda lib: _f(lib, [1.0, 2.0]).allclose(_f(lib, [1.0, 2.5]), atol=0.6),
    "int64": lambda lib: lib.allclose(lib.tensor([2**53 + 1]), lib.tensor([2**53])),
    "dtype_mismatch": lambda lib: lib.allclose(_f(lib, [1.0]), lib.tensor([1])),
    "float_double": lambda lib: lib.allclose(_f(lib, [1.0]), _f(lib, [1.0], "float64")),
    "shape_mismatch": lambda lib: lib.allclose(_f(lib, [1.0, 1.0]), _f(lib, [1.0, 1.0, 1.0])),
}


@pytest.mark.parametrize("name", list(ALLCLOSE))
def test_allclose_matches_torch(name):
    phrase = {"dtype_mismatch": "did not match", "float_double": "did not match",
              "shape_mismatch": "must match the size"}.get(name)
    same(ALLCLOSE[name], phrase)
