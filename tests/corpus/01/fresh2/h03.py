# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def attention(q, k, v):
    # q, k, v: (..., T, d); the scale is the size of one key vector
    d_k = k.shape[-1]
    scores = torch.matmul(q, torch.transpose(k, -1, -2))
    scores = scores / d_k ** 0.5
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, v)


class SelfAttention(nn.Module):
    """Single head. W_query/W_key/W_value map d_in -> d_out."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super(SelfAttention, self).__init__()
        self.d_in = d_in
        self.d_out = d_out
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)

    def forward(self, x):
        query = self.W_query(x)   # (..., T, d_out)
        key = self.W_key(x)       # (..., T, d_out)
        value = self.W_value(x)   # (..., T, d_out)
        context = attention(query, key, value)
        return context
