# expect: kv_cache_ignored
# also: heads_not_divisible
# bug-lines: 13, 34, 35, 37
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k_new = self.W_key(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v_new = self.W_value(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

        if k_cache is None:
            k_all, v_all = k_new, v_new
        else:
            k_all = torch.cat([k_cache, k_new], dim=2)
            v_all = torch.cat([v_cache, v_new], dim=2)

        scores = q @ k_new.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:t, :t], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = weights @ v_new
        out = out.transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(out), k_all, v_all
