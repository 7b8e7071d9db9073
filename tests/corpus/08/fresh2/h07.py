# expect: kv_cache_ignored
# bug-lines: 31, 32
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out % num_heads != 0")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        sh = (B, T, self.num_heads, self.head_dim)
        q = self.W_query(x).view(sh).transpose(1, 2)
        k = self.W_key(x).view(sh).transpose(1, 2)
        v = self.W_value(x).view(sh).transpose(1, 2)

        # attention among the new tokens
        s = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        a = torch.softmax(s, dim=-1)
        y = (a @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)

        # grow the cache for the next step
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        return self.out_proj(y), k, v
