# expect: view_noncontiguous
# bug-lines: 32
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        b, n, _ = x.shape
        h, d = self.num_heads, self.head_dim
        q = self.W_query(x).view(b, n, h, d).transpose(1, 2)
        k = self.W_key(x).view(b, n, h, d).transpose(1, 2)
        v = self.W_value(x).view(b, n, h, d).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
        w = w.masked_fill(self.mask[:n, :n], float("-inf")).softmax(dim=-1)
        w = self.dropout(w)
        o = torch.matmul(w, v).transpose(1, 2).view(b, n, self.d_out)
        return self.out_proj(o)
