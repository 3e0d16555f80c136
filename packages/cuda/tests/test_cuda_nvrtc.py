"""Every kernel source the package ships compiles with NVRTC for sm_80 and sm_90 (no GPU needed):
the raw module as CuPy's RawModule gets it, each ElementwiseKernel as CuPy's own code generator
writes it, with CuPy's headers and options.

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
    result = nv.compile_source(nv.elementwise_source(spec), f"elementwise:{key}", arch,
                               nv.elementwise_options())
    # one kernel per dtype and argument layout, under the names CuPy's generator was given
    assert sorted(result.entry_points) == sorted(nv.elementwise_entry_points(spec))
    assert len(result.entry_points) == len(sources.CTYPES) * len(nv.LAYOUTS)
    assert f".target {arch}" in result.ptx


@pytest.mark.parametrize("arch", ARCHS)
def test_raw_module_compiles_with_every_entry_point(arch, nv):
    result = nv.compile_source(RAW_MODULE, "raw_module", arch, nv.base_options() + sources.RAW_OPTIONS)
    assert sorted(result.entry_points) == sorted(RAW_ENTRY_POINTS)
    assert f".target {arch}" in result.ptx


def test_the_launchers_only_name_entry_points_that_exist():  # pure Python: no NVRTC needed
    """Every raw_function("...") name the launchers can build is an entry point of the module."""
    for stem in ("rg_softmax_bw_rows",) + tuple(f"rg_bias_{a}_bw" for a in sources.BIAS_ACTS):
        for suffix in sources.SUFFIX.values():
            assert f"{stem}_{suffix}" in RAW_ENTRY_POINTS


def test_all_sources_covers_every_kernel(nv):
    names = set(nv.all_sources())
    assert names == {f"elementwise:{k}" for k in ELEMENTWISE} | {"raw_module"}


def test_compile_all_and_cli(nv, capsys, monkeypatch):
    """The CLI's plumbing (the kernels themselves are compiled by the tests above)."""
    raw_only = {"raw_module": nv.all_sources()["raw_module"]}
    monkeypatch.setattr(nv, "all_sources", lambda: raw_only)
    assert [r.arch for r in nv.compile_all()] == list(nv.ARCHS)
    assert nv.main() == 0
    out = capsys.readouterr().out
    assert "sm_80" in out and "sm_90" in out and "raw_module" in out


def test_the_source_is_cupys_own(nv):
    """CuPy's generator binds inputs const and outputs by reference, and specialises the
    indexer (64-bit in the last layout): the check compiles what CuPy will compile."""
    text = nv.elementwise_source(ELEMENTWISE["accumulate_"])
    assert "const T &src = _raw_src[_ind.get()];" in text
    assert "T &dst = _raw_dst[_ind.get()];" in text
    assert "dst = dst + src;" in text
    assert "CIndexer<2, 0>" in text and "CIndexer<1, 1>" in text
    assert "#include <cupy/carray.cuh>" in text
    ce = nv.elementwise_source(ELEMENTWISE["cross_entropy_backward"])
    assert "const float count" in ce and "typedef long long I;" in ce and "typedef int I;" in ce
    assert "-ftz=true" in nv.elementwise_options()


# -- the check can fail ------------------------------------------------------------------------
def test_planted_syntax_error_in_raw_module_fails(nv):
    broken = RAW_MODULE.replace("e = e + err;", "e = e + err")
    assert broken != RAW_MODULE
    with pytest.raises(nv.KernelCompileError, match="raw_module.*sm_90") as info:
        nv.compile_source(broken, "raw_module", "sm_90")
    assert "error" in str(info.value)  # NVRTC's log is in the message


def test_planted_syntax_error_in_elementwise_operation_fails(nv):
    spec = dataclasses.replace(ELEMENTWISE["tanh_backward"], operation="gx = g * (1 - y * y")
    with pytest.raises(nv.KernelCompileError, match="error"):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_80", nv.elementwise_options())


def test_undeclared_name_in_operation_fails(nv):
    """The generated code really type-checks the operation: an unknown variable is an error."""
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], operation="gx = rg_relu_bw(g, z)")
    with pytest.raises(nv.KernelCompileError, match="identifier \"z\" is undefined"):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_90", nv.elementwise_options())


def test_writing_to_an_input_fails(nv):
    spec = dataclasses.replace(ELEMENTWISE["relu_backward"], operation="g = y")
    with pytest.raises(nv.KernelCompileError):
        nv.compile_source(nv.elementwise_source(spec), "broken", "sm_90", nv.elementwise_options())


def test_unknown_architecture_fails(nv):
    with pytest.raises(nv.KernelCompileError):
        nv.compile_source(RAW_MODULE, "raw_module", "sm_1")


def test_a_cupy_without_the_generator_is_reported(nv, monkeypatch):
    """A CuPy release that moved its code generator fails the check, saying so."""
    import cupy._core._kernel as k

    monkeypatch.delattr(k, "_get_elementwise_kernel_code")
    with pytest.raises(nv.CupyInternalsChanged, match="code generator"):
        nv.elementwise_source(ELEMENTWISE["relu"])
