# expect: view_noncontiguous
# bug-lines: 36
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out % num_heads != 0")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        batch, tokens, _ = x.shape

        def heads(t):
            return t.view(batch, tokens, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:tokens, :tokens], -math.inf)
        probs = self.dropout(scores.softmax(dim=-1))
        ctx = torch.einsum("bhqk,bhkd->bhqd", probs, v)
        ctx = ctx.transpose(1, 2).view(batch, tokens, self.d_out)
        return self.out_proj(ctx)
