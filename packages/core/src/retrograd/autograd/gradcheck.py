"""Finite-difference checks of analytical gradients (float64), as PyTorch's gradcheck."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import RetrogradError

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RetrogradError):
    """The analytical and numerical Jacobians differ."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(t: Any) -> Any:
    from ..backends.host import xp as np

    return np.array(t.backend.to_numpy(t._data), dtype=np.float64)


def _numerical_jacobian(fn: Callable[..., Any], inputs: tuple[Any, ...], eps: float
                        ) -> list[list[Any]]:
    """J[i][j]: d output_j / d input_i, by central differences on host copies."""
    from ..backends.host import xp as np
    from ..tensor import Tensor

    # not under no_grad: fn may itself differentiate (gradgradcheck's first derivative)
    base_outs = _as_tuple(fn(*inputs))
    jac: list[list[Any]] = []
    for inp in inputs:
        if not (isinstance(inp, Tensor) and inp._requires_grad):
            jac.append([None] * len(base_outs))
            continue
        n = inp.numel()
        cols = [np.zeros((n, max(o.numel(), 1))) for o in base_outs]
        flat = _host(inp).reshape(-1)
        orig = inp._data
        for k in range(n):
            vals = []
            for sign in (1.0, -1.0):
                pert = flat.copy()
                pert[k] += sign * eps
                inp._data = inp.backend.asarray(pert.reshape(inp.shape), inp.dtype)
                outs = _as_tuple(fn(*inputs))
                vals.append([_host(o).reshape(-1) for o in outs])
            inp._data = orig
            for j in range(len(base_outs)):
                cols[j][k, :] = (vals[0][j] - vals[1][j]) / (2 * eps)
        jac.append(cols)
    return jac


def _analytical_jacobian(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> list[list[Any]]:
    from ..backends.host import xp as np
    from ..tensor import Tensor
    from .api import grad

    outs = _as_tuple(fn(*inputs))
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t._requires_grad]
    jac: list[list[Any]] = []
    per_input = {id(t): [np.zeros((t.numel(), max(o.numel(), 1))) for o in outs]
                 for t in diff_inputs}
    for j, out in enumerate(outs):
        if not out._requires_grad:
            continue
        m = out.numel()
        for r in range(m):
            seed = np.zeros(m)
            seed[r] = 1.0
            seed_t = Tensor(out.backend.asarray(seed.reshape(out.shape), out.dtype),
                            out.backend)
            gs = grad(out, diff_inputs, seed_t, retain_graph=True, allow_unused=True)
            for t, g in zip(diff_inputs, gs):
                if g is not None:
                    per_input[id(t)][j][:, r] = _host(g).reshape(-1)
    for inp in inputs:
        if isinstance(inp, Tensor) and inp._requires_grad:
            jac.append(per_input[id(inp)])
        else:
            jac.append([None] * len(outs))
    return jac


def gradcheck(fn: Callable[..., Any], inputs: Sequence[Any] | Any, *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Compare the gradients of ``fn`` at ``inputs`` with central finite differences.

    Inputs that require grad should be float64. Returns True, or raises ``GradcheckError``
    naming the input, the output and the worst entry (or returns False with
    ``raise_exception=False``).
    """
    from ..backends.host import xp as np
    from ..tensor import Tensor

    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._requires_grad and t.dtype.name != "float64":
            import warnings

            warnings.warn(f"gradcheck: input {i} is {t.dtype}, not float64; the check may "
                          "fail from rounding alone", stacklevel=2)
    analytical = _analytical_jacobian(fn, inputs)
    numerical = _numerical_jacobian(fn, inputs, eps)
    for i, (a_cols, n_cols) in enumerate(zip(analytical, numerical)):
        for j, (a, n) in enumerate(zip(a_cols, n_cols)):
            if a is None or n is None:
                continue
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                worst = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
                msg = (f"Jacobian mismatch for output {j} with respect to input {i}: worst "
                       f"entry {tuple(int(w) for w in worst)} analytical {a[worst]!r} vs "
                       f"numerical {n[worst]!r}\nanalytical:\n{a}\nnumerical:\n{n}")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Sequence[Any] | Any,
                  grad_outputs: Sequence[Any] | None = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  seed: int = 0) -> bool:
    """Check second derivatives: gradcheck of ``v -> grad(fn(x), x, v, create_graph=True)``."""
    from ..backends.host import xp as np
    from ..tensor import Tensor
    from .api import grad

    inputs = _as_tuple(inputs)
    outs = _as_tuple(fn(*inputs))
    rng = np.random.default_rng(seed)
    if grad_outputs is None:
        grad_outputs = tuple(
            Tensor(o.backend.asarray(rng.standard_normal(o.shape), o.dtype), o.backend,
                   True)
            for o in outs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]

    def first_derivative(*args: Any) -> tuple[Any, ...]:
        xs, vs = args[:n_in], args[n_in:]
        ys = _as_tuple(fn(*xs))
        pairs = [(y, v) for y, v in zip(ys, vs) if y._requires_grad]
        gs = grad([p[0] for p in pairs], [xs[i] for i in diff_idx], [p[1] for p in pairs],
                  create_graph=True, allow_unused=True, materialize_grads=True)
        return tuple(gs)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps,
                     atol=atol, rtol=rtol, raise_exception=raise_exception)
