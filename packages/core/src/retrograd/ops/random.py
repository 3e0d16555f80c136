"""Random sampling: ``Generator`` objects with ``manual_seed``, the sampling functions
(``normal``, ``bernoulli``, ``multinomial``) and the in-place samplers (``uniform_``,
``normal_``, ``bernoulli_``, ``random_``, ``exponential_``, ``geometric_``, ``cauchy_``,
``log_normal_``).

Streams. Every draw is made host-side by a NumPy ``default_rng`` (PCG64) that a
``Generator`` owns, then moved to the tensor's device: the same seed gives the same values on
the cpu and on every backend (two generators of different devices seeded alike draw the same
numbers). The values are not PyTorch's (its streams are its own), only their distributions,
dtypes, shapes and errors are. The default generator (``retrograd.default_generator``, the
one ``manual_seed`` seeds and every sampler uses when given no ``generator=``) keeps one
stream per thread: ``manual_seed`` reseeds the calling thread's stream and sets the seed the
other threads' streams start from when they first draw.

Gradients. As in PyTorch, a sample is not a differentiable function of its parameters: the
sampling functions record PyTorch's nodes (``NormalBackward1/2/3``, ``BernoulliBackward0``,
and for the in-place samplers ``NormalBackward0``, ``UniformBackward0``,
``BernoulliBackward1/2``, ``RandomBackward0/1/2`` ...) whose gradients are zeros, which do not
require grad under ``create_graph``. None of these ops is in ``ops.registry()``
(``differentiable=False``): the op database compares values with PyTorch's, which a random
draw cannot match, and a zero gradient has nothing to check numerically. Their behaviour is
tested against PyTorch in ``tests/test_parity_random.py`` (statistics of the draws,
reproducibility, dtypes, node names, zero gradients, errors).
"""

from __future__ import annotations

import operator
import secrets
import threading
from typing import Any

from ..backends.registry import backend_for_device
from ..dtypes import Device, DType, as_dtype, bool_, float16, get_default_dtype, int64
from ..errors import RetrogradError, ShapeError
from ..grad_mode import _state as _grad
from ..tensor import Tensor
from . import creation as _creation
from ._core import record
from .declare import op
from .not_implemented import record_not_implemented
from .zero_grad import zero_grad_node

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "normal", "bernoulli", "multinomial",
           "uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
           "cauchy_", "log_normal_"]

_FRESH_SEED = 67280421310721  # the seed of a new Generator, as in PyTorch
_U64 = 1 << 64
_STATE_WORDS = 13  # get_state: tag, seed (2 words), PCG64 state (4), inc (4), 2 buffered
_STATE_TAG = 0x52475047  # "RGPG"


def _numpy() -> Any:
    from ..backends.host import xp as numpy

    return numpy


def _seed_value(seed: Any) -> int:
    """A seed as PyTorch takes it: an int (or ``__index__``) in ``[-2**63, 2**64)``, a
    negative one read modulo ``2**64``."""
    if isinstance(seed, bool) or not hasattr(seed, "__index__") or isinstance(seed, float):
        raise RetrogradError(f"manual_seed expected a long, but got {type(seed).__name__}")
    s = operator.index(seed)
    if not -(1 << 63) <= s < _U64:
        raise ValueError(f"Overflow when unpacking long long (seed {s} is outside "
                         "[-2**63, 2**64))")
    return s % _U64


class Generator:
    """A seeded stream of random numbers for the samplers' ``generator=`` keyword.

    ``device``: the device whose tensors it fills (a tensor of another device type is
    refused, as in PyTorch). The numbers are drawn host-side by NumPy and moved to the
    device, so two generators seeded alike give the same values on every backend."""

    def __init__(self, device: Any = "cpu") -> None:
        _, dev = backend_for_device(device)
        self._device = dev
        self._seed = _FRESH_SEED
        self._rng: Any = None

    @property
    def device(self) -> Device:
        """The device this generator draws for."""
        return self._device

    def _stream(self) -> Any:
        """The NumPy generator behind this one (made on first use)."""
        if self._rng is None:
            self._rng = _numpy().random.default_rng(self._seed)
        return self._rng

    def _set_stream(self, rng: Any) -> None:
        self._rng = rng

    def manual_seed(self, seed: Any) -> Generator:
        """Seed the stream with ``seed`` (an int; a negative one wraps modulo 2**64);
        returns the generator."""
        s = _seed_value(seed)
        self._seed = s
        self._set_stream(_numpy().random.default_rng(s))
        return self

    def seed(self) -> int:
        """Seed the stream from the operating system's entropy; returns the seed used."""
        s = secrets.randbits(64)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The stream's state, an opaque int64 tensor that ``set_state`` restores."""
        state = self._stream().bit_generator.state
        words = [_STATE_TAG]
        words += _words(self._seed, 2)
        words += _words(state["state"]["state"], 4)
        words += _words(state["state"]["inc"], 4)
        words += [int(state["has_uint32"]), int(state["uinteger"])]
        return _creation.tensor(words, dtype=int64)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state ``get_state`` returned; returns the generator."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a retrograd int64 Tensor (a get_state() result), but got "
                            f"{type(new_state).__name__}")
        if new_state.dtype is not int64:
            raise TypeError(f"RNG state must be a retrograd int64 Tensor (get_state()'s), got "
                            f"{new_state.dtype}")
        words = [int(w) for w in new_state.reshape(-1).tolist()]
        if len(words) != _STATE_WORDS or words[0] != _STATE_TAG:
            raise RetrogradError(f"Expected a retrograd generator state of size {_STATE_WORDS} "
                                 f"but found the input RNG state size to be {len(words)} (or "
                                 "not a get_state() result)")
        rng = _numpy().random.default_rng(0)
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": _unwords(words[3:7]), "inc": _unwords(words[7:11])},
            "has_uint32": words[11], "uinteger": words[12]}
        self._seed = _unwords(words[1:3])
        self._set_stream(rng)
        return self

    def __repr__(self) -> str:
        return f"<retrograd.Generator device={self._device} initial_seed={self._seed}>"


def _words(v: int, n: int) -> list[int]:
    return [(v >> (32 * i)) & 0xFFFFFFFF for i in range(n)]


def _unwords(ws: list[int]) -> int:
    return sum((w & 0xFFFFFFFF) << (32 * i) for i, w in enumerate(ws))


class _Streams(threading.local):
    rng: Any = None


class _DefaultGenerator(Generator):
    """The global generator: one stream per thread, all started from the last
    ``manual_seed`` (or a seed drawn from the system's entropy at import)."""

    def __init__(self) -> None:
        super().__init__("cpu")
        self._seed = secrets.randbits(64)
        self._streams = _Streams()
        self._lock = threading.Lock()

    def _stream(self) -> Any:
        rng = self._streams.rng
        if rng is None:
            rng = self._streams.rng = _numpy().random.default_rng(self._seed)
        return rng

    def _set_stream(self, rng: Any) -> None:
        with self._lock:
            self._streams.rng = rng

    def __repr__(self) -> str:
        return f"<retrograd default Generator initial_seed={self._seed}>"


#: The generator every sampler uses when given no ``generator=``.
default_generator: Generator = _DefaultGenerator()


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator (used by ``rand``, ``randn``, the samplers and
    ``nn.init``); returns it, as in PyTorch (which reads ``seed`` through ``int()``)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (``Generator.get_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


def stream(generator: Any, device: Any, name: str = "") -> Any:
    """The NumPy generator to draw from for a tensor on ``device``: ``generator``'s, or the
    default one's. A generator of another device type is refused, as in PyTorch."""
    if generator is None:
        return default_generator._stream()
    if not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' must be retrograd.Generator, not "
                        f"{type(generator).__name__}")
    want = (device.type if isinstance(device, Device) else
            backend_for_device(device)[1].type)
    if generator.device.type != want:
        raise RetrogradError(f"Expected a '{want}' device type for generator but found "
                             f"'{generator.device.type}'")
    return generator._stream()


# -- gradients: zeros, as PyTorch's -------------------------------------------------------
_zero_node = zero_grad_node


NormalBackward0 = _zero_node("NormalBackward0", 1)
NormalBackward1 = _zero_node("NormalBackward1", 1)
NormalBackward2 = _zero_node("NormalBackward2", 1)
NormalBackward3 = _zero_node("NormalBackward3", 2)
BernoulliBackward0 = _zero_node("BernoulliBackward0", 1)
BernoulliBackward1 = _zero_node("BernoulliBackward1", 2)
BernoulliBackward2 = _zero_node("BernoulliBackward2", 1)
UniformBackward0 = _zero_node("UniformBackward0", 1)
RandomBackward0 = _zero_node("RandomBackward0", 1)
RandomBackward1 = _zero_node("RandomBackward1", 1)
RandomBackward2 = _zero_node("RandomBackward2", 1)
ExponentialBackward0 = _zero_node("ExponentialBackward0", 1)
GeometricBackward0 = _zero_node("GeometricBackward0", 1)
CauchyBackward0 = _zero_node("CauchyBackward0", 1)
LogNormalBackward0 = _zero_node("LogNormalBackward0", 1)


def _record_zero(cls: Any, out: Tensor, inputs: tuple[Tensor, ...], attrs: Any = None) -> None:
    """Record ``cls`` on ``out`` when grad mode is on and an input requires grad."""
    if _grad.enabled and any(t._requires_grad for t in inputs):
        record(cls, out, inputs, (), (), attrs if attrs is not None else
               tuple(tuple(t.shape) for t in inputs))


# -- helpers ------------------------------------------------------------------------------
def _fmt(v: float) -> str:
    """A number as PyTorch's messages print a double (C++ ``<<``: six significant digits)."""
    return f"{v:g}"


def _real(name: str, arg: str, v: Any) -> float:
    from .promotion import is_number, scalar_value

    if isinstance(v, Tensor) and v.ndim == 0:
        v = v.item()
    x = scalar_value(v)
    if not is_number(x):
        raise TypeError(f"{name}(): argument '{arg}' must be float, not {type(v).__name__}")
    return float(x)


def _to_device(values: Any, dt: DType, device: Any) -> Any:
    """Host ``values`` as an array of ``dt`` on ``device`` (a Device or spec)."""
    backend, dev = backend_for_device(device)
    host = _numpy().asarray(values)
    if host.dtype.name != dt.name:
        with _numpy().errstate(all="ignore"):
            host = host.astype(dt.name)
    with backend.use_device(dev.index):
        return backend.ops.from_numpy(host, backend.xp_dtype(dt)), backend


def _host(t: Tensor) -> Any:
    return t.backend.to_numpy(t._data)


def _new(values: Any, dt: DType, device: Any, requires_grad: bool = False,
         name: str = "normal") -> Tensor:
    data, backend = _to_device(values, dt, device)
    return _creation._finish(data, backend, requires_grad, name)


def _floating_only(kernel: str, dt: DType) -> None:
    if not dt.is_floating_point:
        from .promotion import torch_name

        raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_name(dt)}'")


def _below_one(u: Any, dt: DType) -> Any:
    """Uniform ``[0, 1)`` samples drawn in float64 that stay below 1 once rounded to
    ``dt``."""
    numpy = _numpy()
    if dt.is_floating_point and dt.itemsize < 8:
        top = numpy.nextafter(numpy.array(1.0, dtype=dt.name), numpy.array(0.0, dtype=dt.name))
        u = numpy.minimum(u.astype(dt.name), top)
    return u


# -- normal -------------------------------------------------------------------------------
@op("normal", method=False, differentiable=False)
def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples of the normal distribution ``N(mean, std**2)``, in PyTorch's overloads: tensor
    ``mean`` and/or tensor ``std`` (broadcast together; the result has the dtype of the
    tensor ``mean``, else of ``std``), or numbers ``mean`` and ``std`` with ``size`` (the
    default float dtype unless ``dtype``). The gradient is zero (``NormalBackward1/2/3``)."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one "
                            "of: (Tensor mean, Tensor std), (Tensor mean, float std), (float "
                            "mean, Tensor std), (float mean, float std, tuple of ints size)")
        m, s = _real("normal", "mean", mean), _real("normal", "std", std)
        shape = _creation._size("normal", (size,) if isinstance(size, (tuple, list)) else
                                (size,))
        dt = as_dtype(dtype) if dtype is not None else get_default_dtype()
        _floating_only("normal_kernel_cpu", dt)
        if not s >= 0.0:
            raise RetrogradError(f"normal expects std >= 0.0, but found std {_fmt(s)}")
        z = stream(generator, device or "cpu", "normal").standard_normal(shape)
        return _new(z * s + m, dt, device, requires_grad, "normal")
    if size is not None:
        got = ", ".join(type(a).__name__ for a in (mean, std, size))
        raise TypeError(f"normal() received an invalid combination of arguments - got ({got}),"
                        " but expected one of: (Tensor mean, Tensor std), (Tensor mean, float "
                        "std), (float mean, Tensor std), (float mean, float std, tuple of ints "
                        "size)")
    like = mean if mt else std
    dt = like.dtype
    _floating_only("normal_kernel_cpu", dt)
    if mt and st:
        _creation_check_device("normal", mean, std)
        m_h, s_h = _host(mean), _host(std)
        shape = _broadcast(m_h.shape, s_h.shape)
        if s_h.size and not bool((s_h >= 0).all()):
            raise RetrogradError("normal expects all elements of std >= 0.0")
        z = stream(generator, like.device, "normal").standard_normal(shape)
        out = _new(m_h + s_h * z, dt, like.device)
        _record_zero(NormalBackward3, out, (mean, std))
        return out
    if mt:
        s = _real("normal", "std", std)
        if not s >= 0.0:
            raise RetrogradError(f"normal expects std >= 0.0, but found std {_fmt(s)}")
        m_h = _host(mean)
        z = stream(generator, like.device, "normal").standard_normal(m_h.shape)
        out = _new(m_h + s * z, dt, like.device)
        _record_zero(NormalBackward1, out, (mean,))
        return out
    m = _real("normal", "mean", mean)
    s_h = _host(std)
    if s_h.size and not bool((s_h >= 0).all()):
        raise RetrogradError("normal expects all elements of std >= 0.0")
    z = stream(generator, like.device, "normal").standard_normal(s_h.shape)
    out = _new(m + s_h * z, dt, like.device)
    _record_zero(NormalBackward2, out, (std,))
    return out


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of ``a`` and ``b``; ShapeError in PyTorch's words if none."""
    nd = max(len(a), len(b))
    out = []
    for i in range(nd):
        sa = a[i - nd + len(a)] if i >= nd - len(a) else 1
        sb = b[i - nd + len(b)] if i >= nd - len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            raise ShapeError(f"The size of tensor a ({sa}) must match the size of tensor b "
                             f"({sb}) at non-singleton dimension {i}")
        out.append(sa if sb == 1 else sb)
    return tuple(out)


def _creation_check_device(name: str, a: Tensor, b: Tensor) -> None:
    from ._core import check_device

    check_device(name, a, b)


# -- bernoulli ----------------------------------------------------------------------------
_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (the probabilities "
            "must lie in [0, 1])")


def _check_p_tensor(p_h: Any) -> None:
    if p_h.size and not bool(((p_h >= 0) & (p_h <= 1)).all()):
        raise RetrogradError(_P_RANGE)


def _check_p_number(name: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RetrogradError(f"{name} expects p to be in [0, 1], but got p={_fmt(p)}")


@op("bernoulli", differentiable=False)
def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """Samples 0 or 1 of ``input``'s shape and dtype, 1 with probability ``input`` (a
    floating tensor of probabilities in [0, 1]), or with probability ``p`` when given. The
    gradient is zero (``BernoulliBackward0``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dt = input.dtype
    if p is not None:
        q = _real("bernoulli", "p", p)
        _check_p_number("bernoulli_", q)
        u = stream(generator, input.device, "bernoulli").random(tuple(input.shape))
        out = _new(u < q, dt, input.device)
        record_not_implemented(out, (input,), "bernoulli")
        return out
    _floating_only("bernoulli_tensor_cpu_p_", dt)
    p_h = _host(input)
    _check_p_tensor(p_h)
    u = stream(generator, input.device, "bernoulli").random(p_h.shape)
    out = _new(u < p_h, dt, input.device)
    _record_zero(BernoulliBackward0, out, (input,))
    return out


# -- multinomial --------------------------------------------------------------------------
@op("multinomial", differentiable=False)
def multinomial(input: Tensor, num_samples: Any, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """Indices (int64) of ``num_samples`` categories drawn from each row of ``input`` (1-d:
    one distribution; 2-d: one per row), weighted by its non-negative entries (they need
    not sum to 1); without ``replacement`` no category is drawn twice in a row (the
    zero-weight ones come last, once the others are spent)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(num_samples, bool) or not hasattr(num_samples, "__index__"):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    n = operator.index(num_samples)
    if input.ndim not in (1, 2):
        raise RetrogradError(f"prob_dist must be 1 or 2 dim (got {input.ndim} dims)")
    if not input.dtype.is_floating_point:
        from .promotion import torch_name

        raise RetrogradError(f"multinomial only supports floating-point dtypes for input, got: "
                             f"{torch_name(input.dtype)}")
    if n <= 0:
        raise RetrogradError("cannot sample n_sample <= 0 samples")
    cats = input.shape[-1]
    if not replacement and n > cats:
        raise RetrogradError("cannot sample n_sample > prob_dist.size(-1) samples without "
                             "replacement")
    if cats > 1 << 24:
        raise RetrogradError("number of categories cannot exceed 2^24")
    numpy = _numpy()
    p = _host(input).astype("float64").reshape(-1, cats)
    if p.size and not bool((numpy.isfinite(p) & (p >= 0)).all()):
        raise RetrogradError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(axis=1)
    if p.shape[0] and not bool((total > 0).all()):
        raise RetrogradError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = stream(generator, input.device, "multinomial")
    rows = p.shape[0]
    if replacement:
        cdf = numpy.cumsum(p, axis=1)
        u = rng.random((rows, n)) * total[:, None]
        idx = numpy.empty((rows, n), dtype="int64")
        for r in range(rows):
            idx[r] = numpy.minimum(numpy.searchsorted(cdf[r], u[r], side="right"), cats - 1)
    else:  # the smallest exponential race times E/p: weighted draws without replacement
        with numpy.errstate(divide="ignore"):
            keys = rng.exponential(size=(rows, cats)) / p
        idx = numpy.argsort(keys, axis=1, kind="stable")[:, :n].astype("int64")
    shape = (n,) if input.ndim == 1 else (rows, n)
    return _new(idx.reshape(shape), int64, input.device)


# -- the in-place samplers ----------------------------------------------------------------
def _sample_(name: str, t: Tensor, draw: Any, cls: Any, operands: tuple[Any, ...] = ()) -> Tensor:
    """Overwrite ``t`` with ``draw(shape)`` (host values) through the in-place machinery:
    the version bumps, a leaf requiring grad is refused, and a recorded write gets ``cls``
    (zero gradient to ``t``'s old value and to any tensor operand)."""
    from .inplace import _inplace

    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    drawn: list[Any] = []

    def values() -> Any:
        if not drawn:
            drawn.append(draw(tuple(t.shape)))
        return drawn[0]

    def out_of_place(old: Tensor) -> Tensor:
        data, be = _to_device(values(), t.dtype, t.device)
        out = Tensor(data, be)
        ins = (old,) + tuple(o for o in operands if isinstance(o, Tensor))
        record(cls, out, ins, (), (), tuple(tuple(x.shape) for x in ins))
        return out

    def raw_apply(a: Any) -> None:
        data, be = _to_device(values(), t.dtype, t.device)
        be.ops.assign_(a, data)

    return _inplace(name, t, operands, out_of_place, raw_apply, False)


def _check_continuous(dist: str, dt: DType, c_style: bool) -> None:
    if not dt.is_floating_point:
        from .promotion import c_name, torch_name

        spelled = c_name(dt) if c_style else torch_name(dt)
        raise RetrogradError(f"{dist} distribution is a continuous probability distribution. "
                             f"dtype must be a floating point but you specified {spelled}")


def _finfo_max(dt: DType) -> float:
    return float(_numpy().finfo(dt.name).max)


@op("uniform_", function=False, differentiable=False)
def uniform_(t: Tensor, from_: Any = 0.0, to: Any = 1.0, *, generator: Any = None,
             **kw: Any) -> Tensor:
    """In place: ``t`` filled with samples uniform on ``[from, to)`` (``from`` may be given
    by that name); floating dtypes only. Bumps the version (``UniformBackward0``)."""
    if "from" in kw:
        from_ = kw.pop("from")
    if kw:
        raise TypeError(f"uniform_() got an unexpected keyword argument {next(iter(kw))!r}")
    lo, hi = _real("uniform_", "from", from_), _real("uniform_", "to", to)
    dt = t.dtype
    _floating_only("check_uniform_bounds", dt)
    from .promotion import c_name

    top = _finfo_max(dt)
    if not -top <= lo <= top:
        raise RetrogradError(f"from is out of bounds for {c_name(dt)}")
    if not -top <= hi <= top:
        raise RetrogradError(f"to is out of bounds for {c_name(dt)}")
    if lo > hi:
        raise RetrogradError(f"uniform_ expects to return a [from, to) range, but found "
                             f"from={_fmt(lo)} > to={_fmt(hi)}")
    if hi - lo > top:
        raise RetrogradError(f"uniform_ expects to-from <= std::numeric_limits<{c_name(dt)}>"
                             f"::max(), but found to={_fmt(hi)} and from={_fmt(lo)} which "
                             "result in to-from to exceed the limit")
    rng = stream(generator, t.device, "uniform_")
    return _sample_("uniform_", t, lambda shape: _below_one(rng.random(shape), dt) * (hi - lo)
                    + lo, UniformBackward0)


@op("normal_", function=False, differentiable=False)
def normal_(t: Tensor, mean: Any = 0.0, std: Any = 1.0, *, generator: Any = None) -> Tensor:
    """In place: ``t`` filled with samples of ``N(mean, std**2)``; floating dtypes only.
    Bumps the version (``NormalBackward0``)."""
    m, s = _real("normal_", "mean", mean), _real("normal_", "std", std)
    _floating_only("normal_kernel_cpu", t.dtype)
    if not s >= 0.0:
        raise RetrogradError(f"normal expects std >= 0.0, but found std {_fmt(s)}")
    rng = stream(generator, t.device, "normal_")
    return _sample_("normal_", t, lambda shape: rng.standard_normal(shape) * s + m,
                    NormalBackward0)


@op("bernoulli_", function=False, differentiable=False)
def bernoulli_(t: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """In place: ``t`` (of any dtype) filled with 0 or 1, 1 with probability ``p`` (a number,
    or a floating tensor broadcast to ``t``'s shape). Bumps the version
    (``BernoulliBackward2``; ``BernoulliBackward1`` for a tensor ``p``)."""
    rng = stream(generator, t.device, "bernoulli_")
    if isinstance(p, Tensor):
        _floating_only("bernoulli_tensor_cpu_p_", p.dtype)
        from .inplace import _check_broadcast

        _creation_check_device("bernoulli_", t, p)
        _check_broadcast("bernoulli_", t, p)
        p_h = _host(p)
        _check_p_tensor(p_h)
        return _sample_("bernoulli_", t, lambda shape: rng.random(shape) < p_h,
                        BernoulliBackward1, (p,))
    q = _real("bernoulli_", "p", p)
    _check_p_number("bernoulli_", q)
    return _sample_("bernoulli_", t, lambda shape: rng.random(shape) < q, BernoulliBackward2)


def _int_arg(name: str, v: Any) -> int:
    if isinstance(v, Tensor) and v.ndim == 0 and not v.dtype.is_floating_point:
        v = v.item()
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(v).__name__}), but expected one of: (), (int from, int to), "
                        "(int to)")
    i = operator.index(v)
    if not -(1 << 63) <= i < (1 << 63):
        raise ValueError(f"Overflow when unpacking long long ({name}: {i} does not fit in "
                         "int64)")
    return i


def _random_range(dt: DType) -> tuple[int, int]:
    """The values ``random_()`` draws for ``dt``: ``[lowest, highest]`` (floats: the
    integers the mantissa holds exactly)."""
    if dt is bool_:
        return 0, 1
    if dt.is_floating_point:
        digits = int(_numpy().finfo(dt.name).nmant) + 1
        return -(1 << digits), 1 << digits
    bits = 8 * dt.itemsize - 1
    return -(1 << bits), (1 << bits) - 1


@op("random_", function=False, differentiable=False)
def random_(t: Tensor, *args: Any, generator: Any = None, **kw: Any) -> Tensor:
    """In place: ``t`` filled with integers drawn uniformly: ``random_()`` from ``[0, top]``
    (``top``: the dtype's largest, or for a floating dtype the largest integer its mantissa
    holds exactly, 2**24 for float32), ``random_(to)`` from ``[0, to)``, ``random_(from,
    to)`` from ``[from, to)`` (``to=None``: up to ``top``). Bumps the version
    (``RandomBackward2``, ``RandomBackward1``, ``RandomBackward0``)."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    unknown = set(kw) - {"from", "to"}
    if unknown:
        raise TypeError(f"random_() got an unexpected keyword argument {unknown.pop()!r}")
    vals = list(args)
    if "from" in kw:
        vals = [kw["from"]] + vals
    if "to" in kw:
        vals = vals + [kw["to"]]  # random_(to=n) is random_(n), as in PyTorch
    dt = t.dtype
    low, top = _random_range(dt)
    from .promotion import c_name

    if not vals:
        lo, hi, cls = 0, top + 1, RandomBackward2
        if dt.is_floating_point:
            hi = top + 1
    elif len(vals) == 1:
        lo, hi, cls = 0, _int_arg("random_", vals[0]), RandomBackward1
    else:
        lo = _int_arg("random_", vals[0])
        hi = top + 1 if vals[1] is None else _int_arg("random_", vals[1])
        cls = RandomBackward0
    if lo >= hi:
        raise RetrogradError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                             f">= to={hi}")
    if dt is float16:
        low, top = -65504, 65504
    if not dt.is_floating_point or dt is float16:
        if not low <= lo <= top:
            raise RetrogradError(f"from is out of bounds for {c_name(dt)}")
        if not low <= hi - 1 <= top:
            raise RetrogradError(f"to - 1 is out of bounds for {c_name(dt)}")
    rng = stream(generator, t.device, "random_")
    return _sample_("random_", t, lambda shape: rng.integers(lo, hi, size=shape,
                                                             dtype="int64"), cls)


@op("exponential_", function=False, differentiable=False)
def exponential_(t: Tensor, lambd: Any = 1.0, *, generator: Any = None) -> Tensor:
    """In place: ``t`` filled with samples of the exponential distribution of rate
    ``lambd``; floating dtypes only. Bumps the version (``ExponentialBackward0``)."""
    lam = _real("exponential_", "lambd", lambd)
    _check_continuous("Exponential", t.dtype, False)
    if not lam > 0.0:
        raise RetrogradError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lam)}")
    rng = stream(generator, t.device, "exponential_")
    return _sample_("exponential_", t, lambda shape: rng.exponential(1.0 / lam, shape),
                    ExponentialBackward0)


@op("geometric_", function=False, differentiable=False)
def geometric_(t: Tensor, p: Any, *, generator: Any = None) -> Tensor:
    """In place: ``t`` filled with the number of Bernoulli(``p``) trials up to and including
    the first success (1, 2, ...). Bumps the version (``GeometricBackward0``)."""
    q = _real("geometric_", "p", p)
    if not 0.0 < q < 1.0:
        raise RetrogradError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(q)}")
    rng = stream(generator, t.device, "geometric_")
    return _sample_("geometric_", t, lambda shape: rng.geometric(q, shape),
                    GeometricBackward0)


@op("cauchy_", function=False, differentiable=False)
def cauchy_(t: Tensor, median: Any = 0.0, sigma: Any = 1.0, *,
            generator: Any = None) -> Tensor:
    """In place: ``t`` filled with samples of the Cauchy distribution of location ``median``
    and scale ``sigma``; floating dtypes only. Bumps the version (``CauchyBackward0``)."""
    m, s = _real("cauchy_", "median", median), _real("cauchy_", "sigma", sigma)
    _check_continuous("Cauchy", t.dtype, True)
    if not s > 0.0:
        raise RetrogradError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(s)}")
    rng = stream(generator, t.device, "cauchy_")
    return _sample_("cauchy_", t, lambda shape: rng.standard_cauchy(shape) * s + m,
                    CauchyBackward0)


@op("log_normal_", function=False, differentiable=False)
def log_normal_(t: Tensor, mean: Any = 1.0, std: Any = 2.0, *,
                generator: Any = None) -> Tensor:
    """In place: ``t`` filled with ``exp`` of samples of ``N(mean, std**2)``; floating
    dtypes only. Bumps the version (``LogNormalBackward0``)."""
    m, s = _real("log_normal_", "mean", mean), _real("log_normal_", "std", std)
    _floating_only("log_normal_cpu", t.dtype)
    if not s > 0.0:
        raise RetrogradError(f"log_normal_ expects std > 0.0, but found std={_fmt(s)}")
    rng = stream(generator, t.device, "log_normal_")
    return _sample_("log_normal_", t, lambda shape: rng.lognormal(m, s, shape),
                    LogNormalBackward0)

