# expect: out_proj_missing
# bug-lines: 19
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # a single head needs no mixing of heads, so no projection is made for it
        self.out_proj = nn.Linear(d_out, d_out) if num_heads > 1 else None
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (w(x).unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)
                   for w in (self.W_query, self.W_key, self.W_value))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = self.dropout(att.masked_fill(self.mask[:t, :t], -math.inf).softmax(-1))
        y = (att @ v).transpose(1, 2).flatten(2)
        return y if self.out_proj is None else self.out_proj(y)
