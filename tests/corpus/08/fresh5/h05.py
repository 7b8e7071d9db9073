# expect: kv_cache_not_appended
# bug-lines: 40
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, k_cache=None, v_cache=None):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        if k_cache is not None:
            keys_all = torch.cat([k_cache, keys], dim=2)
            values_all = torch.cat([v_cache, values], dim=2)
        else:
            keys_all, values_all = keys, values
        p = keys_all.shape[2] - num_tokens

        attn_scores = queries @ keys_all.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[p:p + num_tokens, :p + num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim ** 0.5, dim=-1)
        context = (attn_weights @ values_all).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context), keys_all, values
