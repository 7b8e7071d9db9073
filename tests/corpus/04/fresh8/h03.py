# expect: heads_split_wrong
# bug-lines: 26
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool())

    def split(self, t, b, T):
        # (b, T, d_out) -> (b, num_heads, T, head_dim)
        return t.view(b, self.num_heads, T, self.head_dim)

    def forward(self, x):
        b, T, _ = x.shape
        q = self.split(self.W_query(x), b, T)
        k = self.split(self.W_key(x), b, T)
        v = self.split(self.W_value(x), b, T)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        ctx = (weights @ v).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(ctx)
