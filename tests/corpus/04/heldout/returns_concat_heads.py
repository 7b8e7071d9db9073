# expect: out_proj_missing
# held-out: defines out_proj but returns the merged heads without applying it.
# bug-lines: 34
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.nh = num_heads
        self.hd = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.nh, self.hd).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.nh, self.hd).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.nh, self.hd).transpose(1, 2)
        w = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        w = w.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        w = self.dropout(w)
        y = (w @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return y
