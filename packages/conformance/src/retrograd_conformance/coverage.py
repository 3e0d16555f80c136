"""Kernel coverage: which of a backend's kernels a conformance run actually reached.

A vendor overrides kernels (``relu_backward``, a fused ``linear_relu_backward``, an in-place
``relu_backward_`` ...) and runs the suite to learn whether they are right. The suite can only
say so for the kernels its cases reach: an override that no case calls is an override nobody
tested. :class:`KernelCoverage` wraps every kernel of the backends under test for the length of a
run -- the ``kernels`` table, the ``ops`` namespace derivative rules receive, and the
``walk_ops`` namespace the NumPy backend gives rules inside the backward walk -- and counts, per
kernel: calls, the largest operand (elements and shape), the dtypes and the memory layouts seen.
The wrappers keep no reference to any array (the fused walk decides whether it may work in place
in a gradient buffer by counting references to it), and are taken off when the run ends.

:func:`protocol_kernels` is the list of every kernel retrograd calls: the reference table plus
the optional in-place variants the fusion pass looks up. :func:`overridden` tells a backend's
own kernels from the reference ones it kept.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

__all__ = [
    "IN_PLACE_VARIANTS",
    "KernelCoverage",
    "KernelStats",
    "layout_of",
    "overridden",
    "protocol_kernels",
    "replaced_kernels",
    "wrapped_kernels",
]

#: The optional in-place activation derivatives (``g`` overwritten with the result). The fused
#: walk calls one when it owns the incoming gradient, and only when the backend has it.
IN_PLACE_VARIANTS: tuple[str, ...] = ("relu_backward_", "tanh_backward_", "sigmoid_backward_")


def _in_place_variants() -> tuple[str, ...]:
    """The in-place kernels the fusion pass looks up, read from retrograd itself where it
    says (so a new one is covered without a change here), else :data:`IN_PLACE_VARIANTS`."""
    try:
        from retrograd.autograd import fusion

        table = fusion._KERNELS
        names = tuple(sorted({pair[1] for pair in table.values()}))
        return names or IN_PLACE_VARIANTS
    except Exception:  # noqa: BLE001 - an older or newer core: the known list
        return IN_PLACE_VARIANTS


def protocol_kernels() -> tuple[str, ...]:
    """Every kernel name of the backend protocol, sorted: the reference table (primitives and
    composite backward formulas, fused ``linear_*_backward`` included) and the optional
    in-place variants (``relu_backward_`` ...)."""
    import numpy as np

    from retrograd.backends import reference_kernels

    return tuple(sorted(set(reference_kernels(np)) | set(_in_place_variants())))


# ---- telling an override from a reference kernel ----------------------------------------------


def _unquiet(fn: Any) -> Any:
    """The function a NumPy backend's error-state wrapper wraps (``fn`` itself otherwise)."""
    try:
        from retrograd.backends.host import unquiet
    except ImportError:  # pragma: no cover - a core without the quiet wrappers
        return fn
    return unquiet(fn)


def _same_kernel(fn: Any, ref: Any) -> bool:
    """Whether ``fn`` is the reference kernel ``ref`` (the same function, a closure built
    from the same code by another ``reference_kernels`` call, or the same composite formula
    bound to another op namespace), looking through wrappers that name what they wrap
    (``functools.wraps``: a device guard, NumPy's error-state guard, a coverage counter)."""
    for _ in range(8):  # a wrapper of a wrapper ...: a few levels at most
        fn = _unquiet(fn)
        if fn is ref:
            return True
        if isinstance(fn, functools.partial) and isinstance(ref, functools.partial):
            return fn.func is ref.func
        code, ref_code = getattr(fn, "__code__", None), getattr(ref, "__code__", None)
        if code is not None and code is ref_code:
            return True
        inner = getattr(fn, "__wrapped__", None)
        if inner is None:
            return False
        fn = inner
    return False


def overridden(backend: Any) -> dict[str, bool]:
    """Kernel name -> whether ``backend`` replaces it (or adds it: an in-place variant has no
    reference kernel). A kernel the backend kept from ``reference_kernels(backend.xp)``, wrapped
    or not in NumPy's error-state guard, is not an override."""
    from retrograd.backends import reference_kernels

    try:
        ref = reference_kernels(backend.xp)
    except Exception:  # noqa: BLE001 - an exotic namespace: every kernel is the backend's
        ref = {}
    return {name: name not in ref or not _same_kernel(fn, ref[name])
            for name, fn in backend.kernels.items()}


# ---- what a call is made of ------------------------------------------------------------------


def layout_of(a: Any) -> str:
    """A short name for how ``a``'s elements sit in memory: ``empty``, ``0-d``,
    ``contiguous``, ``transposed`` (Fortran order), ``broadcast`` (a stride of 0 over more than
    one element), ``strided`` (any other view), or ``opaque`` where the array shows nothing.
    Read from NumPy-like strides, or through DLPack for arrays on the host that only offer
    that (array-api-strict)."""
    shape = tuple(a.shape)
    if any(n == 0 for n in shape):
        return "empty"
    if not shape:
        return "0-d"
    strides = getattr(a, "strides", None)
    itemsize = getattr(getattr(a, "dtype", None), "itemsize", None)
    if strides is None or itemsize is None:
        host = _dlpack_host(a)
        if host is None:
            return "opaque"
        strides, itemsize = host.strides, host.itemsize
    return _layout(shape, tuple(strides), int(itemsize))


def _dlpack_host(a: Any) -> Any:
    """A NumPy view of an array that offers only DLPack, when its memory is on the host."""
    try:
        if a.__dlpack_device__()[0] != 1:  # kDLCPU: only host memory is read here
            return None
        import numpy as np

        return np.from_dlpack(a)
    except Exception:  # noqa: BLE001 - nothing to read
        return None


def _layout(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> str:
    if any(s == 0 and n > 1 for s, n in zip(strides, shape)):
        return "broadcast"

    def dense(order: list[int]) -> bool:
        step = itemsize
        for axis in order:
            if shape[axis] != 1 and strides[axis] != step:
                return False
            step *= shape[axis]
        return True

    axes = list(range(len(shape)))
    if dense(axes[::-1]):
        return "contiguous"
    if dense(axes):
        return "transposed"
    return "strided"


_DTYPE_NAMES: dict[tuple[type, Any], str] = {}


def _dtype_name(dt: Any) -> str:
    key = (type(dt), dt)  # the type first: two libraries' dtypes are never compared
    try:
        return _DTYPE_NAMES[key]
    except (KeyError, TypeError):
        name = str(getattr(dt, "name", dt)).rsplit(".", 1)[-1]
        try:
            _DTYPE_NAMES[key] = name
        except TypeError:  # unhashable dtype object
            pass
        return name


_PLAIN = frozenset({int, float, bool, complex, str, type(None), type(Ellipsis), slice})
_RESULT = "result"  # the layout slot of an array seen only as a result


def _note(seen: dict[tuple[Any, ...], str], a: Any, kind: str | None) -> None:
    """Remember operand ``a`` (a result when ``kind`` is ``_RESULT``) by its type, dtype,
    shape and strides; its layout is read the first time its key is seen."""
    shape = getattr(a, "shape", None)
    if shape is None or isinstance(a, type):
        return
    try:
        key = (type(a), a.dtype, shape, getattr(a, "strides", None), kind)
        if key in seen:
            return
        # an operand without strides (array-api-strict) is read through DLPack once per key
        seen[key] = _RESULT if kind is _RESULT else layout_of(a)
    except Exception:  # noqa: BLE001 - never fail a run over a probe
        return


@dataclass
class KernelStats:
    """What one kernel of one backend saw during a run.

    A call costs one dictionary lookup per array operand, keyed by its type, dtype, shape and
    strides; sizes, dtypes and layouts are worked out from the keys when read. (An array that
    shows no strides, as array-api-strict's, is keyed by dtype and shape: its layout is that
    of the first such operand.)"""

    name: str
    overridden: bool
    in_protocol: bool = True
    calls: int = 0
    _seen: dict[tuple[Any, ...], str] = field(default_factory=dict, repr=False)

    def record(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """Count one call: its operands' shapes, dtypes and layouts, and the result's shape
        and dtype. Nothing is kept but types, dtypes, shapes and strides."""
        self.calls += 1
        seen, note = self._seen, _note
        for v in (*args, *kwargs.values()) if kwargs else args:
            t = type(v)
            if t in _PLAIN:
                continue
            if t is list or t is tuple:
                for w in v:
                    note(seen, w, None)
            else:
                note(seen, v, None)
        t = type(result)
        if t is tuple or t is list:
            for w in result:
                note(seen, w, _RESULT)
        elif t not in _PLAIN:
            note(seen, result, _RESULT)

    def _sizes(self) -> Iterator[tuple[int, tuple[int, ...]]]:
        for _type, _dt, shape, _, _ in self._seen:
            try:
                dims = tuple(int(n) for n in shape)
            except (TypeError, ValueError):  # a lazy array without a known shape
                continue
            size = 1
            for n in dims:
                size *= n
            yield size, dims

    @property
    def largest(self) -> int:
        """The most elements of any operand or result."""
        return max((size for size, _ in self._sizes()), default=0)

    @property
    def largest_shape(self) -> tuple[int, ...]:
        """The shape of the largest operand or result (the first seen among equals)."""
        best: tuple[int, tuple[int, ...]] = (-1, ())
        for size, dims in self._sizes():
            if size > best[0]:
                best = (size, dims)
        return best[1]

    @property
    def dtypes(self) -> set[str]:
        """The dtypes of the operands and results."""
        return {_dtype_name(key[1]) for key in self._seen}

    @property
    def layouts(self) -> set[str]:
        """The layouts of the operands (:func:`layout_of`)."""
        return {v for v in self._seen.values() if v is not _RESULT}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: sets as sorted lists."""
        return {"kernel": self.name, "overridden": self.overridden,
                "in_protocol": self.in_protocol, "calls": self.calls, "largest": self.largest,
                "largest_shape": list(self.largest_shape), "dtypes": sorted(self.dtypes),
                "layouts": sorted(self.layouts)}


def _counting(fn: Callable[..., Any], stats: KernelStats) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        stats.record(args, kwargs, result)
        return result

    kernel.__name__ = getattr(fn, "__name__", stats.name)
    kernel.__qualname__ = getattr(fn, "__qualname__", kernel.__name__)
    kernel.__doc__ = getattr(fn, "__doc__", None)
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]
    kernel.__retrograd_coverage__ = stats  # type: ignore[attr-defined]
    return kernel


_ABSENT = object()


def _namespaces(backend: Any) -> tuple[Any, Any]:
    """``backend.ops`` and, where the backend has a distinct one, ``backend.walk_ops`` (the
    NumPy backend's kernels for rules run inside the backward walk) -- else None."""
    ops = backend.ops
    walk = getattr(backend, "walk_ops", None)
    return ops, (None if walk is ops else walk)


def _set(target: Any, name: str, value: Any) -> None:
    if isinstance(target, dict):
        if value is _ABSENT:
            target.pop(name, None)
        else:
            target[name] = value
    elif value is _ABSENT:
        if hasattr(target, name):
            delattr(target, name)
    else:
        setattr(target, name, value)


def _get(target: Any, name: str) -> Any:
    if isinstance(target, dict):
        return target.get(name, _ABSENT)
    return getattr(target, name, _ABSENT)


def _replace(backend: Any, kernels: dict[str, Callable[[Any], Any] | None]
             ) -> list[tuple[Any, str, Any]]:
    """Put ``kernels`` in ``backend``'s table and namespaces; return what to put back.

    Each value is a function ``make(original) -> replacement`` (``original`` being the entry
    found in that table or namespace), or None to take the kernel away. The originals are
    read first: on the NumPy backend an assignment to ``ops`` also rewrites ``walk_ops``,
    which then gets its own replacement, made around its own original."""
    ops, walk = _namespaces(backend)
    targets = [backend.kernels, ops] + ([walk] if walk is not None else [])
    found = [(t, name, _get(t, name)) for name in kernels for t in targets]
    for target, name, original in found:
        make = kernels[name]
        if make is None:
            _set(target, name, _ABSENT)
        elif original is not _ABSENT:
            _set(target, name, make(original))
    return found


def _restore(saved: list[tuple[Any, str, Any]]) -> None:
    # in the order saved: ``ops`` (which on the NumPy backend rewrites ``walk_ops``) before
    # ``walk_ops``, so that each ends as it was found
    for target, name, original in saved:
        _set(target, name, original)


def _constant(fn: Callable[..., Any], _original: Any) -> Callable[..., Any]:
    return fn


def _counting_around(stats: KernelStats, original: Callable[..., Any]) -> Callable[..., Any]:
    return _counting(original, stats)


@contextlib.contextmanager
def replaced_kernels(backend: Any, kernels: dict[str, Callable[..., Any] | None]
                     ) -> Iterator[None]:
    """Within the block, ``backend`` runs ``kernels`` (name -> function, or None to take the
    kernel away, as a backend without an optional in-place variant) in its table, ``ops`` and
    ``walk_ops``; everything is put back on exit. The conformance runner uses it to run a
    program once more on the reference kernels."""
    saved = _replace(backend, {name: (None if fn is None else functools.partial(_constant, fn))
                               for name, fn in kernels.items()})
    try:
        yield
    finally:
        _restore(saved)


class KernelCoverage:
    """Counting wrappers around the kernels of some backends, for the length of a ``with``.

    ``KernelCoverage({"retrograd:cpu": backend})`` (or :meth:`for_subjects`); inside the block
    each call to a kernel through ``backend.kernels``, ``backend.ops`` or ``backend.walk_ops``
    is counted in ``coverage.stats["retrograd:cpu"][kernel]``. ``only`` limits the wrapping to
    some kernel names. Blocks nest: a block inside another counts in both, and each puts back
    what it found.
    """

    def __init__(self, backends: dict[str, Any], only: Iterable[str] | None = None) -> None:
        self.backends = dict(backends)
        self.only = None if only is None else frozenset(only)
        self.stats: dict[str, dict[str, KernelStats]] = {}
        self._saved: list[list[tuple[Any, str, Any]]] = []
        self._protocol = set(protocol_kernels())

    @classmethod
    def for_subjects(cls, subjects: Iterable[Any]) -> KernelCoverage:
        """Coverage of every available ``retrograd:<backend>`` subject."""
        from retrograd import backends

        found = {}
        for s in subjects:
            if getattr(s, "family", "") == "retrograd" and s.available:
                found[s.name] = backends.get_backend(s.device)
        return cls(found)

    def __enter__(self) -> KernelCoverage:
        try:
            for subject, backend in self.backends.items():
                self._install(subject, backend)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        while self._saved:
            _restore(self._saved.pop())

    def _install(self, subject: str, backend: Any) -> None:
        own = overridden(backend)
        stats = self.stats.setdefault(subject, {})
        names = [n for n in backend.kernels if self.only is None or n in self.only]
        for name in names:
            if name not in stats:
                stats[name] = KernelStats(name, own.get(name, True), name in self._protocol)
        self._saved.append(_replace(backend, {
            name: functools.partial(_counting_around, stats[name]) for name in names}))

    # ---- reading it ----------------------------------------------------------------------------
    def table(self, subject: str) -> list[KernelStats]:
        """One subject's kernels, sorted by name."""
        return sorted(self.stats.get(subject, {}).values(), key=lambda s: s.name)

    def calls(self, subject: str) -> dict[str, int]:
        """Kernel name -> calls, for the kernels of ``subject`` called at least once."""
        return {s.name: s.calls for s in self.table(subject) if s.calls}

    def unreached(self, subject: str, *, overridden_only: bool = False) -> list[str]:
        """Protocol kernels of ``subject`` never called (only its overrides, if asked). A
        backend without an optional in-place variant lacks nothing: only the kernels in its
        table are counted."""
        return [s.name for s in self.table(subject)
                if s.calls == 0 and s.in_protocol and (s.overridden or not overridden_only)]

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        """Subject -> its kernel table, JSON-ready."""
        return {subject: [s.as_dict() for s in self.table(subject)] for subject in self.stats}


def wrapped_kernels(backend: Any) -> list[str]:
    """Kernel names of ``backend`` currently wrapped by a :class:`KernelCoverage` (a check that
    every block restored what it found)."""
    return [name for name, fn in backend.kernels.items()
            if hasattr(fn, "__retrograd_coverage__")]


# ---- the report's table ------------------------------------------------------------------------


def print_coverage(results: Iterable[Any], console: Any, *, verbose: bool = False) -> None:
    """Print one table per ``coverage`` result (see ``runner.coverage_results``): the kernels
    the backend overrides with their calls, largest operand, dtypes and layouts, unreached
    ones in red; with ``verbose`` the kernels it kept from the reference too. ``console`` is a
    ``rich.console.Console``."""
    from rich.markup import escape
    from rich.table import Table

    for r in results:
        if getattr(r, "suite", None) != "coverage" or "kernels" not in r.details:
            continue
        rows = [k for k in r.details["kernels"] if verbose or k["overridden"]]
        t = Table(title=f"Kernel coverage: {escape(r.subject)} "
                        f"({len(r.details['overridden'])} kernels overridden)")
        for col in ("kernel", "whose", "calls", "largest", "dtypes", "layouts"):
            t.add_column(col)
        for k in rows:
            whose = "backend" if k["overridden"] else "reference"
            calls = str(k["calls"]) if k["calls"] else (
                "[bold red]0[/]" if k["overridden"] else "[yellow]0[/]")
            shape = "x".join(str(n) for n in k["largest_shape"]) or "scalar"
            largest = f"{k['largest']} ({shape})" if k["calls"] else "-"
            t.add_row(k["kernel"], whose, calls, largest, ", ".join(k["dtypes"]),
                      ", ".join(k["layouts"]))
        kept = [k for k in r.details["kernels"] if not k["overridden"]]
        notes = []
        if not verbose:
            notes.append(f"{sum(1 for k in kept if k['calls'])} reference kernels reached "
                         "(--verbose lists them)")
        if r.details.get("unreached_reference") and r.details.get("complete", True):
            notes.append("reference kernels never called: "
                         + ", ".join(r.details["unreached_reference"]))
        t.caption = escape("; ".join(notes + [r.message]))
        console.print(t)
