# expect: runtime_error
# also: heads_not_divisible
# bug-lines: 13, 27
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups  # query heads per key/value head
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        nh, nkv, hs = self.num_heads, self.num_kv_heads, self.head_dim
        assert T <= self.mask.size(0), f"{T} tokens exceed context_length {self.mask.size(0)}"
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: queries
        k = self.W_key(x).view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs); stage: keys
        v = self.W_value(x).view(B, T, nkv, hs).transpose(1, 2)  # (B, nkv, T, hs); stage: values
        # each KV head serves group_size consecutive query heads: [k0, k0, k1, k1], not [k0, k1, k0, k1]
        k = k.repeat_interleave(self.group_size, dim=1)  # (B, nh, T, hs); stage: repeated_keys
        v = v.repeat_interleave(self.group_size, dim=1)  # (B, nh, T, hs); stage: repeated_values
        att = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T, T); stage: scores, scaled_scores
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))  # stage: masked_scores
        att = torch.softmax(att, dim=-1)  # stage: weights
        y = att @ v  # (B, nh, T, hs); stage: context
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)  # (B, T, d_out); stage: merged
        return self.out_proj(y)  # stage: output
