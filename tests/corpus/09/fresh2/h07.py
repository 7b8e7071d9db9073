# expect: scale_wrong_dim
# bug-lines: 30
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out % num_heads != 0")
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_heads % num_kv_groups != 0")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.kv_dim = num_kv_groups * self.head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.kv_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        B, T, _ = x.shape
        keys = self.W_key(x)                                   # (B, T, kv_dim)
        scale = keys.shape[-1] ** -0.5
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = keys.view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        rep = self.num_heads // self.num_kv_groups
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        s = (q @ k.transpose(-2, -1)) * scale
        s = s.masked_fill(self.mask.bool()[:T, :T], float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).contiguous().view(B, T, self.d_out))
