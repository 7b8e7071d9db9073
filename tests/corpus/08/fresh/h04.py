# expect: kv_cache_not_appended
# bug-lines: 37
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
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
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k_new = self.W_key(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        v_new = self.W_value(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        if k_cache is None:
            P, k, v = 0, k_new, v_new
        else:
            P = k_cache.shape[2]
            k = torch.cat([k_cache, k_new], dim=2)
            v = torch.cat([v_cache, v_new], dim=2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        s = s.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k_new, v_new
