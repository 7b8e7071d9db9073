# expect: runtime_error
# bug-lines: 26
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
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        B = x.size(0)
        P = 0 if k_cache is None else k_cache.size(2)
        T = x.size(1) if k_cache is None else 1

        def split(t):
            return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

        q = split(self.W_query(x))
        k = split(self.W_key(x))
        v = split(self.W_value(x))
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)

        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        w = scores.softmax(dim=-1)
        y = (w @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
