# expect: pass
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    """GQA without copying K/V: the query heads are grouped instead, and K/V broadcast over the group."""

    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads or num_heads % num_kv_groups:
            raise ValueError("heads do not divide")
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        G, g, hd = self.num_kv_groups, self.num_heads // self.num_kv_groups, self.head_dim
        # query head h = group h // g, member h % g: consecutive heads share a group
        q = self.W_query(x).view(B, T, G, g, hd).permute(0, 2, 3, 1, 4)   # (B, G, g, T, hd)
        k = self.W_key(x).view(B, T, G, hd).transpose(1, 2).unsqueeze(2)  # (B, G, 1, T, hd)
        v = self.W_value(x).view(B, T, G, hd).transpose(1, 2).unsqueeze(2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)                  # (B, G, g, T, T)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = weights @ v                                                  # (B, G, g, T, hd)
        out = out.permute(0, 3, 1, 2, 4).reshape(B, T, self.d_out)
        return self.out_proj(out)
