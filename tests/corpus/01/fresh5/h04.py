# expect: qkv_bias_ignored
# also: softmax_wrong_dim
# bug-lines: 20, 28
import math

import torch
import torch.nn as nn


def _proj(d_in, d_out, bias):
    return nn.Linear(d_in, d_out, bias=bias)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = _proj(d_in, d_out, qkv_bias)
        self.W_key = _proj(d_in, d_out, qkv_bias)
        self.W_value = _proj(d_in, d_out, False)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scale = math.sqrt(k.shape[-1])
        scores = torch.matmul(q, k.transpose(-1, -2)) / scale
        probs = nn.functional.softmax(scores, dim=1)
        return torch.matmul(probs, v)
