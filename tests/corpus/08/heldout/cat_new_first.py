# expect: kv_cache_order
# held-out: concatenates torch.cat([k, k_cache], dim=2), putting the new tokens before the cached ones.
# bug-lines: 31, 32
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)
        if k_cache is not None:
            k = torch.cat([k, k_cache], dim=2)
            v = torch.cat([v, v_cache], dim=2)
        P = k.size(2) - T
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)
        att = att.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y), k, v
