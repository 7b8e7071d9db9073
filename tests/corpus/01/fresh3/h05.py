# expect: batched_transpose
# bug-lines: 21
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super(SelfAttention, self).__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        query = self.W_query(x)
        key = self.W_key(x)
        value = self.W_value(x)
        key_t = key.transpose(0, 1)
        scores = torch.matmul(query, key_t) / math.sqrt(self.d_out)
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, value)
