# expect: softmax_wrong_dim
# bug-lines: 25
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
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        omega = torch.matmul(queries, keys.transpose(-2, -1))
        omega = omega / math.sqrt(self.d_out)
        # normalise each row of omega
        alpha = torch.softmax(omega, dim=1)
        z = torch.matmul(alpha, values)
        return z
