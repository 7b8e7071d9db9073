# expect: timeout
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
        T = x.shape[-2]
        out = torch.zeros_like(v)
        i = 0
        while i < T:
            # one query at a time ... but the loop counter is never advanced
            score_i = (q[..., i : i + 1, :] @ k.transpose(-2, -1)) / math.sqrt(self.d_out)
            out[..., i : i + 1, :] = torch.softmax(score_i, dim=-1) @ v
        return out
