# expect: scale_wrong_dim
# bug-lines: 18
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_in = d_in
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # 1/sqrt(d) keeps the dot products at unit variance
        self.scale = 1.0 / math.sqrt(self.d_in)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        w = (q @ k.transpose(-2, -1) * self.scale).softmax(-1)
        return w @ v
