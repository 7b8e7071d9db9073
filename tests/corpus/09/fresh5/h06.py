# expect: mask_inverted
# bug-lines: 24
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_heads must be divisible by num_kv_groups")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        earlier = torch.tril(torch.ones(context_length, context_length), diagonal=-1).bool()
        self.register_buffer("mask", earlier)

    def forward(self, x):
        B, T, _ = x.shape
        g = self.num_heads // self.num_kv_groups
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_key(x).view(B, T, self.num_kv_groups, self.head_dim).permute(0, 2, 1, 3)
        v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).permute(0, 2, 1, 3)
        k = k[:, :, None, :, :].expand(B, self.num_kv_groups, g, T, self.head_dim).reshape(B, self.num_heads, T, self.head_dim)
        v = v[:, :, None, :, :].expand(B, self.num_kv_groups, g, T, self.head_dim).reshape(B, self.num_heads, T, self.head_dim)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        w = torch.softmax(scores, dim=-1)
        y = (w @ v).permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(y)
