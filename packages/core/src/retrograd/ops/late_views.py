"""Views taken while their base needed no gradient, woken when the base comes to need one.

A view op on a tensor that does not require grad records nothing: its cost stays close to the
array library's view. PyTorch still knows such a tensor is a view of its base, and when the
base later needs gradient the view follows it:

- an in-place op that gives the base a history (``x.add_(r)``, or one through another view of
  it) makes every earlier view of it require grad, its ``grad_fn`` taken again from the base's
  new history on next use (PyTorch's ``AsStridedBackward0``): ``v = x[1]; x.add_(r);
  v.backward()`` reaches ``r``. Without this the view would stay a constant and the gradient
  would be silently wrong;
- ``x.requires_grad_()`` on the base makes the view require grad with no history of its own
  (a gradient reaching it goes nowhere, an in-place op on it is refused), until a later
  in-place op on the data takes it again from the base; ``requires_grad_(False)`` undoes it;
- a view made under no_grad is refused on next use instead, with PyTorch's words.

For that the root base keeps a weak registry of its plain views (``register``, from
``ops.shape._view_result``), and the places that give a base gradient call ``wake``. A woken
view's steps from its base were not recorded: they are read off the memory layout when first
needed (``LAZY``, resolved by ``ops.view_inplace.chain_of``). A detached alias (``detach()``,
``.data``) is not registered: PyTorch does not take it again either.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..tensor import Tensor, _create_lock

__all__ = ["LAZY", "register", "is_registered", "wake"]

# A view chain not recorded but read off the memory layout when first needed.
LAZY: tuple[tuple[str, Any], ...] = ()

# registries of these lengths drop their dead entries: amortised O(1), so a loop taking
# slices of one buffer keeps its registry small
_PRUNE_AT = frozenset(1 << k for k in range(6, 63))
_ref = weakref.ref


def register(view: Tensor, root: Tensor) -> None:
    """Remember ``view`` (just made from ``root`` or from a registered view of it, neither
    needing gradient) weakly with ``root``, for ``wake``. Every plain view op pays this
    (~0.2 us): written flat."""
    ex = root._extra
    reg = None if ex is None else ex.plain_views
    if reg is None:
        reg = _new_registry(root)
    reg[id(view)] = _ref(view)
    if len(reg) in _PRUNE_AT:  # in place: a view another thread registers meanwhile stays
        with _create_lock:
            for k, r in list(reg.items()):
                if r() is None:
                    reg.pop(k, None)


def _new_registry(root: Tensor) -> dict[int, Any]:
    ex = root._x()
    new: dict[int, Any] = {}
    with _create_lock:
        reg = ex.plain_views
        if reg is None:
            reg = ex.plain_views = new
    return reg


def is_registered(t: Tensor) -> bool:
    """Whether ``t`` is a plain view registered with its base (not a detached alias)."""
    b = t._base
    reg = b._extra.plain_views if b is not None and b._extra is not None else None
    if not reg:
        return False
    r = reg.get(id(t))
    return r is not None and r() is t


def wake(root: Tensor, stale: bool) -> None:
    """``root`` now needs gradient: its registered views require grad (or, after
    ``requires_grad_(False)``, no longer do). ``stale``: ``root``'s data was changed by an
    in-place op that gave it history, so each view takes its history again from ``root`` on
    next use (a view made under no_grad is refused there); otherwise the views keep no
    history until the data next changes."""
    ex = root._extra
    reg = ex.plain_views if ex is not None else None
    if not reg:
        return
    from .._version import rebased_of

    needs = root._requires_grad
    epoch = rebased_of(root._counter())
    for r in list(reg.values()):
        v = r()
        if v is None or v._base is not root or v.grad_fn is not None:
            continue
        vx = v._x()
        if vx.view_creation is None:
            if vx.view_chain is None:
                vx.view_chain = LAZY
        elif vx.view_creation != "no_grad_plain":
            continue
        vx.view_epoch = -1 if stale else epoch
        v._requires_grad = needs
