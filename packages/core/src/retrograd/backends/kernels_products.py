"""Reference kernels of the products ops (see ``ops/products.py``), in Array-API calls on
``xp``; ``reference_kernels`` merges them into every backend's table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["kernels"]


def _composed_einsum(xp: Any, equation: str, *arrays: Any) -> Any:
    """``einsum`` for a namespace without one: each operand's repeated subscripts are reduced
    to their diagonal (times an identity, summed), the operands are aligned on every subscript
    and multiplied, and the subscripts absent from the output are summed. The equation is
    explicit (``->``), without ``...``, and the sizes of one subscript agree."""
    lhs, out = equation.split("->")
    subs = lhs.split(",")
    letters: list[str] = []
    for s in subs:
        for c in s:
            if c not in letters:
                letters.append(c)
    terms = []
    for s, a in zip(subs, arrays):
        cur = list(s)
        while len(set(cur)) != len(cur):
            c = next(c for c in cur if cur.count(c) > 1)
            i = cur.index(c)
            j = cur.index(c, i + 1)
            n = a.shape[i]
            shape = [1] * a.ndim
            shape[i] = shape[j] = n
            a = xp.sum(a * xp.reshape(xp.eye(n, dtype=a.dtype), tuple(shape)), axis=j)
            del cur[j]
        order = [cur.index(c) for c in letters if c in cur]
        a = xp.permute_dims(a, tuple(order)) if order != list(range(len(order))) else a
        present = [c for c in letters if c in cur]
        aligned = tuple(a.shape[present.index(c)] if c in cur else 1 for c in letters)
        terms.append(xp.reshape(a, aligned))
    prod = terms[0]
    for t in terms[1:]:
        prod = prod * t
    summed = tuple(i for i, c in enumerate(letters) if c not in out)
    kept = [c for c in letters if c in out]
    if summed:
        prod = xp.sum(prod, axis=summed)
    if not out:
        return prod
    return xp.permute_dims(prod, tuple(kept.index(c) for c in out))


def kernels(xp: Any) -> dict[str, Callable[..., Any]]:
    """The products kernels on ``xp``."""
    native = getattr(xp, "einsum", None)

    def einsum(equation: str, *arrays: Any) -> Any:
        if native is not None:
            return xp.asarray(native(equation, *arrays))
        return _composed_einsum(xp, equation, *arrays)

    def eye_like(n: int, like: Any) -> Any:
        return xp.eye(n, dtype=like.dtype)

    def ones_vector_like(n: int, like: Any) -> Any:
        return xp.ones((n,), dtype=like.dtype)

    return {"einsum": einsum, "eye_like": eye_like, "ones_vector_like": ones_vector_like}
