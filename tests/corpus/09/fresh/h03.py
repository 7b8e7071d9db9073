# expect: gqa_kv_heads_wrong
# bug-lines: 30,31
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0 or num_heads % num_kv_groups != 0:
            raise ValueError("heads do not divide")
        self.d_out = d_out
        self.nh = num_heads
        self.nkv = num_kv_groups
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.hs, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.hs, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        B, T, _ = x.shape
        g = self.nh // self.nkv
        q = self.W_query(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        k = torch.repeat_interleave(k, g, dim=2)
        v = torch.repeat_interleave(v, g, dim=2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.hs)
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
