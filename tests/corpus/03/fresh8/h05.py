# expect: mask_device
# bug-lines: 17
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
        self.attn_drop = nn.Dropout(dropout)
        self.causal_mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)

    def forward(self, x):
        n = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(keys.shape[-1])
        scores = scores.masked_fill(self.causal_mask[:n, :n], -math.inf)
        weights = self.attn_drop(scores.softmax(dim=-1))
        return weights @ values
