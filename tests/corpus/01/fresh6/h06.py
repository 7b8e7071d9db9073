# expect: scale_not_sqrt
# bug-lines: 16
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
        self.temperature = float(d_out)

    def _weights(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        scores = queries @ keys.transpose(-2, -1)
        return torch.softmax(scores / self.temperature, dim=-1)

    def forward(self, x):
        attn = self._weights(x)
        return attn @ self.W_value(x)
