"""retrograd over JAX arrays: ``device="jax"``.

JAX arrays are immutable: ``x[0] = 1`` raises and ``x += y`` makes a new array, so the
backend declares ``Capabilities(inplace=False)`` and retrograd writes in place through its
functional path instead (``retrograd.ops.writes``: the tensor's array is replaced by a new
one, and a view's base and its other views are rebuilt from it) -- chosen once, from the
declaration, never a silent no-op.

float64: JAX computes in float32 unless its own switch ``jax_enable_x64`` is on. retrograd
promises PyTorch's dtypes (float64 tensors, int64 indices), so importing this backend turns
the switch on for the process -- the choice JAX documents for double precision
(https://docs.jax.dev/en/latest/default_dtypes.html). JAX's own default dtype is then
float64, but retrograd passes a dtype to every array it makes, so its defaults stay
PyTorch's.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

from retrograd.backends import ArrayAPIBackend, Capabilities  # noqa: E402

__all__ = ["JaxBackend", "backend", "conformance_xfails"]


def _index_backward(g: Any, shape: tuple[int, ...], key: Any) -> Any:
    """The gradient of ``x[key]`` w.r.t. ``x``: ``g`` added at the positions ``key`` selects,
    repeated positions adding up (JAX's functional scatter-add, ``.at[].add``)."""
    return jnp.zeros(shape, dtype=g.dtype).at[key].add(g)


def _put_flat(base: Any, positions: Any, values: Any) -> Any:
    """``base`` with the elements at the flat ``positions`` replaced by ``values``, as a new
    array (JAX's ``.at[].set``): how a write through a view reaches its base here."""
    flat = jnp.ravel(base).at[jnp.ravel(positions)].set(
        jnp.ravel(values).astype(base.dtype))
    return flat.reshape(base.shape)


# JAX's own float32 tanh, sinh, cosh and expm1 on the CPU are up to 5, 25, 25 and 6.5 ulps off
# (its table: https://docs.jax.dev/en/latest/accuracy.html), past the conformance suite's
# accuracy bound of 4 ulps, and tanh's derivative ``1 - y^2`` turns 4 ulps into 2% near
# saturation. In float64 and rounded once they are correctly rounded but for rare ties.
def _via_float64(fn: Any) -> Any:
    def kernel(x: Any) -> Any:
        if x.dtype == jnp.float32:
            return fn(x.astype(jnp.float64)).astype(jnp.float32)
        return fn(x)
    kernel.__doc__ = f"``{fn.__name__}``, a float32 input computed in float64 and rounded."
    return kernel


def _sinh(x: Any) -> Any:
    """``sinh`` from ``exp`` (``expm1`` below 1): JAX's float64 sinh is up to 496 ulps off on
    the CPU (https://docs.jax.dev/en/latest/accuracy.html)."""
    a = jnp.abs(x)
    e = jnp.exp(a)
    m = jnp.expm1(a)
    small = 0.5 * (m + m / (m + 1.0))
    large = 0.5 * (e - 1.0 / e)
    return jnp.sign(x) * jnp.where(a < 1.0, small, large)


def _cosh(x: Any) -> Any:
    """``cosh`` as ``(e + 1/e) / 2``, ``e = exp(|x|)``: JAX's float64 cosh is up to 496 ulps
    off on the CPU (https://docs.jax.dev/en/latest/accuracy.html)."""
    e = jnp.exp(jnp.abs(x))
    return 0.5 * (e + 1.0 / e)


def _log1p(x: Any) -> Any:
    """``log1p`` as ``log(u) * x / (u - 1)``, ``u = 1 + x`` (``x`` where ``u`` rounds to 1):
    JAX's float64 log1p was 128 ulps off at x = -0.414 (-0.5347778859000596; exact:
    -0.5347778859000738), found by the conformance suite's accuracy rows."""
    u = 1.0 + x
    d = u - 1.0
    safe = jnp.where(d == 0.0, jnp.ones_like(d), d)
    return jnp.where(d == 0.0, x, jnp.log(u) * (x / safe))


_ACCURATE = {"tanh": _via_float64(jnp.tanh), "expm1": _via_float64(jnp.expm1),
             "sinh": _via_float64(_sinh), "cosh": _via_float64(_cosh), "log1p": _log1p}


class JaxBackend(ArrayAPIBackend):
    """Tensors stored as ``jax.Array`` on JAX's CPU device."""

    def __init__(self) -> None:
        super().__init__(jnp, name="jax", device=jax.devices("cpu")[0],
                         capabilities=Capabilities(inplace=False, lazy=False, memory="host",
                                                   devices=("cpu",)),
                         overrides={"index_backward": _index_backward, "put_flat": _put_flat,
                                    **_ACCURATE},
                         array_type=jax.Array)

    def trim_caches(self) -> None:
        """``jax.clear_caches()``: JAX compiles each primitive for each new shape and keeps
        every program (its caches count entries, not bytes: jax-ml/jax#10828); the
        conformance suite's thousands of shapes grew one process past 24 GB without it."""
        jax.clear_caches()

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array of the array's values."""
        if isinstance(array, np.ndarray):
            return array
        return np.asarray(array)


def conformance_xfails() -> str:
    """The path of the xfails file to give ``retrograd-conformance --xfails-file``."""
    return str(resources.files(__name__) / "xfails.txt")


backend = JaxBackend()
