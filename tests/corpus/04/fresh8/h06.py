# expect: scale_wrong_dim
# also: heads_not_divisible
# bug-lines: 13, 23
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out >= num_heads, "need at least one feature per head"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        b, T, _ = x.shape
        shape = (b, T, self.num_heads, self.head_dim)
        q = self.W_query(x).view(shape).transpose(1, 2)
        k = self.W_key(x).view(shape).transpose(1, 2)
        v = self.W_value(x).view(shape).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) * self.scale
        s = s.masked_fill(self.mask[:T, :T].bool(), float("-inf"))
        w = self.dropout(torch.softmax(s, dim=-1))
        y = (w @ v).transpose(1, 2).reshape(b, T, self.d_out)
        return self.out_proj(y)
