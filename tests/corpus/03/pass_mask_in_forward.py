# expect: pass
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """Builds the causal mask in forward, on x's device, instead of keeping a buffer."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, T, _ = x.shape
        if T > self.context_length:
            raise ValueError("sequence longer than context_length")
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu_(1)
        q = self.W_query(x) / math.sqrt(self.d_out)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.bmm(q, k.transpose(1, 2))
        scores.masked_fill_(future, -math.inf)
        weights = scores.softmax(dim=-1)
        return torch.bmm(self.dropout(weights), v)
