# expect: runtime_error
# from the fresh held-out round of issue 21: permute with three axes runs on a batch (B, T, d) and raises for the 2-D input (T, d) the contract allows; an exception only some inputs raise is reported as the exception, with its line.
# bug-lines: 22
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
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scores = queries @ keys.permute(0, 2, 1) / math.sqrt(self.d_out)
        return torch.softmax(scores, dim=-1) @ values
