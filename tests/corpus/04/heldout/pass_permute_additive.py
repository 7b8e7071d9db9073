# expect: pass
# held-out: correct; reshape + permute split, an additive float -inf mask buffer, permute + reshape merge.
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be a multiple of num_heads")
        self.h = num_heads
        self.d_head = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.attn_drop = nn.Dropout(dropout)
        bias = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("causal_bias", bias, persistent=False)

    def _split(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.h, self.d_head).permute(0, 2, 1, 3)

    def forward(self, x):
        b, n, _ = x.shape
        q = self._split(self.W_query(x))
        k = self._split(self.W_key(x))
        v = self._split(self.W_value(x))
        scores = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(self.d_head)
        scores = scores + self.causal_bias[:n, :n]
        attn = self.attn_drop(scores.softmax(dim=-1))
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        out = out.permute(0, 2, 1, 3).reshape(b, n, self.d_out)
        return self.out_proj(out)
