# expect: mask_zero_fill
# also: scale_wrong_dim
# bug-lines: 25, 27
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("blocked", torch.ones(context_length, context_length).triu(1).bool())

    def forward(self, x):
        B, T, C = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        s = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(C))
        m = self.blocked[:T, :T]
        s = torch.where(m, torch.zeros_like(s), s)
        p = self.dropout(torch.softmax(s, dim=-1))
        return p @ v
