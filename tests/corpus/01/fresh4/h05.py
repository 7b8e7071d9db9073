# expect: softmax_wrong_dim
# bug-lines: 11
import math

import torch
import torch.nn as nn


def attend(q, k, v, d_k):
    scores = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(d_k)
    weights = torch.softmax(scores, dim=-2)
    return torch.einsum("...ij,...jd->...id", weights, v)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return attend(self.W_query(x), self.W_key(x), self.W_value(x), self.d_out)
