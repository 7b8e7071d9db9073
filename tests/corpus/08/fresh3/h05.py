# expect: kv_cache_ignored
# bug-lines: 37, 38, 40
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        shape = (B, T, self.num_heads, self.head_dim)
        q = self.W_query(x).view(shape).transpose(1, 2)
        k = self.W_key(x).view(shape).transpose(1, 2)
        v = self.W_value(x).view(shape).transpose(1, 2)

        if k_cache is None:
            new_k, new_v = k, v
        else:
            new_k = torch.cat([k_cache, k], dim=2)
            new_v = torch.cat([v_cache, v], dim=2)

        # causal attention among the new tokens
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        probs = scores.softmax(dim=-1)
        out = (probs @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(out), new_k, new_v
