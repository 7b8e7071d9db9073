# expect: kv_cache_layout
# bug-lines: 25, 26, 28, 29, 41
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        # cache the projections as they come out of the linear layers: (B, P, d_out)
        k_all = self.W_key(x)
        v_all = self.W_value(x)
        if k_cache is not None:
            k_all = torch.cat([k_cache, k_all], dim=1)
            v_all = torch.cat([v_cache, v_all], dim=1)
        N = k_all.shape[1]
        P = N - T

        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = k_all.view(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        v = v_all.view(B, N, self.num_heads, self.head_dim).transpose(1, 2)

        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask.bool()[P:N, :N], float("-inf"))
        w = torch.softmax(scores, dim=-1)
        y = (w @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y), k_all, v_all
