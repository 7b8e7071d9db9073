# expect: pass
"""Multi-head attention with an additive float mask and reshape/permute for the head axes."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.h = num_heads
        self.hd = d_out // num_heads
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        bias = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("attn_bias", bias)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.hd).permute(0, 2, 1, 3)

    def forward(self, x):
        B, T, _ = x.shape
        q = self._heads(self.W_query(x)) * (1.0 / math.sqrt(self.hd))
        k = self._heads(self.W_key(x))
        v = self._heads(self.W_value(x))
        scores = q @ k.transpose(-1, -2) + self.attn_bias[:T, :T]
        w = F.dropout(scores.softmax(dim=-1), self.p, self.training)
        ctx = (w @ v).permute(0, 2, 1, 3).reshape(B, T, self.h * self.hd)
        return self.out_proj(ctx)
