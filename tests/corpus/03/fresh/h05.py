# expect: dropout_in_eval
# bug-lines: 31
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1),
        )

    def forward(self, x):
        T = x.size(1)
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        a = F.softmax(s, dim=-1)
        a = F.dropout(a, p=self.p)
        return a @ v
