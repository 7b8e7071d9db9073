# expect: kv_cache_order
# also: heads_not_divisible
# bug-lines: 13, 31, 32
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, k_cache=None, v_cache=None):
        batch, num_tokens, _ = x.shape

        queries = self.W_query(x).view(batch, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(batch, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(batch, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        if k_cache is not None:
            keys = torch.cat([keys, k_cache], dim=2)
            values = torch.cat([values, v_cache], dim=2)

        total = keys.shape[2]
        start = total - num_tokens
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[start:total, :total]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1)

        context = (attn_weights @ values).transpose(1, 2).contiguous().view(batch, num_tokens, self.d_out)
        return self.out_proj(context), keys, values
