# expect: kv_cache_ignored
# bug-lines: 34, 35, 36
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hs).transpose(1, 2)
        P = 0 if k_cache is None else k_cache.size(2)
        k_all = k if k_cache is None else torch.cat([k_cache, k], dim=2)
        v_all = v if v_cache is None else torch.cat([v_cache, v], dim=2)
        if T > 1:  # a prompt chunk: attend within it
            att = q @ k.transpose(-2, -1) / math.sqrt(hs)
            att = att.masked_fill(self.mask[:T, :T], float("-inf"))
            y = torch.softmax(att, dim=-1) @ v
        else:  # one decoding step: the whole cache
            att = q @ k_all.transpose(-2, -1) / math.sqrt(hs)
            y = torch.softmax(att, dim=-1) @ v_all
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y), k_all, v_all
