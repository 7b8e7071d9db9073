# expect: softmax_wrong_dim
# bug-lines: 25
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        queries = self.W_query(x)   # (..., T, d_out)
        keys = self.W_key(x)        # (..., T, d_out)
        values = self.W_value(x)    # (..., T, d_out)

        attn_scores = queries @ keys.transpose(-2, -1) * self.scale  # (..., T, T)
        # normalise the attention weights
        attn_weights = torch.softmax(attn_scores, dim=-2)
        return attn_weights @ values
