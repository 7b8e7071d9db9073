# expect: heads_merge_wrong
# bug-lines: 35
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out, self.num_heads = d_out, num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def split(self, t, b, T):
        return t.view(b, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, T, _ = x.shape
        q = self.split(self.W_query(x), b, T)
        k = self.split(self.W_key(x), b, T)
        v = self.split(self.W_value(x), b, T)
        att = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5
        att = att.masked_fill(self.mask[:T, :T].bool(), -torch.inf)
        att = self.dropout(att.softmax(dim=-1))
        y = att @ v                                  # (b, heads, T, head_dim)
        y = y.contiguous().view(b, T, self.d_out)    # back to (b, T, d_out)
        return self.out_proj(y)
