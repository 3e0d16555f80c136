"""Compile the package's CUDA sources with NVRTC alone: no GPU, no driver needed.

Why: CI has no GPU, and ``cupy.cuda.compiler`` (what ``RawModule`` and ``ElementwiseKernel``
use) asks the driver for the device's architecture before compiling, so it fails there. NVRTC
itself is a plain library; calling ``cupy.cuda.nvrtc.createProgram`` / ``compileProgram``
directly checks that every kernel the package ships is valid CUDA C for a given architecture.

``ElementwiseKernel`` specs are only a fragment (parameters plus one statement), so
``elementwise_source`` wraps the same operation and preamble in a complete ``__global__``
template of our own, instantiated for float and double, and that is what gets compiled.

Run ``python -m retrograd_cuda.kernels.nvrtc`` to compile everything for sm_80 and sm_90.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from .sources import CTYPES, ELEMENTWISE, RAW_MODULE, ElementwiseSpec

#: The architectures CI checks: Ampere (A100) and Hopper (H100/H200).
ARCHS: tuple[str, ...] = ("sm_80", "sm_90")

_ENTRY = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.entry\s+([\w$]+)", re.MULTILINE)
_PARAM = re.compile(r"^\s*(raw\s+)?(\w+)\s+(\w+)\s*$")


class NvrtcUnavailable(RuntimeError):
    """CuPy or the NVRTC library is not installed: the compile checks cannot run."""


class KernelCompileError(RuntimeError):
    """NVRTC rejected a source; the message carries NVRTC's log."""


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


def _parse_params(params: str) -> list[tuple[bool, str, str]]:
    out = []
    for part in params.split(","):
        m = _PARAM.match(part)
        if m is None:
            raise ValueError(f"cannot parse ElementwiseKernel parameter {part!r}")
        out.append((m.group(1) is not None, m.group(2), m.group(3)))
    return out


def elementwise_source(spec: ElementwiseSpec, ctypes: Iterable[str] = CTYPES.values()) -> str:
    """A complete CUDA translation unit that runs ``spec.operation`` once per element.

    Inputs are bound as ``const T name = name_ptr[i]`` and outputs as ``T& name = name_ptr[i]``,
    as CuPy binds them, so the statement is type-checked exactly as CuPy will compile it.
    """
    ins = _parse_params(spec.in_params)
    outs = _parse_params(spec.out_params)
    for raw, typ, name in ins + outs:
        if raw or typ != "T":
            raise ValueError(f"{spec.name}: only non-raw 'T' parameters are supported ({name})")
    args = [f"const T* __restrict__ {n}_ptr" for _, _, n in ins]
    args += [f"T* __restrict__ {n}_ptr" for _, _, n in outs]
    binds = [f"        const T {n} = {n}_ptr[i];" for _, _, n in ins]
    binds += [f"        T& {n} = {n}_ptr[i];" for _, _, n in outs]
    body = "\n".join(binds)
    src = [
        spec.preamble,
        "template <typename T>",
        f"__global__ void {spec.name}({', '.join(args)}, long long n) {{",
        "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;",
        "         i += (long long)gridDim.x * blockDim.x) {",
        body,
        f"        {spec.operation};",
        "    }",
        "}",
    ]
    ptr_types = ", ".join(["const {t}*"] * len(ins) + ["{t}*"] * len(outs))
    for t in ctypes:
        types = ptr_types.format(t=t)
        src.append(f"template __global__ void {spec.name}<{t}>({types}, long long);")
    return "\n".join(src) + "\n"


def all_sources() -> dict[str, str]:
    """Every translation unit the package ships, by a readable name."""
    out = {f"elementwise:{key}": elementwise_source(spec) for key, spec in ELEMENTWISE.items()}
    out["raw_module"] = RAW_MODULE
    return out


def compile_source(source: str, name: str, arch: str = "sm_90") -> CompileResult:
    """Compile one translation unit for ``arch`` (``sm_XY``); raise ``KernelCompileError``."""
    nvrtc = _nvrtc()
    prog = nvrtc.createProgram(source, f"{name.replace(':', '_')}.cu", [], [])
    try:
        options = [f"--gpu-architecture={arch}", "--std=c++17"]
        try:
            nvrtc.compileProgram(prog, options)
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
    return [compile_source(src, name, arch) for arch in archs for name, src in sources.items()]


def main() -> int:
    try:
        print(f"NVRTC {'.'.join(map(str, nvrtc_version()))}")
        for r in compile_all():
            print(f"ok  {r.arch}  {r.name:32s} {len(r.entry_points):3d} kernels")
    except (NvrtcUnavailable, KernelCompileError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
