"""Recurrent layers, PyTorch's (``RNN``, ``LSTM``, ``GRU`` and their cells).

Parameters, their names, shapes, order and initialisation are PyTorch's, so ``state_dict``
keys match torch's exactly. The forward is a Python loop over the time steps of retrograd's
differentiable ops: the input projection of every step is one ``linear`` up front, then each
step adds the hidden projection and applies the gates (LSTM: ``i, f, g, o``; GRU: ``r, z, n``
with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``). The values are torch's; the backward
graph's node names differ from torch's fused kernels.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATE_CHUNKS = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

# A step maps (input projection, state, weight_hh, bias_hh, weight_hr) to the next state:
# (h,) for RNN and GRU, (h, c) for LSTM.
_Step = Callable[[Tensor, tuple[Tensor, ...], Tensor, "Tensor | None", "Tensor | None"],
                 tuple[Tensor, ...]]


# -- one time step ----------------------------------------------------------------------------
def _hidden_projection(h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    from ..ops.linalg import linear

    return linear(h, w_hh, b_hh)


def _tanh_step(gi: Tensor, state: tuple[Tensor, ...], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple[Tensor, ...]:
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""
    from ..ops.elementwise import tanh

    return (tanh(gi + _hidden_projection(state[0], w_hh, b_hh)),)


def _relu_step(gi: Tensor, state: tuple[Tensor, ...], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple[Tensor, ...]:
    """``h' = relu(W_ih x + b_ih + W_hh h + b_hh)``."""
    from ..ops.elementwise import relu

    return (relu(gi + _hidden_projection(state[0], w_hh, b_hh)),)


def _lstm_step(gi: Tensor, state: tuple[Tensor, ...], w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None) -> tuple[Tensor, ...]:
    """Gates ``i, f, g, o`` (in that order along the gate dimension); ``c' = f c + i g``,
    ``h' = o tanh(c')``, then projected by ``weight_hr`` when there is one."""
    from ..ops.elementwise import sigmoid, tanh
    from ..ops.linalg import linear
    from ..ops.views import chunk

    h, c = state
    i, f, g, o = chunk(gi + _hidden_projection(h, w_hh, b_hh), 4, 1)
    c_next = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h_next = sigmoid(o) * tanh(c_next)
    if w_hr is not None:
        h_next = linear(h_next, w_hr)
    return h_next, c_next


def _gru_step(gi: Tensor, state: tuple[Tensor, ...], w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None) -> tuple[Tensor, ...]:
    """Gates ``r, z, n``: ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``,
    ``n = tanh(i_n + r * h_n)`` (``h_n`` includes ``b_hn``), ``h' = n + z (h - n)``."""
    from ..ops.elementwise import sigmoid, tanh
    from ..ops.views import chunk

    h = state[0]
    i_r, i_z, i_n = chunk(gi, 3, 1)
    h_r, h_z, h_n = chunk(_hidden_projection(h, w_hh, b_hh), 3, 1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return (n + z * (h - n),)


_STEPS: dict[str, _Step] = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step,
                            "LSTM": _lstm_step, "GRU": _gru_step}


def _run_direction(step: _Step, x: Tensor, state: tuple[Tensor, ...],
                   weights: dict[str, Tensor | None], reverse: bool
                   ) -> tuple[Tensor, tuple[Tensor, ...]]:
    """One layer in one direction over ``x`` ``(L, N, H_in)``: the outputs ``(L, N, H_out)``
    (in the input's time order, also when run backwards) and the final state."""
    from ..ops.linalg import linear
    from ..ops.shape import stack
    from ..ops.views import unbind

    w_ih = weights["weight_ih"]
    assert w_ih is not None
    w_hh = weights["weight_hh"]
    assert w_hh is not None
    projected = unbind(linear(x, w_ih, weights["bias_ih"]), 0)
    outputs: list[Tensor | None] = [None] * len(projected)
    order = range(len(projected) - 1, -1, -1) if reverse else range(len(projected))
    for t in order:
        state = step(projected[t], state, w_hh, weights["bias_hh"], weights["weight_hr"])
        outputs[t] = state[0]
    return stack([o for o in outputs if o is not None], 0), state


# -- the multi-layer modules --------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return type(value).__name__


def _is_packed_sequence(value: Any) -> bool:
    return hasattr(value, "batch_sizes") and hasattr(value, "data")


def _check_tensor(owner: str, name: str, value: Any) -> None:
    """TypeError unless ``value`` is a Tensor (a PackedSequence named as unsupported)."""
    if _is_packed_sequence(value):
        raise TypeError(f"{owner}: PackedSequence {name} is not supported; pass a padded "
                        "Tensor (L, N, H_in) instead")
    if not isinstance(value, Tensor):
        raise TypeError(f"{owner}: expected {name} to be a Tensor, got {_type_name(value)}")


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: PyTorch's constructor checks, parameters
    (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}`` with ``proj_size``; ``_reverse`` for the backward direction), their
    ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))`` initialisation, the input and hidden
    state checks, and the layer loop (dropout between layers while training)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        from .. import empty

        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):  # type: ignore[operator]
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.dropout = float(dropout)
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int),
                                  ("hidden_size", hidden_size, int),
                                  ("num_layers", num_layers, int), ("proj_size", proj_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{_type_name(value)}")
            if kind is int and name != "proj_size" and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATE_CHUNKS:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATE_CHUNKS[mode] * hidden_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = {"dtype": dtype, "device": device}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = [kind + suffix for kind, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, Parameter(empty(*shape, **kw)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))`` (from
        ``retrograd.manual_seed``'s generator)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs the weights for cuDNN here; retrograd has nothing to
        pack)."""

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        """PyTorch's: the sizes, then each argument that differs from its default."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks ---------------------------------------------------------------------------------
    def _check_input(self, input: Tensor) -> None:  # noqa: A002 - PyTorch's name
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        if self.input_size != input.shape[-1]:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _expected_hidden_size(self, input: Tensor, size: int) -> tuple[int, int, int]:  # noqa: A002
        batch = input.shape[0] if self.batch_first else input.shape[1]
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden_size(hx: Tensor, expected: tuple[int, int, int],
                           msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _check_state_dtype(self, input: Tensor, hx: Sequence[Tensor]) -> None:  # noqa: A002
        for h in hx:
            if h.dtype != input.dtype:
                raise RuntimeError(f"{type(self).__name__}: hidden state dtype ({h.dtype}) "
                                   f"does not match input dtype ({input.dtype})")

    def _batched_input(self, input: Any) -> tuple[Tensor, bool]:  # noqa: A002
        """The input as 3-d (an unbatched 2-d input gets a batch of one) and whether it was
        batched; PyTorch's ValueError for other ranks."""
        from ..ops.shape import unsqueeze

        name = type(self).__name__
        _check_tensor(name, "input", input)
        if input.ndim not in (2, 3):
            tail = " tensor" if self.mode.startswith("RNN") else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D"
                             f"{tail} instead")
        if input.ndim == 3:
            return input, True
        return unsqueeze(input, 0 if self.batch_first else 1), False

    def _zeros_state(self, input: Tensor, size: int) -> Tensor:  # noqa: A002
        from ..ops.creation import zeros

        return zeros(*self._expected_hidden_size(input, size), dtype=input.dtype,
                     device=input.device)

    # -- the recurrence ---------------------------------------------------------------------------
    def _layer_weights(self, index: int) -> dict[str, Tensor | None]:
        weights: dict[str, Tensor | None] = dict.fromkeys(
            ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
        for name in self._all_weights[index]:
            weights[name.split("_l")[0]] = getattr(self, name)
        return weights

    def _recur(self, input: Tensor, states: tuple[Tensor, ...]  # noqa: A002
               ) -> tuple[Tensor, tuple[Tensor, ...]]:
        """Every layer and direction over ``input`` (3-d, in the module's layout) from the
        stacked initial ``states``: the last layer's output and the stacked final states."""
        from ..ops.dropout import dropout
        from ..ops.shape import cat, stack, transpose
        from ..ops.views import unbind

        if input.shape[1 if self.batch_first else 0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        step = _STEPS[self.mode]
        x = transpose(input, 0, 1) if self.batch_first else input
        initial = [unbind(s, 0) for s in states]
        finals: list[tuple[Tensor, ...]] = []
        directions = 2 if self.bidirectional else 1
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                out, final = _run_direction(step, x, tuple(s[index] for s in initial),
                                            self._layer_weights(index), direction == 1)
                outputs.append(out)
                finals.append(final)
            x = outputs[0] if directions == 1 else cat(outputs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = dropout(x, self.dropout, True)
        output = transpose(x, 0, 1) if self.batch_first else x
        return output, tuple(stack([f[k] for f in finals], 0) for k in range(len(states)))


class _SingleStateRNN(RNNBase):
    """The forward of ``RNN`` and ``GRU``: one hidden state ``h``."""

    def forward(self, input: Tensor, hx: Tensor | None = None  # noqa: A002
                ) -> tuple[Tensor, Tensor]:
        """``(output, h_n)``: ``output`` ``(L, N, D * H_out)`` (``(N, L, ...)`` with
        ``batch_first``; ``(L, D * H_out)`` unbatched), the last layer's hidden state at every
        step; ``h_n`` ``(D * num_layers, N, H_out)``, every layer's final state. ``hx``: the
        initial states (zeros when None)."""
        from ..ops.shape import squeeze, unsqueeze

        input, batched = self._batched_input(input)
        if hx is not None:
            _check_tensor(type(self).__name__, "hx", hx)
            if not batched and hx.ndim != 2:
                raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.ndim}-D tensor")
            if batched and hx.ndim != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.ndim}-D tensor")
            if not batched:
                hx = unsqueeze(hx, 1)
        else:
            hx = self._zeros_state(input, self.hidden_size)
        self._check_input(input)
        self._check_hidden_size(hx, self._expected_hidden_size(input, self.hidden_size))
        self._check_state_dtype(input, (hx,))
        output, (h_n,) = self._recur(input, (hx,))
        if not batched:
            return squeeze(output, 0 if self.batch_first else 1), squeeze(h_n, 1)
        return output, h_n


def _refuse_proj_size(kwargs: dict[str, Any], name: str) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{name}.__init__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


class RNN(_SingleStateRNN):
    """Elman RNN: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` with ``act`` tanh or
    relu (``nonlinearity``), ``num_layers`` stacked (``dropout`` between them while
    training), ``bidirectional`` optionally. PyTorch's arguments, parameters and checks."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        _refuse_proj_size(kwargs, "RNN")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, 0, device, dtype)


class GRU(_SingleStateRNN):
    """Gated recurrent unit: ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``,
    ``z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)``,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``; layers,
    dropout and directions as ``RNN``. PyTorch's arguments, parameters and checks."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        _refuse_proj_size(kwargs, "GRU")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory: gates ``i, f, g, o`` from ``W_ih x + b_ih + W_hh h + b_hh``,
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')`` (times
    ``weight_hr`` when ``proj_size > 0``, making ``h`` of size ``proj_size``); layers,
    dropout and directions as ``RNN``. PyTorch's arguments, parameters and checks."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input: Tensor,  # noqa: A002
                hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``(output, (h_n, c_n))``: ``output`` ``(L, N, D * H_out)`` (``(N, L, ...)`` with
        ``batch_first``; ``(L, D * H_out)`` unbatched) with ``H_out`` ``proj_size`` or
        ``hidden_size``; ``h_n`` ``(D * num_layers, N, H_out)`` and ``c_n``
        ``(D * num_layers, N, hidden_size)``. ``hx``: ``(h_0, c_0)`` (zeros when None)."""
        from ..ops.shape import squeeze, unsqueeze

        input, batched = self._batched_input(input)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = self._zeros_state(input, real_hidden)
            c0 = self._zeros_state(input, self.hidden_size)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("LSTM: expected hx to be a tuple (h_0, c_0) of two tensors, "
                                f"got {_type_name(hx)}")
            h0, c0 = hx
            _check_tensor("LSTM", "hx[0]", h0)
            _check_tensor("LSTM", "hx[1]", c0)
            want = 3 if batched else 2
            if h0.ndim != want or c0.ndim != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({h0.ndim}-D, {c0.ndim}-D) tensors")
            if not batched:
                h0, c0 = unsqueeze(h0, 1), unsqueeze(c0, 1)
        self._check_input(input)
        self._check_hidden_size(h0, self._expected_hidden_size(input, real_hidden),
                                "Expected hidden[0] size {}, got {}")
        self._check_hidden_size(c0, self._expected_hidden_size(input, self.hidden_size),
                                "Expected hidden[1] size {}, got {}")
        self._check_state_dtype(input, (h0, c0))
        output, (h_n, c_n) = self._recur(input, (h0, c0))
        if not batched:
            return (squeeze(output, 0 if self.batch_first else 1),
                    (squeeze(h_n, 1), squeeze(c_n, 1)))
        return output, (h_n, c_n)


# -- the cells ----------------------------------------------------------------------------------
class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` ``(chunks * hidden, input_size)``, ``weight_hh``
    ``(chunks * hidden, hidden)``, ``bias_ih``/``bias_hh`` ``(chunks * hidden,)`` (None
    without ``bias``), all from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``; PyTorch's
    input checks; one step of the recurrence."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        from .. import empty

        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        """PyTorch's: the sizes, ``bias`` when False, ``nonlinearity`` when not tanh."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _prepare(self, input: Any, hx: Sequence[Any] | None,  # noqa: A002
                 hx_names: Sequence[str]) -> tuple[Tensor, tuple[Tensor, ...], bool]:
        """The input and states as 2-d (an unbatched input and its states get a batch of
        one), zero states when ``hx`` is None, and whether the input was batched; PyTorch's
        checks."""
        from ..ops.creation import zeros
        from ..ops.shape import unsqueeze

        name = type(self).__name__
        _check_tensor(name, "input", input)
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D "
                             "instead")
        if hx is not None:
            for label, value in zip(hx_names, hx):
                _check_tensor(name, label, value)
                if value.ndim not in (1, 2):
                    raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got "
                                     f"{value.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = unsqueeze(input, 0)
        if hx is None:
            zero = zeros(input.shape[0], self.hidden_size, dtype=input.dtype,
                         device=input.device)
            states = tuple(zero for _ in hx_names)
        else:
            states = tuple(hx if batched else (unsqueeze(h, 0) for h in hx))
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for k, h in enumerate(states):
            if input.shape[0] != h.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match "
                                   f"hidden{k} batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
            if h.ndim != 2:
                raise RuntimeError(f"{name}: a {h.ndim - 1}-D state for an unbatched 1-D "
                                   "input; expected it to be 1-D")
        return input, states, batched

    def _step(self, step: _Step, input: Tensor, states: tuple[Tensor, ...]  # noqa: A002
              ) -> tuple[Tensor, ...]:
        from ..ops.linalg import linear

        gi = linear(input, self.weight_ih, self.bias_ih)
        return step(gi, states, self.weight_hh, self.bias_hh, None)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``, ``act`` tanh
    or relu (``nonlinearity``, checked when called, as PyTorch)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """``h'`` ``(N, hidden_size)`` (``(hidden_size,)`` for an unbatched ``input``) from
        ``input`` ``(N, input_size)`` and ``hx`` (zeros when None)."""
        from ..ops.shape import squeeze

        input, states, batched = self._prepare(input, None if hx is None else (hx,),
                                               ("hidden",))
        steps = {"tanh": _tanh_step, "relu": _relu_step}
        if self.nonlinearity not in steps:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        (h,) = self._step(steps[self.nonlinearity], input, states)
        return h if batched else squeeze(h, 0)


class LSTMCell(RNNCellBase):
    """One LSTM step: gates ``i, f, g, o`` from ``W_ih x + b_ih + W_hh h + b_hh``,
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor,  # noqa: A002
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """``(h', c')`` each ``(N, hidden_size)`` (1-d for an unbatched ``input``) from
        ``input`` ``(N, input_size)`` and ``hx = (h, c)`` (zeros when None)."""
        from ..ops.shape import squeeze

        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError("LSTMCell(): argument 'hx' must be tuple of Tensors (h_0, c_0), "
                            f"not {_type_name(hx)}")
        input, states, batched = self._prepare(input, hx, ("hx[0]", "hx[1]"))
        h, c = self._step(_lstm_step, input, states)
        return (h, c) if batched else (squeeze(h, 0), squeeze(c, 0))


class GRUCell(RNNCellBase):
    """One GRU step: ``r = sigmoid(i_r + h_r)``, ``z = sigmoid(i_z + h_z)``,
    ``n = tanh(i_n + r * h_n)`` (``h_n = W_hn h + b_hn``), ``h' = (1 - z) n + z h``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """``h'`` ``(N, hidden_size)`` (``(hidden_size,)`` for an unbatched ``input``) from
        ``input`` ``(N, input_size)`` and ``hx`` (zeros when None)."""
        from ..ops.shape import squeeze

        input, states, batched = self._prepare(input, None if hx is None else (hx,),
                                               ("hidden",))
        (h,) = self._step(_gru_step, input, states)
        return h if batched else squeeze(h, 0)
