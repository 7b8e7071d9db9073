# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "num_heads must divide d_out"
        self.h = num_heads
        self.d_head = d_out // num_heads
        self.drop_p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        additive = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("additive_mask", additive)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.d_head).permute(0, 2, 1, 3)

    def forward(self, x):
        B, T, _ = x.shape
        q = self._heads(self.W_query(x))
        k = self._heads(self.W_key(x))
        v = self._heads(self.W_value(x))
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.d_head)
        s = s + self.additive_mask[:T, :T]
        p = F.softmax(s, dim=-1)
        p = F.dropout(p, self.drop_p, self.training)
        ctx = torch.einsum("bhqk,bhkd->bhqd", p, v)
        ctx = ctx.permute(0, 2, 1, 3).reshape(B, T, self.h * self.d_head)
        return self.out_proj(ctx)
