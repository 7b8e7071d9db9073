# expect: pass
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """Heads folded into the batch dimension; baddbmm adds the causal bias and scales in one call."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("future", future)

    def _heads(self, t, B, T):
        # (B, T, d_out) -> (B * nh, T, hd)
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2).reshape(B * self.num_heads, T, self.head_dim)

    def forward(self, x):
        B, T, _ = x.shape
        q = self._heads(self.W_query(x), B, T)
        k = self._heads(self.W_key(x), B, T)
        v = self._heads(self.W_value(x), B, T)
        bias = torch.zeros(T, T, dtype=q.dtype, device=q.device).masked_fill_(self.future[:T, :T], float("-inf"))
        bias = bias.expand(B * self.num_heads, T, T)
        att = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1.0 / math.sqrt(self.head_dim))
        att = self.dropout(att.softmax(dim=-1))
        y = torch.bmm(att, v).view(B, self.num_heads, T, self.head_dim)
        y = y.transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y)
