# expect: pass
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """An additive mask: 0 where allowed, -inf in the future, added to the scores."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.inv_sqrt_d = 1.0 / math.sqrt(d_out)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.drop = nn.Dropout(dropout)
        additive = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("additive_mask", additive)

    def forward(self, x):
        T = x.size(-2)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q.matmul(k.transpose(-1, -2)).mul(self.inv_sqrt_d)
        scores = scores + self.additive_mask[:T, :T].to(scores.dtype)
        return self.drop(scores.softmax(-1)).matmul(v)
