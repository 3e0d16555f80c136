"""``MultiheadAttention`` over ``scaled_dot_product_attention``.

The forward is PyTorch's ``multi_head_attention_forward``: the input projections, the heads
folded into the batch, then -- when the weights are wanted -- ``softmax(q k^T / sqrt(d) +
mask) v`` written out (so the weights can be returned, averaged over the heads by default),
or ``scaled_dot_product_attention`` otherwise; then the output projection ``out_proj``.
Masks follow PyTorch's ``nn.MultiheadAttention`` convention, the opposite of
``scaled_dot_product_attention``'s: a bool ``True`` marks a position that may NOT be attended.
"""

from __future__ import annotations

import math
from typing import Any

from ..dtypes import bool_
from ..tensor import Tensor
from . import init
from .layers import Linear
from .module import Module
from .parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under PyTorch's name for ``MultiheadAttention.out_proj`` (so reprs
    match)."""


def _canonical_mask(mask: Tensor | None, name: str, dtype: Any) -> Tensor | None:
    """A bool mask (True: masked) as a float one of 0 and -inf in ``dtype``; a float mask as
    is."""
    from ..ops.creation import zeros
    from ..ops.pointwise import masked_fill

    if mask is None:
        return None
    if mask.dtype is bool_:
        return masked_fill(zeros(tuple(mask.shape), dtype=dtype, device=mask.device), mask,
                           -math.inf)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """``mask`` with one more column of zeros (a key that may be attended)."""
    from ..ops.layout import pad

    return None if mask is None else pad(mask, (0, 1))


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                 attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the inputs are batched (a 3-d query); PyTorch's checks of the operands'
    dimensions (AssertionError, its words)."""
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.ndim}-D and {value.ndim}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.ndim}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.ndim}-D tensor "
                                     "instead")
            want = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.ndim == 3 and tuple(attn_mask.shape) != want:
                raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.ndim}-D query tensor")


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads of ``embed_dim // num_heads`` features each, with
    PyTorch's parameters: ``in_proj_weight`` ``(3E, E)`` (or ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``),
    ``in_proj_bias`` ``(3E,)`` and the ``out_proj`` linear layer; initialised as PyTorch
    (``xavier_uniform_`` projections, zero biases). ``dropout``: on the attention weights
    while training. ``batch_first``: inputs ``(N, L, E)`` rather than ``(L, N, E)``.
    ``add_bias_kv``: learned ``bias_k``/``bias_v`` ``(1, 1, E)`` appended to the keys and
    values (``xavier_normal_``); ``add_zero_attn``: a key and value of zeros appended after
    the heads are split."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        from .. import empty

        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype, "device": device}
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        self.bias_k: Parameter | None
        self.bias_v: Parameter | None
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _project(self, query: Tensor, key: Tensor, value: Tensor
                 ) -> tuple[Tensor, Tensor, Tensor]:
        """The query, key and value input projections."""
        from .functional import linear

        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """``(attn_output, attn_weights)``: the attention of ``query`` ``(L, N, E)`` (or
        ``(N, L, E)`` with ``batch_first``; ``(L, E)`` unbatched) over ``key``/``value``
        ``(S, N, kdim/vdim)``, and the attention weights ``(N, L, S)`` averaged over the
        heads (``(N, H, L, S)`` unless ``average_attn_weights``; None unless
        ``need_weights``). ``key_padding_mask`` ``(N, S)``: True (or -inf) marks a key to
        ignore. ``attn_mask`` ``(L, S)`` or ``(N * H, L, S)``: True marks a pair that may not
        attend; a float mask is added. ``is_causal``: a hint that ``attn_mask`` is the causal
        mask (which must be given)."""
        from ..ops.creation import zeros
        from ..ops.products import baddbmm, bmm
        from ..ops.shape import cat
        from ..ops.tiling import repeat
        from .functional import dropout, linear, scaled_dot_product_attention, softmax

        batched = _shape_check(query, key, value, key_padding_mask, attn_mask,
                               self.num_heads)
        if batched and self.batch_first:
            query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        tgt_len, bsz, embed_dim = query.shape
        src_len = key.shape[0]
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {embed_dim}")
        h, hd = self.num_heads, self.head_dim
        kpm = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask`"
                               " to create this mask.")
        mask: Tensor | None
        if is_causal and kpm is None and not need_weights:
            mask = None
        else:
            mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
            if kpm is not None:
                is_causal = False
        q, k, v = self._project(query, key, value)
        if mask is not None:
            if mask.ndim == 2:
                if tuple(mask.shape) != (tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {mask.shape}, but "
                                       f"should be {(tgt_len, src_len)}.")
                mask = mask.unsqueeze(0)
            elif mask.ndim == 3:
                if tuple(mask.shape) != (bsz * h, tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {mask.shape}, but "
                                       f"should be {(bsz * h, tgt_len, src_len)}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {mask.ndim} is not supported")
        if self.bias_k is not None and self.bias_v is not None:  # one more key and value
            k = cat([k, repeat(self.bias_k, 1, bsz, 1)])
            v = cat([v, repeat(self.bias_v, 1, bsz, 1)])
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        q = q.reshape(tgt_len, bsz * h, hd).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * h, hd).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * h, hd).transpose(0, 1)
        if self.add_zero_attn:  # and a key and value of zeros
            zero = zeros((bsz * h, 1, hd), dtype=k.dtype, device=k.device)
            k, v = cat([k, zero], dim=1), cat([v, zero], dim=1)
            mask, kpm = _pad_last(mask), _pad_last(kpm)
        src_len = k.shape[1]
        if kpm is not None:
            if tuple(kpm.shape) != (bsz, src_len):
                raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, "
                                     f"but got {tuple(kpm.shape)}")
            kpm = kpm.reshape(bsz, 1, 1, src_len).expand(-1, h, -1, -1).reshape(
                bsz * h, 1, src_len)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        weights: Tensor | None = None
        if need_weights:
            q_scaled = q * math.sqrt(1.0 / float(hd))
            kt = k.transpose(-2, -1)
            w = baddbmm(mask, q_scaled, kt) if mask is not None else bmm(q_scaled, kt)
            w = softmax(w, -1)
            if p > 0.0:
                w = dropout(w, p)
            out = bmm(w, v)
            out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
            out = linear(out, self.out_proj.weight, self.out_proj.bias)
            out = out.view(tgt_len, bsz, out.shape[1])
            weights = w.view(bsz, h, tgt_len, src_len)
            if average_attn_weights:
                weights = weights.mean(1)
            if not batched:
                out = out.squeeze(1)
                weights = weights.squeeze(0)
        else:
            if mask is not None:
                if mask.shape[0] == 1 and mask.ndim == 3:
                    mask = mask.unsqueeze(0)
                else:
                    mask = mask.reshape(bsz, h, -1, src_len)
            q = q.reshape(bsz, h, tgt_len, hd)
            k = k.reshape(bsz, h, src_len, hd)
            v = v.reshape(bsz, h, src_len, hd)
            out = scaled_dot_product_attention(q, k, v, mask, p, is_causal)
            out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
            out = linear(out, self.out_proj.weight, self.out_proj.bias)
            out = out.view(tgt_len, bsz, out.shape[1])
            if not batched:
                out = out.squeeze(1)
        if batched and self.batch_first:
            return out.transpose(1, 0), weights
        return out, weights
