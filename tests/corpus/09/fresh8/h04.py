# expect: mask_not_sliced
# also: gqa_group_mapping
# bug-lines: 26, 36
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0 or num_heads % num_kv_groups != 0:
            raise ValueError("num_heads must divide d_out and num_kv_groups must divide num_heads")
        self.d_out, self.n_heads, self.n_kv = d_out, num_heads, num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def expand_kv(self, t):
        B, n_kv, T, hd = t.shape
        g = self.n_heads // n_kv
        return t[:, None].expand(B, g, n_kv, T, hd).reshape(B, n_kv * g, T, hd)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        k, v = self.expand_kv(k), self.expand_kv(v)

        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask.bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(out)
