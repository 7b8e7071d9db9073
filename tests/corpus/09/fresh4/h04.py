# expect: mask_missing
# also: heads_not_divisible
# bug-lines: 15, 41
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def repeat_kv(self, t):
        b, n_kv, T, hd = t.shape
        if self.n_rep == 1:
            return t
        t = t[:, :, None, :, :].expand(b, n_kv, self.n_rep, T, hd)
        return t.reshape(b, n_kv * self.n_rep, T, hd)

    def forward(self, x):
        b, T, _ = x.shape
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        k, v = self.repeat_kv(k), self.repeat_kv(v)

        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v)
        out = out.transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(out)
