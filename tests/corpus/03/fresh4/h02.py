# expect: mask_diagonal
# bug-lines: 18
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
        ones = torch.ones(context_length, context_length, dtype=torch.bool)
        future = torch.triu(ones, diagonal=0)
        self.register_buffer("future", future)

    def forward(self, x):
        T = x.shape[1]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        scores = scores.masked_fill(self.future[:T, :T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return weights @ v
