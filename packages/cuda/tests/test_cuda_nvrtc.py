"""Every kernel source the package ships compiles with NVRTC for sm_80 and sm_90 (no GPU needed).

And the check can fail: planted syntax and type errors are rejected with NVRTC's log.
"""

from __future__ import annotations

import dataclasses

import pytest

from retrograd_cuda.kernels import sources
from retrograd_cuda.kernels.sources import ELEMENTWISE, RAW_ENTRY_POINTS, RAW_MODULE

ARCHS = ("sm_80", "sm_90")


@pytest.fixture
def nv(nvrtc):
    """The NVRTC helper module; skips (naming what is missing) without CuPy or NVRTC."""
    return nvrtc


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("key", sorted(ELEMENTWISE))
def test_elementwise_kernel_compiles(key, arch, nv):
    spec = ELEMENTWISE[key]
    result = nv.compile_source(nv.elementwise_source(spec), f"elementwise:{key}", arch)
    # one kernel per dtype, instantiated from our template (mangled C++ names)
    assert len(result.entry_points) == len(sources.CTYPES)
    assert all(spec.name in e for e in result.entry_points)
    assert f".target {arch}" in result.ptx


@pytest.mark.parametrize("arch", ARCHS)
def test_raw_module_compiles_with_every_entry_point(arch, nv):
    result = nv.compile_source(RAW_MODULE, "raw_module", arch)
    assert sorted(result.entry_points) == sorted(RAW_ENTRY_POINTS)
    assert f".target {arch}" in result.ptx


def test_the_launchers_only_name_entry_points_that_exist():  # pure Python: no NVRTC needed
    """Every raw_function("...") name the launchers can build is an entry point of the module."""
    for stem in ("rg_softmax_bw_rows", "rg_cross_entropy_bw") + tuple(
        f"rg_bias_{a}_bw" for a in ("relu", "tanh", "sigmoid")
    ):
        for suffix in sources.SUFFIX.values():
            assert f"{stem}_{suffix}" in RAW_ENTRY_POINTS


def test_all_sources_covers_every_kernel(nv):
    names = set(nv.all_sources())
    assert names == {f"elementwise:{k}" for k in ELEMENTWISE} | {"raw_module"}


def test_compile_all_and_cli(nv):
    results = nv.compile_all(("sm_90",))
    assert len(results) == len(nv.all_sources())
    assert nv.main() == 0


def test_the_wrapper_binds_inputs_const_and_outputs_by_reference(nv):
    text = nv.elementwise_source(ELEMENTWISE["accumulate_"])
    assert "const T src = src_ptr[i];" in text
    assert "T& dst = dst_ptr[i];" in text
    assert "dst = dst + src;" in text


# -- the check can fail ------------------------------------------------------------------------
def test_planted_syntax_error_in_raw_module_fails(nv):
    broken = RAW_MODULE.replace("return y > T(0) ? g : T(0);", "return y > T(0) ? g : T(0)")
    assert broken != RAW_MODULE
    with pytest.raises(nv.KernelCompileError, match="raw_module.*sm_90") as info:
        nv.compile_source(broken, "raw_module", "sm_90")
    assert "error" in str(info.value)  # NVRTC's log is in the message


def test_planted_syntax_error_in_elementwise_operation_fails(nv):
    spec = dataclasses.replace(ELEMENTWISE["tanh_backward"], operation="gx = g * (1 - y * y")
    with pytest.raises(nv.KernelCompileError, match="error"):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_80")


def test_undeclared_name_in_operation_fails(nv):
    """The wrapper really type-checks the operation: an unknown variable is an error."""
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], operation="gx = rg_relu_bw(g, z)")
    with pytest.raises(nv.KernelCompileError, match="identifier \"z\" is undefined"):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_90")


def test_writing_to_an_input_fails(nv):
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], operation="g = y")
    with pytest.raises(nv.KernelCompileError):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_90")


def test_unknown_architecture_fails(nv):
    with pytest.raises(nv.KernelCompileError):
        nv.compile_source(RAW_MODULE, "raw_module", "sm_1")


def test_unsupported_parameter_kinds_are_refused(nv):
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], in_params="raw T g, T y")
    with pytest.raises(ValueError, match="raw"):
        nv.elementwise_source(spec)
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], in_params="T g,, T y")
    with pytest.raises(ValueError, match="cannot parse"):
        nv.elementwise_source(spec)
