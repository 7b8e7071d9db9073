# expect: pass
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        # three independent projections
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        # x: (T, d_in) or (B, T, d_in)
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)

        d_k = keys.shape[-1]
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores / d_k ** 0.5

        attn_weights = torch.softmax(attn_scores, dim=-1)
        context = attn_weights @ values
        return context
