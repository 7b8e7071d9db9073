# expect: view_noncontiguous
# bug-lines: 30
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out=} is not a multiple of {num_heads=}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool())

    def split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, t):
        b, _, n, _ = t.shape
        return t.transpose(1, 2).view(b, n, self.d_out)

    def forward(self, x):
        n = x.shape[1]
        q = self.split_heads(self.W_query(x))
        k = self.split_heads(self.W_key(x))
        v = self.split_heads(self.W_value(x))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(self.mask[:n, :n], float("-inf"))
        att = self.dropout(torch.softmax(att, dim=-1))
        return self.out_proj(self.merge_heads(att @ v))
