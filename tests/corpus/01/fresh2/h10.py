# expect: wrong_output
# bug-lines: 20
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        query = self.W_query(x)
        key = self.W_key(x)
        value = self.W_key(x)
        scale = 1 / math.sqrt(self.d_out)
        attn = torch.softmax(query @ key.transpose(-2, -1) * scale, dim=-1)
        return attn @ value
