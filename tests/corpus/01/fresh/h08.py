# expect: runtime_error
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
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        # (B, T, d_in) -> (B, T, d_out)
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = torch.bmm(q, k.transpose(1, 2)) * self.scale
        att = torch.softmax(att, dim=-1)
        return torch.bmm(att, v)
