# expect: gqa_group_mapping
# bug-lines: 33, 34
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0 or num_heads % num_kv_groups != 0:
            raise ValueError("bad head configuration")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        B, T, _ = x.shape
        hs = self.head_dim
        g = self.num_heads // self.num_kv_groups
        q = self.W_query(x).view(B, T, self.num_heads, hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_groups, hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_groups, hs).transpose(1, 2)

        # tile the kv heads so there is one per query head
        k = k.repeat(1, g, 1, 1)
        v = v.repeat(1, g, 1, 1)

        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(~self.causal[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
