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

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)

        d_k = k.size(-1)
        scale = d_k
        scores = torch.matmul(q, k.transpose(-2, -1)) / scale
        weights = scores.softmax(dim=-1)
        out = torch.matmul(weights, v)
        return out
