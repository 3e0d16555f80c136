"""``Module``: the container that owns parameters, buffers and submodules, as in PyTorch.

Registration happens in ``__setattr__``: assigning a ``Parameter`` or a ``Module`` to an
attribute records it, so ``parameters()`` finds everything a model uses without the model
listing it. The training loop touches only ``parameters()``, ``zero_grad()``, ``train()``,
``eval()`` and ``__call__``; ``state_dict``/``load_state_dict`` move weights between models.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from .. import grad_mode
from ..dtypes import DType
from ..tensor import Tensor
from .parameter import Parameter

__all__ = ["Module", "IncompatibleKeys"]


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` could not match (PyTorch returns the same pair)."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class of every layer and model. Subclasses call ``super().__init__()`` first, assign
    their parameters and submodules as attributes, and implement ``forward``."""

    training: bool

    def __init__(self) -> None:
        # Plain object.__setattr__: our own __setattr__ reads these dicts.
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # -- calling --------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- registration ---------------------------------------------------------------------
    def _registries(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                f"cannot assign to a {type(self).__name__} before Module.__init__() has run: "
                "call super().__init__() first in your __init__"
            )
        return d["_parameters"], d["_buffers"], d["_modules"]

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Parameter):
            params, buffers, modules = self._registries()
            self.__dict__.pop(name, None)
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = value
            return
        if isinstance(value, Module):
            params, buffers, modules = self._registries()
            self.__dict__.pop(name, None)
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
            return
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                if value is not None:
                    raise TypeError(
                        f"cannot assign {type(value).__name__} as parameter {name!r} "
                        "(a retrograd.nn.Parameter or None is required)"
                    )
                d["_parameters"][name] = None
                return
            if name in d["_modules"]:
                if value is not None:
                    raise TypeError(
                        f"cannot assign {type(value).__name__} as child module {name!r} "
                        "(a retrograd.nn.Module or None is required)"
                    )
                d["_modules"][name] = None
                return
            if name in d["_buffers"]:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(
                        f"cannot assign {type(value).__name__} as buffer {name!r} "
                        "(a Tensor or None is required)"
                    )
                d["_buffers"][name] = value
                return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup failed: look in the registries.
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            registry = d.get(key)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for key in ("_parameters", "_buffers", "_modules"):
            registry = self.__dict__.get(key)
            if registry is not None and name in registry:
                del registry[name]
                self.__dict__["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for key in ("_parameters", "_buffers", "_modules"):
            names.update(self.__dict__.get(key, {}))
        return sorted(names)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or a ``None`` placeholder, like ``bias=False``) under ``name``."""
        self._check_name(name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter({name!r}): expected a Parameter or None, "
                f"got {type(param).__name__}"
            )
        params, _, _ = self._registries()
        params[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (moved by ``to``, saved by
        ``state_dict`` unless ``persistent=False``, never returned by ``parameters``)."""
        self._check_name(name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer({name!r}): expected a Tensor or None, got {type(tensor).__name__}"
            )
        _, buffers, _ = self._registries()
        buffers[name] = tensor
        if persistent:
            self.__dict__["_non_persistent"].discard(name)
        else:
            self.__dict__["_non_persistent"].add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child under ``name``."""
        self._check_name(name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module({name!r}): {type(module).__name__} is not a Module")
        _, _, modules = self._registries()
        modules[name] = module

    register_module = add_module

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"a name must be a str, got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f"invalid name {name!r}: it must be non-empty and contain no '.'")
        if name in self.__dict__ and name not in ("training",):
            raise KeyError(f"attribute {name!r} already exists")

    # -- traversal ------------------------------------------------------------------------
    def named_modules(
        self, memo: set[int] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Every module in the tree (this one first), depth first, each once by default."""
        seen = set() if memo is None else memo
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in seen:
                    continue
                seen.add(id(module))
            yield name, module
            children = [
                (f"{name}.{child_name}" if name else child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs; a parameter shared by two layers comes once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters an optimizer should update, each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # -- modes and gradients ---------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant; returns ``self``."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode): mode must be a bool, got {type(mode).__name__}")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch ``requires_grad`` on every parameter (freezing or unfreezing the model)."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the accumulated gradients. ``set_to_none=True`` (the default, as in PyTorch)
        drops the ``.grad`` tensors; ``False`` zeroes them in place, keeping the storage."""
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                grad = param.grad
                if grad.grad_fn is not None:
                    grad = grad.detach()
                    param.grad = grad
                with grad_mode.no_grad():
                    grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on ``self``."""
        for module in list(self.modules())[::-1]:
            fn(module)
        return self

    # -- devices and dtypes ---------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move (and/or cast) every parameter and buffer: ``to("cuda")``, ``to(rg.float64)``,
        ``to(device=..., dtype=...)``. Parameters are replaced by new Parameters, so build the
        optimizer after moving the model (the same advice PyTorch gives)."""
        targets: list[Any] = list(args)
        for key in ("device", "dtype"):
            if kwargs.get(key) is not None:
                targets.append(kwargs.pop(key))
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")

        def convert(t: Tensor) -> Tensor:
            for target in targets:
                if isinstance(target, DType) and not t.dtype.is_floating_point:
                    continue  # as in PyTorch, a dtype cast leaves integer buffers alone
                t = t.to(target)
            return t

        for module in self.modules():
            for name, param in list(module._parameters.items()):
                if param is None:
                    continue
                moved = convert(param)
                if moved is param:
                    continue
                new = Parameter(moved, requires_grad=param.requires_grad)
                if param.grad is not None:
                    new.grad = convert(param.grad.detach())
                module._parameters[name] = new
            for name, buffer in list(module._buffers.items()):
                if buffer is not None:
                    module._buffers[name] = convert(buffer)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> Module:
        from ..dtypes import float64

        return self.to(float64)

    def float(self) -> Module:
        from ..dtypes import float32

        return self.to(float32)

    # -- state ----------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name. Values are detached (they
        share storage with the model) unless ``keep_vars=True``."""
        out: OrderedDict[str, Tensor] = OrderedDict()
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")):
            for name, param in module._parameters.items():
                if param is not None:
                    key = f"{module_prefix}.{name}" if module_prefix else name
                    out[key] = param if keep_vars else param.detach()
            for name, buffer in module._buffers.items():
                if buffer is not None and name not in module._non_persistent:
                    key = f"{module_prefix}.{name}" if module_prefix else name
                    out[key] = buffer if keep_vars else buffer.detach()
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy values in place (under ``no_grad``) into the matching parameters and buffers.

        Shapes must match exactly. With ``strict=True`` a missing or unexpected key is an error
        that lists them; otherwise they are returned.
        """
        from .. import tensor as make_tensor

        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        with grad_mode.no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    value = make_tensor(value, dtype=target.dtype, device=target.device)
                if tuple(value.shape) != tuple(target.shape):
                    raise ValueError(
                        f"load_state_dict: {key} has shape {tuple(value.shape)} in the state "
                        f"dict but {tuple(target.shape)} in the model"
                    )
                target.copy_(value.detach())
        return IncompatibleKeys(missing, unexpected)

    # -- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (override in layers)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, module in self._modules.items():
            body = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        if not lines:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"
