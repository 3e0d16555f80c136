"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in PyTorch.

Subclasses implement ``step``. Every update runs under ``no_grad()`` and changes parameters
in place, so a parameter stays the same leaf object (its ``AccumulateGrad`` node, the model's
references to it and the optimizer's state all stay valid) and its version counter moves:
a graph built before the step that saved the parameter refuses to run backward after it
(``VersionMismatch``) instead of using the new values silently.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

from .. import grad_mode
from ..tensor import Tensor

__all__ = ["Optimizer", "ParamState"]


class ParamState(MutableMapping[Tensor, dict[str, Any]]):
    """Per-parameter state keyed by the parameter object itself (by identity: tensors compare
    elementwise, so they cannot be ordinary dict keys)."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Tensor, dict[str, Any]]] = {}

    def __getitem__(self, param: Tensor) -> dict[str, Any]:
        found = self._items.get(id(param))
        if found is None or found[0] is not param:
            raise KeyError("no state for this parameter yet")
        return found[1]

    def __setitem__(self, param: Tensor, value: dict[str, Any]) -> None:
        self._items[id(param)] = (param, value)

    def __delitem__(self, param: Tensor) -> None:
        del self._items[id(param)]

    def __iter__(self) -> Iterator[Tensor]:
        return (param for param, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def setdefault_for(self, param: Tensor) -> dict[str, Any]:
        """The state dict of ``param``, created empty on first use."""
        found = self._items.get(id(param))
        if found is None or found[0] is not param:
            state: dict[str, Any] = {}
            self._items[id(param)] = (param, state)
            return state
        return found[1]


class Optimizer:
    """Base class. ``params`` is an iterable of tensors or of dicts (parameter groups) that
    may override the ``defaults`` per group, e.g. ``[{"params": a}, {"params": b, "lr": 0.1}]``.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        # the constructor's hyperparameters first, as PyTorch's optimizers check theirs before
        # looking at the parameters (the values a group overrides are not checked, as there)
        self._validate_group(defaults)
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        self.defaults = dict(defaults)
        self.state = ParamState()
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (e.g. layers unfrozen during fine-tuning) with its own hyperparameters."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]  # KeyError when missing, as in PyTorch
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets changes between runs; use a list instead"
            )
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error (as in PyTorch, see "
                "github.com/pytorch/pytorch/issues/40967)",
                stacklevel=3,
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        group["params"] = params
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def _validate_group(self, group: dict[str, Any]) -> None:
        """Subclasses check their hyperparameters (the constructor's) here, with PyTorch's
        ValueErrors; called before the parameters are looked at."""
        if group.get("lr", 0.0) < 0.0:
            raise ValueError(f"Invalid learning rate: {group['lr']}")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget gradients before the next backward. ``set_to_none=True`` (default, as in
        PyTorch) sets ``.grad = None``, which frees memory and lets the next backward store its
        gradient instead of adding to zeros; ``False`` zeroes the existing tensors in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    if grad.grad_fn is not None:
                        grad = grad.detach()
                        p.grad = grad
                    with grad_mode.no_grad():
                        grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once. ``closure`` (re-evaluating the loss) is optional."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    def _update_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- saving and loading ----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters replaced by
        their position, PyTorch's layout, so a state loads into a freshly built optimizer."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by ``state_dict`` (tensors are cloned)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        by_index: dict[int, Tensor] = {}
        for saved, group in zip(groups, self.param_groups, strict=True):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of the optimizer's group"
                )
            for i, p in zip(saved["params"], group["params"], strict=True):
                by_index[i] = p
            for key, value in saved.items():
                if key != "params":
                    group[key] = value
        self.state = ParamState()
        for i, saved_state in state_dict["state"].items():
            p = by_index[int(i)]
            self.state[p] = {
                k: (v.detach().clone().to(p.device) if isinstance(v, Tensor) else v)
                for k, v in saved_state.items()
            }

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)
