"""Creation functions. Python floats default to ``get_default_dtype()`` (float32 unless
changed) and ints to int64, as in PyTorch; NumPy scalars and arrays keep their dtype."""

from __future__ import annotations

import math
import operator
from typing import Any

from ..backends.host import quiet_call
from ..backends.registry import backend_for_device
from ..dtypes import DType, as_dtype, bool_, get_default_dtype, int64
from ..errors import RetrogradError, ShapeError
from ..inference_mode import _active as _inference_active
from ..inference_mode import creation_counter
from ..tensor import Tensor
from .declare import op

__all__ = ["tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "rand", "randn",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "manual_seed", "as_tensor", "from_numpy"]


def manual_seed(seed: Any) -> Any:
    """Seed the default generator used by ``rand`` / ``randn`` and the other samplers (drawn
    host-side, then moved to the device); returns that generator, as in PyTorch."""
    from .random import manual_seed as seed_default

    return seed_default(seed)


def _generator(generator: Any = None, device: Any = None, name: str = "") -> Any:
    """The NumPy stream to draw from: ``generator``'s, or the default generator's (see
    ``ops.random``)."""
    from .random import stream

    return stream(generator, device if device is not None else "cpu", name)


def _infer_dtype(data: Any) -> DType:
    """The dtype ``torch.tensor(data)`` gives: a Python bool, int or float is bool, int64 or
    the default float dtype; a NumPy scalar or array, or a Tensor, keeps its dtype; a
    (nested) sequence promotes its items' dtypes (``promote_types``; an empty one is the
    default float dtype)."""
    from .promotion import promote_types

    if isinstance(data, Tensor):
        return data.dtype
    leaf = _leaf_dtype(data)
    if leaf is not None:
        return leaf
    if isinstance(data, (list, tuple)):
        found: DType | None = None
        stack = list(data)
        while stack:
            item = stack.pop()
            if isinstance(item, (list, tuple)):
                stack.extend(item)
                continue
            dt = item.dtype if isinstance(item, Tensor) else _leaf_dtype(item)
            if dt is None:
                raise TypeError(f"tensor(): unsupported element type {type(item).__name__}")
            found = dt if found is None else promote_types(found, dt)
        return get_default_dtype() if found is None else found
    raise TypeError(f"tensor(): could not infer the dtype of {type(data).__name__}")


def _leaf_dtype(item: Any) -> DType | None:
    """The dtype of one non-sequence value: an array-like's own, a Python number's default;
    None for anything else."""
    if hasattr(item, "dtype") and not isinstance(item, Tensor):
        return as_dtype(item.dtype)
    if isinstance(item, bool):
        return bool_
    if isinstance(item, int):
        return int64
    if isinstance(item, float):
        return get_default_dtype()
    return None


def _fill_dtype(value: Any) -> DType:
    """The dtype ``torch.full`` gives a fill value: its category's default (a NumPy scalar
    counts as the number of its category, ``np.bool_`` as a float, as in PyTorch)."""
    from .promotion import is_number, number_dtype, scalar_value

    if isinstance(value, Tensor):
        return value.dtype
    v = scalar_value(value)
    if not is_number(v):
        raise TypeError(f"full: fill_value must be a number, got {type(value).__name__}")
    return number_dtype(v)


def _to_host(data: Any) -> Any:
    from ..backends.host import xp as numpy

    if isinstance(data, Tensor):
        return data.backend.to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        return numpy.asarray([_to_host(d) for d in data]) if any(
            isinstance(d, Tensor) for d in data) else data
    if hasattr(data, "__array__") and not isinstance(data, numpy.ndarray):
        return numpy.asarray(data)
    return data


def _finish(data: Any, backend: Any, requires_grad: bool, op: str) -> Tensor:
    out = Tensor(data if type(data) is backend.array_type else backend.asarray(data), backend)
    if _inference_active[0]:  # some thread is in inference mode: if this one, mark ``out``
        out._vc = creation_counter()
    if requires_grad:
        if not out.dtype.is_floating_point:
            raise RetrogradError(
                f"{op}: only tensors of floating point dtype can require gradients, got "
                f"{out.dtype}"
            )
        out._requires_grad = True
    return out


def tensor(data: Any, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (number, nested lists, array, Tensor)."""
    if not isinstance(requires_grad, bool):
        raise TypeError(f"tensor(): requires_grad must be a bool, got {requires_grad!r}")
    if isinstance(data, Tensor) and device is None:
        device = data.device
    backend, dev = backend_for_device(device)
    dt = as_dtype(dtype) if dtype is not None else _infer_dtype(
        data if not isinstance(data, Tensor) else data._data)
    host = _to_host(data)
    from ..backends.host import xp as numpy

    if isinstance(data, (dict, set, str, bytes)) or data is None:
        raise TypeError(f"tensor(): could not build a tensor from {type(data).__name__}; "
                        "expected a number, a (nested) list, an array or a Tensor")
    if isinstance(data, numpy.generic):  # a NumPy scalar is read as the Python number it is
        host = data.item()
    if dt.name in _INT_RANGE and not isinstance(data, Tensor) and \
            not isinstance(host, numpy.ndarray):
        _check_ints(host, dt)  # NumPy would wrap, or raise its own words
    try:
        # an overflow to inf (1e300 as float32) is silent, as in PyTorch: no NumPy warning
        arr = quiet_call(numpy.array, host, dtype=dt.name)
    except TypeError as exc:
        raise TypeError(f"tensor(): could not build a tensor from {type(data).__name__}: "
                        f"{exc}") from None
    except ValueError as exc:
        raise (_sequence_error(host) or ValueError(
            f"tensor(): could not build a tensor from {type(data).__name__}: {exc}")) from None
    with backend.use_device(dev.index):
        out_data = backend.asarray(arr, dt)
        if out_data is arr:
            out_data = backend.ops.copy(arr)
    return _finish(out_data, backend, requires_grad, "tensor")


def _sequence_error(data: Any) -> Exception | None:
    """What ``torch.tensor`` says of nested sequences that do not form a rectangular array:
    the sizes are read down the first items, then every sequence must have its level's size
    (ValueError "expected sequence of length 2 at dim 1 (got 1)"), every item at the bottom
    must be a number (TypeError "must be real number, not list") and every item above it a
    sequence (TypeError "not a sequence"). None when nothing is wrong in these terms."""
    seq = (list, tuple)
    sizes = []
    item = data
    while isinstance(item, seq):
        sizes.append(len(item))
        if not item:
            break
        item = item[0]
    depth = len(sizes)
    stack = [(data, 0)]
    while stack:
        obj, dim = stack.pop()
        if dim == depth:
            if isinstance(obj, seq):
                return TypeError(f"tensor(): must be real number, not {type(obj).__name__} (a "
                                 f"sequence at dim {dim}, below the innermost dimension)")
            continue
        if not isinstance(obj, seq):
            return TypeError(f"tensor(): not a sequence (a {type(obj).__name__} at dim {dim}, "
                             f"where the first items have {sizes[dim]})")
        if len(obj) != sizes[dim]:
            return ValueError(f"tensor(): expected sequence of length {sizes[dim]} at dim {dim} "
                              f"(got {len(obj)})")
        stack.extend((x, dim + 1) for x in reversed(obj))
    return None


_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_INT64 = _INT_RANGE["int64"]


def _check_ints(host: Any, dt: DType) -> None:
    """Python data for the integer dtype ``dt``, checked as ``torch.tensor`` checks each
    value: a Python int outside int64 is ValueError "Overflow when unpacking long long"; a
    value outside ``dt`` (or a nan or an inf) is RuntimeError "value cannot be converted to
    type int32 without overflow". Read through one NumPy array of the inferred dtype
    (vectorized; an int beyond int64 makes it an object or uint64 array)."""
    from ..backends.host import xp as numpy

    try:
        probe = numpy.array(host)
    except (TypeError, ValueError, OverflowError):
        return  # ragged or unsupported data: the conversion itself reports it
    lo, hi = _INT_RANGE[dt.name]
    kind = probe.dtype.kind
    if kind == "O":
        for v in probe.reshape(-1).tolist():
            if type(v) is int and not _INT64[0] <= v <= _INT64[1]:
                raise ValueError(f"Overflow when unpacking long long: tensor(): the Python int "
                                 f"{v} does not fit in int64")
        return
    if kind == "u" and probe.size and int(probe.max()) > _INT64[1]:
        raise ValueError(f"Overflow when unpacking long long: tensor(): the Python int "
                         f"{int(probe.max())} does not fit in int64")
    if kind not in "fiu" or not probe.size:
        return
    if kind == "f":
        bad = ~numpy.isfinite(probe) | (probe < lo) | (probe > hi)
    else:
        bad = (probe < lo) | (probe > hi)
    if bool(bad.any()):
        v = probe.reshape(-1)[bad.reshape(-1)][0].item()
        raise RetrogradError(f"value cannot be converted to type {dt.name} without overflow "
                             f"(tensor(): {v!r} is outside the range [{lo}, {hi}] of {dt.name})")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor: a Tensor itself when neither ``dtype`` nor ``device`` is given,
    otherwise ``tensor(data, dtype=dtype, device=device)``."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: Any) -> Tensor:
    """A cpu tensor sharing memory with ``array``."""
    backend, _ = backend_for_device("cpu")
    out = Tensor(backend.asarray(array), backend)
    if _inference_active[0]:
        out._vc = creation_counter()
    return out


def _size(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    """A size read as PyTorch reads it: ints, or objects with ``__index__`` (NumPy integers,
    one-element integer tensors), as arguments or as one tuple or list. Anything else is a
    TypeError naming the argument, what was found and where (PyTorch's words); a size that
    does not fit in int64 a TypeError too; a negative one a ShapeError (a RuntimeError, as
    in PyTorch, and a ValueError)."""
    seq = None
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        seq = size[0]
        size = tuple(seq)
    out = []
    for i, s in enumerate(size):
        if type(s) is not int:
            s = _size_int(name, s, i, len(size), seq)
        if not _INT64[0] <= s <= _INT64[1]:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\" (size "
                            f"{s} does not fit in int64)")
        out.append(s)
    for s in out:
        if s < 0:
            why = f"Trying to create tensor with negative dimension {s}: {out}"
            if name == "zeros":
                why = f"zeros: Dimension size must be non-negative. ({why})"
            raise ShapeError(why)
    return tuple(out)


def _size_int(name: str, s: Any, i: int, n: int, seq: Any) -> int:
    """One element of a size that is not a Python int: its ``__index__``, or PyTorch's
    TypeError for where it was found (the only argument, the first element, a later one)."""
    if not isinstance(s, bool) and hasattr(s, "__index__"):
        try:
            return operator.index(s)
        except TypeError:
            pass
    found = type(s).__name__
    if seq is None and n == 1:
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{found}")
    if i == 0:  # PyTorch matches the argument on its first element, then unpacks the rest
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, but "
                        f"found element of type {found} at pos {i}")
    raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} "
                    f"with error \"type must be tuple of ints,but got {found}\"")


def _filled(name: str, size: tuple[Any, ...], kernel: str, dtype: Any, device: Any,
            requires_grad: bool, *extra: Any) -> Tensor:
    shape = _size(name, size)
    backend, dev = backend_for_device(device)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    with backend.use_device(dev.index):
        data = getattr(backend.ops, kernel)(shape, *extra, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, name)


def zeros(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of shape ``size`` (ints or one sequence), in the default float dtype unless
    ``dtype`` is given; ``requires_grad`` makes it a leaf that requires grad."""
    return _filled("zeros", size, "zeros", dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of shape ``size`` (ints or one sequence), in the default float dtype unless
    ``dtype`` is given; ``requires_grad`` as in ``zeros``."""
    return _filled("ones", size, "ones", dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor of shape ``size`` (ints or one sequence), in the default float dtype
    unless ``dtype`` is given; ``requires_grad`` as in ``zeros``."""
    return _filled("empty", size, "empty", dtype, device, requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` (a tuple or list) filled with ``fill_value``; the dtype is
    ``fill_value``'s kind (bool, int64 or the default float) unless ``dtype`` is given, as in
    PyTorch."""
    if not isinstance(size, (tuple, list)):  # PyTorch takes no bare int here
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _size("full", (size,))
    if dtype is None:
        dtype = _fill_dtype(fill_value)
    from .promotion import is_number, number_as, scalar_value

    value = scalar_value(fill_value)
    if is_number(value):  # the kernel gets a number of the tensor's kind (ints truncate)
        if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
            raise OverflowError(f"int too big to convert: full(): fill_value {value} does not "
                                "fit in int64")
        numel = 1
        for n in shape:
            numel *= n
        fill_value = number_as(value, as_dtype(dtype), numel != 1)
    return _filled("full", (shape,), "full", dtype, device, requires_grad, fill_value)


def _like(name: str, t: Tensor, fn: Any, dtype: Any, device: Any, requires_grad: bool,
          *extra: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    return fn(t.shape, *extra, dtype=dtype if dtype is not None else t.dtype,
              device=device if device is not None else t.device, requires_grad=requires_grad)


def zeros_like(t: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """A tensor of zeros with ``t``'s shape, and its dtype and device unless ``dtype`` or ``device``
    is given."""
    return _like("zeros_like", t, zeros, dtype, device, requires_grad)


def ones_like(t: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor of ones with ``t``'s shape, and its dtype and device unless ``dtype`` or ``device``
    is given."""
    return _like("ones_like", t, ones, dtype, device, requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """A tensor uninitialized with ``t``'s shape, and its dtype and device unless ``dtype`` or
    ``device`` is given."""
    return _like("empty_like", t, empty, dtype, device, requires_grad)


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` with ``t``'s shape, and its dtype and device unless
    ``dtype`` or ``device`` is given."""
    return _like("full_like", t, full, dtype, device, requires_grad, fill_value)


def _number(v: Any) -> Any:
    """A bound or step as PyTorch reads it: a Python or NumPy number, or a 0-d tensor's value;
    ``promotion._NOT_A_NUMBER`` for anything else."""
    from .promotion import scalar_value

    if isinstance(v, Tensor):
        return v.item() if v.ndim == 0 else scalar_value(v)
    return scalar_value(v)


def _check_int64(name: str, *values: Any) -> None:
    for v in values:
        if type(v) is int and not _INT64[0] <= v <= _INT64[1]:
            raise OverflowError(f"int too big to convert: {name}(): {v} does not fit in int64")


def _finite(v: Any) -> bool:
    return v == v and v not in (float("inf"), float("-inf"))


_STEP_ONE: Any = type("_StepOne", (), {"__repr__": lambda self: "1"})()  # step not given


def arange(start: Any, end: Any = None, step: Any = _STEP_ONE, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """``[start, end)`` by ``step``, checked as PyTorch checks it: numbers only; finite
    bounds; a nonzero step whose sign agrees with the bounds; in an integer dtype the bounds
    and step are truncated to it first (a step that truncates to 0 is an error, not an
    endless range)."""
    from .promotion import is_number, torch_name

    args = (start,) if end is None else (start, end) if step is _STEP_ONE else \
        (start, end, step)
    if step is _STEP_ONE:
        step = 1
    if end is None:
        start, end = 0, start
    values = [_number(v) for v in (start, end, step)]
    if not all(is_number(v) for v in values):
        if len(args) == 1:
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not "
                            f"{type(args[0]).__name__}")
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"arange() received an invalid combination of arguments - got ({got}),"
                        " but expected one of: (Number end), (Number start, Number end), "
                        "(Number start, Number end, Number step)")
    start, end, step = values
    _check_int64("arange", start, end, step)
    if dtype is None:
        dtype = get_default_dtype() if any(isinstance(v, float) for v in (start, end, step)) \
            else int64
    dt = as_dtype(dtype)
    if dt is bool_:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{torch_name(dt)}'")
    if not (_finite(start) and _finite(end)):
        raise RetrogradError(f"unsupported range: {start} -> {end} (arange needs finite "
                             "bounds)")
    if step == 0 or step != step:
        raise RetrogradError(f"step must be nonzero (arange({start}, {end}, {step}))")
    narrow = None  # an integer dtype other than int64, given a float bound or step
    if dt is not int64 and not dt.is_floating_point and \
            any(isinstance(v, float) for v in (start, end, step)):
        # PyTorch counts the elements from the numbers as given, then fills them from the
        # bounds and step truncated to int64 (a step truncating to 0 repeats the start)
        if not _finite(step):
            raise RetrogradError(f"unsupported range: step {step} in an integer dtype")
        narrow = (int(start), int(step))
    elif not dt.is_floating_point:  # PyTorch casts the bounds and the step to the dtype first
        if not _finite(step):
            raise RetrogradError(f"unsupported range: step {step} in an integer dtype")
        istep = int(step)
        if istep == 0:
            raise ValueError(f"step must be nonzero: the step {step} is 0 in {dt.name}")
        start, end, step = int(start), int(end), istep
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RetrogradError(f"upper bound and lower bound inconsistent with step sign "
                             f"(arange({start}, {end}, {step}))")
    if type(start) is int and type(end) is int and type(step) is int:
        size = -((start - end) // step)
    else:
        size = math.ceil((end - start) / step)
    if narrow is not None and 0 < size <= _INT64[1]:
        from ..backends.host import xp as numpy

        filled = narrow[0] + narrow[1] * numpy.arange(size, dtype="int64")
        backend, dev = backend_for_device(device)
        with backend.use_device(dev.index):
            data = backend.ops.from_numpy(filled.astype(dt.name), backend.xp_dtype(dt))
        return _finish(data, backend, requires_grad, "arange")
    if size > _INT64[1]:
        raise RetrogradError(f"invalid size, possible overflow? (arange({start}, {end}, "
                             f"{step}) has {size} elements)")
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        if size == 0:  # NumPy gives one element for an infinite step
            data = backend.ops.zeros((0,), backend.xp_dtype(dt))
        elif dt.is_floating_point:  # PyTorch's: start + i * step in float64 (float16: 32)
            data = _arange_values(backend, start, step, size, dt)
        else:
            data = backend.ops.arange(start, end, step, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "arange")


def _arange_values(backend: Any, start: Any, step: Any, size: int, dt: DType) -> Any:
    """``start + i * step`` for ``i < size`` on ``backend``, in PyTorch's accumulation type
    for ``dt`` (float64; float32 for float16), rounded to ``dt`` once."""
    from .. import dtypes

    acc = backend.xp_dtype(dtypes.float32 if dt.itemsize < 4 else dtypes.float64)
    ops = backend.ops
    i = ops.arange(0, size, 1, acc)
    full = ops.full((size,), start, acc)
    values = ops.add(full, ops.mul(i, ops.full((size,), step, acc)))
    return ops.astype(values, backend.xp_dtype(dt))


def linspace(start: Any, end: Any, steps: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included), in the default
    float dtype unless ``dtype`` is given."""
    from .promotion import is_number, number_as, torch_name

    lo, hi = _number(start), _number(end)
    n = steps if type(steps) is int else None
    if n is None and not isinstance(steps, bool) and hasattr(steps, "__index__"):
        try:
            n = operator.index(steps)
        except TypeError:
            pass
    if n is None or not (is_number(lo) and is_number(hi)):
        got = ", ".join(type(a).__name__ for a in (start, end, steps))
        raise TypeError(f"linspace() received an invalid combination of arguments - got ({got})"
                        ", but expected one of: (Number start, Number end, int steps)")
    if not _INT64[0] <= n <= _INT64[1]:
        raise ValueError(f"Overflow when unpacking long long: linspace(): steps {n} does not "
                         "fit in int64")
    if n < 0:
        raise RetrogradError(f"number of steps must be non-negative (got steps={n})")
    _check_int64("linspace", lo, hi)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if dt is bool_:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{torch_name(dt)}'")
    number_as(lo, dt)  # PyTorch's checked conversion of the bounds into the dtype
    number_as(hi, dt)
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        if dt.is_floating_point:
            data = backend.ops.linspace(lo, hi, n, backend.xp_dtype(dt))
        else:  # PyTorch's integer steps: computed in float64, truncated toward zero
            data = backend.ops.from_numpy(_spaced(lo, hi, n, dt).astype(dt.name),
                                          backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "linspace")


def _spaced(lo: Any, hi: Any, n: int, dt: DType) -> Any:
    """``n`` host values from ``lo`` to ``hi`` as PyTorch's range kernels space them: the
    first half counted up from ``lo``, the second half down from ``hi`` (so both ends are
    exact), in ``dt``'s arithmetic; an integer dtype truncates the bounds to it and steps
    in float64."""
    from ..backends.host import xp as numpy

    kind = "float64" if not dt.is_floating_point else dt.name
    if not dt.is_floating_point:
        lo, hi = int(lo), int(hi)
    t = numpy.dtype(kind).type
    start, end = t(lo), t(hi)
    i = numpy.arange(n)
    if n <= 1:
        return numpy.full((n,), start, dtype=kind)
    step = (end - start) / t(n - 1)
    up = start + step * i.astype(kind)
    down = end - step * (n - 1 - i).astype(kind)
    return numpy.where(i < n // 2, up, down)


@op("logspace", method=False, differentiable=False)
def logspace(start: Any, end: Any, steps: Any, base: Any = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** e`` for exponents ``e`` evenly spaced from ``start`` to
    ``end`` (both included), in the default float dtype unless ``dtype`` is given (an
    integer dtype truncates the exponents' bounds and the powers, as in PyTorch)."""
    from .promotion import is_number, torch_name

    lo, hi, b = _number(start), _number(end), _number(base)
    n = steps if type(steps) is int else None
    if n is None and not isinstance(steps, bool) and hasattr(steps, "__index__"):
        try:
            n = operator.index(steps)
        except TypeError:
            pass
    if n is None or not (is_number(lo) and is_number(hi) and is_number(b)):
        got = ", ".join(type(a).__name__ for a in (start, end, steps))
        raise TypeError(f"logspace() received an invalid combination of arguments - got ({got})"
                        ", but expected one of: (Number start, Number end, int steps, float "
                        "base = 10.0)")
    if n < 0:
        raise RetrogradError(f"number of steps must be non-negative (got steps={n})")
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if dt is bool_:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{torch_name(dt)}'")
    from ..backends.host import xp as numpy

    exps = _spaced(lo, hi, n, dt).astype("float64") if n != 1 else \
        numpy.full((1,), float(lo))  # one step: ``base ** start``, start not truncated
    with numpy.errstate(all="ignore"):
        values = numpy.power(numpy.float64(b), exps)
        values = values.astype(dt.name)  # an integer dtype truncates
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        data = backend.ops.from_numpy(values, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "logspace")


def _random(name: str, size: tuple[Any, ...], dtype: Any, device: Any,
            requires_grad: bool, generator: Any = None) -> Tensor:
    shape = _size(name, size)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:  # PyTorch: its random kernels have no integer or bool dtype
        from .promotion import torch_name

        kernel = "check_uniform_bounds" if name in ("rand", "rand_like") else \
            "normal_kernel_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_name(dt)}' "
                                  f"({name} draws floating point values only, got {dt})")
    backend, dev = backend_for_device(device)
    gen = _generator(generator, dev, name)
    if name in ("rand", "rand_like"):
        from .random import _below_one

        values = _below_one(gen.random(shape), dt)  # [0, 1) also once rounded to ``dt``
    else:
        values = gen.standard_normal(shape)
    with backend.use_device(dev.index):
        data = backend.ops.from_numpy(values, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, name)


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Samples uniform on ``[0, 1)`` of shape ``size`` (ints or one sequence), from
    ``generator`` or the default generator (``manual_seed``); floating dtypes only."""
    return _random("rand", size, dtype, device, requires_grad, generator)


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape ``size`` (ints or one sequence), from ``generator`` or
    the default generator (``manual_seed``); floating dtypes only."""
    return _random("randn", size, dtype, device, requires_grad, generator)


def _random_like(name: str, t: Tensor, dtype: Any, device: Any, requires_grad: bool,
                 generator: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    return _random(name, (t.shape,), dtype if dtype is not None else t.dtype,
                   device if device is not None else t.device, requires_grad, generator)


def rand_like(t: Tensor, *, generator: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor of uniform samples from ``[0, 1)`` with ``t``'s shape, and its dtype and device
    unless ``dtype`` or ``device`` is given; from ``generator`` or the default generator."""
    return _random_like("rand_like", t, dtype, device, requires_grad, generator)


def randn_like(t: Tensor, *, generator: Any = None, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """A tensor of standard normal samples with ``t``'s shape, and its dtype and device unless
    ``dtype`` or ``device`` is given; from ``generator`` or the default generator."""
    return _random_like("randn_like", t, dtype, device, requires_grad, generator)


def _count(name: str, arg: str, v: Any) -> int:
    """A count argument (``n``, ``m``) as PyTorch takes it: an int (or ``__index__``),
    non-negative."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(v).__name__}")
    n = operator.index(v)
    if n < 0:
        raise RetrogradError(f"{arg} must be greater or equal to 0, got {n}")
    return n


@op("eye", method=False, differentiable=False)
def eye(n: Any, m: Any = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The ``n`` x ``m`` matrix (``m`` defaults to ``n``) with ones on its diagonal and zeros
    elsewhere, of the default float dtype unless ``dtype`` says otherwise."""
    rows = _count("eye", "n", n)
    cols = rows if m is None else _count("eye", "m", m)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        data = backend.ops.eye(rows, cols, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "eye")


def _int_bound(name: str, v: Any) -> int:
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}(): the bounds must be ints, got {type(v).__name__}")
    return operator.index(v)


@op("randint", method=False, differentiable=False)
def randint(*args: Any, low: Any = None, high: Any = None, size: Any = None,
            generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` (``low`` defaults to 0): called as
    ``randint(high, size)`` or ``randint(low, high, size)``, as in PyTorch; int64 unless
    ``dtype`` says otherwise. Drawn from ``generator`` or the default generator
    (``manual_seed``)."""
    pos = list(args)
    if size is None:
        if not pos:
            raise TypeError("randint() missing required argument 'size'")
        size = pos.pop()
    if len(pos) > 2:
        raise TypeError(f"randint() takes at most 3 positional arguments ({len(args)} given)")
    if len(pos) == 2:
        if low is not None or high is not None:
            raise TypeError("randint() got multiple values for argument 'low' or 'high'")
        low, high = pos
    elif len(pos) == 1:
        if high is None:
            high = pos[0]
        else:
            low = pos[0]
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    lo = 0 if low is None else _int_bound("randint", low)
    hi = _int_bound("randint", high)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _size("randint", (size,))
    if lo >= hi:
        raise RetrogradError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                             f">= to={hi}")
    dt = as_dtype(dtype) if dtype is not None else int64
    backend, dev = backend_for_device(device)
    values = _generator(generator, dev, "randint").integers(lo, hi, size=shape, dtype="int64")
    with backend.use_device(dev.index):
        data = backend.ops.from_numpy(values, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "randint")


@op("randperm", method=False, differentiable=False)
def randperm(n: Any, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise), drawn
    from ``generator`` or the default generator (``manual_seed``)."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    count = operator.index(n)
    if count < 0:
        raise ShapeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    dt = as_dtype(dtype) if dtype is not None else int64
    backend, dev = backend_for_device(device)
    values = _generator(generator, dev, "randperm").permutation(count)
    with backend.use_device(dev.index):
        data = backend.ops.from_numpy(values, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "randperm")
