# expect: runtime_error
# bug-lines: 28, 29
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, d_out = x.shape[0], x.shape[1], self.num_heads * self.head_dim
        split = lambda t: t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        if k_cache is not None:
            # the cache taken for a list of past blocks: a tensor plus a list does not concatenate
            k = torch.cat(k_cache + [k], dim=2)
            v = torch.cat(v_cache + [v], dim=2)
        S = k.shape[2]
        scores = (q @ k.transpose(2, 3)) * self.head_dim ** -0.5
        scores = scores.masked_fill(self.mask[S - T : S, :S], float("-inf"))
        y = scores.softmax(-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, d_out)), k, v
