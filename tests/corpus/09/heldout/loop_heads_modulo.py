# expect: gqa_group_mapping
# held-out: explicit loop over query heads that picks KV head h % num_kv_groups instead of h // group_size.
# bug-lines: 32
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
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        T = x.shape[1]
        hd = self.head_dim
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        outs = []
        for h in range(self.num_heads):
            kv = h % self.num_kv_groups
            q = Q[..., h * hd:(h + 1) * hd]
            k = K[..., kv * hd:(kv + 1) * hd]
            v = V[..., kv * hd:(kv + 1) * hd]
            s = q @ k.transpose(-2, -1) / math.sqrt(hd)
            s = s.masked_fill(self.mask[:T, :T], float("-inf"))
            outs.append(torch.softmax(s, dim=-1) @ v)
        return self.out_proj(torch.cat(outs, dim=-1))
