# expect: scale_wrong_dim
# also: out_proj_missing
# bug-lines: 30, 36
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

        norm = math.sqrt(self.d_out)
        att = (q @ k.transpose(-2, -1)) / norm
        att = att.masked_fill(self.mask[:t, :t] == 1, float("-inf"))
        att = self.dropout(torch.softmax(att, dim=-1))

        y = (att @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return y
