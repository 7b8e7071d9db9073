# expect: gqa_group_mapping
# bug-lines: 26
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads or num_heads % num_kv_groups:
            raise ValueError("heads must divide d_out and kv groups must divide heads")
        self.nh = num_heads
        self.nkv = num_kv_groups
        self.hs = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.hs, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.hs, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def _expand_kv(self, t):
        B, nkv, T, hs = t.shape
        g = self.nh // nkv
        return t[:, None].expand(B, g, nkv, T, hs).reshape(B, self.nh, T, hs)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.nh, self.hs).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.nkv, self.hs).transpose(1, 2)
        k, v = self._expand_kv(k), self._expand_kv(v)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(self.hs)
        s = s.masked_fill(self.causal[:T, :T], float("-inf"))
        y = s.softmax(dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.nh * self.hs))
