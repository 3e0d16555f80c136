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


class JaxBackend(ArrayAPIBackend):
    """Tensors stored as ``jax.Array`` on JAX's CPU device."""

    def __init__(self) -> None:
        super().__init__(jnp, name="jax", device=jax.devices("cpu")[0],
                         capabilities=Capabilities(inplace=False, lazy=False, memory="host",
                                                   devices=("cpu",)),
                         overrides={"index_backward": _index_backward, "put_flat": _put_flat},
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
