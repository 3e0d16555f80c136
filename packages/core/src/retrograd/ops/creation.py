"""Creation functions. Python floats default to ``get_default_dtype()`` (float32 unless
changed) and ints to int64, as in PyTorch; NumPy scalars and arrays keep their dtype."""

from __future__ import annotations

import threading
from typing import Any

from ..backends.registry import backend_for_device
from ..dtypes import DType, as_dtype, bool_, get_default_dtype, int64
from ..errors import RetrogradError
from ..inference_mode import _active as _inference_active
from ..inference_mode import creation_counter
from ..tensor import Tensor

__all__ = ["tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "rand", "randn",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "manual_seed", "as_tensor", "from_numpy"]


class _Rng(threading.local):
    generator: Any = None


_rng = _Rng()
_seed_lock = threading.Lock()
_global_seed: list[int | None] = [None]


def manual_seed(seed: int) -> None:
    """Seed the generator used by ``rand`` / ``randn`` (host-side, then moved to the device)."""
    from ..backends.host import xp as numpy

    if not isinstance(seed, int):
        raise TypeError(f"manual_seed expects an int, got {type(seed).__name__}")
    with _seed_lock:
        _global_seed[0] = seed
        _rng.generator = numpy.random.default_rng(seed)


def _generator() -> Any:
    from ..backends.host import xp as numpy

    if _rng.generator is None:
        _rng.generator = numpy.random.default_rng(_global_seed[0])
    return _rng.generator


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
    try:
        arr = numpy.array(host, dtype=dt.name)
    except TypeError as exc:
        raise TypeError(f"tensor(): could not build a tensor from {type(data).__name__}: "
                        f"{exc}") from None
    except ValueError as exc:
        raise ValueError(f"tensor(): could not build a tensor from {type(data).__name__}: "
                         f"{exc}") from None
    with backend.use_device(dev.index):
        out_data = backend.asarray(arr, dt)
        if out_data is arr:
            out_data = backend.ops.copy(arr)
    return _finish(out_data, backend, requires_grad, "tensor")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
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
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, int) or isinstance(s, bool) or s < 0:
            raise ValueError(f"{name}: sizes must be non-negative ints, got {size!r}")
    return tuple(size)


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
    return _filled("zeros", size, "zeros", dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    return _filled("ones", size, "ones", dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    return _filled("empty", size, "empty", dtype, device, requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = _fill_dtype(fill_value)
    from .promotion import is_number, number_as, scalar_value

    value = scalar_value(fill_value)
    if is_number(value):  # the kernel gets a number of the tensor's kind (ints truncate)
        numel = 1
        for n in (size,) if isinstance(size, int) else size:
            numel *= n
        fill_value = number_as(value, as_dtype(dtype), numel != 1)
    return _filled("full", (size,) if not isinstance(size, int) else ((size,),), "full",
                   dtype, device, requires_grad, fill_value)


def _like(name: str, t: Tensor, fn: Any, dtype: Any, device: Any, requires_grad: bool,
          *extra: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    return fn(t.shape, *extra, dtype=dtype if dtype is not None else t.dtype,
              device=device if device is not None else t.device, requires_grad=requires_grad)


def zeros_like(t: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return _like("zeros_like", t, zeros, dtype, device, requires_grad)


def ones_like(t: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _like("ones_like", t, ones, dtype, device, requires_grad)


def empty_like(t: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return _like("empty_like", t, empty, dtype, device, requires_grad)


def full_like(t: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _like("full_like", t, full, dtype, device, requires_grad, fill_value)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    from .promotion import scalar_value

    start, end, step = (scalar_value(v) if not isinstance(v, Tensor) else v.item()
                        for v in (start, end, step))
    if dtype is None:
        dtype = get_default_dtype() if any(isinstance(v, float) for v in (start, end, step)) \
            else int64
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        data = backend.ops.arange(start, end, step, backend.xp_dtype(dtype))
    return _finish(data, backend, requires_grad, "arange")


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    backend, dev = backend_for_device(device)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    with backend.use_device(dev.index):
        data = backend.ops.linspace(start, end, steps, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, "linspace")


def _random(name: str, size: tuple[Any, ...], dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    shape = _size(name, size)
    dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise TypeError(f"{name}: dtype must be floating point, got {dt}")
    gen = _generator()
    values = gen.random(shape) if name == "rand" else gen.standard_normal(shape)
    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        data = backend.ops.from_numpy(values, backend.xp_dtype(dt))
    return _finish(data, backend, requires_grad, name)


def rand(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    return _random("rand", size, dtype, device, requires_grad)


def randn(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    return _random("randn", size, dtype, device, requires_grad)


def rand_like(t: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return _like("rand_like", t, rand, dtype, device, requires_grad)


def randn_like(t: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    return _like("randn_like", t, randn, dtype, device, requires_grad)
