"""What a backend's array library can do, declared once, so that retrograd and the
conformance suite read it instead of guessing -- and can check it.

A library whose arrays cannot be written in place (JAX) must say so: retrograd's kernels
``accumulate_`` and ``assign_`` write in place, and on such arrays ``dst += src`` rebinds a
local name and changes nothing -- a silent no-op, the worst kind of bug for a gradient. With
``inplace=False`` those kernels refuse loudly instead. ``verify`` runs each declared claim
against the real library; the conformance suite reports every claim that does not hold as a
failure (``capabilities/<claim>``), so a backend cannot ship a capability it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Capabilities", "verify"]

ALL_DTYPES = ("bool", "int32", "int64", "float16", "float32", "float64")


@dataclass(frozen=True)
class Capabilities:
    """A backend's declared abilities.

    * ``inplace``: arrays can be written in place (``x[...] = v``, ``x += y``).
    * ``lazy``: operations record work and compute on demand (Dask); reading a value
      (``item``, a comparison, a printout) forces a computation.
    * ``memory``: ``"host"`` (the CPU's memory: NumPy can read it without a copy through
      DLPack) or ``"device"`` (an accelerator's).
    * ``devices``: the device names the library offers this backend.
    * ``dtypes``: the retrograd dtypes it can hold (float64 is absent on some devices).
    """

    inplace: bool = True
    lazy: bool = False
    memory: str = "host"
    devices: tuple[str, ...] = ("cpu",)
    dtypes: tuple[str, ...] = ALL_DTYPES

    def __post_init__(self) -> None:
        if self.memory not in ("host", "device"):
            raise ValueError(f"Capabilities.memory must be 'host' or 'device', got "
                             f"{self.memory!r}")
        unknown = [d for d in self.dtypes if d not in ALL_DTYPES]
        if unknown:
            raise ValueError(f"Capabilities.dtypes: unknown dtype(s) {unknown}; retrograd's are "
                             f"{list(ALL_DTYPES)}")


def verify(backend: Any) -> dict[str, str | None]:
    """Check each claim of ``backend.capabilities`` against its library: claim -> None when it
    holds, else what was observed. Claims: ``inplace`` (a write through ``accumulate_`` and
    ``assign_`` is seen), ``dtypes`` (each declared dtype makes arrays of that dtype), ``lazy``
    (whether a result is a concrete array agrees with the declaration, when the backend can
    tell), ``memory`` (host arrays read back through ``to_numpy`` unchanged)."""
    caps: Capabilities = backend.capabilities
    ops = backend.ops
    out: dict[str, str | None] = {}
    try:
        dst = backend.asarray([1.0, 2.0], dtype="float32")
        src = backend.asarray([10.0, 20.0], dtype="float32")
        if caps.inplace:
            ops.accumulate_(dst, src)
            got = [float(v) for v in backend.to_numpy(dst)]
            problem = None if got == [11.0, 22.0] else (
                f"declared inplace=True, but accumulate_ left {got} where [11.0, 22.0] was "
                "written: the write was silently lost (immutable arrays?)")
            if problem is None:
                ops.assign_(src, dst)
                got = [float(v) for v in backend.to_numpy(src)]
                if got != [11.0, 22.0]:
                    problem = f"declared inplace=True, but assign_ left {got}"
            out["inplace"] = problem
        else:
            try:
                ops.accumulate_(dst, src)
                out["inplace"] = ("declared inplace=False, but accumulate_ did not refuse: it "
                                  "must raise rather than silently do nothing")
            except NotImplementedError:
                out["inplace"] = None
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        out["inplace"] = f"{type(e).__name__}: {e}"
    bad = []
    for name in caps.dtypes:
        try:
            a = backend.asarray([1, 0], dtype=name)
            if backend.dtype_of(a).name != name:
                bad.append(f"{name} (made {backend.dtype_of(a).name})")
        except Exception as e:  # noqa: BLE001
            bad.append(f"{name} ({type(e).__name__}: {e})")
    out["dtypes"] = None if not bad else f"declared dtypes not offered: {', '.join(bad)}"
    is_lazy = getattr(backend, "is_lazy_array", None)
    if is_lazy is not None:
        a = backend.asarray([1.0, 2.0], dtype="float32")
        r = a + a
        out["lazy"] = None if bool(is_lazy(r)) == caps.lazy else (
            f"declared lazy={caps.lazy}, but a sum came back "
            f"{'lazy' if is_lazy(r) else 'computed'}")
    if caps.memory == "host":
        try:
            host = backend.to_numpy(backend.asarray([1.5, -2.0], dtype="float32"))
            vals = [float(v) for v in host]
            out["memory"] = None if vals == [1.5, -2.0] else f"to_numpy gave {vals}"
        except Exception as e:  # noqa: BLE001
            out["memory"] = f"declared host memory, but to_numpy failed: {type(e).__name__}: {e}"
    return out
