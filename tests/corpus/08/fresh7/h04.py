# expect: kv_cache_order
# also: heads_not_divisible
# bug-lines: 13, 32, 33
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        idx = torch.arange(context_length)
        self.register_buffer("mask", idx[None, :] > idx[:, None])

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        shape = (B, T, self.num_heads, self.head_dim)
        q = self.W_query(x).view(shape).transpose(1, 2)
        k = self.W_key(x).view(shape).transpose(1, 2)
        v = self.W_value(x).view(shape).transpose(1, 2)

        P = 0 if k_cache is None else k_cache.shape[2]
        if k_cache is not None:
            k = torch.cat([k, k_cache], dim=2)
            v = torch.cat([v, v_cache], dim=2)

        w = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        w = w.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        w = torch.softmax(w, dim=-1)
        y = (w @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
