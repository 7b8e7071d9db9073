# expect: api_mismatch
# bug-lines: 13, 14, 15
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        return torch.softmax(att, dim=-1) @ v
