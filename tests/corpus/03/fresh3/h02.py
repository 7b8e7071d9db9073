# expect: mask_not_sliced
# bug-lines: 24
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
        causal = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("causal", causal)

    def forward(self, x):
        b, T, _ = x.shape
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        allowed = self.causal
        scores = scores.masked_fill(~allowed, float("-inf"))
        w = self.dropout(torch.softmax(scores, dim=-1))
        return w @ v
