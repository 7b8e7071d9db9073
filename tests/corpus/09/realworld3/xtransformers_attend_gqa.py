# expect: gqa_group_mapping
# also: heads_not_divisible
# bug-lines: 96
# source: lucidrains/x-transformers @004dd51c1ba44284cdd24b1b9792c83e0039ac24, x_transformers/attend.py (Attend) fed as x_transformers.Attention feeds it (kv_heads)
# changes (only where the exercise contract forces it; the author's logic is kept, bugs included):
#   Attend as in 07/xtransformers_attend.py (einops replaced); a GroupedQueryAttention wrapper with the contract's W_query/W_key/W_value/out_proj
#   does x_transformers.Attention's head split/merge (dim_head = d_out // num_heads) and its `divisible_by(heads, kv_heads)` assert
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


def divisible_by(num, den):
    return (num % den) == 0


class GroupedQueryAttention(nn.Module):
    # adapter: the projections, head split and merge of x_transformers.Attention (kv_heads), with the
    # contract's layer names; `Attend(causal = True)` does the attention, including the kv-head expansion
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        heads, kv_heads = num_heads, num_kv_groups
        dim_head = d_out // heads
        assert divisible_by(heads, kv_heads)
        self.heads = heads
        self.kv_heads = kv_heads
        self.dim_head = dim_head
        self.W_query = nn.Linear(d_in, dim_head * heads, bias = qkv_bias)
        self.W_key = nn.Linear(d_in, dim_head * kv_heads, bias = qkv_bias)
        self.W_value = nn.Linear(d_in, dim_head * kv_heads, bias = qkv_bias)
        self.attend = Attend(causal = True)
        self.out_proj = nn.Linear(dim_head * heads, d_out)

    def forward(self, x):
        b, n, _ = x.shape
        q = self.W_query(x).view(b, n, self.heads, self.dim_head).transpose(1, 2)  # 'b n (h d) -> b h n d'
        k = self.W_key(x).view(b, n, self.kv_heads, self.dim_head).transpose(1, 2)
        v = self.W_value(x).view(b, n, self.kv_heads, self.dim_head).transpose(1, 2)
        out = self.attend(q, k, v)
        out = out.transpose(1, 2).reshape(b, n, self.heads * self.dim_head)  # 'b h n d -> b n (h d)'
        return self.out_proj(out)
