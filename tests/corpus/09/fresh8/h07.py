# expect: scale_wrong_dim
# also: qkv_bias_ignored
# bug-lines: 20, 31
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0 or num_heads % num_kv_groups != 0:
            raise ValueError("incompatible head counts")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        kv_dim = num_kv_groups * self.head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, kv_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, kv_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scale = 1.0 / math.sqrt(k.shape[-1])

        q = q.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        rep = self.num_heads // self.num_kv_groups
        k = torch.repeat_interleave(k, rep, dim=1)
        v = torch.repeat_interleave(v, rep, dim=1)

        w = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
        w = w.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = torch.einsum("bhqk,bhkd->bhqd", w, v)
        y = y.transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y)
