"""Tensor: a backend array plus the autograd bookkeeping (grad, grad_fn, version, hooks).

The hot attributes live in ``__slots__``; rarely used state (hooks, retain_grad, the leaf's
AccumulateGrad) lives in one ``_extra`` object so the common tensor stays small.
"""

from __future__ import annotations

import builtins
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ._version import VersionCounter, mark_detached, new_counter, version_of
from .dtypes import Device, DType, as_dtype, bool_, int64
from .errors import DTypeError, RetrogradError, ShapeError
from .grad_mode import _state as _grad_state
from .inference_mode import INFERENCE, REQUIRES_GRAD_ERROR, is_inference_mode_enabled

__all__ = ["Tensor"]

# Taken only to publish a tensor's or a node's lazily made bookkeeping (``_extra``, the hook
# dicts, a node's hook table, a leaf's AccumulateGrad), never where it already exists:
# readers check without it, and the creator re-checks under it, so two threads doing the
# first thing to one tensor at once both get the one object. Nothing is allocated while it
# is held (the new object is made before), so no garbage collection, and no finalizer, runs
# under it; reentrant, in case a signal handler does the same thing on the same thread.
_create_lock = threading.RLock()


OWN_DTYPE = object()  # _Extra.grad_dtype never set: the tensor's own dtype


class _Extra:
    __slots__ = ("hooks", "post_hooks", "retains_grad", "acc", "view_epoch", "name",
                 "view_creation", "view_chain", "plain_views", "multi_output", "alias_view",
                 "grad_dtype", "data_chain", "data_views")

    def __init__(self) -> None:
        self.hooks: dict[int, Callable[..., Any]] | None = None
        self.post_hooks: dict[int, Callable[..., Any]] | None = None
        self.retains_grad = False
        self.acc: Any = None  # weakref to this leaf's AccumulateGrad
        self.view_epoch = 0  # the counter's rebase epoch when this view's history was taken
        # how this view derives from its base, when it needs autograd: the steps a view op
        # recorded (see retrograd.ops.view_inplace), replayed to rebase it; None otherwise
        self.view_chain: tuple[tuple[str, Any], ...] | None = None
        self.name: str | None = None
        # why this view may not be changed in place while recording (PyTorch's CreationMeta):
        # None, "no_grad" (made under no_grad from a tensor that requires grad) or
        # "custom_function: <message>" (an output of a Function that aliases an input)
        self.view_creation: str | None = None
        # a base's views taken while it needed no gradient: id -> weakref (ops.late_views)
        self.plain_views: dict[int, Any] | None = None
        # PyTorch's refusal of a recorded in-place op on an output of a view op with several
        # outputs (unbind, split), or on a view of one, taken from a tensor that needed no
        # gradient (one that did carries it in ``view_creation``): ops.views
        self.multi_output: str | None = None
        # a view (for ``_is_view``) that no other field marks: one of a detached alias
        self.alias_view = False
        # a leaf's ``grad_dtype`` when set (a DType, or None: any dtype); unset: its own dtype
        self.grad_dtype: Any = OWN_DTYPE
        # on a backend with immutable arrays (``Backend.functional``): how this view or alias
        # derives from its root base (view steps, as ``view_chain``; () for a detached alias),
        # and a root's live views and aliases, id -> weakref: ``retrograd._writes``
        self.data_chain: tuple[tuple[str, Any], ...] | None = None
        self.data_views: dict[int, Any] | None = None


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""

    # a dict: its values are the public slots' docstrings (``inspect.getdoc``, ``help()``)
    __slots__ = {
        "_data": None,
        "backend": "The backend (array library and device family) that holds the data.",
        "_requires_grad": None,
        "grad_fn": "The node that made this tensor (its backward), or None for a leaf.",
        "_output_nr": None,
        "_grad": None,
        "_vc": None,
        "_base": None,
        "_extra": None,
        "__weakref__": None,
    }

    __array_priority__ = 1000  # make ndarray (op) Tensor defer to Tensor's reflected operators

    if TYPE_CHECKING:  # the op methods are attached by retrograd.ops.methods
        T: Tensor
        mT: Tensor

        def __eq__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: Any) -> Tensor: ...  # type: ignore[override]
        def __getitem__(self, key: Any) -> Tensor: ...
        def __setitem__(self, key: Any, value: Any) -> None: ...
        def clamp(self, min: Any = None, max: Any = None) -> Tensor: ...
        def clip(self, min: Any = None, max: Any = None) -> Tensor: ...
        def sum(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def mean(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def amax(self, dim: Any = None, keepdim: bool = False) -> Tensor: ...
        def logsumexp(self, dim: Any, keepdim: bool = False) -> Tensor: ...
        def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                     equal_nan: bool = False) -> bool: ...
        def softmax(self, dim: int | None = None) -> Tensor: ...
        def log_softmax(self, dim: int | None = None) -> Tensor: ...
        def reshape(self, *shape: Any) -> Tensor: ...
        def view(self, *shape: Any) -> Tensor: ...
        def permute(self, *dims: Any) -> Tensor: ...
        def transpose(self, dim0: int, dim1: int) -> Tensor: ...
        def squeeze(self, dim: Any = None) -> Tensor: ...
        def unsqueeze(self, dim: int) -> Tensor: ...
        def expand(self, *sizes: Any) -> Tensor: ...
        def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __iadd__(self, other: Any) -> Tensor: ...
        def __isub__(self, other: Any) -> Tensor: ...
        def __imul__(self, other: Any) -> Tensor: ...
        def __itruediv__(self, other: Any) -> Tensor: ...
        def add(self, other: Any) -> Tensor: ...
        def sub(self, other: Any) -> Tensor: ...
        def mul(self, other: Any) -> Tensor: ...
        def div(self, other: Any) -> Tensor: ...
        def pow(self, other: Any) -> Tensor: ...
        def maximum(self, other: Any) -> Tensor: ...
        def minimum(self, other: Any) -> Tensor: ...
        def eq(self, other: Any) -> Tensor: ...
        def ne(self, other: Any) -> Tensor: ...
        def lt(self, other: Any) -> Tensor: ...
        def le(self, other: Any) -> Tensor: ...
        def gt(self, other: Any) -> Tensor: ...
        def ge(self, other: Any) -> Tensor: ...
        def matmul(self, other: Any) -> Tensor: ...
        def add_(self, other: Any) -> Tensor: ...
        def sub_(self, other: Any) -> Tensor: ...
        def mul_(self, other: Any) -> Tensor: ...
        def div_(self, other: Any) -> Tensor: ...
        def fill_(self, other: Any) -> Tensor: ...
        def copy_(self, other: Any) -> Tensor: ...
        def view_as(self, other: Any) -> Tensor: ...
        def expand_as(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def neg(self) -> Tensor: ...
        def abs(self) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def relu(self) -> Tensor: ...
        def clone(self) -> Tensor: ...
        def zero_(self) -> Tensor: ...

    def __init__(
        self,
        data: Any,
        backend: Any,
        requires_grad: bool = False,
        grad_fn: Any = None,
        output_nr: int = 0,
    ) -> None:
        self._data = data
        self.backend = backend
        self._requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._output_nr = output_nr
        self._grad: Tensor | None = None
        self._vc: VersionCounter | None = None
        self._base: Tensor | None = None
        self._extra: _Extra | None = None

    @classmethod
    def _wrap(cls, data: Any, backend: Any) -> Tensor:
        if type(data) is not backend.array_type:
            data = backend.asarray(data)
        return cls(data, backend)

    def _x(self) -> _Extra:
        ex = self._extra
        if ex is None:
            new = _Extra()
            with _create_lock:  # published once: a racing first use gets the same object
                ex = self._extra
                if ex is None:
                    ex = self._extra = new
        return ex

    def _counter(self) -> VersionCounter:
        """This tensor's version counter, made on first need. An op's output gets none when
        it is made (see ``ops._core._stamp``): if its node saved it, the counter made here is
        the one that node now watches (``Node._output_counter``)."""
        vc = self._vc
        if vc is None:
            fn = self.grad_fn
            if fn is not None:
                vc = fn._output_counter(self)
            if vc is None:
                vc = new_counter()
            self._vc = vc
        return vc

    # -- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, as a tuple of ints."""
        return tuple(self._data.shape)

    @property
    def dtype(self) -> DType:
        """The element type (a ``retrograd`` dtype such as ``retrograd.float32``)."""
        return self.backend.dtype_of(self._data)

    @property
    def device(self) -> Device:
        """The device holding the data (``cpu`` or ``cuda:N``)."""
        return self.backend.device_of(self._data)

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar tensor)."""
        return len(self._data.shape)

    def dim(self) -> int:
        """The number of dimensions, as ``ndim``."""
        return len(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape as a tuple, or the size of dimension ``dim`` (negative counts from the end)."""
        shape = self.shape
        if dim is None:
            return shape
        return shape[dim]

    def numel(self) -> int:
        """The number of elements (the product of the shape; 1 for a 0-d tensor)."""
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    def ndimension(self) -> int:
        """The number of dimensions, as ``ndim`` (PyTorch's older spelling)."""
        return len(self._data.shape)

    def element_size(self) -> int:
        """The size of one element in bytes."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes, as ``element_size()``."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """``numel() * element_size()``: the bytes the elements would take (an expanded view
        counts every element, as in PyTorch)."""
        return self.numel() * self.dtype.itemsize

    def __len__(self) -> int:
        if not self._data.shape:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @property
    def is_leaf(self) -> bool:
        """Whether this tensor has no history (no ``grad_fn``): a leaf of any graph."""
        self._fresh()
        return self.grad_fn is None

    def is_inference(self) -> builtins.bool:
        """Whether this is an inference tensor: made inside ``retrograd.inference_mode()``,
        or a view of one (see ``retrograd.inference_mode``)."""
        return self._vc is INFERENCE

    def is_floating_point(self) -> builtins.bool:
        """Whether the dtype is a floating point one."""
        return self.dtype.is_floating_point

    @property
    def _version(self) -> int:
        return 0 if self._vc is None else version_of(self._vc)

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for a leaf or a single-output node)."""
        return self._output_nr

    @property
    def name(self) -> str | None:
        """An optional label for this tensor: None unless one is assigned."""
        return None if self._extra is None else self._extra.name

    @name.setter
    def name(self, value: str | None) -> None:
        self._x().name = value

    # -- requires_grad / grad -------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients are computed for this tensor (a leaf's flag, or having
        history, or being a differentiable view of a tensor that requires grad)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"requires_grad must be a bool, got {type(value).__name__}")
        self._fresh()  # PyTorch reads the grad_fn of a stale view taken again
        if self.grad_fn is not None:
            if value:
                return
            raise RetrogradError(
                "you can only change requires_grad flags of leaf variables; this tensor has "
                f"grad_fn={self.grad_fn.name()}. Use detach() to get a tensor without history."
            )
        if value and not self.dtype.is_floating_point:
            raise RetrogradError(
                f"only tensors of floating point dtype can require gradients; got {self.dtype}"
            )
        if value and self._vc is INFERENCE and not is_inference_mode_enabled():
            raise RetrogradError(REQUIRES_GRAD_ERROR)
        if not value and self._extra is not None and self._extra.view_creation == "no_grad":
            return  # PyTorch: a view made under no_grad requires grad while its base does
        self._requires_grad = value
        if self._base is None and self._extra is not None and self._extra.plain_views:
            from .ops.late_views import wake

            wake(self, stale=False)  # views taken before: see ops.late_views

    @requires_grad.deleter
    def requires_grad(self) -> None:
        # PyTorch's setter sees the deletion as None: its words
        raise RetrogradError("requires_grad must be a bool (it cannot be deleted)")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (default True) and return the tensor; only a leaf's flag
        can be changed, as in PyTorch."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient. Reading it on a non-leaf that does not retain its
        gradient warns, as in PyTorch: backward never fills it."""
        if self.grad_fn is not None and self._grad is None and (
                self._extra is None or not self._extra.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is None:
            self._grad = None
            return
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(value).__name__}")
        if value is self:
            raise RetrogradError("can't assign Variable as its own grad")
        if value.shape != self.shape:
            raise ShapeError(
                f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                "tensor are the same size"
            )
        if value.device != self.device:
            raise RetrogradError(
                f"attempting to assign a gradient located on device {value.device} to a "
                f"tensor located on device {self.device}. Please ensure that the gradient and "
                "the tensor are on the same device"
            )
        want = self._grad_dtype()
        if want is not None and value.dtype is not want:
            raise DTypeError(
                f"attempting to assign a gradient with dtype {value.dtype} to a tensor with "
                f"grad_dtype {want}. The gradient must match the tensor's grad_dtype (defaults "
                "to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
                "specific dtype, or None to allow any dtype."
            )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def _grad_dtype(self) -> Any:
        """The dtype this tensor's ``.grad`` must have (None: any), without the leaf check."""
        ex = self._extra
        if ex is None or ex.grad_dtype is OWN_DTYPE:
            return self.dtype
        return ex.grad_dtype

    @property
    def grad_dtype(self) -> Any:
        """The dtype of this leaf's ``.grad``: gradients accumulated into it are cast to it,
        and an assigned ``.grad`` must have it. Defaults to the tensor's dtype; None allows
        any dtype (then a gradient keeps its own)."""
        if self.grad_fn is not None:
            raise RetrogradError("grad_dtype can only be accessed on leaf tensors.")
        return self._grad_dtype()

    @grad_dtype.setter
    def grad_dtype(self, value: Any) -> None:
        if self.grad_fn is not None:
            raise RetrogradError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, DType):
            raise RetrogradError(f"grad_dtype must be a retrograd dtype or None, but got "
                                 f"{type(value).__name__}")
        self._x().grad_dtype = value

    @property
    def retains_grad(self) -> bool:
        """Whether this non-leaf keeps its gradient in ``.grad`` (set by ``retain_grad()``; E11 in
        docs/semantics.md)."""
        return self._extra is not None and self._extra.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` (accumulating like a leaf).
        A stale view is taken again first, so the retained gradient is its current
        version's; a view made under no_grad is a leaf here, stale or not (PyTorch reads
        ``is_leaf`` without taking the view again)."""
        if not self._requires_grad:
            raise RetrogradError("can't retain_grad on a tensor that has requires_grad=False")
        if self.grad_fn is None:
            return  # leaves keep their grad anyway
        self._fresh()
        if self.grad_fn is None:
            return  # taken again from a base that no longer requires grad
        ex = self._x()
        if ex.retains_grad:
            return
        # the node's entry first: a thread that sees the flag set finds the entry there
        self.grad_fn._hook_table().retain[self._output_nr] = weakref.ref(self)
        ex.retains_grad = True

    def _follow_retain(self, old_fn: Any, old_nr: int) -> None:
        """After an in-place op gave this tensor a new history: ``retain_grad`` moves to the
        new node (the retained gradient is the current version's, as in PyTorch); hooks
        registered before stay with the old version."""
        if self._extra is None or not self._extra.retains_grad or self.grad_fn is old_fn:
            return
        if old_fn is not None and old_fn._hooks is not None:
            old_fn._hooks.retain.pop(old_nr, None)
        if self.grad_fn is not None:
            self.grad_fn._hook_table().retain[self._output_nr] = weakref.ref(self)

    def _fresh(self) -> None:
        """A view whose base was changed in place (by any op, recorded or not) takes its
        history again from the base before it is used (``ops._core._check_view_fresh``)."""
        if self._base is not None and self._extra is not None:
            from .ops._core import _check_view_fresh

            _check_view_fresh(self)

    def register_hook(self, fn: Callable[[Tensor], Tensor | None]) -> Any:
        """``fn(grad) -> Tensor | None`` sees this tensor's total gradient; a returned tensor
        replaces it for everything downstream and for ``.grad``."""
        from .autograd.node import RemovableHandle, _hook_ids

        self._fresh()
        if not self._requires_grad:
            raise RetrogradError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_prehook(self._output_nr, fn)
        ex = self._x()
        table = ex.hooks
        if table is None:
            new: dict[int, Callable[..., Any]] = {}
            with _create_lock:
                table = ex.hooks
                if table is None:
                    table = ex.hooks = new
        key = next(_hook_ids)
        table[key] = fn
        return RemovableHandle(table, key)

    def register_post_accumulate_grad_hook(self, fn: Callable[[Tensor], None]) -> Any:
        """``fn(tensor)`` runs after this leaf's ``.grad`` has been written. PyTorch's order
        of checks: ``requires_grad``, then ``grad_fn`` -- of a stale view taken again, which
        refuses a view made under no_grad whose base changed since."""
        from .autograd.node import RemovableHandle, _hook_ids

        if not self._requires_grad:
            raise RetrogradError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        self._fresh()
        if self.grad_fn is not None:
            raise RetrogradError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        ex = self._x()
        table = ex.post_hooks
        if table is None:
            new: dict[int, Callable[..., Any]] = {}
            with _create_lock:
                table = ex.post_hooks
                if table is None:
                    table = ex.post_hooks = new
        key = next(_hook_ids)
        table[key] = fn
        return RemovableHandle(table, key)

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Sequence[Tensor] | Tensor | None = None,
    ) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves and accumulate it
        into their ``.grad`` (``retrograd.autograd.backward``).

        ``gradient`` is the seed (needed unless this is a single-element tensor; E3);
        ``retain_graph`` keeps the graph for another backward (E5); ``create_graph`` records the
        backward itself, for higher derivatives (E6); ``inputs`` restricts accumulation to those
        tensors. Rules: docs/semantics.md (E1-E13)."""
        from .autograd.api import backward

        if gradient is not None and not isinstance(gradient, Tensor):
            raise TypeError(
                f"backward(gradient=...): gradient must be a Tensor or None, got "
                f"{type(gradient).__name__}"
            )
        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=inputs)

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another for autograd (PyTorch's ``_is_view``):
        made by a view op. A ``detach()`` alias shares its source's memory but is no view,
        nor is a view of an inference tensor, as in PyTorch."""
        if self._base is None:
            return False
        ex = self._extra
        if ex is not None and (ex.view_chain is not None or ex.view_creation is not None or
                               ex.multi_output is not None or ex.alias_view):
            return True
        from .ops.late_views import is_registered

        return is_registered(self)

    # -- detaching, copying, conversion -----------------------------------------------------
    def detach(self) -> Tensor:
        """A tensor sharing data and version counter, without history."""
        out = Tensor(self._data, self.backend)
        out._vc = self._counter()
        out._base = self if self._base is None else self._base
        if self.backend.functional:  # immutable arrays: writes reach it through its base
            from ._writes import adopt_view

            adopt_view(out, self, None)
        return out

    def detach_(self) -> Tensor:
        """Detach this tensor from its history in place: it becomes a leaf that does not require
        grad; refused on a view of a tensor that requires grad, as in PyTorch (E7 in
        docs/semantics.md)."""
        if self._base is not None and self._base._requires_grad:
            raise RetrogradError("detach_() on a view of a tensor that requires grad is refused")
        if self.grad_fn is not None:
            # the node that saved this output keeps watching it (E7), and learns that it
            # was detached in place: using it in a backward is refused, as in PyTorch
            mark_detached(self._counter())
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """A detached alias of this tensor (``detach()``); assigning replaces the data without
        touching the history or version counter."""
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        if self._requires_grad and not value.dtype.is_floating_point:
            raise DTypeError(
                "data set to a tensor that requires gradients must be floating point or "
                f"complex dtype (got {value.dtype})"
            )
        self._data = value._data
        self.backend = value.backend

    @data.deleter
    def data(self) -> None:
        raise RetrogradError("Deleting tensor data is not allowed. Delete tensor instead!")

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise ShapeError(
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
            )
        return self.backend.ops.item(self._data)

    def tolist(self) -> Any:
        """The data as nested Python lists (a number for a 0-d tensor)."""
        return self.backend.to_numpy(self._data).tolist()

    def numpy(self) -> Any:
        """The data as a NumPy array sharing memory; CPU tensors only, and refused for a tensor that
        requires grad outside ``no_grad`` (use ``detach().numpy()``)."""
        if self.backend.name != "cpu":
            raise TypeError(
                f"can't convert a {self.device} tensor to numpy: use .cpu() first to copy it "
                "to host memory"
            )
        if self._requires_grad and _grad_state.enabled:  # allowed under no_grad, as in PyTorch
            raise RetrogradError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy

        arr = self.backend.to_numpy(self._data)
        return arr if dtype is None else numpy.asarray(arr, dtype=dtype)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(other_tensor)``."""
        from .ops.conversion import to

        return to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        """This tensor on the CPU: itself when already there, else a copy (``to("cpu")``,
        differentiable)."""
        return self.to("cpu")

    def cuda(self, device: int | str | None = None) -> Tensor:
        """This tensor on a CUDA device (``cuda``, ``cuda:N``, or index ``device``): itself when
        already there, else a copy (``to``, differentiable)."""
        if device is None:
            return self.to("cuda")
        return self.to(device if isinstance(device, str) else f"cuda:{device}")

    def float(self) -> Tensor:
        """This tensor as float32 (``to(float32)``: itself if already float32, otherwise a copy
        recorded as ``ToCopyBackward0``)."""
        return self.to(as_dtype("float32"))

    def double(self) -> Tensor:
        """This tensor as float64 (``to(float64)``: itself if already float64, otherwise a copy
        recorded as ``ToCopyBackward0``)."""
        return self.to(as_dtype("float64"))

    def half(self) -> Tensor:
        """This tensor as float16 (``to(float16)``: itself if already float16, otherwise a copy
        recorded as ``ToCopyBackward0``)."""
        return self.to(as_dtype("float16"))

    def long(self) -> Tensor:
        """This tensor as int64 (``to(int64)``: itself if already int64, otherwise a copy, which has
        no gradient)."""
        return self.to(as_dtype("int64"))

    def int(self) -> Tensor:
        """This tensor as int32 (``to(int32)``: itself if already int32, otherwise a copy, which has
        no gradient)."""
        return self.to(as_dtype("int32"))

    def bool(self) -> Tensor:
        """This tensor as bool (``to(bool)``: itself if already bool, otherwise a copy, which has no
        gradient)."""
        return self.to(as_dtype("bool"))

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in ``other``'s dtype (``to(other.dtype)``)."""
        return self.to(other.dtype)

    # -- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        from .dtypes import get_default_dtype
        from .printing import tensor_body

        prefix = "tensor("
        shape = tuple(self.shape)
        host = self.backend.to_numpy(self._data)
        body = tensor_body(host.tolist(), shape, self.dtype.is_floating_point, len(prefix))
        extras = []
        if self.backend.name != "cpu":
            extras.append(f"device='{self.device}'")
        if self.numel() == 0 and shape != (0,):
            extras.append(f"size={shape}")
        if self.dtype not in (get_default_dtype(), int64, bool_):
            extras.append(f"dtype={self.dtype}")
        fn: Any = self.grad_fn
        if self._base is not None and self._extra is not None:
            try:  # a stale view is shown with its history taken again, as PyTorch prints it
                self._fresh()
                fn = self.grad_fn
            except RetrogradError:  # one PyTorch refuses to take again
                fn = "Invalid"
        if fn is not None:
            extras.append(f"grad_fn=<{fn if isinstance(fn, str) else type(fn).__name__}>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        from .printing import add_suffixes

        return add_suffixes(prefix + body, extras, len(prefix))

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> builtins.bool:
        if self.numel() != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.numel()} elements is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> builtins.float:
        return float(self.item())

    def __int__(self) -> builtins.int:
        return int(self.item())

    def __index__(self) -> builtins.int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    __hash__ = object.__hash__

    # -- copying and pickling (leaves only, as in PyTorch) ---------------------------------
    def __reduce_ex__(self, protocol: Any) -> Any:
        if self.grad_fn is not None:
            raise RetrogradError(
                "only leaf tensors (created by the user) can be pickled or deep-copied; call "
                ".detach() first"
            )
        host = self.backend.to_numpy(self._data)
        if self._base is not None:
            # an alias (``detach()``) holds its base's very array, which pickle would write
            # once for both: each gets its own, as PyTorch's pickle keeps no view relation
            host = host.copy()
        return (_rebuild, (type(self), host, str(self.device), self._requires_grad,
                           self.backend.name))

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
        if self.grad_fn is not None:
            raise RetrogradError(
                "only leaf tensors (created by the user) support the deepcopy protocol; call "
                ".detach() first"
            )
        import copy

        # A view (or detached alias) is copied as a view of its base's copy, as PyTorch's
        # deepcopy keeps a view on its base's storage: ``deepcopy((base, base[1:]))`` gives a
        # pair that still shares memory, and one version counter (retrograd's rule for
        # aliases). A base with history cannot be copied: the view then gets memory of its own.
        base = self._base
        data = new_base = None
        if base is not None and base.grad_fn is None:
            from .ops.shape import alias_like

            new_base = copy.deepcopy(base, memo)
            data = alias_like(self, base, new_base)
            if id(self) in memo:  # reached again through the base's ``.grad``
                return memo[id(self)]  # type: ignore[no-any-return]
        out = type(self).__new__(type(self))
        Tensor.__init__(out, self.backend.ops.copy(self._data) if data is None else data,
                        self.backend, self._requires_grad)
        memo[id(self)] = out
        if data is not None and new_base is not None:
            out._base = new_base
            out._vc = new_base._counter()
            creation = None if self._extra is None else self._extra.view_creation
            if creation is not None:  # e.g. a view taken under no_grad: refused in place alike
                out._x().view_creation = creation
        if self._grad is not None:
            out._grad = copy.deepcopy(self._grad, memo)
        return out


def _rebuild(cls: Any, host: Any, device: str, requires_grad: bool, backend_name: str) -> Tensor:
    from .backends.registry import backend_for_device

    backend, dev = backend_for_device(device)
    with backend.use_device(dev.index):
        data = backend.asarray(host)
    out = cls.__new__(cls)
    Tensor.__init__(out, data, backend, requires_grad)
    return out
