"""The adapter a program is written against, so one program runs on retrograd and on PyTorch.

retrograd copies PyTorch's names, so most of a program is plain ``lib.exp(x)``,
``x.backward()``, ``lib.autograd.grad(...)``, ``lib.nn.functional.softmax(...)``: the adapter
forwards every unknown attribute to the module. It adds only what differs between the two:

- ``lib.tensor`` / ``lib.int_tensor`` create tensors on the subject's device and in the case's
  dtype, so a program never names either;
- ``lib.engine_grad`` is ``retrograd.autograd.Engine.grad`` (PyTorch has no Engine: there it is
  ``torch.autograd.grad(..., allow_unused=True)``, which has the same contract);
- ``lib.is_accumulate_grad(node)``;
- ``lib.capture(fn)`` runs one step and returns its result, or the :class:`Raised` error, so a
  program can check that a given step fails and then carry on;
- ``lib.capture_warnings(fn)`` runs one step and returns ``(result or Raised, [(warning class
  name, message), ...])``;
- ``lib.dtype_of(t)`` (``"float32"``, ``"int64"``, ``"bool"``) and ``lib.has("a.b")`` (does the
  module have that attribute path);
- ``lib.error_kind(exc)`` and ``lib.to_numpy(t)`` for the runner.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .compare import Typed
from .errors import Raised, retrograd_kind, torch_kind

FLOAT_DTYPES = ("float32", "float64")


class Lib:
    """Base adapter: a module, a device and a default floating dtype."""

    kind: str = ""

    def __init__(self, module: Any, device: str, dtype: str, subject: str) -> None:
        self.module = module
        self.device = device
        self.dtype_name = dtype
        self.dtype = getattr(module, dtype)
        self.subject = subject

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def __repr__(self) -> str:
        return f"<lib {self.subject} {self.dtype_name}>"

    # creation -------------------------------------------------------------------------------
    def tensor(self, data: Any, *, dtype: Any = None, requires_grad: bool = False) -> Any:
        """A tensor on the subject's device, in the case dtype unless ``dtype`` is given."""
        return self.module.tensor(
            data, dtype=self.dtype if dtype is None else dtype, device=self.device,
            requires_grad=requires_grad,
        )

    def int_tensor(self, data: Any) -> Any:
        """An int64 tensor (targets, indices) on the subject's device."""
        return self.module.tensor(data, dtype=self.module.int64, device=self.device)

    # what differs ---------------------------------------------------------------------------
    def engine_grad(self, root: Any, inputs: Sequence[Any], grad_seed: Any = None,
                    retain_graph: bool = False, create_graph: bool = False) -> list[Any]:
        raise NotImplementedError

    def is_accumulate_grad(self, node: Any) -> bool:
        raise NotImplementedError

    def error_kind(self, exc: BaseException) -> str:
        raise NotImplementedError

    def to_numpy(self, t: Any) -> np.ndarray:
        raise NotImplementedError

    def is_tensor(self, value: Any) -> bool:
        return isinstance(value, self.module.Tensor)

    def capture(self, fn: Callable[[], Any]) -> Any:
        """Run one step; return its result, or the error it raised as a :class:`Raised`."""
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - the error *is* the result here
            return Raised(self.error_kind(exc), type(exc).__name__, str(exc))

    def capture_warnings(self, fn: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
        """Run one step with every warning recorded; ``(result or Raised, [(class name,
        message), ...])`` in the order they were issued."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = self.capture(fn)
        return result, [(w.category.__name__, str(w.message)) for w in caught]

    def dtype_of(self, t: Any) -> str:
        """A tensor's dtype as a bare name: ``float32``, ``int64``, ``bool``..."""
        return str(getattr(t.dtype, "name", t.dtype)).rsplit(".", 1)[-1]

    def has(self, path: str) -> bool:
        """Whether the module has the dotted attribute ``path`` (``"autograd.grad"``)."""
        obj = self.module
        for part in path.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                return False
        return True


class RetrogradLib(Lib):
    """retrograd on one backend (``device`` is the backend name, e.g. ``cpu``)."""

    kind = "retrograd"

    def engine_grad(self, root, inputs, grad_seed=None, retain_graph=False, create_graph=False):
        Engine = self.module.autograd.Engine
        return list(Engine.grad(root, list(inputs), grad_seed, retain_graph, create_graph))

    def is_accumulate_grad(self, node: Any) -> bool:
        return isinstance(node, self.module.autograd.AccumulateGrad)

    def error_kind(self, exc: BaseException) -> str:
        return retrograd_kind(exc)

    def to_numpy(self, t: Any) -> np.ndarray:
        arr = np.asarray(t.backend.to_numpy(t.detach()._data))
        return arr if arr.dtype == np.bool_ else arr.astype(np.float64)


class TorchLib(Lib):
    """PyTorch, the oracle (``device`` is ``cpu`` or ``cuda``)."""

    kind = "torch"

    def engine_grad(self, root, inputs, grad_seed=None, retain_graph=False, create_graph=False):
        return list(self.module.autograd.grad(
            root, list(inputs), grad_seed, retain_graph=retain_graph or create_graph,
            create_graph=create_graph, allow_unused=True,
        ))

    def is_accumulate_grad(self, node: Any) -> bool:
        return type(node).__name__ == "AccumulateGrad"

    def error_kind(self, exc: BaseException) -> str:
        return torch_kind(exc)

    def to_numpy(self, t: Any) -> np.ndarray:
        t = t.detach().cpu()
        if t.dtype == self.module.bool:
            return t.numpy()
        return t.to(self.module.float64).numpy()


def make_lib(subject: str, dtype: str = "float64") -> Lib:
    """``retrograd:<backend>``, ``torch`` or ``torch:cuda`` -> an adapter in ``dtype``."""
    family, _, device = subject.partition(":")
    if family == "retrograd":
        import retrograd

        return RetrogradLib(retrograd, device or "cpu", dtype, subject)
    if family == "torch":
        import torch

        return TorchLib(torch, device or "cpu", dtype, subject)
    raise ValueError(
        f"unknown subject {subject!r}: expected retrograd:<backend>, torch or torch:cuda")


def normalize(lib: Lib, value: Any, *, typed: bool = False) -> Any:
    """Turn a program's result into plain data: arrays (float64 or bool), None, Raised, lists.

    With ``typed``, a tensor becomes a :class:`~retrograd_conformance.compare.Typed` (its dtype
    name and its values), so the comparison checks the dtype too."""
    if value is None or isinstance(value, Raised | str):
        return value
    if isinstance(value, bool | np.bool_):
        return np.asarray(bool(value))
    if isinstance(value, int | float | np.number):
        return np.asarray(float(value))
    if isinstance(value, list | tuple):
        return [normalize(lib, v, typed=typed) for v in value]
    if lib.is_tensor(value):
        if typed:
            return Typed(lib.dtype_of(value), lib.to_numpy(value))
        return lib.to_numpy(value)
    raise TypeError(f"a program returned a {type(value).__name__}; expected tensors or numbers")
