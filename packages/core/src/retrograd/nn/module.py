"""``Module``: the container that owns parameters, buffers and submodules, as in PyTorch.

Registration happens in ``__setattr__``: assigning a ``Parameter`` or a ``Module`` to an
attribute records it, so ``parameters()`` finds everything a model uses without the model
listing it. The training loop touches only ``parameters()``, ``zero_grad()``, ``train()``,
``eval()`` and ``__call__``; ``state_dict``/``load_state_dict`` move weights between models.

``__call__`` runs the hooks PyTorch runs, in PyTorch's order: forward pre-hooks, then (when
full backward hooks are registered) the inputs pass through an identity autograd function
``BackwardHookFunction``, then ``forward``, then forward hooks, then the outputs pass through
the identity function too. The backward hooks are hooks on those two identity nodes: the one
on the outputs records ``grad_output``, the one on the inputs calls the user's hook with
``(module, grad_input, grad_output)`` and may replace ``grad_input``.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from .. import grad_mode
from ..dtypes import DType
from ..tensor import Tensor
from .parameter import Parameter

__all__ = ["Module", "IncompatibleKeys", "RemovableHandle"]

_handle_ids = itertools.count()


class _KeyLists(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


class IncompatibleKeys(_KeyLists):
    """What ``load_state_dict`` could not match: the named pair ``(missing_keys,
    unexpected_keys)`` PyTorch returns (its ``_IncompatibleKeys``), printed as PyTorch
    prints it."""

    __slots__ = ()

    def __repr__(self) -> str:
        """PyTorch's text: ``<All keys matched successfully>`` when nothing is off."""
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
            f"unexpected_keys={self.unexpected_keys!r})"
        )

    def __str__(self) -> str:
        """Same as ``repr``."""
        return self.__repr__()


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook (from
    every table it was entered in). Usable as a context manager."""

    def __init__(self, tables: tuple[Any, ...]) -> None:
        self.id = next(_handle_ids)
        self._tables = tables

    def remove(self) -> None:
        """Unregister the hook; removing twice is harmless."""
        for table in self._tables:
            if isinstance(table, set):
                table.discard(self.id)
            else:
                table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _typename(value: Any) -> str:
    return type(value).__name__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class _Hooked:
    """Per-call state of the full backward hooks of one module call (PyTorch's
    ``BackwardHook``): which positional arguments and outputs are tensors, and the
    ``grad_output`` seen on the way back, waiting for the matching ``grad_input``."""

    def __init__(self, module: Module, hooks: list[Any], pre_hooks: list[Any]) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    @staticmethod
    def _pack(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    def _through_identity(
        self, args: tuple[Any, ...], register: Callable[[Any], None]
    ) -> tuple[tuple[Any, ...], list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        node = next(
            t.grad_fn
            for t in new
            if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"
        )
        register(node)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Pass the tensor arguments through the identity node whose hook calls the user's
        full backward hooks with ``(grad_input, grad_output)``."""
        def register(node: Any) -> None:
            def hook(grad_inputs: Any, _grad_outputs: Any) -> Any:
                if self.grad_outputs is None:
                    # the gradient reached the inputs without passing through the outputs
                    return None
                assert self.input_index is not None
                res = self._pack(self.input_index, grad_inputs, self.n_inputs)
                for user_hook in self.hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, "
                            f"got {len(out)}, but expected {len(res)}"
                        )
                    res = tuple(out)
                self.grad_outputs = None
                return tuple(res[i] for i in self.input_index)

            node.register_hook(hook)

        res, index = self._through_identity(args, register)
        self.n_inputs = len(args)
        self.input_index = index
        return res

    def setup_output_hook(self, result: Any) -> Any:
        """Pass the outputs through the identity node whose pre-hook records
        ``grad_output`` (after the backward pre-hooks have had their say)."""
        def register(node: Any) -> None:
            def hook(grad_outputs: Any) -> Any:
                assert self.output_index is not None
                self.grad_outputs = self._pack(self.output_index, grad_outputs, self.n_outputs)
                for pre_hook in self.pre_hooks:
                    new = pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, "
                            f"got {len(new)}, but expected {len(self.grad_outputs)}"
                        )
                    self.grad_outputs = tuple(new)
                if self.input_index is None:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with "
                        "respect to module outputs since no inputs require gradients. See "
                        "the PyTorch documentation of Module.register_full_backward_hook "
                        "for more details.",
                        stacklevel=1,
                    )
                    grad_inputs = self._pack([], [], self.n_inputs)
                    for user_hook in self.hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (
                            isinstance(res, tuple) and all(r is None for r in res)
                        ):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                if self.grad_outputs is not None:
                    return tuple(self.grad_outputs[i] for i in self.output_index)
                return None

            node.register_prehook(hook)

        single = not isinstance(result, tuple)
        args = (result,) if single else result
        res, index = self._through_identity(args, register)
        self.n_outputs = len(args)
        self.output_index = index
        return res[0] if single else res


def _backward_hook_function() -> Any:
    from ..autograd import Function

    class BackwardHookFunction(Function):
        """Identity on its tensor arguments; its backward node carries a module's full
        backward hooks (PyTorch's node name: ``BackwardHookFunctionBackward``)."""

        @staticmethod
        def forward(ctx: Any, *args: Any) -> Any:
            """The arguments themselves (those that need no gradient marked so)."""
            ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
            return args

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            """The gradients, unchanged (the hooks on this node are what matters)."""
            return grads

    return BackwardHookFunction


BackwardHookFunction: Any = _backward_hook_function()


class Module:
    """Base class of every layer and model. Subclasses call ``super().__init__()`` first, assign
    their parameters and submodules as attributes, and implement ``forward``."""

    training: bool

    def __init__(self) -> None:
        # Plain object.__setattr__: our own __setattr__ reads these dicts.
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", OrderedDict())
        setter(self, "_buffers", OrderedDict())
        setter(self, "_non_persistent", set())
        setter(self, "_modules", OrderedDict())
        setter(self, "_forward_pre_hooks", OrderedDict())
        setter(self, "_forward_pre_hooks_with_kwargs", set())
        setter(self, "_forward_hooks", OrderedDict())
        setter(self, "_forward_hooks_with_kwargs", set())
        setter(self, "_forward_hooks_always_called", set())
        setter(self, "_backward_hooks", OrderedDict())
        setter(self, "_backward_pre_hooks", OrderedDict())

    def _get_name(self) -> str:
        return type(self).__name__

    # -- calling --------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of this module; every subclass overrides it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` with the registered hooks around it (PyTorch's order)."""
        d = self.__dict__
        if not (d.get("_forward_pre_hooks") or d.get("_forward_hooks")
                or d.get("_backward_hooks") or d.get("_backward_pre_hooks")):
            return self.forward(*args, **kwargs)
        state: dict[str, Any] = {"args": args, "kwargs": kwargs, "called": set()}
        try:
            return self._call_with_hooks(state)
        except Exception:
            self._run_always_called_hooks(state)
            raise

    def _call_with_hooks(self, state: dict[str, Any]) -> Any:
        d = self.__dict__
        pre = d["_forward_pre_hooks"]
        post = d["_forward_hooks"]
        back = d["_backward_hooks"]
        back_pre = d["_backward_pre_hooks"]
        args, kwargs = state["args"], state["kwargs"]
        with_kwargs = d["_forward_pre_hooks_with_kwargs"]
        for hook_id, hook in list(pre.items()):
            if hook_id in with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {res}."
                        )
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            state["args"], state["kwargs"] = args, kwargs
        hooked = None
        if back or back_pre:
            hooked = _Hooked(self, list(back.values()), list(back_pre.values()))
            args = hooked.setup_input_hook(args)
            state["args"] = args
        result = self.forward(*args, **kwargs)
        with_kwargs = d["_forward_hooks_with_kwargs"]
        always = d["_forward_hooks_always_called"]
        for hook_id, hook in list(post.items()):
            if hook_id in always:
                state["called"].add(hook_id)
            if hook_id in with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if hooked is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=3,
                )
            else:
                result = hooked.setup_output_hook(result)
        return result

    def _run_always_called_hooks(self, state: dict[str, Any]) -> None:
        """After ``forward`` (or a hook) raised: the forward hooks registered with
        ``always_call=True`` that have not run yet run with ``None`` as the output; an error
        of theirs becomes a warning, the original error propagates (PyTorch's behaviour)."""
        d = self.__dict__
        always = d["_forward_hooks_always_called"]
        with_kwargs = d["_forward_hooks_with_kwargs"]
        for hook_id, hook in list(d["_forward_hooks"].items()):
            if hook_id not in always or hook_id in state["called"]:
                continue
            try:
                if hook_id in with_kwargs:
                    hook(self, state["args"], state["kwargs"], None)
                else:
                    hook(self, state["args"], None)
            except Exception as exc:  # noqa: BLE001 - silenced as PyTorch silences it
                warnings.warn(
                    "module forward hook with ``always_call=True`` raised an exception that "
                    f"was silenced as another error was raised in forward: {exc}",
                    stacklevel=3,
                )

    # -- hooks ----------------------------------------------------------------------------
    @staticmethod
    def _insert(table: OrderedDict[int, Any], handle: RemovableHandle, hook: Any,
                prepend: bool) -> None:
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``) runs
        before ``forward``; a returned value replaces the arguments."""
        table = self.__dict__["_forward_pre_hooks"]
        kw = self.__dict__["_forward_pre_hooks_with_kwargs"]
        handle = RemovableHandle((table, kw))
        self._insert(table, handle, hook, prepend)
        if with_kwargs:
            kw.add(handle.id)
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        ``forward``; a returned value replaces the output. With ``always_call`` the hook
        also runs (with ``None`` as the output) when ``forward`` raises."""
        table = self.__dict__["_forward_hooks"]
        kw = self.__dict__["_forward_hooks_with_kwargs"]
        always = self.__dict__["_forward_hooks_always_called"]
        handle = RemovableHandle((table, kw, always))
        self._insert(table, handle, hook, prepend)
        if with_kwargs:
            kw.add(handle.id)
        if always_call:
            always.add(handle.id)
        return handle

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs once the gradients with respect to
        the module's positional tensor inputs are computed; returning a tuple replaces
        ``grad_input``. Entries for arguments that are not tensors (or need no gradient) are
        ``None``."""
        table = self.__dict__["_backward_hooks"]
        handle = RemovableHandle((table,))
        self._insert(table, handle, hook, prepend)
        return handle

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are
        known; returning a tuple replaces ``grad_output``."""
        table = self.__dict__["_backward_pre_hooks"]
        handle = RemovableHandle((table,))
        self._insert(table, handle, hook, prepend)
        return handle

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
            self.__dict__["_non_persistent"].discard(name)
            params[name] = value
            return
        if isinstance(value, Module):
            params, buffers, modules = self._registries()
            self.__dict__.pop(name, None)
            params.pop(name, None)
            buffers.pop(name, None)
            self.__dict__["_non_persistent"].discard(name)
            modules[name] = value
            return
        d = self.__dict__
        if "_parameters" in d:
            if name in d["_parameters"]:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as parameter '{name}' "
                        "(retrograd.nn.Parameter or None expected)"
                    )
                d["_parameters"][name] = None
                return
            if name in d["_modules"]:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(retrograd.nn.Module or None expected)"
                    )
                d["_modules"][name] = None
                return
            if name in d["_buffers"]:
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as buffer '{name}' "
                        "(retrograd.Tensor or None expected)"
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
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

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
        return sorted(n for n in names if not n[:1].isdigit())

    def _check_name(self, name: Any, kind: str, registry: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in self.__dict__[registry]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or a ``None`` placeholder, like ``bias=False``) under ``name``."""
        self._check_name(name, "parameter", "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(retrograd.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        params, _, _ = self._registries()
        params[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (moved by ``to``, saved by
        ``state_dict`` unless ``persistent=False``, never returned by ``parameters``)."""
        self._check_name(name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(retrograd.Tensor or None required)"
            )
        _, buffers, _ = self._registries()
        buffers[name] = tensor
        if persistent:
            self.__dict__["_non_persistent"].discard(name)
        else:
            self.__dict__["_non_persistent"].add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module", "_modules")
        _, _, modules = self._registries()
        modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Same as ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""``: this module)."""
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        buffer: Tensor = getattr(mod, name)
        return buffer

    # -- traversal ------------------------------------------------------------------------
    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Every module in the tree (this one first), depth first, each once by default."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Every module in the tree, this one first, each once."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` of the direct children, each once."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children, each once."""
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
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
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
        """``(dotted name, buffer)`` pairs, persistent or not."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer, each once."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # -- modes and gradients ---------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every descendant; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for module in self.children():
            module.train(mode)
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

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child's tree (recursively, children first) and then on
        ``self``; returns ``self``."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- devices and dtypes ---------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move (and/or cast) every parameter and buffer in place: ``to("cuda")``,
        ``to(rg.float64)``, ``to(device=..., dtype=...)``, ``to(tensor)``. As in PyTorch the
        Parameter objects stay the same (their data is replaced), a dtype applies to floating
        point tensors only (integer buffers keep theirs), and ``.grad`` moves along."""
        device: Any = kwargs.pop("device", None)
        dtype: Any = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, DType):
                dtype = arg
            elif isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, bool):
                continue  # non_blocking
            else:
                device = arg
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            if device is not None:
                t = t.to(device)
            if dtype is not None and t.dtype.is_floating_point:
                t = t.to(dtype)
            return t

        return self._apply_to_tensors(convert)

    def _apply_to_tensors(self, fn: Callable[[Tensor], Tensor]) -> Module:
        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                with grad_mode.no_grad():
                    moved = fn(param)
                if moved is not param:
                    param.data = moved
                if param.grad is not None:
                    with grad_mode.no_grad():
                        grad_moved = fn(param.grad)
                    if grad_moved is not param.grad:
                        param.grad.data = grad_moved
            for name, buffer in list(module._buffers.items()):
                if buffer is not None:
                    with grad_mode.no_grad():
                        module._buffers[name] = fn(buffer)
        return self

    def cpu(self) -> Module:
        """Move every parameter and buffer to the CPU."""
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move every parameter and buffer to a CUDA device."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64."""
        from ..dtypes import float64

        return self._apply_to_tensors(
            lambda t: t.to(float64) if t.dtype.is_floating_point else t
        )

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32."""
        from ..dtypes import float32

        return self._apply_to_tensors(
            lambda t: t.to(float32) if t.dtype.is_floating_point else t
        )

    def half(self) -> Module:
        """Cast floating point parameters and buffers to float16."""
        from ..dtypes import float16

        return self._apply_to_tensors(
            lambda t: t.to(float16) if t.dtype.is_floating_point else t
        )

    # -- state ----------------------------------------------------------------------------
    def state_dict(
        self,
        *,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Any]:
        """Every parameter and persistent buffer by dotted name, in registration order and
        recursing through every child (a module shared under two names appears under both,
        as in PyTorch). Values are detached (sharing storage with the model) unless
        ``keep_vars=True``. As in PyTorch, the result carries ``_metadata``: each module's
        ``{"version": ...}`` by dotted name, read back by ``load_state_dict``."""
        out: Any = destination
        if out is None:
            out = OrderedDict()
            out._metadata = OrderedDict()
        if hasattr(out, "_metadata"):
            out._metadata[prefix[:-1]] = {"version": self._version}
        for name, param in self._parameters.items():
            if param is not None:
                out[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent:
                out[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        result: dict[str, Any] = out
        return result

    _version: int = 1
    """The version of this module's state dict layout, recorded in ``state_dict``'s
    ``_metadata`` (a layer that changes its layout bumps it and, in
    ``_load_from_state_dict``, upgrades older state dicts)."""

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: Mapping[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Load this module's own parameters and persistent buffers (not its children's)
        from ``state_dict``, recording problems in the three lists (PyTorch's signature, so
        layers override it the same way to upgrade old layouts)."""
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        local: dict[str, tuple[str, Any]] = {}
        for name, param in self._parameters.items():
            if param is not None:
                local[name] = ("param", param)
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent:
                local[name] = ("buffer", buffer)
        for name, (kind, target) in local.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected retrograd.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if len(target.shape) == 0 and len(value.shape) == 1:
                value = value[0]  # PyTorch's allowance for checkpoints of 0.3's era
            if tuple(value.shape) != tuple(target.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size(value.shape)} from checkpoint, the shape in current model is "
                    f"{_size(target.shape)}."
                )
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        if kind == "param":
                            new = Parameter(value, requires_grad=target.requires_grad)
                            self._parameters[name] = new
                        else:
                            self._buffers[name] = value
                    else:
                        target.copy_(value.detach())
            except Exception as exc:  # noqa: BLE001 - reported the way PyTorch reports it
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the '
                    f"model are {_size(target.shape)} and whose dimensions in the checkpoint "
                    f"are {_size(value.shape)}, an exception occurred : {exc.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local:
                        unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> IncompatibleKeys:
        """Copy values in place (under ``no_grad``) into the matching parameters and
        persistent buffers (``assign=True``: take the given tensors themselves).

        As in PyTorch: missing and unexpected keys are returned; with ``strict=True`` they
        are an error, raised (like shape mismatches, whatever ``strict``) as one
        ``RuntimeError`` listing every problem. The given mapping is not modified.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict)}."
            )
        metadata = getattr(state_dict, "_metadata", None)
        entries: dict[str, Any] = OrderedDict(state_dict)
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module: Module, local: dict[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_entries = {
                        k: v for k, v in local.items() if k.startswith(child_prefix)
                    }
                    load(child, child_entries, child_prefix)

        load(self, entries, "")
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". ",
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ",
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return IncompatibleKeys(missing, unexpected)

    # -- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (override in layers)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _size(shape: Any) -> str:
    """A shape as ``Tensor.shape`` prints it (where PyTorch's message prints ``torch.Size``)."""
    return str(tuple(int(s) for s in shape))
