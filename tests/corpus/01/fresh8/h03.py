# expect: batched_transpose
# bug-lines: 23
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Tested on a single sentence (tokens, d_in) and it matched my hand computation."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.matmul(q, k.T) / math.sqrt(self.d_out)
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, v)
