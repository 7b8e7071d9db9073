# expect: qkv_bias_ignored
# bug-lines: 13, 14, 15
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=True)
        self.W_key = nn.Linear(d_in, d_out, bias=True)
        self.W_value = nn.Linear(d_in, d_out, bias=True)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        return torch.softmax(att, dim=-1) @ v
