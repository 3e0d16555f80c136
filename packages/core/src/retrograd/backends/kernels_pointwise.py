"""Reference kernels of the pointwise ops (see ``ops/pointwise.py``), written in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .put import put

__all__ = ["kernels"]


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The pointwise kernels on ``xp``."""

    def reciprocal(x: Any) -> Any:
        return 1 / x

    def rsqrt(x: Any) -> Any:
        return 1 / xp.sqrt(x)

    def erf(x: Any) -> Any:
        """The error function: ``x * S(x*x)`` for ``|x| < 0.5``, ``S`` the Maclaurin series
        of ``erf(x) / x`` in ``x*x`` to the 11th power (the first term left out is below
        6e-18 relative); ``1 - erfc(|x|)``, with the sign of ``x``, for ``0.5 <= |x| < 6``,
        ``erfc`` by W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 1969):
        ``exp(-y*y) * R(y)`` below 4 and ``exp(-y*y) / y * (1/sqrt(pi) - R(1/y^2) / y^2)``
        from 4; +-1 from 6 (erfc(6) is below half an ulp of 1). ``exp(-y*y)`` is taken as
        ``exp(-s*s) * exp(-(y - s)(y + s))`` with ``s`` ``y`` rounded down to 1/16, whose
        square is exact. About 1 ulp in float64; a narrower float computes in float64 and is
        rounded once. NaN stays NaN, -0.0 stays -0.0.

        The two common ranges are evaluated over the whole array and selected (cheaper than
        gathering each range's elements); the tail only where present."""
        dt = x.dtype
        flat = xp.reshape(x, (-1,))
        n = flat.shape[0]
        out = xp.empty((n,), dtype=xp.float64)
        for lo in range(0, n, _ERF_BLOCK):  # blocks: small temporaries, reused memory
            hi = min(lo + _ERF_BLOCK, n)
            out = put(out, slice(lo, hi), _erf_block(xp, xp.astype(flat[lo:hi], xp.float64,
                                                                  copy=True)))
        out = xp.reshape(out, x.shape)
        return out if dt == xp.float64 else xp.astype(out, dt)

    def gelu_backward(g: Any, x: Any, approximate: str) -> Any:
        """``g`` times GELU's derivative at ``x`` (PyTorch's ``gelu_backward``): exact,
        ``cdf + x * pdf`` of the standard normal; ``"tanh"``, the derivative of ``0.5 x (1 +
        tanh(k (x + 0.044715 x^3)))``. Computed block by block in arrays the kernel owns
        (a dozen passes in cache instead of as many full-size temporaries); float16 and
        bfloat16 in float32, rounded once."""
        dt = x.dtype
        work = dt if dt in (xp.float32, xp.float64) else xp.float32
        shape = tuple(xp.broadcast_arrays(g, x)[0].shape)
        gf = xp.reshape(xp.broadcast_to(g, shape), (-1,))
        xf = xp.reshape(xp.broadcast_to(x, shape), (-1,))
        n = xf.shape[0]
        out = xp.empty((n,), dtype=work)
        block = _gelu_tanh_block if approximate == "tanh" else _gelu_exact_block
        for lo in range(0, n, _ERF_BLOCK):
            hi = min(lo + _ERF_BLOCK, n)
            d = block(xp, xp.astype(xf[lo:hi], work, copy=True))
            d *= xp.astype(gf[lo:hi], work)
            out = put(out, slice(lo, hi), d)
        out = xp.reshape(out, shape)
        return out if work == dt else xp.astype(out, dt)

    def gelu(x: Any, approximate: str) -> Any:
        """GELU at the float32/float64 ``x`` in the op's order of operations: exact, ``(0.5
        x) (1 + erf(x / sqrt(2)))`` (``erf`` rounded to x's dtype); ``"tanh"``, ``(0.5 x) (1
        + tanh(b (x + k x^3)))``. Block by block in arrays the kernel owns, as
        ``gelu_backward``."""
        flat = xp.reshape(x, (-1,))
        n = flat.shape[0]
        out = xp.empty((n,), dtype=x.dtype)
        block = _gelu_tanh_value if approximate == "tanh" else _gelu_exact_value
        for lo in range(0, n, _ERF_BLOCK):
            hi = min(lo + _ERF_BLOCK, n)
            out = put(out, slice(lo, hi), block(xp, flat[lo:hi]))
        return xp.reshape(out, x.shape)

    def isin(a: Any, b: Any, invert: bool) -> Any:
        """Whether each element of ``a`` is among the elements of ``b`` (same dtype): every
        pair compared, ``a.size * b.size`` booleans at once."""
        flat_a = xp.reshape(a, (-1, 1))
        flat_b = xp.reshape(b, (1, -1))
        found = xp.any(flat_a == flat_b, axis=1)
        if invert:
            found = xp.logical_not(found)
        return xp.reshape(found, a.shape)

    def masked_fill(x: Any, mask: Any, value: Any) -> Any:
        """``x`` with ``value`` (a number, or a 0-d array of ``x``'s dtype) where ``mask``
        holds; ``x`` and ``mask`` broadcast together."""
        if isinstance(value, (bool, int, float)):
            value = xp.asarray(value, dtype=x.dtype)
        return xp.where(mask, value, x)

    def eye(n: int, m: int, dtype: Any) -> Any:
        return xp.eye(n, m, dtype=dtype)

    def repeat(x: Any, reps: tuple[int, ...]) -> Any:
        """``x`` (already of ``len(reps)`` dimensions) repeated ``reps[i]`` times along axis
        i: each axis paired with a new one before it, broadcast, then merged."""
        shape = x.shape
        paired: list[int] = []
        wide: list[int] = []
        for r, s in zip(reps, shape):
            paired += [1, s]
            wide += [r, s]
        y = xp.broadcast_to(xp.reshape(x, tuple(paired)), tuple(wide))
        return xp.reshape(y, tuple(r * s for r, s in zip(reps, shape)))

    return {
        "log1p": xp.log1p,
        "expm1": xp.expm1,
        "reciprocal": reciprocal,
        "rsqrt": rsqrt,
        "floor": xp.floor,
        "tan": xp.tan,
        "sinh": xp.sinh,
        "cosh": xp.cosh,
        "asin": xp.asin,
        "acos": xp.acos,
        "atan": xp.atan,
        "atan2": xp.atan2,
        "erf": erf,
        "gelu": gelu,
        "gelu_backward": gelu_backward,
        "signbit": xp.signbit,
        "isin": isin,
        "masked_fill": masked_fill,
        "eye": eye,
        "repeat": repeat,
    }


# erf(x) / x = 2/sqrt(pi) * sum_n (-x^2)^n / (n! (2n + 1)), its terms to n = 11, highest first
_ERF_SERIES = tuple(2.0 / math.sqrt(math.pi) * (-1.0) ** n / (math.factorial(n) * (2 * n + 1))
                    for n in range(11, -1, -1))
_ERF_BLOCK = 32768  # elements per block: the temporaries stay small
_ERF_ONE = 6.0  # erf(6) rounds to 1 in float64
_INV_SQRT_PI = 0.56418958354775628695
# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969) 631-637: the coefficients of erfc's two ranges, numerator then denominator, in
# Horner order (a leading denominator coefficient of 1 left out).
_ERF_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
          6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
          1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
          1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)


def _erf_block(xp: Any, a: Any) -> Any:
    """``erf`` of the float64 vector ``a`` (see the kernel)."""
    y = xp.abs(a)
    inner = a * _horner(xp, a * a, _ERF_SERIES)
    near = y < 4.0
    out = xp.copysign(_one_minus(xp, _ratio(xp, xp.where(near, y, 1.0), _ERF_C, _ERF_D), y), a)
    out = xp.where(y < 0.5, inner, out)
    if not bool(xp.all(near | xp.isnan(y))):
        # the tail at every element, kept where |a| >= 4: a selection y[far] would have a
        # size known only from the values, which a lazy library (Dask) cannot plan with
        far = y >= 4.0
        yt = xp.clip(y, 4.0, _ERF_ONE)
        t = 1.0 / (yt * yt)
        r = (_INV_SQRT_PI - t * _ratio(xp, t, _ERF_P, _ERF_Q)) / yt
        tail = _one_minus(xp, r, yt)
        out = xp.where(far, xp.copysign(xp.where(yt < _ERF_ONE, tail, 1.0), a), out)
    return out


_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K_BETA = math.sqrt(2.0 / math.pi)
_K_KAPPA = 0.044715


def _gelu_tanh_value(xp: Any, x: Any) -> Any:
    """The tanh form at the vector ``x`` (not written): ``(0.5 x) (1 + tanh(b (x + k
    x^3)))``, each step rounded as the op's formula rounds it."""
    inner = x * x
    inner *= x
    inner *= _K_KAPPA
    inner += x
    inner *= _K_BETA
    t = xp.tanh(inner)
    t += 1.0
    t *= x * 0.5
    return t


def _gelu_exact_value(xp: Any, x: Any) -> Any:
    """The exact form at the vector ``x`` (not written): ``(0.5 x) (1 + erf(x / sqrt(2)))``
    with ``erf`` rounded to x's dtype, as the op's formula rounds it."""
    e = xp.astype(_erf_block(xp, xp.astype(x * _SQRT1_2, xp.float64)), x.dtype)
    e += 1.0
    e *= x * 0.5
    return e


def _gelu_tanh_block(xp: Any, x: Any) -> Any:
    """The tanh form's derivative at the vector ``x`` (owned), in PyTorch's order of
    operations: with ``t = tanh(b (x + k x^3))``, ``0.5 (1 + t) + (0.5 x) (1 - t^2) b (1 + 3 k
    x^2)``."""
    x2 = x * x
    inner = x2 * x
    inner *= _K_KAPPA
    inner += x
    inner *= _K_BETA
    t = xp.tanh(inner)
    x2 *= 3.0 * _K_KAPPA
    x2 += 1.0
    x2 *= _K_BETA  # b (1 + 3 k x^2)
    square = t * t
    right = x * 0.5
    square *= -1.0
    square += 1.0
    right *= square
    right *= x2
    t += 1.0
    t *= 0.5
    t += right
    return t


def _gelu_exact_block(xp: Any, x: Any) -> Any:
    """The exact form's derivative at the vector ``x`` (owned, overwritten): ``Phi(x) + x
    phi(x)`` with ``Phi(x) = 0.5 (1 + erf(x / sqrt(2)))`` (``erf`` rounded to x's dtype, as
    the op's) and ``phi(x) = exp(-x^2 / 2) / sqrt(2 pi)``."""
    cdf = xp.astype(_erf_block(xp, xp.astype(x * _SQRT1_2, xp.float64)), x.dtype)
    cdf += 1.0  # in x's dtype, as the erf op's result is
    cdf *= 0.5
    pdf = x * x
    pdf *= -0.5
    pdf = xp.exp(pdf)
    pdf *= _INV_SQRT_2PI
    pdf *= x
    pdf += cdf
    return pdf


def _ratio(xp: Any, t: Any, num: tuple[float, ...], den: tuple[float, ...]) -> Any:
    """``num(t) / den(t)`` by Horner's rule, in arrays this function owns (``den`` monic:
    its leading 1 is implicit)."""
    n = t * num[0]
    d = t + den[0]
    for c in num[1:-1]:
        n += c
        n *= t
    for c in den[1:]:
        d *= t
        d += c
    n += num[-1]
    n /= d
    return n


def _horner(xp: Any, t: Any, coefs: tuple[float, ...]) -> Any:
    """The polynomial ``coefs`` (highest degree first) at ``t``, in an array it owns."""
    p = t * coefs[0]
    for c in coefs[1:-1]:
        p += c
        p *= t
    p += coefs[-1]
    return p


def times_exp_neg_square(xp: Any, r: Any, y: Any) -> Any:
    """``r * exp(-y*y)`` (``r`` owned and overwritten), with ``exp(-y*y)`` as
    ``exp(-s*s) * exp(-(y - s)(y + s))``, ``s`` ``y`` rounded down to a multiple of 1/16:
    ``y*y`` itself would round, and ``exp`` turns that rounding into a relative error of
    ``y*y`` ulps."""
    s = xp.floor(y * 16.0) / 16.0
    r *= xp.exp(-(s * s))
    r *= xp.exp(-((y - s) * (y + s)))
    return r


def _one_minus(xp: Any, r: Any, y: Any) -> Any:
    """``erf(y) = 1 - exp(-y*y) * r`` (``r`` owned and overwritten)."""
    r = times_exp_neg_square(xp, r, y)
    return (0.5 - r) + 0.5


def erfc_mid(xp: Any, y: Any) -> Any:
    """``erfc(y)`` for float64 ``y`` in [0.5, 4]: Cody's ``exp(-y*y) * r(y)`` itself, not ``1 -
    erf(y)``, which cancels (98 ulps at y = 1.9)."""
    return times_exp_neg_square(xp, _ratio(xp, y, _ERF_C, _ERF_D), y)
