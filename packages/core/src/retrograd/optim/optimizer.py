"""``Optimizer``: parameter groups, per-parameter state and ``zero_grad``, as in PyTorch.

Subclasses implement ``step``. Every update runs under ``no_grad()`` and changes parameters
in place, so a parameter stays the same leaf object (its ``AccumulateGrad`` node, the model's
references to it and the optimizer's state all stay valid) and its version counter moves:
a graph built before the step that saved the parameter refuses to run backward after it
(``VersionMismatch``) instead of using the new values silently.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, cast

from .. import grad_mode
from ..tensor import Tensor

__all__ = ["Optimizer", "ParamState", "check_no_fused"]


class ParamState(MutableMapping[Tensor, dict[str, Any]]):
    """Per-parameter state keyed by the parameter object itself (by identity: tensors compare
    elementwise, so they cannot be ordinary dict keys). Like PyTorch's ``defaultdict(dict)``,
    looking up a parameter without state creates an empty entry."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, dict[str, Any]]] = {}

    def __getitem__(self, param: Any) -> dict[str, Any]:
        return self.setdefault_for(param)

    def __setitem__(self, param: Any, value: dict[str, Any]) -> None:
        self._items[id(param)] = (param, value)

    def __delitem__(self, param: Any) -> None:
        found = self._items.get(id(param))
        if found is None or found[0] is not param:
            raise KeyError("no state for this parameter")
        del self._items[id(param)]

    def __contains__(self, param: object) -> bool:
        found = self._items.get(id(param))
        return found is not None and found[0] is param

    def __iter__(self) -> Iterator[Any]:
        return (param for param, _ in list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, param: Any, default: Any = None) -> Any:
        """The state of ``param``, or ``default`` (no entry is created)."""
        return self._items[id(param)][1] if param in self else default

    def setdefault_for(self, param: Any) -> dict[str, Any]:
        """The state dict of ``param``, created empty on first use."""
        found = self._items.get(id(param))
        if found is None or found[0] is not param:
            state: dict[str, Any] = {}
            self._items[id(param)] = (param, state)
            return state
        return found[1]

    def __repr__(self) -> str:
        return repr({id(p): s for p, s in self._items.values()})


class Optimizer:
    """Base class. ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs or of dicts
    (parameter groups) that may override the ``defaults`` per group, e.g.
    ``[{"params": a}, {"params": b, "lr": 0.1}]``. Subclasses check their hyperparameters
    before calling this constructor and implement ``_update_group`` (or ``step``)."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        self.state: ParamState = ParamState()
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (e.g. layers unfrozen during fine-tuning) with its own hyperparameters;
        options it leaves out take the constructor's values. The dict itself is kept."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]  # KeyError when missing, as in PyTorch
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        tensors: list[Any] = []
        names: list[Any] = []
        for item in params:
            if isinstance(item, tuple):
                names.append(item[0])
                tensors.append(item[1])
            else:
                tensors.append(item)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{_typename(p)}")
            if not self.defaults.get("differentiable", None) and not (
                p.is_leaf or p.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for key, value in self.defaults.items():
            param_group.setdefault(key, value)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

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
                    if grad.grad_fn is not None or grad.requires_grad:
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
        self._settle_lazy()
        return loss

    def _settle_lazy(self) -> None:
        """On a lazy backend (Dask), the updated parameters and the optimizer's state computed
        together, once per step (the backend's ``settle``): otherwise each step's values
        would stay a graph of every step before, recomputed by each later read."""
        found: dict[Any, list[Any]] = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p.backend.capabilities.lazy:
                    found.setdefault(p.backend, []).append(p)
                    for v in self.state.get(p, {}).values():
                        if isinstance(v, Tensor) and v.backend is p.backend:
                            found[p.backend].append(v)
        for be, tensors in found.items():
            for t, data in zip(tensors, be.ops.settle([t._data for t in tensors]), strict=True):
                t._data = data  # the same values, computed

    def _update_group(self, group: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- saving and loading ----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters replaced by
        their position, PyTorch's layout, so a state loads into a freshly built optimizer. As
        in PyTorch the state's tensors are the optimizer's own (not copies)."""
        index: dict[int, int] = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by ``state_dict``: the saved groups are
        matched to this optimizer's by position, floating state tensors take their
        parameter's dtype and device (``step`` counters are kept as saved)."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(groups, saved_groups, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size "
                "of optimizer's group"
            )
        id_map: dict[Any, Tensor] = {}
        for g, s in zip(groups, saved_groups, strict=True):
            id_map.update(zip(s["params"], g["params"], strict=True))
        state = ParamState()
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast_state(param, value)
                step = state[param].get("step")
                if isinstance(step, (int, float)):  # a checkpoint that counted in Python
                    from .. import tensor

                    state[param]["step"] = tensor(float(step))
            else:
                state[key] = value
        for group, saved in zip(groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.state = state
        self.param_groups = saved_groups

    def __repr__(self) -> str:
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(k for k in group if k != "params"):
                text += f"    {key}: {group[key]}\n"
        return text + ")"


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return str(cast(Any, obj).type())  # e.g. retrograd.FloatTensor, as torch.typename
    cls = type(obj)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """A loaded state value for ``param``: tensors on its device (floating ones in its dtype,
    except the ``step`` counter), containers rebuilt around their converted items."""
    if isinstance(value, Tensor):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def check_no_fused(name: str, defaults: dict[str, Any]) -> None:
    """Refuse the execution modes retrograd does not have (``fused``, ``capturable`` and
    ``differentiable`` steps; ``foreach`` is accepted: it changes speed, not the update)."""
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        raise NotImplementedError(f"{name}: fused=True is not supported by retrograd; "
                                  "leave fused=None")
    for option in ("capturable", "differentiable"):
        if defaults.get(option):
            raise NotImplementedError(f"{name}: {option}=True is not supported by retrograd")
