# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not a multiple of num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("future", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def _split(self, t):
        b, n, _ = t.shape
        return torch.stack(t.chunk(self.num_heads, dim=-1), dim=1)

    def forward(self, x):
        b, n, _ = x.shape
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        att = torch.einsum("bhid,bhjd->bhij", q, k) * self.head_dim ** -0.5
        att = att.masked_fill(self.future[:n, :n], float("-inf"))
        att = self.dropout(att.softmax(-1))
        ctx = torch.einsum("bhij,bhjd->bhid", att, v)
        ctx = ctx.permute(0, 2, 1, 3).reshape(b, n, self.d_out)
        return self.out_proj(ctx)
