# expect: output_shape
# bug-lines: 26
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
        if x.dim() == 2:
            x = x.unsqueeze(0)
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.d_out)
        weights = torch.softmax(scores, dim=-1)
        out = torch.bmm(weights, v)
        return out.squeeze(0)
