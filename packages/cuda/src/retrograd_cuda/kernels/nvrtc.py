"""Compile the package's CUDA sources with NVRTC alone: no GPU, no driver needed.

Why: CI has no GPU, and CuPy's compile path (what ``RawModule`` and ``ElementwiseKernel`` use)
asks the driver for the device's architecture before compiling, so it fails there. NVRTC
itself is a plain library: calling ``cupy.cuda.nvrtc`` directly checks that every kernel the
package ships is valid CUDA C for a given architecture.

What is compiled is what CuPy would compile:

* ``RAW_MODULE`` as ``fused.raw_function`` hands it to ``cupy.RawModule``;
* each ``ElementwiseKernel`` through **CuPy's own code generator**
  (``cupy._core._kernel._get_elementwise_kernel_code``, the function ``__call__`` uses), for
  float32 and float64 and for the argument layouts CuPy specialises on (contiguous 1-D after
  its dimension merging; strided 2-D with 32-bit and with 64-bit indexing), with the headers
  and include paths CuPy prepends (``cupy._core.core``). Those are CuPy internals: if a CuPy
  release renames them, ``CupyInternalsChanged`` says so, and the check fails rather than
  silently checking less.

The options mirror CuPy's: ``-ftz=true`` (CuPy compiles every kernel with float32 subnormals
flushed to zero), ``--device-as-default-execution-space`` (NVRTC 12+), ``--std=c++17``.

Run ``python -m retrograd_cuda.kernels.nvrtc`` to compile everything for sm_80 and sm_90.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from .sources import CTYPES, ELEMENTWISE, RAW_MODULE, RAW_OPTIONS, ElementwiseSpec

#: The architectures CI checks: Ampere (A100) and Hopper (H100/H200).
ARCHS: tuple[str, ...] = ("sm_80", "sm_90")

#: The argument layouts an ElementwiseKernel is compiled for: (ndim, c_contiguous, 32-bit index).
LAYOUTS: tuple[tuple[int, bool, bool], ...] = ((1, True, True), (2, False, True), (2, False, False))

#: The integer type ``I`` stands for, per float dtype (both integer widths get compiled).
INDEX_DTYPE: dict[str, str] = {"float32": "int64", "float64": "int32"}

# CuPy's _ArgKind enum (cupy/_core/_kernel.pxd)
_ARG_NDARRAY, _ARG_INDEXER, _ARG_SCALAR = 1, 2, 3

_ENTRY = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.entry\s+([\w$]+)", re.MULTILINE)


class NvrtcUnavailable(RuntimeError):
    """CuPy or the NVRTC library is not installed: the compile checks cannot run."""


class KernelCompileError(RuntimeError):
    """NVRTC rejected a source; the message carries NVRTC's log."""


class CupyInternalsChanged(RuntimeError):
    """CuPy's code generator is not where this check looks for it (a new CuPy release)."""


@dataclass(frozen=True)
class CompileResult:
    name: str
    arch: str
    ptx: str
    log: str

    @property
    def entry_points(self) -> list[str]:
        """The ``.entry`` (kernel) names in the PTX: what a launcher can look up."""
        return _ENTRY.findall(self.ptx)


def _nvrtc():
    """The ``cupy.cuda.nvrtc`` module, or ``NvrtcUnavailable`` saying what is missing."""
    try:
        from cupy.cuda import nvrtc
    except Exception as exc:  # ImportError, or CuPy failing to load its CUDA libraries
        raise NvrtcUnavailable(f"cupy.cuda.nvrtc cannot be imported: {exc}") from exc
    try:
        nvrtc.getVersion()
    except Exception as exc:
        raise NvrtcUnavailable(
            f"the NVRTC library cannot be loaded ({exc}); install nvidia-cuda-nvrtc-cu12 "
            "(or cupy-cuda12x[ctk])"
        ) from exc
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor); raises ``NvrtcUnavailable`` when it cannot be loaded."""
    return tuple(_nvrtc().getVersion())  # type: ignore[return-value]


def _cupy_internals():
    try:
        import cupy
        from cupy._core import _carray, _kernel, _scalar, core

        return (cupy, _kernel._ArgInfo, _kernel._get_elementwise_kernel_code,
                _carray.Indexer, _scalar.CScalar, core)
    except (ImportError, AttributeError) as exc:
        raise CupyInternalsChanged(
            f"CuPy's ElementwiseKernel code generator was not found ({exc}); update "
            "retrograd_cuda.kernels.nvrtc for this CuPy release"
        ) from exc


def base_options() -> tuple[str, ...]:
    """The options CuPy adds to every compile (see the module docstring)."""
    major = nvrtc_version()[0]
    return ("-ftz=true",) + (("--device-as-default-execution-space",) if major >= 12 else ())


def elementwise_options() -> tuple[str, ...]:
    """``base_options`` plus CuPy's include paths (its headers and its bundled CCCL)."""
    *_, core = _cupy_internals()
    return base_options() + ("--std=c++17", f"-I{core._get_header_dir_path()}",
                             *core._get_cccl_include_options())


def elementwise_source(spec: ElementwiseSpec) -> str:
    """One translation unit holding what CuPy generates for ``spec``: every float dtype x
    ``LAYOUTS``, each in a namespace of its own as ``<name>_<dtype>_<layout>``, after CuPy's
    header includes."""
    import numpy

    cupy, arg_info, generate, indexer, cscalar, core = _cupy_internals()
    kernel = cupy.ElementwiseKernel(spec.in_params, spec.out_params, spec.operation, spec.name,
                                    preamble=spec.preamble)
    header = "".join(f"#include <{h}>\n" for h in core._cupy_header_list)
    units = [header]
    try:
        for dtype in CTYPES:
            types = {"T": numpy.dtype(dtype), "I": numpy.dtype(INDEX_DTYPE[dtype])}
            dtypes = [types.get(p.ctype, p.dtype) for p in kernel.in_params]
            _, _, type_map = kernel._decide_params_type(tuple(dtypes), ())
            for k, (ndim, contiguous, small) in enumerate(LAYOUTS):
                infos = []
                for p in kernel.params:
                    if p.name == "_ind":
                        infos.append(arg_info(_ARG_INDEXER, indexer, None, ndim, True, small))
                    elif p.name in spec.scalars:
                        dt = types.get(p.ctype, p.dtype)
                        infos.append(arg_info(_ARG_SCALAR, cscalar, dt, 0, True, True))
                    else:
                        dt = types.get(p.ctype, p.dtype)
                        infos.append(arg_info(_ARG_NDARRAY, cupy.ndarray, dt, ndim,
                                              contiguous, small))
                name = f"{spec.name}_{dtype}_{k}"
                code = generate(tuple(infos), type_map, kernel.params, kernel.operation, name,
                                kernel.preamble)
                units.append(f"namespace rg_{name} {{\n{code}\n}}\n")
    except (AttributeError, TypeError, ValueError) as exc:
        raise CupyInternalsChanged(
            f"CuPy's code generator refused {spec.name} ({type(exc).__name__}: {exc}); update "
            "retrograd_cuda.kernels.nvrtc for this CuPy release"
        ) from exc
    return "".join(units)


def elementwise_entry_points(spec: ElementwiseSpec) -> list[str]:
    """The kernel names ``elementwise_source(spec)`` defines."""
    return [f"{spec.name}_{d}_{k}" for d in CTYPES for k in range(len(LAYOUTS))]


def all_sources() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every translation unit the package ships, by a readable name, with its options."""
    ew = elementwise_options()
    out = {f"elementwise:{key}": (elementwise_source(spec), ew)
           for key, spec in ELEMENTWISE.items()}
    out["raw_module"] = (RAW_MODULE, base_options() + RAW_OPTIONS)
    return out


def compile_source(source: str, name: str, arch: str = "sm_90",
                   options: Iterable[str] = RAW_OPTIONS) -> CompileResult:
    """Compile one translation unit for ``arch`` (``sm_XY``); raise ``KernelCompileError``."""
    nvrtc = _nvrtc()
    prog = nvrtc.createProgram(source, f"{name.replace(':', '_')}.cu", [], [])
    try:
        opts = [f"--gpu-architecture={arch}", *options]
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise KernelCompileError(f"{name} failed to compile for {arch}: {exc}\n{log}") from exc
        log = nvrtc.getProgramLog(prog)
        ptx = nvrtc.getPTX(prog)
        if isinstance(ptx, bytes):
            ptx = ptx.decode("utf-8", "replace")
        return CompileResult(name, arch, ptx.rstrip("\0"), log)
    finally:
        nvrtc.destroyProgram(prog)


def compile_all(archs: Iterable[str] = ARCHS) -> list[CompileResult]:
    """Compile every shipped source for every architecture; stop at the first error."""
    sources = all_sources()
    return [compile_source(src, name, arch, opts)
            for arch in archs for name, (src, opts) in sources.items()]


def main() -> int:
    try:
        print(f"NVRTC {'.'.join(map(str, nvrtc_version()))}")
        for r in compile_all():
            print(f"ok  {r.arch}  {r.name:36s} {len(r.entry_points):3d} kernels")
    except (NvrtcUnavailable, KernelCompileError, CupyInternalsChanged) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
