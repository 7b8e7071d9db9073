# expect: mask_diagonal
# held-out: torch.triu(..., diagonal=0) also blocks each token from attending to itself.
# bug-lines: 18, 24
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        w = self.dropout(torch.softmax(scores, dim=-1))
        return w @ v
