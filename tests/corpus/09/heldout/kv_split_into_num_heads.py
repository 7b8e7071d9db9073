# expect: gqa_kv_heads_wrong
# held-out: copy-paste from MHA: splits keys/values into num_heads heads (view(b, T, num_heads, hd)), which only fits when nkv == nh.
# bug-lines: 29, 30
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        assert num_heads % num_kv_groups == 0
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
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(b, T, nh, hd).transpose(1, 2)
        k = self.W_key(x).view(b, T, nh, -1).transpose(1, 2)
        v = self.W_value(x).view(b, T, nh, -1).transpose(1, 2)
        att = q @ k.transpose(-2, -1) / math.sqrt(hd)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(y)
