# expect: runtime_error
# bug-lines: 20
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
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = torch.matmul(q, k.transpose(1, 2)) * self.scale
        att = torch.softmax(att, dim=-1)
        return torch.matmul(att, v)
