# expect: heads_not_divisible
# bug-lines: 14
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.n_rep = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        k = torch.repeat_interleave(k, self.n_rep, dim=1)
        v = torch.repeat_interleave(v, self.n_rep, dim=1)
        att = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        att = att.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = torch.einsum("bhqk,bhkd->bhqd", att, v)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.d_out))
