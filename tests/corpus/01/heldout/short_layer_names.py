# expect: api_mismatch
# held-out: correct maths but the projections are named W_q, W_k, W_v instead of the contract's W_query, W_key, W_value.
# bug-lines: 14, 15, 16
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_q = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_k = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_v = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_out), dim=-1)
        return att @ v
