# expect: pass
# held-out: correct without repeating k/v; views queries as (B, nkv, g, T, hd) and broadcasts each KV head over its group.
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads or num_heads % num_kv_groups:
            raise ValueError("need d_out % num_heads == 0 and num_heads % num_kv_groups == 0")
        self.nh = num_heads
        self.nkv = num_kv_groups
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("future", torch.ones(context_length, context_length, dtype=torch.bool).triu(1),
                             persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        g = self.nh // self.nkv
        q = self.W_query(x).view(B, T, self.nkv, g, self.hd).permute(0, 2, 3, 1, 4)  # (B, nkv, g, T, hd)
        k = self.W_key(x).view(B, T, self.nkv, self.hd).transpose(1, 2).unsqueeze(2)  # (B, nkv, 1, T, hd)
        v = self.W_value(x).view(B, T, self.nkv, self.hd).transpose(1, 2).unsqueeze(2)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.hd)  # (B, nkv, g, T, T)
        s = s.masked_fill(self.future[:T, :T], float("-inf"))
        y = s.softmax(dim=-1) @ v  # (B, nkv, g, T, hd)
        y = y.permute(0, 3, 1, 2, 4).reshape(B, T, self.nh * self.hd)
        return self.out_proj(y)
