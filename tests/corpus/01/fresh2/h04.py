# expect: no_scaling
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
        # project the inputs
        Q = self.W_query(x)
        K = self.W_key(x)
        V = self.W_value(x)
        # similarity of every query with every key
        sim = torch.matmul(Q, K.transpose(-1, -2))
        # normalise over the keys
        attn = torch.softmax(sim, dim=-1)
        out = torch.matmul(attn, V)
        return out
