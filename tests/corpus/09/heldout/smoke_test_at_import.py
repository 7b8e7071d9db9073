# expect: import_error
# held-out: correct module, but a smoke test left at module level builds it with num_kv_groups=4 for 6 heads, which raises on import.
# bug-lines: 39, 40
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        b, T, _ = x.shape
        g = self.num_heads // self.num_kv_groups
        q = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2).repeat_interleave(g, dim=1)
        v = self.W_value(x).view(b, T, self.num_kv_groups, self.head_dim).transpose(1, 2).repeat_interleave(g, dim=1)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(y)


gqa = GroupedQueryAttention(d_in=6, d_out=18, context_length=7, num_heads=6, num_kv_groups=4)
print(gqa(torch.randn(2, 5, 6)).shape)
