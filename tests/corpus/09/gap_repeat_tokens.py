# expect: gqa_kv_heads_wrong
# bug-lines: 27, 28
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0 and num_heads % num_kv_groups == 0
        self.nh, self.nkv, self.hd = num_heads, num_kv_groups, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        b, t, _ = x.shape
        rep = self.nh // self.nkv
        q = self.W_query(x).view(b, t, self.nh, self.hd).transpose(1, 2)
        k = self.W_key(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        v = self.W_value(x).view(b, t, self.nkv, self.hd).transpose(1, 2)
        # repeat along the token axis, then fold the extra copies into the heads
        k = k.repeat_interleave(rep, dim=2).reshape(b, self.nh, t, self.hd)
        v = v.repeat_interleave(rep, dim=2).reshape(b, self.nh, t, self.hd)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.hd)
        s = s.masked_fill(~self.causal[:t, :t], float("-inf"))
        y = s.softmax(-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(b, t, -1))
