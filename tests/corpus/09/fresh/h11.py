# expect: pass
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
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        B, T, _ = x.shape
        nkv, hs = self.num_kv_groups, self.head_dim
        g = self.num_heads // nkv
        # query head h = kv * g + j  ->  (B, nkv, g, T, hs)
        q = self.W_query(x).view(B, T, nkv, g, hs).permute(0, 2, 3, 1, 4)
        k = self.W_key(x).view(B, T, nkv, hs).transpose(1, 2).unsqueeze(2)  # (B, nkv, 1, T, hs)
        v = self.W_value(x).view(B, T, nkv, hs).transpose(1, 2).unsqueeze(2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hs)  # (B, nkv, g, T, T)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v)  # (B, nkv, g, T, hs)
        out = out.permute(0, 3, 1, 2, 4).reshape(B, T, self.d_out)
        return self.out_proj(out)
