# expect: heads_not_divisible
# bug-lines: 12, 13, 14
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups  # query heads per key/value head
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        nh, nkv, hs = self.num_heads, self.num_kv_groups, self.head_dim
        assert T <= self.mask.size(0), f"{T} tokens exceed context_length {self.mask.size(0)}"
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = self.W_key(x).view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
        v = self.W_value(x).view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs)
        # each KV head serves group_size consecutive query heads: [k0, k0, k1, k1], not [k0, k1, k0, k1]
        k = k.repeat_interleave(self.group_size, dim=1)  # (B, nh, T, hs)
        v = v.repeat_interleave(self.group_size, dim=1)  # (B, nh, T, hs)
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)  # (B, T, d_out)
        return self.out_proj(y)
