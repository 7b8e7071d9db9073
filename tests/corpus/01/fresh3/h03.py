# expect: scale_not_sqrt
# bug-lines: 23
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

    def _project(self, x):
        return self.W_query(x), self.W_key(x), self.W_value(x)

    def forward(self, x):
        Q, K, V = self._project(x)
        # temperature for the softmax
        temperature = float(self.d_out)
        scores = torch.matmul(Q, K.transpose(-1, -2)) / temperature
        weights = torch.nn.functional.softmax(scores, dim=-1)
        out = torch.matmul(weights, V)
        return out
