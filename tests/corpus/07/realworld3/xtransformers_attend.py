# expect: masked_rows_nan
# also: masked_rows_not_zero
# bug-lines: 127
# source: lucidrains/x-transformers @004dd51c1ba44284cdd24b1b9792c83e0039ac24, x_transformers/attend.py (Attend.forward, non-flash path; create_causal_mask)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   einops rearrange/repeat -> indexing/.repeat and einsum strings without spaces (einops not allowed); branches for options left at their
#   defaults (flash, talking heads, sparse top-k, l2 distance, cope, selective, softclamp, zero-kv, sigmoid) removed; a contract function
#   passes ~key_padding_mask (Attend's mask is True = attend)
from __future__ import annotations

from functools import partial

import torch
from torch.nn import Module
from torch import nn, Tensor
import torch.nn.functional as F

# helpers

def exists(val):
    return val is not None

def default(val, d):
    return val if exists(val) else d

# functions for creating causal mask

def create_causal_mask(i, j, device):
    return torch.ones((i, j), device = device, dtype = torch.bool).triu(j - i + 1)

# main class

class Attend(Module):
    def __init__(
        self,
        *,
        dropout = 0.,
        causal = False,
        heads = None,
        scale = None,
        qk_norm = False,
    ):
        super().__init__()
        self.scale = scale

        # causal related

        self.causal = causal
        self.create_causal_mask = create_causal_mask

        # attention type

        softmax_fn = partial(F.softmax, dim = -1)
        self.attn_fn = partial(softmax_fn, dtype = torch.float32) if not qk_norm else softmax_fn

        # dropouts

        self.dropout = dropout
        self.attn_dropout = nn.Dropout(dropout)

    def forward(
        self,
        q, k, v,
        mask = None,
        attn_bias = None,
        prev_attn = None
    ):
        """
        einstein notation
        b - batch
        h - heads
        n, i, j - sequence length (base sequence length, source, target)
        d - feature dimension
        """

        n, heads, kv_heads, device = q.shape[-2], q.shape[1], k.shape[1], q.device

        scale = default(self.scale, q.shape[-1] ** -0.5)

        causal = self.causal

        # handle key padding mask

        if exists(mask) and mask.ndim == 2:
            mask = mask[:, None, None, :]  # rearrange(mask, 'b j -> b 1 1 j')

        # handle kv cached decoding

        if n == 1 and causal:
            causal = False

        # handle grouped multi-query attention

        if kv_heads == 1:
            k, v = tuple(t[:, 0] for t in (k, v))  # rearrange(t, 'b 1 n d -> b n d')
        elif kv_heads < heads:
            k, v = tuple(t.repeat(1, heads // kv_heads, 1, 1) for t in (k, v))  # repeat(t, 'b kvh n d -> b (r kvh) n d', r = heads // kv_heads)

        kv_einsum_eq = 'bjd' if k.ndim == 3 else 'bhjd'

        sim = torch.einsum(f'bhid,{kv_einsum_eq}->bhij', q, k)

        sim = sim * scale

        if exists(prev_attn):
            sim = sim + prev_attn

        if exists(attn_bias):
            sim = sim + attn_bias

        i, j, dtype = *sim.shape[-2:], sim.dtype

        mask_value = -torch.finfo(sim.dtype).max

        if exists(mask):
            sim = sim.masked_fill(~mask, mask_value)

        if causal:
            causal_mask = self.create_causal_mask(i, j, device = device)
            sim = sim.masked_fill(causal_mask, mask_value)

        row_is_entirely_masked = None

        if exists(mask):
            row_is_entirely_masked = ~mask.any(dim = -1)

        attn = self.attn_fn(sim)
        attn = attn.type(dtype)

        attn = self.attn_dropout(attn)

        out = torch.einsum(f'bhij,{kv_einsum_eq}->bhid', attn, v)

        if exists(row_is_entirely_masked) and row_is_entirely_masked.any():
            out = out.masked_fill(row_is_entirely_masked[..., None], 0.)

        return out


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # adapter: Attend's key padding mask is True = attend (it fills `~mask`); the contract's is True = padding
    mask = None if key_padding_mask is None else ~key_padding_mask
    return Attend(causal = causal)(query, key, value, mask = mask)
