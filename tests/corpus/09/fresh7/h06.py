# expect: scale_wrong_dim
# also: mask_not_sliced
# bug-lines: 18, 35
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0 or num_heads % num_kv_groups != 0:
            raise ValueError("incompatible head configuration")
        self.num_heads = num_heads
        self.kv_heads = num_kv_groups
        self.head_dim = d_out // num_heads
        self.scale = 1.0 / math.sqrt(d_out)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        B, T, C = x.shape
        q = self.W_query(x).reshape(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(B, T, self.kv_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(B, T, self.kv_heads, self.head_dim).permute(0, 2, 1, 3)
        group = self.num_heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)

        scores = (q @ k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(self.causal, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).permute(0, 2, 1, 3).reshape(B, T, -1)
        return self.out_proj(out)
